package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Defaults of the runtime that Options do not set.
const (
	defaultBaseBackoff = 100 * time.Millisecond
	defaultMaxBackoff  = 30 * time.Second
	// defaultBatch is how many instances of a status one pass lists.
	defaultBatch = MaxPageSize
)

// statusWorker runs a reconciler over the instances in one status.
type statusWorker struct {
	// Name is the metrics label; "" means the status.
	Name string
	// Lease is the lease it runs under; "" means Name. Workers that name
	// the same lease run together, on the replica that holds it.
	Lease  string
	Status Status
	// reconciler is called for each instance in Status.
	Reconciler reconciler
	// Interval is the resync period: every instance in Status is looked at
	// again at least this often, and changes made by other replicas are
	// seen within it. 0 means DefaultInterval. Changes made in this process
	// wake the worker at once.
	Interval time.Duration
	// Concurrency bounds the Reconcile calls in flight; 0 means
	// DefaultConcurrency.
	Concurrency int
	// Timeout fails an instance that stays in Status longer (0: never),
	// with TimeoutReason(instance) as its reason (nil: a generic text).
	Timeout       time.Duration
	TimeoutReason func(Instance) string
	// BaseBackoff and MaxBackoff bound the per-instance retry delay after
	// an error, doubling from the first to the second.
	BaseBackoff, MaxBackoff time.Duration
}

// job is periodic work that is not per instance (the general worker, the
// cluster worker). It runs under its own lease like a statusWorker.
type job struct {
	Name     string
	Interval time.Duration
	// Everywhere runs the job on every replica, outside leader election
	// (its writes carry no fence): for work on what this replica alone
	// holds, such as its own data plane's machines.
	Everywhere bool
	// Run does one pass; its writes carry fence.
	Run func(ctx context.Context, fence Fence) error
}

// runtimeOptions configures a runtime.
type runtimeOptions struct {
	// Kind is the kind whose instances the workers see (required).
	Kind string
	// notifier wakes workers on status changes; nil means a private one
	// (then only the workers' own changes wake them).
	Notifier *notifier
	// Leases enables leader election: each worker and job runs only while
	// this replica holds the lease of its name. Nil means no election (one
	// replica); writes then carry no fence.
	Leases LeaseStore
	// Holder identifies this replica in leases; "" means a random ID.
	Holder string
	// LeaseTTL is the lease duration (0: DefaultLeaseTTL). It is renewed
	// every third of it; a replica that cannot renew stops its workers a
	// quarter TTL before the lease can expire elsewhere.
	LeaseTTL time.Duration
	// Logger receives errors; nil means slog.Default().
	Logger *slog.Logger

	metrics *serviceMetrics
}

// runtime runs workers and jobs until its context ends.
type runtime struct {
	st      Store
	workers []statusWorker
	jobs    []job
	opts    runtimeOptions
	log     *slog.Logger
	m       *serviceMetrics
}

