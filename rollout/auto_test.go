package rollout_test

import (
	"context"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/rollout"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time // guarded by mu
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// fakeMetrics is a MetricsSource whose cumulative counters the test adds
// to, with a latency histogram of three buckets (10 ms, 100 ms, 1 s).
type fakeMetrics struct {
	mu sync.Mutex
	// byVersion is guarded by mu.
	byVersion map[string]rollout.VersionCounters
}

var latencyBounds = []float64{0.01, 0.1, 1, math.Inf(1)}

// serve counts n requests of version, failed of them failing, each taking
// latency.
func (f *fakeMetrics) serve(version string, n, failed int, latency time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.byVersion == nil {
		f.byVersion = map[string]rollout.VersionCounters{}
	}
	vc := f.byVersion[version]
	if vc.Latency == nil {
		for _, b := range latencyBounds {
			vc.Latency = append(vc.Latency, rollout.Bucket{UpperBound: b})
		}
	}
	vc.Requests += float64(n)
	vc.Failures += float64(failed)
	for i := range vc.Latency {
		if latency.Seconds() <= vc.Latency[i].UpperBound {
			vc.Latency[i].Count += float64(n)
		}
	}
	f.byVersion[version] = vc
}

func (f *fakeMetrics) Sample(_ context.Context, lang string) (map[string]rollout.VersionCounters, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]rollout.VersionCounters{}
	for v, vc := range f.byVersion {
		vc.Latency = append([]rollout.Bucket(nil), vc.Latency...)
		out[v] = vc
	}
	return out, nil
}

// autoFixture is a fixture in the automatic mode on a fake clock.
func autoFixture(t *testing.T, auto rollout.AutoOptions) (*fixture, *fakeClock, *fakeMetrics) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	src := &fakeMetrics{}
	f := newFixture(t, rollout.Options{Now: clock.Now, Metrics: src, Auto: &auto})
	return f, clock, src
}

func phaseStep(t *testing.T, f *fixture) int {
	ph, err := f.mgr.Phase("python")
	require.NoError(t, err)
	if !ph.Updating() {
		return -1
	}
	return ph.Step
}

// TestAutoStep walks the automatic mode through every outcome on a fake
// clock: baking, waiting for traffic, passing at the threshold, the last
// step held and judged before the update completes.
func TestAutoStep(t *testing.T) {
	f, clock, src := autoFixture(t, rollout.AutoOptions{StepAfter: time.Minute, MaxErrorRate: 0.05, MinRequests: 10})
	ctx := context.Background()
	f.create("python", 2)

	d, err := f.mgr.AutoStep(ctx, "python")
	require.NoError(t, err)
	assert.Equal(t, rollout.AutoNone, d, "no update in progress")

	require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
	judge := func(advance time.Duration, want rollout.AutoDecision, wantStep int, result string) {
		t.Helper()
		clock.Advance(advance)
		d, err := f.mgr.AutoStep(ctx, "python")
		require.NoError(t, err)
		assert.Equal(t, want, d)
		assert.Equal(t, wantStep, phaseStep(t, f))
		vs := f.mgr.Verdicts("python")
		require.NotEmpty(t, vs)
		assert.Equal(t, result, vs[len(vs)-1].Result, vs[len(vs)-1].Reason)
	}
	judge(0, rollout.AutoNone, 0, rollout.VerdictRunning) // the first sample
	src.serve("1.0", 990, 0, 5*time.Millisecond)
	src.serve("2.0", 10, 0, 5*time.Millisecond)
	judge(30*time.Second, rollout.AutoNone, 0, rollout.VerdictRunning) // baking
	src.serve("2.0", 10, 0, 5*time.Millisecond)
	judge(30*time.Second, rollout.AutoAdvanced, 1, rollout.VerdictPass)
	judge(time.Minute, rollout.AutoNone, 1, rollout.VerdictWaiting) // no traffic in the step
	src.serve("1.0", 100, 0, 5*time.Millisecond)
	src.serve("2.0", 20, 1, 5*time.Millisecond) // 5 %: at the threshold passes
	judge(0, rollout.AutoAdvanced, 2, rollout.VerdictPass)
	for step := 3; step <= 4; step++ {
		src.serve("1.0", 100, 0, 5*time.Millisecond)
		src.serve("2.0", 100, 0, 5*time.Millisecond)
		judge(time.Minute, rollout.AutoAdvanced, step, rollout.VerdictPass)
	}
	ph, _ := f.mgr.Phase("python")
	assert.Equal(t, 100, ph.Percent(f.mgr.Steps()), "held at the last step: judged like the others")
	assert.Equal(t, map[string]int{"2.0": 2}, f.count("python"))
	src.serve("2.0", 100, 0, 5*time.Millisecond) // the stable version has no traffic left: its latency from before counts
	judge(time.Minute, rollout.AutoAdvanced, -1, rollout.VerdictPass)
	ph, _ = f.mgr.Phase("python")
	assert.Equal(t, rollout.Phase{Current: "2.0", Previous: "1.0", Changed: clock.Now()}, ph, "complete")
}

