package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/fleetkit/fleetkit/fleet/lease"
	"github.com/fleetkit/fleetkit/internal/reconcile"
)

// defaultBatch is how many instances of a status one list query reads.
const defaultBatch = maxPageSize

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
	// seen within it. 0 means five seconds. Changes made in this process
	// wake the worker at once.
	Interval time.Duration
	// Concurrency bounds the Reconcile calls in flight; 0 means
	// defaultConcurrency.
	Concurrency int
	// Timeout fails an instance that stays in Status longer (0: never),
	// with TimeoutReason(instance) as its reason (nil: a generic text).
	Timeout       time.Duration
	TimeoutReason func(Instance) string
	// BaseBackoff and MaxBackoff bound the per-instance retry delay after
	// an error, doubling from the first to the second; 0 means
	// reconcile.DefaultBaseBackoff, reconcile.DefaultMaxBackoff.
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
	Run func(ctx context.Context, fence lease.Fence) error
}

// leaseStore is the lease part of Store: all the runtime needs.
type leaseStore interface {
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (lease.Lease, error)
	ReleaseLease(ctx context.Context, l lease.Lease) error
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
	Leases leaseStore
	// Holder identifies this replica in leases; "" means a random ID.
	Holder string
	// LeaseTTL is the lease duration (0: defaultLeaseTTL). It is renewed
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
		opts.LeaseTTL = defaultLeaseTTL
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
			w.Interval = defaultInterval
		}
		if w.Concurrency <= 0 {
			w.Concurrency = defaultConcurrency
		}
		if w.BaseBackoff < 0 || w.MaxBackoff < 0 || (w.MaxBackoff > 0 && w.MaxBackoff < w.BaseBackoff) {
			return nil, fmt.Errorf("%w: worker %s: backoff %s..%s", ErrInvalid, w.Name, w.BaseBackoff, w.MaxBackoff)
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
			jobs[i].Interval = defaultInterval
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
	for _, name := range leases {
		wg.Go(func() {
			r.lead(ctx, name, func(ctx context.Context, f lease.Fence) {
				var group sync.WaitGroup
				for _, w := range byLease[name] {
					group.Go(func() { r.runWorker(ctx, w, f) })
				}
				group.Wait()
			})
		})
	}
	for _, j := range r.jobs {
		wg.Go(func() {
			if j.Everywhere {
				r.runJob(ctx, j, lease.Fence{})
				return
			}
			r.lead(ctx, j.Name, func(ctx context.Context, f lease.Fence) { r.runJob(ctx, j, f) })
		})
	}
	wg.Wait()
	return nil
}

