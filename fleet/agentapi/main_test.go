package agentapi_test

import (
	"testing"

	"github.com/fleetkit/fleetkit/internal/testenv"
)

// The tests leave no goroutine behind.
func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }
