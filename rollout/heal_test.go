package rollout_test

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/machines/machinestest"
	"github.com/fleetkit/fleetkit/rollout"
	"github.com/fleetkit/fleetkit/rollout/rollouttest"
)

// A balancer that restarts empty (the issue: 29,975 of 31,985 requests got
// 503 until the manager was restarted too) gets its backends and ratio
// back from the next pass, which reads what it holds.
func TestRouterRestartIsReasserted(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	ctx := context.Background()
	addrs := f.create("python", 3)
	require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
	want := f.router.Held()
	wantRatio, _ := f.router.Ratio("python")
	require.Len(t, want, 3)

	f.router.Restart()
	require.NoError(t, f.mgr.Reconcile(ctx, "python"))
	assert.Equal(t, want, f.router.Held(), "every live machine is a backend again")
	r, _ := f.router.Ratio("python")
	assert.Equal(t, wantRatio, r, "and the ratio is set again")

	// Drift made by hand is put right too: a backend removed, a ratio set.
	require.NoError(t, f.router.RemoveBackend(ctx, uri(addrs[2])))
	require.NoError(t, f.router.SetRatio(ctx, "python", map[string]int{"1.0": 50, "2.0": 50}))
	require.NoError(t, f.mgr.Reconcile(ctx, "python"))
	assert.Equal(t, want, f.router.Held())
	r, _ = f.router.Ratio("python")
	assert.Equal(t, wantRatio, r)
}

// hideGeneration is a Router without a Generation: the manager only
// notices a change at its resync. (Embedding *rollouttest.Router would
// promote its Generation.)
type hideGeneration struct{ r *rollouttest.Router }

var _ rollout.RouterReader = hideGeneration{}

func (h hideGeneration) AddBackend(ctx context.Context, lang, version, uri string) error {
	return h.r.AddBackend(ctx, lang, version, uri)
}

func (h hideGeneration) RemoveBackend(ctx context.Context, uri string) error {
	return h.r.RemoveBackend(ctx, uri)
}

func (h hideGeneration) SetRatio(ctx context.Context, lang string, ratio map[string]int) error {
	return h.r.SetRatio(ctx, lang, ratio)
}

func (h hideGeneration) Routes(ctx context.Context, lang string) (map[string]string, map[string]int, error) {
	return h.r.Routes(ctx, lang)
}

// The manager notices a restarted router within RouterCheckInterval
// through its Generation, and within ResyncInterval without one (fake
// clock: testing/synctest; no machines, so no network).
func TestRouterRestartNoticedWithinOneResync(t *testing.T) {
	for _, tt := range []struct {
		name       string
		generation bool
		within     time.Duration
	}{
		{"generation", true, rollout.DefaultRouterCheckInterval},
		{"resync", false, rollout.DefaultResyncInterval},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := machinestest.New(machinestest.Options{})
				defer p.Close()
				router := rollouttest.NewRouter(rollouttest.Options{})
				var r rollout.Router = hideGeneration{router}
				if tt.generation {
					r = router
				}
				mgr, err := rollout.New(p, r, rollout.Options{Languages: langs("1.0", "2.0"), IsNotFound: rollouttest.IsNotFound})
				require.NoError(t, err)
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- mgr.Run(ctx) }()
				synctest.Wait()
				ratio, ok := router.Ratio("python")
				require.True(t, ok, "set at start")
				assert.Equal(t, map[string]int{"1.0": 100}, ratio)

				time.Sleep(time.Millisecond) // off the tick
				router.Restart()
				time.Sleep(tt.within)
				synctest.Wait()
				ratio, ok = router.Ratio("python")
				assert.True(t, ok, "set again within %s", tt.within)
				assert.Equal(t, map[string]int{"1.0": 100}, ratio)
				cancel()
				require.NoError(t, <-done)
			})
		})
	}
}

