package reconcile_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/internal/reconcile"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// recorder is a Reconciler that records its calls and answers with fn.
type recorder struct {
	mu    sync.Mutex
	calls map[string][]time.Duration // guarded by mu: call times since start, by key
	order []string                   // guarded by mu
	start time.Time
	fn    func(ctx context.Context, key string, n int) (reconcile.Result, error)
}

func newRecorder(fn func(ctx context.Context, key string, n int) (reconcile.Result, error)) *recorder {
	return &recorder{calls: map[string][]time.Duration{}, start: time.Now(), fn: fn}
}

func (r *recorder) Reconcile(ctx context.Context, key string) (reconcile.Result, error) {
	r.mu.Lock()
	r.calls[key] = append(r.calls[key], time.Since(r.start))
	r.order = append(r.order, key)
	n := len(r.calls[key])
	r.mu.Unlock()
	if r.fn == nil {
		return reconcile.Result{}, nil
	}
	return r.fn(ctx, key, n)
}

func (r *recorder) times(key string) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.calls[key]...)
}

// run starts e.Run and returns a function that stops it and waits.
func run(t *testing.T, e *reconcile.Engine) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	return func() {
		cancel()
		require.NoError(t, <-done)
	}
}

func newEngine(t *testing.T, r reconcile.Reconciler, opts reconcile.Options) *reconcile.Engine {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	e, err := reconcile.New(r, opts)
	require.NoError(t, err)
	return e
}

// inFlight counts the calls in flight and their peak.
type inFlight struct {
	mu      sync.Mutex
	n, most int // guarded by mu
}

// enter counts a call in; the function it returns counts it out.
func (g *inFlight) enter() func() {
	g.mu.Lock()
	g.n++
	g.most = max(g.most, g.n)
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.n--
		g.mu.Unlock()
	}
}

func (g *inFlight) peak() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most
}

func TestNewValidates(t *testing.T) {
	ok := reconcile.Func(func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, nil })
	for _, tc := range []struct {
		name string
		r    reconcile.Reconciler
		opts reconcile.Options
	}{
		{"no reconciler", nil, reconcile.Options{}},
		{"negative concurrency", ok, reconcile.Options{Concurrency: -1}},
		{"negative resync", ok, reconcile.Options{Resync: -time.Second}},
		{"max below base", ok, reconcile.Options{BaseBackoff: time.Second, MaxBackoff: time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := reconcile.New(tc.r, tc.opts)
			require.ErrorIs(t, err, reconcile.ErrInvalid)
		})
	}
}

func TestDedupAndLevelTriggered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var g inFlight
		r := newRecorder(func(_ context.Context, key string, n int) (reconcile.Result, error) {
			defer g.enter()()
			if n == 1 {
				<-release
			}
			return reconcile.Result{}, nil
		})
		e := newEngine(t, r, reconcile.Options{Concurrency: 4})
		// Queued three times before Run: one call.
		e.Enqueue("a")
		e.Enqueue("a")
		e.Enqueue("a")
		assert.Equal(t, 1, e.Len())
		stop := run(t, e)
		defer stop()
		synctest.Wait()
		require.Len(t, r.times("a"), 1, "the first call is blocked")
		// Enqueued three times while being reconciled: once more, after.
		e.Enqueue("a")
		e.Enqueue("a")
		e.Enqueue("a")
		synctest.Wait()
		assert.Len(t, r.times("a"), 1, "never two calls of one key at once")
		close(release)
		synctest.Wait()
		assert.Len(t, r.times("a"), 2)
		assert.Equal(t, 1, g.peak(), "calls of one key never overlap")
		assert.Equal(t, 0, e.Len())
	})
}

func TestConcurrencyBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var g inFlight
		r := newRecorder(func(ctx context.Context, key string, n int) (reconcile.Result, error) {
			defer g.enter()()
			<-release
			return reconcile.Result{}, nil
		})
		e := newEngine(t, r, reconcile.Options{Concurrency: 2})
		for _, k := range []string{"a", "b", "c", "d", "e"} {
			e.Enqueue(k)
		}
		stop := run(t, e)
		defer stop()
		synctest.Wait()
		assert.Equal(t, 2, g.peak())
		assert.Equal(t, 3, e.Len())
		close(release)
		synctest.Wait()
		assert.Equal(t, 2, g.peak())
		r.mu.Lock()
		assert.Equal(t, []string{"a", "b", "c", "d", "e"}, sortedCopy(r.order), "every key once")
		r.mu.Unlock()
	})
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		fail := errors.New("not yet")
		r := newRecorder(func(_ context.Context, key string, n int) (reconcile.Result, error) {
			if key == "a" && n <= 5 {
				return reconcile.Result{}, fail
			}
			if key == "b" && n <= 2 {
				return reconcile.Result{Requeue: true}, nil
			}
			return reconcile.Result{}, nil
		})
		e := newEngine(t, r, reconcile.Options{Name: "t", BaseBackoff: time.Second, MaxBackoff: 5 * time.Second, Registerer: reg})
		e.Enqueue("a")
		e.Enqueue("b")
		stop := run(t, e)
		defer stop()
		time.Sleep(time.Minute)
		synctest.Wait()
		// 1 s, 2 s, 4 s, then capped at 5 s; the sixth call succeeds.
		assert.Equal(t, []time.Duration{0, 1 * time.Second, 3 * time.Second, 7 * time.Second, 12 * time.Second, 17 * time.Second}, r.times("a"))
		assert.Equal(t, []time.Duration{0, time.Second, 3 * time.Second}, r.times("b"), "Requeue backs off as an error does")
		assert.Equal(t, 5.0, testutil.ToFloat64(counter(reg, "fleetkit_reconcile_errors_total")))
		assert.Equal(t, 7.0, testutil.ToFloat64(counter(reg, "fleetkit_reconcile_retries_total")))

		// A success reset the backoff: the next failure waits 1 s again.
		r.mu.Lock()
		r.fn = func(context.Context, string, int) (reconcile.Result, error) { return reconcile.Result{}, fail }
		r.mu.Unlock()
		e.Enqueue("a")
		synctest.Wait()
		at := time.Since(r.start)
		time.Sleep(time.Second)
		synctest.Wait()
		got := r.times("a")
		require.Len(t, got, 8)
		assert.Equal(t, at+time.Second, got[7])
	})
}

// counter returns the collector named name in reg as a single metric.
func counter(reg *prometheus.Registry, name string) prometheus.Collector {
	return collectorFunc(func(ch chan<- prometheus.Metric) {
		mfs, _ := reg.Gather()
		for _, mf := range mfs {
			if mf.GetName() == name {
				for _, m := range mf.GetMetric() {
					var v float64
					if c := m.GetCounter(); c != nil {
						v = c.GetValue()
					} else if g := m.GetGauge(); g != nil {
						v = g.GetValue()
					}
					ch <- prometheus.MustNewConstMetric(prometheus.NewDesc(name, "x", nil, nil), prometheus.UntypedValue, v)
				}
			}
		}
	})
}

type collectorFunc func(chan<- prometheus.Metric)

func (f collectorFunc) Describe(chan<- *prometheus.Desc)    {}
func (f collectorFunc) Collect(ch chan<- prometheus.Metric) { f(ch) }

func TestTerminalErrorIsNotRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder(func(context.Context, string, int) (reconcile.Result, error) {
			return reconcile.Result{}, reconcile.TerminalError(errors.New("bad spec"))
		})
		e := newEngine(t, r, reconcile.Options{})
		e.Enqueue("a")
		stop := run(t, e)
		defer stop()
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Len(t, r.times("a"), 1)
		assert.True(t, reconcile.IsTerminal(reconcile.TerminalError(errors.New("x"))))
		assert.False(t, reconcile.IsTerminal(errors.New("x")))
		assert.NoError(t, reconcile.TerminalError(nil))
	})
}

func TestRequeueAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder(func(_ context.Context, key string, n int) (reconcile.Result, error) {
			switch {
			case key != "a":
			case n == 1:
				return reconcile.Result{}, errors.New("first")
			case n <= 3:
				return reconcile.Result{RequeueAfter: 10 * time.Second, Requeue: true}, nil
			case n == 4:
				return reconcile.Result{}, errors.New("again")
			}
			return reconcile.Result{}, nil
		})
		e := newEngine(t, r, reconcile.Options{BaseBackoff: time.Second})
		e.Enqueue("a")
		stop := run(t, e)
		defer stop()
		time.Sleep(time.Minute)
		synctest.Wait()
		// RequeueAfter wins over Requeue and resets the backoff: the error
		// after it waits the base backoff again, not 2 s.
		assert.Equal(t, []time.Duration{0, time.Second, 11 * time.Second, 21 * time.Second, 22 * time.Second}, r.times("a"))

		// EnqueueAfter keeps the earlier of two times.
		e.EnqueueAfter("b", 10*time.Second)
		e.EnqueueAfter("b", 5*time.Second)
		e.EnqueueAfter("b", 20*time.Second)
		start := time.Since(r.start)
		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, []time.Duration{start + 5*time.Second}, r.times("b"))
	})
}

func TestResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		lists := 0
		keys := []string{"a", "b"}
		list := func(context.Context) ([]string, error) {
			mu.Lock()
			defer mu.Unlock()
			lists++
			if lists == 2 {
				return nil, errors.New("store down")
			}
			return keys, nil
		}
		r := newRecorder(nil)
		e := newEngine(t, r, reconcile.Options{List: list, Resync: time.Minute, BaseBackoff: time.Second})
		stop := run(t, e)
		defer stop()
		time.Sleep(150 * time.Second)
		synctest.Wait()
		// Listed at 0 and 60 s (failed: retried after the base backoff,
		// 61 s), then every minute after the last good list: 121 s.
		assert.Equal(t, []time.Duration{0, 61 * time.Second, 121 * time.Second}, r.times("a"))
		assert.Equal(t, r.times("a"), r.times("b"))
		mu.Lock()
		assert.Equal(t, 4, lists)
		mu.Unlock()
	})
}

