package rollout_test

import (
	"testing"

	"github.com/fleetkit/fleetkit/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }
