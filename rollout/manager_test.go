package rollout_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/rollout"
	"github.com/fleetkit/fleetkit/rollout/rollouttest"
)

func TestSurgeOrderForwardAndRollback(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	ctx := context.Background()
	addrs := f.create("python", 2)
	a, b := addrs[0], addrs[1]
	require.Equal(t, map[string]int{"1.0": 2}, f.count("python"))
	f.log.take()

	// Step 1: one machine moves, surge first, then the traffic.
	require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
	ev := f.log.take()
	require.Len(t, ev, 6, "%q", ev)
	c := ev[0][len("create 2.0 "):]
	assert.Equal(t, []string{
		"create 2.0 " + c,
		"healthy " + c,
		"router.add python 2.0 " + uri(c),
		"router.remove " + uri(a),
		"remove " + a,
		"router.ratio python map[1.0:99 2.0:1]",
	}, ev)
	assert.Equal(t, map[string]string{b: "1.0", c: "2.0"}, f.versions("python"))

	// Steps 2-4: with two machines the split stays 1+1; only traffic moves.
	for _, want := range []string{"map[1.0:95 2.0:5]", "map[1.0:90 2.0:10]", "map[1.0:50 2.0:50]"} {
		require.NoError(t, f.mgr.Update(ctx, "python"))
		assert.Equal(t, []string{"router.ratio python " + want}, f.log.take())
	}

	// Step 5 (100%): the last old machine is replaced, then all traffic moves.
	require.NoError(t, f.mgr.Update(ctx, "python"))
	ev = f.log.take()
	require.Len(t, ev, 6, "%q", ev)
	d := ev[0][len("create 2.0 "):]
	assert.Equal(t, []string{
		"create 2.0 " + d,
		"healthy " + d,
		"router.add python 2.0 " + uri(d),
		"router.remove " + uri(b),
		"remove " + b,
		"router.ratio python map[2.0:100]",
	}, ev)
	ph, err := f.mgr.Phase("python")
	require.NoError(t, err)
	assert.Equal(t, "2.0", ph.Current, "the update completed")
	assert.False(t, ph.Updating())

	err = f.mgr.Update(ctx, "python")
	require.ErrorIs(t, err, rollout.ErrLastStep)
	assert.Empty(t, f.log.take())

	// Rollback: the machine back to 1.0 first (full capacity of the
	// version traffic goes back to), then traffic, then the surplus goes.
	require.NoError(t, f.mgr.Rollback(ctx, "python"))
	ev = f.log.take()
	require.Len(t, ev, 6, "%q", ev)
	e := ev[0][len("create 1.0 "):]
	assert.Equal(t, []string{
		"create 1.0 " + e,
		"healthy " + e,
		"router.add python 1.0 " + uri(e),
		"router.ratio python map[1.0:50 2.0:50]",
		"router.remove " + uri(c),
		"remove " + c,
	}, ev)

	// Back to the first step, then cancel: all on 1.0 again.
	for range 3 {
		require.NoError(t, f.mgr.Rollback(ctx, "python"))
	}
	f.log.take()
	require.NoError(t, f.mgr.Rollback(ctx, "python"))
	ev = f.log.take()
	require.Len(t, ev, 6, "%q", ev)
	assert.Equal(t, "router.ratio python map[1.0:100]", ev[3])
	assert.Equal(t, "router.remove "+uri(d), ev[4])
	assert.Equal(t, map[string]int{"1.0": 2}, f.count("python"))
	ph, err = f.mgr.Phase("python")
	require.NoError(t, err)
	assert.Equal(t, rollout.Phase{Current: "1.0", Changed: ph.Changed}, ph)

	err = f.mgr.Rollback(ctx, "python")
	require.ErrorIs(t, err, rollout.ErrNoUpdate)
	assert.Empty(t, f.count("java"), "java untouched")
}

func TestMachineRatioAtEveryStep(t *testing.T) {
	for _, n := range []int{1, 3, 5, 10} {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			f := newFixture(t, rollout.Options{})
			ctx := context.Background()
			f.create("java", n)
			require.NoError(t, f.mgr.InitUpdate(ctx, "java", "2.0"))
			for i, p := range rollout.DefaultSteps() {
				if i > 0 {
					require.NoError(t, f.mgr.Update(ctx, "java"))
				}
				old, new := rollout.MachineSplit(n, p)
				want := map[string]int{}
				if old > 0 {
					want["1.0"] = old
				}
				if new > 0 {
					want["2.0"] = new
				}
				assert.Equal(t, want, f.count("java"), "step %d%%", p)
				assert.Len(t, f.router.Held(), n, "every live machine is routed")
			}
			for i := len(rollout.DefaultSteps()) - 2; i >= 0; i-- {
				require.NoError(t, f.mgr.Rollback(ctx, "java"))
				old, new := rollout.MachineSplit(n, rollout.DefaultSteps()[i])
				assert.Equal(t, old, f.count("java")["1.0"], "rollback to step %d", i+1)
				assert.Equal(t, new, f.count("java")["2.0"], "rollback to step %d", i+1)
			}
		})
	}
}

