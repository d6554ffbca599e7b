package health_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/machines/health"
)

// target is a health endpoint whose answer the test controls.
type target struct {
	srv    *httptest.Server
	status atomic.Int32
	delay  atomic.Int64 // nanoseconds
	hits   atomic.Int32
}

func newTarget(t *testing.T) *target {
	tg := &target{}
	tg.status.Store(http.StatusOK)
	tg.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.hits.Add(1)
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		if d := time.Duration(tg.delay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		w.WriteHeader(int(tg.status.Load()))
		fmt.Fprint(w, `{"version":"1.0","language":"python","requestCount":7}`)
	}))
	t.Cleanup(tg.srv.Close)
	return tg
}

func (tg *target) addr() string { return strings.TrimPrefix(tg.srv.URL, "http://") }

func newChecker(t *testing.T, opts health.Options) *health.Checker {
	t.Helper()
	c, err := health.New(opts)
	require.NoError(t, err)
	return c
}

func TestNewValidates(t *testing.T) {
	tests := []struct {
		name string
		opts health.Options
	}{
		{"negative interval", health.Options{Interval: -time.Second}},
		{"negative timeout", health.Options{Timeout: -time.Second}},
		{"negative threshold", health.Options{FailureThreshold: -1}},
		{"relative path", health.Options{Path: "health"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := health.New(tt.opts)
			require.ErrorIs(t, err, health.ErrInvalidOptions)
		})
	}
}

func TestThreshold(t *testing.T) {
	tests := []struct {
		threshold int
		// states after each failing check, the target having been healthy.
		want []health.State
	}{
		{0, []health.State{health.Unhealthy}}, // default: one failure
		{1, []health.State{health.Unhealthy}},
		{3, []health.State{health.Healthy, health.Healthy, health.Unhealthy}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.threshold), func(t *testing.T) {
			tg := newTarget(t)
			c := newChecker(t, health.Options{FailureThreshold: tt.threshold})
			c.Add(health.Target{ID: "m1", Address: tg.addr()})

			ev := c.Check(t.Context())
			require.Len(t, ev, 1)
			assert.Equal(t, health.Healthy, ev[0].State)
			assert.True(t, ev[0].Changed, "unknown -> healthy is a change")

			tg.status.Store(http.StatusInternalServerError)
			for i, want := range tt.want {
				ev := c.Check(t.Context())
				require.Len(t, ev, 1, "check %d", i+1)
				assert.Equal(t, want, ev[0].State, "check %d", i+1)
				assert.Equal(t, i+1, ev[0].Failures)
				assert.Error(t, ev[0].LastErr)
				assert.Equal(t, want == health.Unhealthy, ev[0].Changed)
			}
		})
	}
}

func TestUnhealthyStaysUnhealthyUntilReadded(t *testing.T) {
	tg := newTarget(t)
	c := newChecker(t, health.Options{})
	c.Add(health.Target{ID: "m1", Address: tg.addr()})
	tg.status.Store(http.StatusServiceUnavailable)
	ev := c.Check(t.Context())
	require.Len(t, ev, 1)
	require.Equal(t, health.Unhealthy, ev[0].State)

	tg.status.Store(http.StatusOK)
	hits := tg.hits.Load()
	assert.Empty(t, c.Check(t.Context()), "an unhealthy target is not checked again")
	assert.Equal(t, hits, tg.hits.Load())
	s, ok := c.Status("m1")
	require.True(t, ok)
	assert.Equal(t, health.Unhealthy, s.State)

	c.Add(health.Target{ID: "m1", Address: tg.addr()})
	s, _ = c.Status("m1")
	assert.Equal(t, health.Unknown, s.State, "adding again resets the target")
	ev = c.Check(t.Context())
	require.Len(t, ev, 1)
	assert.Equal(t, health.Healthy, ev[0].State)
}

func TestTimeout(t *testing.T) {
	tg := newTarget(t)
	// The target never answers in time: Check returning at all shows the
	// timeout works.
	tg.delay.Store(int64(time.Hour))
	c := newChecker(t, health.Options{Timeout: 50 * time.Millisecond})
	c.Add(health.Target{ID: "slow", Address: tg.addr()})
	ev := c.Check(t.Context())
	require.Len(t, ev, 1)
	assert.Equal(t, health.Unhealthy, ev[0].State)
	assert.ErrorIs(t, ev[0].LastErr, context.DeadlineExceeded)
}

