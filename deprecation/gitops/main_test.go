package gitops

import (
	"testing"

	"github.com/fleetkit/fleetkit/deprecation/helm/helmtest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

// TestBuildHostileInput cuts off a chart that renders for minutes.
func TestMain(m *testing.M) { testenv.MainLeakChecked(m, helmtest.AbandonedRenders()) }
