package reconcile

import (
	"container/heap"
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Defaults of Options.
const (
	DefaultConcurrency = 1
	DefaultBaseBackoff = 100 * time.Millisecond
	DefaultMaxBackoff  = 30 * time.Second
)

// Options configures an Engine. The zero value is usable with New: one
// worker, no resync, no metrics, slog.Default().
type Options struct {
	// Name labels the engine's metrics and log lines ("" is allowed but
	// makes engines sharing a registry indistinguishable).
	Name string
	// Concurrency bounds the Reconcile calls in flight; 0 means
	// DefaultConcurrency.
	Concurrency int
	// BaseBackoff and MaxBackoff bound a key's retry delay: BaseBackoff
	// after its first failure, doubling with each failure in a row, never
	// more than MaxBackoff. 0 means DefaultBaseBackoff, DefaultMaxBackoff.
	BaseBackoff, MaxBackoff time.Duration
	// List, when set, returns every key that should be looked at; Run
	// calls it when it starts and then every Resync (0: only at start),
	// and enqueues what it returns. A failed List is logged and called
	// again after a backoff, as a failed key would be. It is the resync of
	// an informer: what no Enqueue reported is reconciled within Resync.
	List func(ctx context.Context) ([]string, error)
	// Resync is the period of List.
	Resync time.Duration
	// Registerer receives the engine's metrics; nil means none.
	Registerer prometheus.Registerer
	// Logger receives failures (Info: a retry; Warn: a terminal error or
	// a failed List; Error: a panic, with its stack). Nil means
	// slog.Default().
	Logger *slog.Logger
}

// Engine is a keyed work queue drained into a Reconciler. Build it with
// New; see the package documentation for what it guarantees.
type Engine struct {
	r    Reconciler
	opts Options
	log  *slog.Logger
	m    metrics

	// mu guards every field below it; cond (on mu) wakes workers waiting
	// for a key or for shutdown.
	mu   sync.Mutex
	cond *sync.Cond
	// queue holds the keys ready to run, in order; dirty is the set of
	// keys queued to run (in queue, or waiting for their current call to
	// end); processing the keys being reconciled.
	queue      []string
	dirty      map[string]bool
	processing map[string]bool
	// failures counts each key's failures in a row, for its backoff.
	failures map[string]int
	// waiting holds the earliest time each delayed key is due; delays
	// orders them (entries whose time waiting no longer holds are stale
	// and skipped).
	waiting map[string]time.Time
	delays  delayHeap
	// running is set while Run runs; stopping once its context is done,
	// to send the workers home.
	running, stopping bool

	// wake tells the delay loop that an earlier key was delayed.
	wake chan struct{}
}

// New returns an Engine that runs r. It checks opts and registers the
// metrics on opts.Registerer.
func New(r Reconciler, opts Options) (*Engine, error) {
	if r == nil {
		return nil, fmt.Errorf("%w: no reconciler", ErrInvalid)
	}
	if opts.Concurrency < 0 || opts.BaseBackoff < 0 || opts.MaxBackoff < 0 || opts.Resync < 0 {
		return nil, fmt.Errorf("%w: negative concurrency, backoff or resync", ErrInvalid)
	}
	if opts.Concurrency == 0 {
		opts.Concurrency = DefaultConcurrency
	}
	if opts.BaseBackoff == 0 {
		opts.BaseBackoff = DefaultBaseBackoff
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = max(DefaultMaxBackoff, opts.BaseBackoff)
	}
	if opts.MaxBackoff < opts.BaseBackoff {
		return nil, fmt.Errorf("%w: MaxBackoff %s below BaseBackoff %s", ErrInvalid, opts.MaxBackoff, opts.BaseBackoff)
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	m, err := newMetrics(opts.Registerer, opts.Name)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		r: r, opts: opts, log: log, m: m,
		dirty: map[string]bool{}, processing: map[string]bool{}, failures: map[string]int{},
		waiting: map[string]time.Time{}, wake: make(chan struct{}, 1),
	}
	e.cond = sync.NewCond(&e.mu)
	return e, nil
}

// Enqueue asks for key to be reconciled: at once if a worker is free, after
// the current call if key is being reconciled, and not again if it is
// already queued. It never blocks.
func (e *Engine) Enqueue(key string) {
	e.mu.Lock()
	e.addLocked(key)
	e.mu.Unlock()
}

// EnqueueAfter enqueues key once d has passed (at once when d ≤ 0). A key
// already delayed keeps the earlier of its two times.
func (e *Engine) EnqueueAfter(key string, d time.Duration) {
	if d <= 0 {
		e.Enqueue(key)
		return
	}
	e.mu.Lock()
	e.delayLocked(key, d)
	e.mu.Unlock()
}

// Len returns how many keys are queued and ready to run (not the delayed
// ones, nor those being reconciled).
func (e *Engine) Len() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.queue)
}