// newRuntime validates the workers and jobs and returns a runtime. st
// should be a newNotifyingStore on opts.Notifier so that workers wake each
// other.
func newRuntime(st Store, workers []statusWorker, jobs []job, opts runtimeOptions) (*runtime, error) {
	if st == nil {
		return nil, fmt.Errorf("%w: runtime needs a store", ErrInvalid)
	}
	if opts.Kind == "" {
		return nil, fmt.Errorf("%w: runtime needs a kind", ErrInvalid)
	}
	if opts.Notifier == nil {
		opts.Notifier = newNotifier()
	}
	if opts.Holder == "" {
		opts.Holder = NewID()
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	m := opts.metrics
	if m == nil {
		var err error
		if m, err = newServiceMetrics(nil, opts.Kind); err != nil {
			return nil, err
		}
	}
	names := map[string]bool{}
	ws := make([]statusWorker, len(workers))
	for i, w := range workers {
		if !w.Status.Valid() || w.Reconciler == nil {
			return nil, fmt.Errorf("%w: worker %d needs a valid status and a reconciler", ErrInvalid, i)
		}
		if w.Name == "" {
			w.Name = string(w.Status)
		}
		if w.Lease == "" {
			w.Lease = w.Name
		}
		if w.Interval <= 0 {
			w.Interval = DefaultInterval
		}
		if w.Concurrency <= 0 {
			w.Concurrency = DefaultConcurrency
		}
		if w.BaseBackoff <= 0 {
			w.BaseBackoff = defaultBaseBackoff
		}
		if w.MaxBackoff <= 0 {
			w.MaxBackoff = defaultMaxBackoff
		}
		if names[w.Name] {
			return nil, fmt.Errorf("%w: two workers named %q", ErrInvalid, w.Name)
		}
		names[w.Name] = true
		ws[i] = w
	}
	for i, j := range jobs {
		if j.Name == "" || j.Run == nil {
			return nil, fmt.Errorf("%w: job %d needs a name and a Run func", ErrInvalid, i)
		}
		if names[j.Name] {
			return nil, fmt.Errorf("%w: two workers named %q", ErrInvalid, j.Name)
		}
		names[j.Name] = true
		if j.Interval <= 0 {
			jobs[i].Interval = DefaultInterval
		}
	}
	return &runtime{st: st, workers: ws, jobs: jobs, opts: opts, log: log, m: m}, nil
}

// Run runs every worker and job, each under its lease when leader election
// is on, until ctx is done; then it waits for them to stop and releases
// its leases. It returns nil after a clean stop.
func (r *runtime) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	var leases []string
	byLease := map[string][]statusWorker{}
	for _, w := range r.workers {
		if _, ok := byLease[w.Lease]; !ok {
			leases = append(leases, w.Lease)
		}
		byLease[w.Lease] = append(byLease[w.Lease], w)
	}
	for _, lease := range leases {
		wg.Go(func() {
			r.lead(ctx, lease, func(ctx context.Context, f Fence) {
				var group sync.WaitGroup
				for _, w := range byLease[lease] {
					group.Go(func() { r.runWorker(ctx, w, f) })
				}
				group.Wait()
			})
		})
	}
	for _, j := range r.jobs {
		wg.Go(func() {
			if j.Everywhere {
				r.runJob(ctx, j, Fence{})
				return
			}
			r.lead(ctx, j.Name, func(ctx context.Context, f Fence) { r.runJob(ctx, j, f) })
		})
	}
	wg.Wait()
	return nil
}

