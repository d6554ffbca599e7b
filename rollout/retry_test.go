package rollout_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/machines/machinestest"
	"github.com/fleetkit/fleetkit/rollout"
	"github.com/fleetkit/fleetkit/rollout/rollouttest"
)

// A language whose pass fails is retried by the reconcile engine after a
// backoff (500ms, doubling), long before the next resync, and the failure
// is counted (fake clock: testing/synctest; no machines, so no network).
func TestFailedPassIsRetriedWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := machinestest.New(machinestest.Options{})
		defer p.Close()
		router := rollouttest.NewRouter(rollouttest.Options{})
		router.Fail(rollouttest.OpRatio, 4, nil) // the first two passes of both languages
		reg := prometheus.NewRegistry()
		mgr, err := rollout.New(p, hideGeneration{router}, rollout.Options{
			Languages: langs("1.0"), IsNotFound: rollouttest.IsNotFound, Registerer: reg})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- mgr.Run(ctx) }()
		defer func() {
			cancel()
			require.NoError(t, <-done)
		}()

		set := func() int {
			n := 0
			for _, lang := range []string{"python", "java"} {
				if _, ok := router.Ratio(lang); ok {
					n++
				}
			}
			return n
		}
		synctest.Wait()
		require.Equal(t, 0, set(), "the first passes failed")
		time.Sleep(500*time.Millisecond + time.Millisecond)
		synctest.Wait()
		require.Equal(t, 0, set(), "the retries after 500ms failed too")
		time.Sleep(time.Second - 2*time.Millisecond) // the next retry is 1s after the first
		synctest.Wait()
		require.Equal(t, 0, set(), "not retried before its backoff")
		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		assert.Equal(t, 2, set(), "the third passes set the ratios, well before the resync")

		require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP fleetkit_rollout_reconcile_errors_total Reconcile passes that failed (and will be retried), by language.
# TYPE fleetkit_rollout_reconcile_errors_total counter
fleetkit_rollout_reconcile_errors_total{language="java"} 2
fleetkit_rollout_reconcile_errors_total{language="python"} 2
# HELP fleetkit_reconcile_retries_total Keys queued again after a backoff (an error, a panic or Requeue), by engine.
# TYPE fleetkit_reconcile_retries_total counter
fleetkit_reconcile_retries_total{name="rollout"} 4
`), "fleetkit_rollout_reconcile_errors_total", "fleetkit_reconcile_retries_total"))
	})
}
