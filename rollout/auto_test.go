package rollout_test

import (
	"context"
	"math"
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

func TestAutoStep(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	var rate struct {
		sync.Mutex
		v float64
	}
	setRate := func(v float64) { rate.Lock(); rate.v = v; rate.Unlock() }
	src := rollout.ErrorRateFunc(func(_ context.Context, lang, old, new string) (float64, float64, error) {
		rate.Lock()
		defer rate.Unlock()
		return 0, rate.v, nil
	})
	f := newFixture(t, rollout.Options{Now: clock.Now,
		Auto: &rollout.AutoOptions{Source: src, StepAfter: time.Minute, MaxErrorRate: 0.05}})
	ctx := context.Background()
	f.create("python", 2)

	d, err := f.mgr.AutoStep(ctx, "python")
	require.NoError(t, err)
	assert.Equal(t, rollout.AutoNone, d, "no update in progress")

	require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
	steps := []struct {
		advance time.Duration
		rate    float64
		want    rollout.AutoDecision
		step    int // 0-based step afterwards; -1 when no update
	}{
		{30 * time.Second, 0, rollout.AutoNone, 0}, // too early
		{30 * time.Second, 0.01, rollout.AutoAdvanced, 1},
		{time.Minute, math.NaN(), rollout.AutoNone, 1}, // no traffic: wait
		{0, 0.05, rollout.AutoAdvanced, 2},             // at the threshold passes
		{time.Minute, 0.5, rollout.AutoAborted, -1},
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		setRate(s.rate)
		d, err := f.mgr.AutoStep(ctx, "python")
		require.NoError(t, err)
		assert.Equal(t, s.want, d, "round %d", i)
		ph, _ := f.mgr.Phase("python")
		if s.step < 0 {
			assert.False(t, ph.Updating(), "round %d", i)
		} else {
			require.True(t, ph.Updating(), "round %d", i)
			assert.Equal(t, s.step, ph.Step, "round %d", i)
		}
	}
	assert.Equal(t, map[string]int{"1.0": 2}, f.count("python"), "an aborted update leaves every machine on the current version")
	r, _ := f.router.Ratio("python")
	assert.Equal(t, map[string]int{"1.0": 100}, r)
}

func TestAutoModeRuns(t *testing.T) {
	src := rollout.ErrorRateFunc(func(context.Context, string, string, string) (float64, float64, error) { return 0, 0, nil })
	f := newFixture(t, rollout.Options{Auto: &rollout.AutoOptions{Source: src, StepAfter: 20 * time.Millisecond}})
	f.create("python", 2)
	f.run()
	require.NoError(t, f.mgr.InitUpdate(context.Background(), "python", "2.0"))
	eventually(t, func() bool {
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