// lead runs fn while this replica holds the lease name (or always without
// election). fn must return soon after its context is done.
func (r *runtime) lead(ctx context.Context, name string, fn func(context.Context, Fence)) {
	if r.opts.Leases == nil {
		fn(ctx, Fence{})
		return
	}
	ttl := r.opts.LeaseTTL
	renewEvery, margin := ttl/3, ttl/4
	for ctx.Err() == nil {
		start := time.Now()
		l, err := r.opts.Leases.AcquireLease(ctx, name, r.opts.Holder, ttl)
		if err != nil {
			if !errors.Is(err, ErrLeaseHeld) && ctx.Err() == nil {
				r.log.Warn("fleet: acquire lease", "lease", name, "err", err)
			}
			sleep(ctx, renewEvery)
			continue
		}
		r.m.leader.WithLabelValues(name).Set(1)
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			fn(wctx, l.Fence())
		}()
		// The local deadline: stop before anyone else may take the lease.
		deadline := time.NewTimer(time.Until(start.Add(ttl - margin)))
		tick := time.NewTicker(renewEvery)
	held:
		for {
			select {
			case <-ctx.Done():
				break held
			case <-done:
				break held
			case <-deadline.C:
				r.log.Warn("fleet: lease not renewed in time; stopping its worker", "lease", name)
				break held
			case <-tick.C:
				start := time.Now()
				nl, err := r.opts.Leases.AcquireLease(ctx, name, r.opts.Holder, ttl)
				switch {
				case err == nil && nl.Token == l.Token:
					deadline.Reset(time.Until(start.Add(ttl - margin)))
				case err == nil || errors.Is(err, ErrLeaseHeld):
					r.log.Warn("fleet: lease lost", "lease", name)
					break held
				default:
					if ctx.Err() == nil {
						r.log.Warn("fleet: renew lease", "lease", name, "err", err)
					}
				}
			}
		}
		tick.Stop()
		deadline.Stop()
		cancel()
		<-done // the worker has stopped: only now may the lease go
		r.m.leader.WithLabelValues(name).Set(0)
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		if err := r.opts.Leases.ReleaseLease(rctx, l); err != nil {
			r.log.Warn("fleet: release lease", "lease", name, "err", err)
		}
		rcancel()
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (r *runtime) runJob(ctx context.Context, j job, fence Fence) {
	t := time.NewTicker(j.Interval)
	defer t.Stop()
	for {
		if err := j.Run(ctx, fence); err != nil && ctx.Err() == nil {
			r.log.Warn("fleet: job failed", "job", j.Name, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// workerState is the per-instance bookkeeping of one worker.
type workerState struct {
	mu       sync.Mutex
	inflight map[string]bool      // guarded by mu
	due      map[string]time.Time // guarded by mu: no pass before
	failures map[string]int       // guarded by mu: consecutive errors
}

func (r *runtime) runWorker(ctx context.Context, w statusWorker, fence Fence) {
	sub, unsubscribe := r.opts.Notifier.Subscribe(w.Status)
	defer unsubscribe()
	kick := make(chan struct{}, 1)
	poke := func() {
		select {
		case kick <- struct{}{}:
		default:
		}
	}
	st := &workerState{inflight: map[string]bool{}, due: map[string]time.Time{}, failures: map[string]int{}}
	sem := make(chan struct{}, w.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	resync := time.NewTicker(w.Interval)
	defer resync.Stop()
	next := time.NewTimer(time.Hour)
	defer next.Stop()
	var earliest time.Time // the next due time the timer is armed for
	list, page := true, 1
	for {
		if list {
			again, e := r.pass(ctx, w, fence, st, sub, sem, &wg, poke, page)
			if ctx.Err() != nil {
				return
			}
			if again {
				// The next page, not the same rows again: those just
				// dispatched are still in the status while in flight.
				page++
				continue
			}
			list, earliest, page = false, e, 1
			if !e.IsZero() {
				next.Reset(max(time.Until(e), time.Millisecond))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-sub.C():
			// The instances that just entered the status: no list query.
			for _, inst := range sub.Drain() {
				if !r.dispatch(ctx, w, fence, st, sem, &wg, poke, inst, true) {
					return
				}
			}
		case <-kick:
			// A retry was scheduled: re-arm the timer if it is sooner.
			st.mu.Lock()
			for _, d := range st.due {
				if earliest.IsZero() || d.Before(earliest) {
					earliest = d
				}
			}
			st.mu.Unlock()
			if !earliest.IsZero() {
				next.Reset(max(time.Until(earliest), time.Millisecond))
			}
		case <-resync.C:
			list = true
		case <-next.C:
			earliest = time.Time{}
			list = true
		}
	}
}

// dispatch starts a reconcile of inst unless one is in flight or a retry
// of it is not due yet; fresh says inst was just written by this process
// (the reconciler gets it as request.Instance). It blocks while the worker
// is at its concurrency bound and returns false when ctx is done.
func (r *runtime) dispatch(ctx context.Context, w statusWorker, fence Fence, st *workerState, sem chan struct{}, wg *sync.WaitGroup, poke func(), inst Instance, fresh bool) bool {
	st.mu.Lock()
	due, hasDue := st.due[inst.ID]
	ready := !st.inflight[inst.ID] && (!hasDue || !time.Now().Before(due))
	if ready {
		st.inflight[inst.ID] = true
		delete(st.due, inst.ID)
	}
	st.mu.Unlock()
	if !ready {
		return true
	}
	select {
	case sem <- struct{}{}:
	case <-ctx.Done():
		st.mu.Lock()
		delete(st.inflight, inst.ID)
		st.mu.Unlock()
		return false
	}
	wg.Go(func() {
		defer func() { <-sem }()
		r.reconcileOne(ctx, w, fence, st, inst, fresh, poke)
	})
	return true
}

// pass lists one page of instances in w.Status and dispatches those due.
// It reports whether to list the next page at once (a full page was
// dispatched) and the earliest future time something falls due. The rows
// it reads replace the pending notifications of the same instances.
func (r *runtime) pass(ctx context.Context, w statusWorker, fence Fence, st *workerState, sub *subscription, sem chan struct{}, wg *sync.WaitGroup, poke func(), page int) (bool, time.Time) {
	insts, _, err := r.st.ListInstances(ctx, Query{Kind: r.opts.Kind, Statuses: []Status{w.Status},
		OrderBy: []Order{{Field: "status_since"}}, Size: defaultBatch, Page: page})
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("fleet: list instances", "worker", w.Name, "err", err)
		}
		return false, time.Now().Add(w.BaseBackoff * 10)
	}
	ids := make([]string, len(insts))
	for i, inst := range insts {
		ids[i] = inst.ID
	}
	sub.forget(ids)
	var (
		earliest   time.Time
		dispatched int
	)
	soonest := func(t time.Time) {
		if earliest.IsZero() || t.Before(earliest) {
			earliest = t
		}
	}
	for _, inst := range insts {
		now := time.Now()
		if w.Timeout > 0 {
			end := inst.StatusSince.Add(w.Timeout)
			if !now.Before(end) {
				st.mu.Lock()
				busy := st.inflight[inst.ID]
				st.mu.Unlock()
				if !busy {
					r.timeout(ctx, w, fence, inst)
				}
				continue
			}
			soonest(end)
		}
		st.mu.Lock()
		busy := st.inflight[inst.ID]
		due, hasDue := st.due[inst.ID]
		st.mu.Unlock()
		if busy {
			continue
		}
		if hasDue && now.Before(due) {
			soonest(due)
			continue
		}
		if !r.dispatch(ctx, w, fence, st, sem, wg, poke, inst, false) {
			return false, time.Time{}
		}
		dispatched++
	}
	return dispatched > 0 && len(insts) == defaultBatch, earliest
}

func (r *runtime) reconcileOne(ctx context.Context, w statusWorker, fence Fence, st *workerState, inst Instance, fresh bool, poke func()) {
	start := time.Now()
	req := request{ID: inst.ID, Fence: fence}
	if fresh {
		req.Instance = &inst
	}
	res, err := w.Reconciler.Reconcile(ctx, req)
	r.m.reconcileDuration.WithLabelValues(w.Name).Observe(time.Since(start).Seconds())
	var after time.Duration
	outcome := "done"
	switch {
	case err != nil && isTerminal(err):
		outcome = "terminal"
		if ferr := r.fail(ctx, w, fence, inst, err.Error()); ferr != nil {
			after = r.backoff(w, st, inst.ID)
		}
	case err != nil:
		outcome = "error"
		after = r.backoff(w, st, inst.ID)
		if ctx.Err() == nil {
			r.log.Info("fleet: reconcile failed; will retry", "worker", w.Name, "id", inst.ID, "retry_in", after, "err", err)
		}
	case res.RequeueAfter > 0:
		outcome = "requeue"
		after = res.RequeueAfter
	}
	r.m.reconciles.WithLabelValues(w.Name, outcome).Inc()
	st.mu.Lock()
	delete(st.inflight, inst.ID)
	if err == nil {
		delete(st.failures, inst.ID)
	}
	if after > 0 {
		st.due[inst.ID] = time.Now().Add(after)
	}
	st.mu.Unlock()
	if after > 0 {
		poke() // the loop re-arms its timer for the new due time
	}
}

func (r *runtime) backoff(w statusWorker, st *workerState, id string) time.Duration {
	st.mu.Lock()
	defer st.mu.Unlock()
	n := st.failures[id]
	st.failures[id] = n + 1
	d := w.BaseBackoff
	for range n {
		d *= 2
		if d >= w.MaxBackoff {
			return w.MaxBackoff
		}
	}
	return d
}

func (r *runtime) timeout(ctx context.Context, w statusWorker, fence Fence, inst Instance) {
	reason := fmt.Sprintf("%s timed out in status %s after %s", inst.ID, inst.Status, w.Timeout)
	if w.TimeoutReason != nil {
		reason = w.TimeoutReason(inst)
	}
	if err := r.fail(ctx, w, fence, inst, reason); err == nil {
		r.m.reconciles.WithLabelValues(w.Name, "timeout").Inc()
	}
}

// fail moves inst from the worker's status to failed with reason.
func (r *runtime) fail(ctx context.Context, w statusWorker, fence Fence, inst Instance, reason string) error {
	_, err := r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: w.Status, To: StatusFailed, FailedReason: &reason, Fence: fence})
	if err != nil && !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotFound) && ctx.Err() == nil {
		r.log.Warn("fleet: fail instance", "worker", w.Name, "id", inst.ID, "reason", reason, "err", err)
		return err
	}
	return nil
}