func TestUnreachableAndWrongPath(t *testing.T) {
	tg := newTarget(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadAddr := strings.TrimPrefix(dead.URL, "http://")
	dead.Close()
	tests := []struct {
		name, path, addr string
		want             health.State
	}{
		{"healthy", "", tg.addr(), health.Healthy},
		{"custom path 404", "/ready", tg.addr(), health.Unhealthy},
		{"connection refused", "", deadAddr, health.Unhealthy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChecker(t, health.Options{Path: tt.path})
			c.Add(health.Target{ID: "x", Address: tt.addr})
			ev := c.Check(t.Context())
			require.Len(t, ev, 1)
			assert.Equal(t, tt.want, ev[0].State)
		})
	}
}

func TestInfo(t *testing.T) {
	tg := newTarget(t)
	c := newChecker(t, health.Options{})
	c.Add(health.Target{ID: "m1", Address: tg.addr()})
	_, err := (health.Status{}).Info()
	require.Error(t, err)
	ev := c.Check(t.Context())
	require.Len(t, ev, 1)
	info, err := ev[0].Info()
	require.NoError(t, err)
	assert.Equal(t, health.Info{Version: "1.0", Language: "python", RequestCount: 7}, info)
}

func TestRunNotifiesAndFollowsTargets(t *testing.T) {
	a, b := newTarget(t), newTarget(t)
	var (
		mu     sync.Mutex
		events []health.Event
	)
	c := newChecker(t, health.Options{
		Interval: 20 * time.Millisecond,
		Notify: func(e health.Event) {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		},
	})
	changes := func(id string) []health.State {
		mu.Lock()
		defer mu.Unlock()
		var out []health.State
		for _, e := range events {
			if e.Target.ID == id && e.Changed {
				out = append(out, e.State)
			}
		}
		return out
	}
	c.Add(health.Target{ID: "a", Address: a.addr()})

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()

	require.Eventually(t, func() bool { return len(changes("a")) == 1 }, 5*time.Second, 5*time.Millisecond)
	// Added while running: checked without waiting for a tick.
	c.Add(health.Target{ID: "b", Address: b.addr()})
	require.Eventually(t, func() bool { return len(changes("b")) == 1 }, 5*time.Second, 5*time.Millisecond)

	b.status.Store(http.StatusInternalServerError)
	require.Eventually(t, func() bool {
		return assert.ObjectsAreEqual([]health.State{health.Healthy, health.Unhealthy}, changes("b"))
	}, 5*time.Second, 5*time.Millisecond)
	b.status.Store(http.StatusOK)
	hitsB := b.hits.Load()

	assert.True(t, c.Remove("a"))
	assert.False(t, c.Remove("a"))
	mu.Lock()
	n := len(events)
	mu.Unlock()
	// A healthy witness counts the passes: five of them go by.
	w := newTarget(t)
	c.Add(health.Target{ID: "witness", Address: w.addr()})
	require.Eventually(t, func() bool { return w.hits.Load() >= 5 }, 5*time.Second, 5*time.Millisecond)
	mu.Lock()
	for _, e := range events[n:] {
		assert.NotEqual(t, "a", e.Target.ID, "a removed target was checked")
	}
	mu.Unlock()
	assert.Equal(t, hitsB, b.hits.Load(), "an unhealthy target was checked again")
	assert.Equal(t, []health.State{health.Healthy, health.Unhealthy}, changes("b"))
	assert.True(t, c.Remove("witness"))

	statuses := c.Targets()
	require.Len(t, statuses, 1)
	assert.Equal(t, "b", statuses[0].Target.ID)

	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
}

func TestConcurrentAddRemoveWhileRunning(t *testing.T) {
	tg := newTarget(t)
	c := newChecker(t, health.Options{Interval: time.Millisecond, Notify: func(health.Event) {}})
	ctx, cancel := context.WithCancel(t.Context())
	var run, wg sync.WaitGroup
	run.Go(func() { _ = c.Run(ctx) })
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				id := fmt.Sprintf("t%d-%d", w, i%5)
				c.Add(health.Target{ID: id, Address: tg.addr()})
				_, _ = c.Status(id)
				_ = c.Targets()
				if i%2 == 0 {
					c.Remove(id)
				}
			}
		})
	}
	wg.Wait()
	// Run checks what is left.
	require.Eventually(t, func() bool {
		for _, s := range c.Targets() {
			if s.State == health.Unknown {
				return false
			}
		}
		return true
	}, 5*time.Second, time.Millisecond)
	cancel()
	run.Wait()
	for _, s := range c.Targets() {
		assert.NotEqual(t, health.Unhealthy, s.State, "%s", s.Target.ID)
	}
}