// An interrupted surge (the issue: SIGKILL during the 50 % step left 11
// machines for a fleet of 10) converges to the desired count, which is
// state: a new manager over the same state file removes the extra one.
func TestInterruptedSurgeConverges(t *testing.T) {
	f := newFixture(t, rollout.Options{StateFile: filepath.Join(t.TempDir(), "state.json")})
	ctx := context.Background()
	f.create("python", 4)
	require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
	for range 3 {
		require.NoError(t, f.mgr.Update(ctx, "python")) // 50 %: 2 + 2
	}
	require.Equal(t, map[string]int{"1.0": 2, "2.0": 2}, f.count("python"))
	// What a killed manager left: a fifth machine, created and routed.
	extra, err := f.provider.Create(ctx, linterSpec("python", "2.0", rollout.DefaultName))
	require.NoError(t, err)
	require.NoError(t, f.router.AddBackend(ctx, "python", "2.0", extra.URL()))

	restarted := f.newManager(f.router)
	n, ok := restarted.Desired("python")
	require.True(t, ok, "the desired count is in the state file")
	assert.Equal(t, 4, n)
	require.NoError(t, restarted.Reconcile(ctx, "python"))
	assert.Equal(t, map[string]int{"1.0": 2, "2.0": 2}, f.count("python"))
	assert.Len(t, f.router.Held(), 4)
}

// Unhealthy machines keep their place by default (the seed's rule): no
// replacement. With ReplaceUnhealthy they are replaced. Either way an
// abort brings the stable version back at the desired count: capacity
// does not leak (the issue: 10 → 9 after an aborted update).
func TestCapacityDoesNotLeak(t *testing.T) {
	for _, replace := range []bool{false, true} {
		t.Run(map[bool]string{false: "kept", true: "replaced"}[replace], func(t *testing.T) {
			f := newFixture(t, rollout.Options{ReplaceUnhealthy: replace, HealthInterval: 20 * time.Millisecond})
			f.run()
			ctx := context.Background()
			f.create("python", 4)
			require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
			for range 3 {
				require.NoError(t, f.mgr.Update(ctx, "python"))
			}
			all, err := f.provider.List(ctx, nil)
			require.NoError(t, err)
			for _, mc := range all {
				if versionOf(mc) == "2.0" {
					require.NoError(t, f.provider.Kill(mc.ID))
					break
				}
			}
			if replace {
				eventually(t, func() bool { return f.count("python")["2.0"] == 2 }, "replaced: %v", f.count("python"))
			} else {
				eventually(t, func() bool { return f.count("python")["2.0"] == 1 }, "unhealthy: %v", f.count("python"))
				st, err := f.mgr.Status(ctx)
				require.NoError(t, err)
				assert.Equal(t, 4, st.Languages[1].Desired)
				assert.Len(t, st.Languages[1].Machines, 4, "the unhealthy machine is kept and shown")
			}
			require.NoError(t, f.mgr.Abort(ctx, "python"))
			assert.Equal(t, map[string]int{"1.0": 4}, f.count("python"))
			st, err := f.mgr.Status(ctx)
			require.NoError(t, err)
			assert.Len(t, st.Languages[1].Machines, 4, "nothing unhealthy of the aborted version is left")
		})
	}
}

// Teardown removes every machine and their backends, and the fleet
// stays empty.
func TestTeardown(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	ctx := context.Background()
	f.create("python", 2)
	f.create("java", 1)
	require.NoError(t, f.mgr.Teardown(ctx))
	all, err := f.provider.List(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, all)
	assert.Empty(t, f.router.Held())
	require.NoError(t, f.mgr.Reconcile(ctx, "python"))
	all, _ = f.provider.List(ctx, nil)
	assert.Empty(t, all, "the desired count is 0")
}

// An abort does not wait for a pass that is still replacing machines of
// the version it aborts: the pass gives way between two machines (on
// Docker, an abort waited behind a pass replacing crashing machines one
// after another).
func TestAbortPreemptsAReconcile(t *testing.T) {
	f := newFixture(t, rollout.Options{Steps: []int{100}})
	ctx := context.Background()
	f.create("python", 6)
	f.log.take()
	f.provider.SetCreateDelay(100 * time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- f.mgr.InitUpdate(ctx, "python", "2.0") }()
	eventually(t, func() bool {
		for _, mc := range f.versions("python") {
			if mc == "2.0" {
				return true
			}
		}
		return false
	}, "the update replaces its first machine")
	// The update completed at once (one step): abort it by rolling back.
	require.NoError(t, f.mgr.Rollback(ctx, "python"))
	require.NoError(t, <-done)
	creates := 0
	for _, e := range f.log.take() {
		if len(e) > 10 && e[:10] == "create 2.0" {
			creates++
		}
	}
	assert.Less(t, creates, 6, "the update's pass stopped for the rollback")
	assert.Equal(t, map[string]int{"1.0": 6}, f.count("python"))
}