// TestResyncKeepsBackoff: a resync enqueues a key that asked for a later
// pass, but not one waiting out the backoff of a failure.
func TestResyncKeepsBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		list := func(context.Context) ([]string, error) { return []string{"failing", "polling"}, nil }
		r := newRecorder(func(_ context.Context, key string, n int) (reconcile.Result, error) {
			if key == "failing" {
				return reconcile.Result{}, errors.New("down")
			}
			return reconcile.Result{RequeueAfter: time.Hour}, nil
		})
		e := newEngine(t, r, reconcile.Options{List: list, Resync: time.Minute, BaseBackoff: 90 * time.Second, MaxBackoff: time.Hour})
		stop := run(t, e)
		defer stop()
		time.Sleep(150 * time.Second)
		synctest.Wait()
		// failing: at 0, then after its 90 s backoff (not at the 60 s
		// resync); polling: at every resync.
		assert.Equal(t, []time.Duration{0, 90 * time.Second}, r.times("failing"))
		assert.Equal(t, []time.Duration{0, time.Minute, 2 * time.Minute}, r.times("polling"))
	})
}

func TestListOnceWithoutResync(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder(nil)
		e := newEngine(t, r, reconcile.Options{List: func(context.Context) ([]string, error) { return []string{"a"}, nil }})
		stop := run(t, e)
		defer stop()
		time.Sleep(time.Hour)
		synctest.Wait()
		assert.Len(t, r.times("a"), 1)
	})
}

func TestPanicBecomesError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		r := newRecorder(func(_ context.Context, key string, n int) (reconcile.Result, error) {
			if n == 1 {
				panic("boom " + key)
			}
			return reconcile.Result{}, nil
		})
		var logs bytes.Buffer // read once Run has returned
		e := newEngine(t, r, reconcile.Options{Name: "p", Registerer: reg, BaseBackoff: time.Second,
			Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		e.Enqueue("a")
		e.Enqueue("b")
		stop := run(t, e)
		time.Sleep(time.Minute)
		synctest.Wait()
		stop()
		assert.Equal(t, []time.Duration{0, time.Second}, r.times("a"), "retried after the backoff")
		assert.Equal(t, []time.Duration{0, time.Second}, r.times("b"), "the other key is unaffected")
		assert.Equal(t, 2.0, testutil.ToFloat64(counter(reg, "fleetkit_reconcile_errors_total")))
		out := logs.String()
		assert.Contains(t, out, `msg="reconcile panicked" engine=p key=a panic="boom a" stack=`)
		assert.Contains(t, out, `msg="reconcile failed; will retry" engine=p key=a retry_in=1s err="reconcile: reconciler panicked: boom a"`)
	})
}

func TestRunStopsWorkersAndKeepsQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{})
		r := newRecorder(func(ctx context.Context, key string, n int) (reconcile.Result, error) {
			if key == "slow" && n == 1 {
				close(started)
				<-ctx.Done()
				return reconcile.Result{}, ctx.Err()
			}
			return reconcile.Result{}, nil
		})
		reg := prometheus.NewRegistry()
		e := newEngine(t, r, reconcile.Options{Name: "s", Registerer: reg})
		e.Enqueue("slow")
		e.Enqueue("next")
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- e.Run(ctx) }()
		<-started
		require.ErrorIs(t, e.Run(ctx), reconcile.ErrRunning)
		cancel()
		require.NoError(t, <-done, "Run returns once its workers have exited")
		assert.Equal(t, 0.0, testutil.ToFloat64(counter(reg, "fleetkit_reconcile_errors_total")), "shutdown is no failure")
		assert.Equal(t, 2, e.Len(), "the cut-short key and the waiting one wait for the next Run")
		assert.Equal(t, 2.0, testutil.ToFloat64(counter(reg, "fleetkit_reconcile_queue_depth")))

		stop := run(t, e)
		synctest.Wait()
		stop()
		assert.Len(t, r.times("slow"), 2)
		assert.Len(t, r.times("next"), 1)
	})
}

func TestEnginesShareARegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	ok := reconcile.Func(func(context.Context, string) (reconcile.Result, error) { return reconcile.Result{}, nil })
	_, err := reconcile.New(ok, reconcile.Options{Name: "one", Registerer: reg})
	require.NoError(t, err)
	_, err = reconcile.New(ok, reconcile.Options{Name: "two", Registerer: reg})
	require.NoError(t, err)
	_, err = reconcile.New(ok, reconcile.Options{Name: "one", Registerer: reg})
	require.NoError(t, err, "an engine built again (a new lease term) reuses its metrics")
}