// addLocked queues key unless it is queued; a key being reconciled is
// marked dirty and queued when its call ends. e.mu is held.
func (e *Engine) addLocked(key string) {
	if e.dirty[key] {
		return
	}
	e.dirty[key] = true
	if e.processing[key] {
		return
	}
	e.queue = append(e.queue, key)
	e.m.depth.Set(float64(len(e.queue)))
	e.cond.Signal()
}

// Run drains the queue into the Reconciler on Options.Concurrency workers,
// enqueues delayed keys when due and lists keys every Resync, until ctx is
// done. It returns nil once every goroutine it started has exited, or
// ErrRunning at once if the engine is already running. Keys left in the
// queue wait for the next Run.
func (e *Engine) Run(ctx context.Context) error {
	e.mu.Lock()
	if e.running {
		e.mu.Unlock()
		return ErrRunning
	}
	e.running, e.stopping = true, false
	e.mu.Unlock()

	var wg sync.WaitGroup
	for range e.opts.Concurrency {
		wg.Go(func() {
			for e.next(ctx) {
			}
		})
	}
	wg.Go(func() { e.delayLoop(ctx) })
	if e.opts.List != nil {
		wg.Go(func() { e.resyncLoop(ctx) })
	}
	<-ctx.Done()
	e.mu.Lock()
	e.stopping = true
	e.cond.Broadcast()
	e.mu.Unlock()
	wg.Wait()
	e.mu.Lock()
	e.running = false
	e.mu.Unlock()
	return nil
}

// next waits for a key, reconciles it and settles its requeue. It returns
// false when Run is stopping.
func (e *Engine) next(ctx context.Context) bool {
	e.mu.Lock()
	for len(e.queue) == 0 && !e.stopping {
		e.cond.Wait()
	}
	if e.stopping || ctx.Err() != nil {
		e.mu.Unlock()
		return false
	}
	key := e.queue[0]
	e.queue[0] = ""
	e.queue = e.queue[1:]
	delete(e.dirty, key)
	e.processing[key] = true
	e.m.depth.Set(float64(len(e.queue)))
	e.mu.Unlock()

	start := time.Now()
	res, err := e.call(ctx, key)
	e.m.duration.Observe(time.Since(start).Seconds())

	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.processing, key)
	if e.dirty[key] {
		// Enqueued during the call: it runs once more.
		e.queue = append(e.queue, key)
		e.m.depth.Set(float64(len(e.queue)))
		e.cond.Signal()
	}
	switch {
	case err != nil && ctx.Err() != nil:
		// Cut short by shutdown, not failed: the next Run does it again.
		e.addLocked(key)
	case err != nil && IsTerminal(err):
		e.m.errors.Inc()
		delete(e.failures, key)
		e.log.Warn("reconcile failed; not retried", "engine", e.opts.Name, "key", key, "err", err)
	case err != nil:
		e.m.errors.Inc()
		d := e.backoffLocked(key)
		e.log.Info("reconcile failed; will retry", "engine", e.opts.Name, "key", key, "retry_in", d, "err", err)
		e.delayLocked(key, d)
	case res.RequeueAfter > 0:
		delete(e.failures, key)
		e.delayLocked(key, res.RequeueAfter)
	case res.Requeue:
		e.delayLocked(key, e.backoffLocked(key))
	default:
		delete(e.failures, key)
	}
	return true
}

