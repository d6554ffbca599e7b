package rollout_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/rollout"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newFixture(t, rollout.Options{Registerer: reg})
	ctx := context.Background()
	f.create("python", 2)
	require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
	require.NoError(t, f.mgr.Update(ctx, "python"))

	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP fleetkit_rollout_machines Machines the manager owns, by language, version and health.
# TYPE fleetkit_rollout_machines gauge
fleetkit_rollout_machines{healthy="true",language="python",version="1.0"} 1
fleetkit_rollout_machines{healthy="true",language="python",version="2.0"} 1
# HELP fleetkit_rollout_step_percent The new version's share at the current step of an update; 0 when none is in progress.
# TYPE fleetkit_rollout_step_percent gauge
fleetkit_rollout_step_percent{language="java",target=""} 0
fleetkit_rollout_step_percent{language="python",target="2.0"} 5
# HELP fleetkit_rollout_transitions_total Rollout phase changes by language and kind (init, update, rollback, abort).
# TYPE fleetkit_rollout_transitions_total counter
fleetkit_rollout_transitions_total{kind="init",language="python"} 1
fleetkit_rollout_transitions_total{kind="update",language="python"} 1
`), "fleetkit_rollout_machines", "fleetkit_rollout_step_percent", "fleetkit_rollout_transitions_total"))
	n, err := testutil.GatherAndCount(reg, "fleetkit_rollout_machine_create_seconds")
	require.NoError(t, err)
	require.Equal(t, 1, n, "one histogram series (python)")

	// A second Manager on the same registry is refused with a clear error.
	_, err = rollout.New(f.provider, f.router, rollout.Options{Languages: f.opts.Languages, Registerer: reg})
	require.ErrorIs(t, err, rollout.ErrInvalidConfig)
}