// lead runs fn while this replica holds the lease name (or always without
// election). fn must return soon after its context is done.
func (r *runtime) lead(ctx context.Context, name string, fn func(context.Context, lease.Fence)) {
	if r.opts.Leases == nil {
		fn(ctx, lease.Fence{})
		return
	}
	ttl := r.opts.LeaseTTL
	renewEvery, margin := ttl/3, ttl/4
	for ctx.Err() == nil {
		start := time.Now()
		l, err := r.opts.Leases.AcquireLease(ctx, name, r.opts.Holder, ttl)
		if err != nil {
			if !errors.Is(err, lease.ErrHeld) && ctx.Err() == nil {
				r.log.Warn("fleet: acquire lease", "lease", name, "err", err)
			}
			reconcile.Sleep(ctx, renewEvery)
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
				case err == nil || errors.Is(err, lease.ErrHeld):
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

func (r *runtime) runJob(ctx context.Context, j job, fence lease.Fence) {
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

// runWorker runs w as one reconcile engine for as long as ctx lives (the
// lease term): keys are instance IDs, the notifier's wake-ups enqueue them
// and a paged list of the status resyncs them every Interval.
func (r *runtime) runWorker(ctx context.Context, w statusWorker, fence lease.Fence) {
	sub, unsubscribe := r.opts.Notifier.Subscribe(w.Status)
	defer unsubscribe()
	var e *reconcile.Engine
	e, err := reconcile.New(reconcile.Func(func(ctx context.Context, id string) (reconcile.Result, error) {
		return r.reconcileOne(ctx, w, fence, e, sub, id)
	}), reconcile.Options{
		Name: w.Name, Concurrency: w.Concurrency, BaseBackoff: w.BaseBackoff, MaxBackoff: w.MaxBackoff,
		List: func(ctx context.Context) ([]string, error) { return r.list(ctx, w.Status) }, Resync: w.Interval,
		Registerer: r.m.engines, Logger: r.log,
	})
	if err != nil { // newRuntime checked what New checks
		r.log.Error("fleet: worker not started", "worker", w.Name, "err", err)
		return
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-sub.C():
				for _, id := range sub.IDs() {
					e.Enqueue(id)
				}
			}
		}
	})
	_ = e.Run(ctx)
}

// list returns the IDs of the kind's instances in status, a page at a
// time, oldest in the status first.
func (r *runtime) list(ctx context.Context, status Status) ([]string, error) {
	var ids []string
	for page := 1; ; page++ {
		insts, _, err := r.st.ListInstances(ctx, Query{Kind: r.opts.Kind, Statuses: []Status{status},
			OrderBy: []Order{{Field: "status_since"}}, Size: defaultBatch, Page: page})
		if err != nil {
			return ids, err
		}
		for _, inst := range insts {
			ids = append(ids, inst.ID)
		}
		if len(insts) < defaultBatch {
			return ids, nil
		}
	}
}

// reconcileOne is one pass of w over the instance id: it fails the
// instance once it has stayed in the status past w.Timeout, else calls
// the reconciler and maps its outcome onto the engine's.
func (r *runtime) reconcileOne(ctx context.Context, w statusWorker, fence lease.Fence, e *reconcile.Engine, sub *subscription, id string) (reconcile.Result, error) {
	req := request{ID: id, Fence: fence}
	if inst, ok := sub.take(id); ok {
		req.Instance = &inst
	}
	if w.Timeout > 0 {
		if req.Instance == nil {
			// The timeout needs the row; the reconciler gets it too and
			// need not read it again.
			inst, err := r.st.GetInstance(ctx, id)
			if errors.Is(err, ErrNotFound) {
				return reconcile.Result{}, nil
			}
			if err != nil {
				return reconcile.Result{}, err
			}
			req.Instance = &inst
		}
		if req.Instance.Status != w.Status || req.Instance.DeletedAt != nil {
			return reconcile.Result{}, nil // moved on
		}
		left := time.Until(req.Instance.StatusSince.Add(w.Timeout))
		if left <= 0 {
			return reconcile.Result{}, r.timeout(ctx, w, fence, *req.Instance)
		}
		// Look again at the deadline whatever the reconciler answers (the
		// engine keeps the earlier of this and the reconciler's requeue).
		e.EnqueueAfter(id, left)
	}
	start := time.Now()
	res, err := w.Reconciler.Reconcile(ctx, req)
	r.m.reconcileDuration.WithLabelValues(w.Name).Observe(time.Since(start).Seconds())
	outcome := "done"
	switch {
	case err != nil && isTerminal(err):
		outcome = "terminal"
		if ferr := r.fail(ctx, w, fence, id, err.Error()); ferr != nil {
			err = ferr // retried: the instance is not failed yet
		} else {
			err = reconcile.TerminalError(err)
		}
	case err != nil:
		outcome = "error"
	case res.RequeueAfter > 0:
		outcome = "requeue"
	}
	r.m.reconciles.WithLabelValues(w.Name, outcome).Inc()
	return reconcile.Result{RequeueAfter: res.RequeueAfter}, err
}

// timeout fails inst, which stayed in w.Status past w.Timeout.
func (r *runtime) timeout(ctx context.Context, w statusWorker, fence lease.Fence, inst Instance) error {
	reason := fmt.Sprintf("%s timed out in status %s after %s", inst.ID, inst.Status, w.Timeout)
	if w.TimeoutReason != nil {
		reason = w.TimeoutReason(inst)
	}
	err := r.fail(ctx, w, fence, inst.ID, reason)
	if err == nil {
		r.m.reconciles.WithLabelValues(w.Name, "timeout").Inc()
	}
	return err
}

// fail moves the instance id from the worker's status to failed with
// reason.
func (r *runtime) fail(ctx context.Context, w statusWorker, fence lease.Fence, id string, reason string) error {
	_, err := r.st.UpdateInstance(ctx, Update{ID: id, From: w.Status, To: StatusFailed, FailedReason: &reason, Fence: fence})
	if err != nil && !errors.Is(err, ErrConflict) && !errors.Is(err, ErrNotFound) && ctx.Err() == nil {
		r.log.Warn("fleet: fail instance", "worker", w.Name, "id", id, "reason", reason, "err", err)
		return err
	}
	return nil
}