func TestCreateGetsTheShortVersion(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	ctx := context.Background()
	f.create("python", 2)
	require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
	// Step 1% of 3 machines: 1 new; 1 exists, so the new machine is old.
	mc, err := f.mgr.Create(ctx, "python")
	require.NoError(t, err)
	assert.Equal(t, "1.0", versionOf(mc))
	for range 3 {
		require.NoError(t, f.mgr.Update(ctx, "python"))
	}
	// Step 50% of 3 machines: 2 new.
	assert.Equal(t, map[string]int{"1.0": 1, "2.0": 2}, f.count("python"))
	// Of 4: 2 new, 2 old: the created one is old.
	mc, err = f.mgr.Create(ctx, "python")
	require.NoError(t, err)
	assert.Equal(t, "1.0", versionOf(mc))
	// Of 5: ceil(2.5) = 3 new.
	mc, err = f.mgr.Create(ctx, "python")
	require.NoError(t, err)
	assert.Equal(t, "2.0", versionOf(mc))
	assert.Equal(t, map[string]int{"1.0": 2, "2.0": 3}, f.count("python"))
}

func TestCreateDuringUpdateIsSerialized(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	ctx := context.Background()
	f.create("python", 4)
	require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
	for range 2 {
		require.NoError(t, f.mgr.Update(ctx, "python"))
	}
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, f.mgr.Update(ctx, "python")) }) // to 50%
	for range 3 {
		wg.Go(func() {
			_, err := f.mgr.Create(ctx, "python")
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	require.NoError(t, f.mgr.Reconcile(ctx, "python"))
	old, new := rollout.MachineSplit(7, 50)
	assert.Equal(t, map[string]int{"1.0": old, "2.0": new}, f.count("python"))
}

func TestRemove(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	ctx := context.Background()
	addrs := f.create("python", 2)
	f.log.take()
	require.NoError(t, f.mgr.Remove(ctx, addrs[0]))
	assert.Equal(t, []string{"router.remove " + uri(addrs[0]), "remove " + addrs[0]}, f.log.take())
	assert.Equal(t, map[string]string{addrs[1]: "1.0"}, f.versions("python"))
	require.ErrorIs(t, f.mgr.Remove(ctx, addrs[0]), rollout.ErrUnknownMachine)
	require.ErrorIs(t, f.mgr.Remove(ctx, ""), rollout.ErrInvalidRequest)
}

func TestRemoveKeepsTheSplit(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	f.run()
	ctx := context.Background()
	f.create("python", 3)
	require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
	var newAddr string
	for a, v := range f.versions("python") {
		if v == "2.0" {
			newAddr = a
		}
	}
	// Removing the only new machine leaves 2: the reconciler brings one back.
	require.NoError(t, f.mgr.Remove(ctx, newAddr))
	eventually(t, func() bool {
		c := f.count("python")
		return c["1.0"] == 1 && c["2.0"] == 1
	}, "split 1+1 after removing the new machine: %v", f.count("python"))
}

func TestOperationErrors(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	ctx := context.Background()
	_, err := f.mgr.Create(ctx, "cobol")
	require.ErrorIs(t, err, rollout.ErrUnknownLanguage)
	_, err = f.mgr.Create(ctx, "")
	require.ErrorIs(t, err, rollout.ErrInvalidRequest)
	require.ErrorIs(t, f.mgr.InitUpdate(ctx, "python", "9.9"), rollout.ErrUnknownVersion)
	require.ErrorIs(t, f.mgr.InitUpdate(ctx, "python", "1.0"), rollout.ErrSameVersion)
	require.ErrorIs(t, f.mgr.Update(ctx, "python"), rollout.ErrNoUpdate)
	require.ErrorIs(t, f.mgr.Rollback(ctx, "python"), rollout.ErrNoUpdate)
	require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
	require.ErrorIs(t, f.mgr.InitUpdate(ctx, "python", "1.2"), rollout.ErrUpdateInProgress)
}

func TestProviderAndRouterFailures(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	ctx := context.Background()
	f.create("python", 1)

	f.provider.FailCreates(1, nil)
	_, err := f.mgr.Create(ctx, "python")
	require.ErrorIs(t, err, rollout.ErrMachines)
	require.ErrorIs(t, err, machines.ErrStartTimeout)

	f.router.Fail(rollouttest.OpAdd, 1, nil)
	_, err = f.mgr.Create(ctx, "python")
	require.ErrorIs(t, err, rollout.ErrRouter)
	assert.Len(t, f.versions("python"), 1, "a machine the router refused is not left behind")

	// A step whose convergence fails stands, and a later reconcile finishes it.
	f.router.Fail(rollouttest.OpAdd, 1, nil)
	err = f.mgr.InitUpdate(ctx, "python", "2.0")
	require.ErrorIs(t, err, rollout.ErrRouter)
	ph, _ := f.mgr.Phase("python")
	assert.Equal(t, "2.0", ph.Target)
	require.NoError(t, f.mgr.Reconcile(ctx, "python"))
	assert.Equal(t, map[string]int{"2.0": 1}, f.count("python"))
	r, _ := f.router.Ratio("python")
	assert.Equal(t, map[string]int{"1.0": 99, "2.0": 1}, r)
}

func TestRunRetriesFailedConvergence(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	f.create("python", 2)
	f.run()
	eventually(t, func() bool {
		_, py := f.router.Ratio("python")
		_, java := f.router.Ratio("java")
		return py && java
	}, "Run sets every ratio at start")
	f.router.Fail(rollouttest.OpRatio, 1, nil)
	require.ErrorIs(t, f.mgr.InitUpdate(context.Background(), "python", "2.0"), rollout.ErrRouter)
	eventually(t, func() bool {
		r, _ := f.router.Ratio("python")
		return r["2.0"] == 1
	}, "the ratio is set after a retry")
}

func TestUnhealthyMachine(t *testing.T) {
	for _, replace := range []bool{false, true} {
		t.Run(map[bool]string{false: "kept", true: "replaced"}[replace], func(t *testing.T) {
			f := newFixture(t, rollout.Options{HealthInterval: 20 * time.Millisecond, HealthTimeout: time.Second, ReplaceUnhealthy: replace})
			ctx := context.Background()
			addrs := f.create("python", 2)
			f.run()
			all, err := f.provider.List(ctx, nil)
			require.NoError(t, err)
			require.NoError(t, f.provider.SetUnhealthy(all[0].ID, true))

			eventually(t, func() bool {
				_, in := f.router.Held()[uri(addrs[0])]
				return !in
			}, "the unhealthy machine leaves the router")
			if !replace {
				st, err := f.mgr.Status(ctx)
				require.NoError(t, err)
				var got []rollout.MachineStatus
				for _, l := range st.Languages {
					if l.Language == "python" {
						got = l.Machines
					}
				}
				require.Len(t, got, 2, "the unhealthy machine stays in the status")
				assert.False(t, got[0].Healthy)
				assert.Contains(t, got[0].Reason, "health check failed")
				assert.True(t, got[1].Healthy)
				// It stays unhealthy, even when it answers again.
				require.NoError(t, f.provider.SetUnhealthy(all[0].ID, false))
				require.NoError(t, f.mgr.Reconcile(ctx, "python"))
				assert.Len(t, f.versions("python"), 1)
				assert.Len(t, f.router.Held(), 1)
				return
			}
			eventually(t, func() bool { return len(f.versions("python")) == 2 && len(f.router.Held()) == 2 },
				"a replacement is created")
			_, still := f.versions("python")[addrs[0]]
			assert.False(t, still)
			all, err = f.provider.List(ctx, nil)
			require.NoError(t, err)
			assert.Len(t, all, 2, "the unhealthy machine is removed")
		})
	}
}

func TestExitedMachineIsUnhealthy(t *testing.T) {
	f := newFixture(t, rollout.Options{HealthInterval: time.Hour})
	addrs := f.create("python", 2)
	f.run()
	all, err := f.provider.List(context.Background(), nil)
	require.NoError(t, err)
	require.NoError(t, f.provider.Kill(all[1].ID))
	eventually(t, func() bool {
		_, in := f.router.Held()[uri(addrs[1])]
		return !in
	}, "the exited machine leaves the router (seen from the exit event, not a health check)")
	assert.Equal(t, map[string]string{addrs[0]: "1.0"}, f.versions("python"))
}

func TestRestartRediscovers(t *testing.T) {
	dir := t.TempDir()
	f := newFixture(t, rollout.Options{StateFile: filepath.Join(dir, "state.json")})
	ctx := context.Background()
	f.create("python", 3)
	f.create("java", 1)
	require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
	require.NoError(t, f.mgr.Update(ctx, "python"))
	// A machine some other manager owns on the same provider is ignored.
	_, err := f.provider.Create(ctx, linterSpec("python", "1.0", "other"))
	require.NoError(t, err)

	// A new manager with a new (empty) router: the phase comes from the
	// state file, the machines from the provider, the router is re-synced.
	router2 := rollouttest.NewRouter(rollouttest.Options{})
	m2 := f.newManager(router2)
	ph, err := m2.Phase("python")
	require.NoError(t, err)
	assert.Equal(t, "2.0", ph.Target)
	assert.Equal(t, 1, ph.Step)
	require.NoError(t, m2.Sync(ctx))
	assert.Len(t, router2.Held(), 4)
	r, _ := router2.Ratio("python")
	assert.Equal(t, map[string]int{"1.0": 95, "2.0": 5}, r)
	r, _ = router2.Ratio("java")
	assert.Equal(t, map[string]int{"1.0": 100}, r)
	for _, c := range router2.Calls() {
		assert.NotEqual(t, rollouttest.OpRemove, c.Op, "nothing moves: %v", c)
	}

	// And it carries on where the old one stopped.
	require.NoError(t, m2.Update(ctx, "python"))
	r, _ = router2.Ratio("python")
	assert.Equal(t, map[string]int{"1.0": 90, "2.0": 10}, r)
}

func TestNewValidates(t *testing.T) {
	good := langs("1.0", "2.0")
	tests := []struct {
		name string
		opts rollout.Options
		err  string
	}{
		{"no languages", rollout.Options{}, "no languages"},
		{"bad steps", rollout.Options{Languages: good, Steps: []int{50}}, "must be 100"},
		{"negative timeout", rollout.Options{Languages: good, StartTimeout: -1}, "negative"},
		{"auto without metrics", rollout.Options{Languages: good, Auto: &rollout.AutoOptions{}}, "Options.Metrics"},
		{"version not configured", rollout.Options{Languages: map[string]rollout.Language{
			"python": {Version: "3.0", Versions: good["python"].Versions}}}, "not one of its versions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := rollout.New(&recProvider{}, rollouttest.NewRouter(rollouttest.Options{}), tt.opts)
			require.ErrorIs(t, err, rollout.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
	_, err := rollout.New(nil, nil, rollout.Options{Languages: good})
	require.ErrorIs(t, err, rollout.ErrInvalidConfig)
}

func TestStateFileVersionMustBeConfigured(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	require.NoError(t, rollout.SaveState(path, rollout.State{Phases: map[string]rollout.Phase{"python": {Current: "7.0"}}}))
	_, err := rollout.New(&recProvider{}, rollouttest.NewRouter(rollouttest.Options{}),
		rollout.Options{Languages: langs("1.0", "2.0"), StateFile: path})
	require.ErrorIs(t, err, rollout.ErrInvalidConfig)
	assert.Contains(t, err.Error(), `"7.0"`)
}

func TestVanishedMachineLeavesTheRouter(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	ctx := context.Background()
	addrs := f.create("python", 2)
	all, err := f.provider.List(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, f.provider.Provider.Remove(ctx, all[0].ID)) // behind the manager's back
	require.NoError(t, f.mgr.Reconcile(ctx, "python"))
	held := f.router.Held()
	assert.NotContains(t, held, uri(addrs[0]), "the vanished machine left the router")
	assert.Contains(t, held, uri(addrs[1]))
	assert.Len(t, held, 2, "a machine replaced it: the language wants two")
	v := f.versions("python")
	assert.Len(t, v, 2)
	assert.NotContains(t, v, addrs[0])
}

func TestStaleBackendsArePruned(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	ctx := context.Background()
	addrs := f.create("python", 1)
	// Left by a previous run whose machines are gone.
	require.NoError(t, f.router.AddBackend(ctx, "python", "1.0", "http://127.0.0.1:1"))
	require.NoError(t, f.router.AddBackend(ctx, "other", "1.0", "http://127.0.0.1:2"))
	require.NoError(t, f.mgr.Reconcile(ctx, "python"))
	assert.Equal(t, map[string]rollouttest.Backend{
		uri(addrs[0]):        {Lang: "python", Version: "1.0"},
		"http://127.0.0.1:2": {Lang: "other", Version: "1.0"},
	}, f.router.Held(), "the stale python backend is gone; other languages are not the manager's")
}