// TestAutoAbortsAtAnyStep fails a step on each signal — error rate,
// latency (p50 and p99 against the stable version's, also at 100 % where
// the stable version has no traffic), machines of the new version dying —
// at the first step and at the last, and checks the fleet is back on the
// stable version at full size.
func TestAutoAbortsAtAnyStep(t *testing.T) {
	type fault struct {
		name   string
		inject func(f *fixture, src *fakeMetrics)
		reason string
	}
	faults := []fault{
		{"errors", func(_ *fixture, src *fakeMetrics) { src.serve("2.0", 20, 3, 5*time.Millisecond) }, "error rate"},
		{"slow", func(_ *fixture, src *fakeMetrics) {
			src.serve("1.0", 100, 0, 5*time.Millisecond)
			src.serve("2.0", 20, 0, 900*time.Millisecond)
		}, "latency"},
		{"crash", func(f *fixture, _ *fakeMetrics) {
			all, err := f.provider.List(context.Background(), nil)
			require.NoError(t, err)
			for _, mc := range all {
				if versionOf(mc) == "2.0" && langOf(mc) == "python" {
					require.NoError(t, f.provider.Kill(mc.ID))
					break
				}
			}
		}, "exited or failed a health check"},
	}
	for _, lastStep := range []bool{false, true} {
		for _, ft := range faults {
			name := ft.name + "/first-step"
			if lastStep {
				name = ft.name + "/last-step"
			}
			t.Run(name, func(t *testing.T) {
				f, clock, src := autoFixture(t, rollout.AutoOptions{StepAfter: time.Minute, MinRequests: 10})
				f.run()
				ctx := context.Background()
				f.create("python", 4)
				require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
				clock.Advance(time.Second)
				steps := 1
				if lastStep {
					steps = len(f.mgr.Steps())
				}
				for i := 1; i < steps; i++ {
					_, err := f.mgr.AutoStep(ctx, "python")
					require.NoError(t, err)
					src.serve("1.0", 100, 0, 5*time.Millisecond)
					src.serve("2.0", 100, 0, 5*time.Millisecond)
					clock.Advance(time.Minute)
					d, err := f.mgr.AutoStep(ctx, "python")
					require.NoError(t, err)
					require.Equal(t, rollout.AutoAdvanced, d, "step %d passes", i)
				}
				require.Equal(t, steps-1, phaseStep(t, f))
				clock.Advance(time.Second)
				_, err := f.mgr.AutoStep(ctx, "python") // the step's first sample
				require.NoError(t, err)
				ft.inject(f, src)
				var d rollout.AutoDecision
				eventually(t, func() bool {
					clock.Advance(time.Millisecond)
					d, err = f.mgr.AutoStep(ctx, "python")
					require.NoError(t, err)
					return d != rollout.AutoNone
				}, "the step is judged")
				assert.Equal(t, rollout.AutoAborted, d, "failed before the bake time is over")
				vs := f.mgr.Verdicts("python")
				assert.Equal(t, rollout.VerdictFail, vs[len(vs)-1].Result)
				assert.Contains(t, vs[len(vs)-1].Reason, ft.reason)
				eventually(t, func() bool { return f.count("python")["1.0"] == 4 && len(f.count("python")) == 1 },
					"the stable version's full capacity is back: %v", f.count("python"))
				r, _ := f.router.Ratio("python")
				assert.Equal(t, map[string]int{"1.0": 100}, r)
			})
		}
	}
}

func TestAutoModeRuns(t *testing.T) {
	src := &fakeMetrics{}
	f := newFixture(t, rollout.Options{Metrics: src,
		Auto: &rollout.AutoOptions{StepAfter: 20 * time.Millisecond, MinRequests: 1}})
	f.create("python", 2)
	f.run()
	require.NoError(t, f.mgr.InitUpdate(context.Background(), "python", "2.0"))
	eventually(t, func() bool {
		src.serve("1.0", 1, 0, time.Millisecond)
		src.serve("2.0", 1, 0, time.Millisecond)
		ph, _ := f.mgr.Phase("python")
		c := f.count("python")
		return ph.Current == "2.0" && !ph.Updating() && c["2.0"] == 2 && c["1.0"] == 0
	}, "the automatic mode walks every step")
}

func TestAutoStepOff(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	_, err := f.mgr.AutoStep(context.Background(), "python")
	require.ErrorIs(t, err, rollout.ErrInvalidConfig)
}

// A machine of the new version that never served — what an interrupted
// create leaves (a container created but never started) — is no failure
// of the version: a restarted manager replaces it and the step goes on.
// (The Docker fault suite found the abort this caused.)
func TestAutoIgnoresMachinesThatNeverServed(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	src := &fakeMetrics{}
	f := newFixture(t, rollout.Options{Now: clock.Now, Metrics: src, StateFile: filepath.Join(t.TempDir(), "state.json"),
		Auto: &rollout.AutoOptions{StepAfter: time.Minute, MinRequests: 10}})
	ctx := context.Background()
	f.create("python", 4)
	require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
	restarted := f.newManager(f.router)
	left, err := f.provider.Create(ctx, linterSpec("python", "2.0", rollout.DefaultName))
	require.NoError(t, err)
	require.NoError(t, f.provider.Kill(left.ID))
	require.NoError(t, restarted.Reconcile(ctx, "python"))
	src.serve("1.0", 100, 0, 5*time.Millisecond)
	src.serve("2.0", 100, 0, 5*time.Millisecond)
	_, err = restarted.AutoStep(ctx, "python")
	require.NoError(t, err)
	clock.Advance(time.Minute)
	src.serve("1.0", 100, 0, 5*time.Millisecond)
	src.serve("2.0", 100, 0, 5*time.Millisecond)
	d, err := restarted.AutoStep(ctx, "python")
	require.NoError(t, err)
	assert.Equal(t, rollout.AutoAdvanced, d, "%v", restarted.Verdicts("python"))
}
