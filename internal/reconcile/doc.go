// Package reconcile is the one controller loop of fleetkit: a keyed work
// queue and the workers that drain it into a Reconciler, in the manner of
// controller-runtime's Reconcile over client-go's workqueue.
//
// What it guarantees:
//
//   - Keyed and level-triggered. A key says what to look at, not what
//     changed: the Reconciler reads the actual state and converges it.
//     Enqueueing a key that is already queued does nothing; enqueueing it
//     while it is being reconciled queues it once more, to run after the
//     current call returns. Two calls for the same key never overlap.
//   - Bounded concurrency: at most Options.Concurrency calls run at once.
//   - Requeue: an error, or Result.Requeue, queues the key again after a
//     per-key exponential backoff (Options.BaseBackoff doubling up to
//     Options.MaxBackoff); a success resets it. Result.RequeueAfter queues
//     the key again after that delay. An error wrapped by TerminalError is
//     counted and logged but not retried.
//   - A panic in Reconcile is recovered and becomes an error (ErrPanic) for
//     that key, retried like any other: one bad key does not take the
//     process down.
//   - Wake-on-change plus resync: producers call Enqueue when something
//     changed; Options.List, when set, is read when Run starts and every
//     Options.Resync, and each key it returns is enqueued (but for those
//     waiting out the backoff of a failure: a resync does not cut it
//     short), so what no event reported (another replica's change, a lost
//     event) is seen within a resync period.
//   - Metrics on an injected prometheus.Registerer (nil: none), labelled by
//     Options.Name only: fleetkit_reconcile_queue_depth,
//     fleetkit_reconcile_duration_seconds, fleetkit_reconcile_retries_total
//     and fleetkit_reconcile_errors_total. Engines of different names share
//     the collectors of one registry.
//
// Enqueue and EnqueueAfter are safe for concurrent use, never block, and
// may be called before Run (keys wait for it) or after it returned (keys
// wait for the next Run). Run owns every goroutine the engine starts and
// returns once all of them have exited; a call still in Reconcile when
// Run's context ends sees that context cancelled and is waited for.
//
//	e, err := reconcile.New(reconcile.Func(func(ctx context.Context, key string) (reconcile.Result, error) {
//		return reconcile.Result{}, converge(ctx, key)
//	}), reconcile.Options{Name: "things", Concurrency: 4, List: listThings, Resync: time.Minute})
//	if err != nil {
//		return err
//	}
//	go watch(ctx, e.Enqueue) // wake on change
//	return e.Run(ctx)
//
// Nothing here is per-key unbounded but the set of keys itself: the queue,
// the backoff counts and the delayed keys each hold a key at most once.
package reconcile