// call runs the Reconciler, turning a panic into an error.
func (e *Engine) call(ctx context.Context, key string) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			e.log.Error("reconcile panicked", "engine", e.opts.Name, "key", key, "panic", p, "stack", string(debug.Stack()))
			res, err = Result{}, fmt.Errorf("%w: %v", ErrPanic, p)
		}
	}()
	return e.r.Reconcile(ctx, key)
}

// backoffLocked counts a failure of key and returns its retry delay.
// e.mu is held.
func (e *Engine) backoffLocked(key string) time.Duration {
	n := e.failures[key]
	e.failures[key] = n + 1
	e.m.retries.Inc()
	return backoff(e.opts.BaseBackoff, e.opts.MaxBackoff, n)
}

// backoff is base doubled n times, at most limit.
func backoff(base, limit time.Duration, n int) time.Duration {
	d := base
	for range n {
		if d >= limit/2 {
			return limit
		}
		d *= 2
	}
	return min(d, limit)
}

// delayLocked is EnqueueAfter with e.mu held; d > 0.
func (e *Engine) delayLocked(key string, d time.Duration) {
	at := time.Now().Add(d)
	if cur, ok := e.waiting[key]; ok && !at.Before(cur) {
		return
	}
	e.waiting[key] = at
	heap.Push(&e.delays, delayed{key: key, at: at})
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// delayLoop enqueues delayed keys when they fall due.
func (e *Engine) delayLoop(ctx context.Context) {
	t := time.NewTimer(time.Hour)
	t.Stop()
	defer t.Stop()
	for {
		e.mu.Lock()
		now := time.Now()
		next := time.Duration(-1)
		for len(e.delays) > 0 {
			top := e.delays[0]
			if at, ok := e.waiting[top.key]; !ok || !at.Equal(top.at) {
				heap.Pop(&e.delays) // superseded by an earlier time
				continue
			}
			if top.at.After(now) {
				next = top.at.Sub(now)
				break
			}
			heap.Pop(&e.delays)
			delete(e.waiting, top.key)
			e.addLocked(top.key)
		}
		e.mu.Unlock()
		if next >= 0 {
			t.Reset(next)
		}
		select {
		case <-ctx.Done():
			return
		case <-e.wake:
		case <-t.C:
		}
	}
}

// resyncLoop enqueues every listed key at start and every Resync.
func (e *Engine) resyncLoop(ctx context.Context) {
	failures := 0
	for {
		keys, err := e.opts.List(ctx)
		if ctx.Err() != nil {
			return
		}
		wait := e.opts.Resync
		if err != nil {
			wait = backoff(e.opts.BaseBackoff, e.opts.MaxBackoff, failures)
			failures++
			e.m.errors.Inc()
			e.log.Warn("listing keys failed; will retry", "engine", e.opts.Name, "retry_in", wait, "err", err)
		} else {
			failures = 0
			e.mu.Lock()
			for _, k := range keys {
				if _, backingOff := e.waiting[k]; backingOff && e.failures[k] > 0 {
					continue // a resync does not cut a failing key's backoff short
				}
				e.addLocked(k)
			}
			e.mu.Unlock()
			if wait == 0 {
				return
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// delayed is a key due at a time.
type delayed struct {
	key string
	at  time.Time
}

// delayHeap is a min-heap of delayed keys by time.
type delayHeap []delayed

func (h delayHeap) Len() int           { return len(h) }
func (h delayHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h delayHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *delayHeap) Push(x any)        { *h = append(*h, x.(delayed)) }
func (h *delayHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
