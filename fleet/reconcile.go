package fleet

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/fleetkit/fleetkit/fleet/lease"
)

// request names the instance a reconciler converges and the fencing token
// its writes must carry (zero when no leader election runs).
type request struct {
	ID    string
	Fence lease.Fence
	// Instance, when set, is the row as this process just wrote it (the
	// write that woke the worker), so the reconciler may skip reading it.
	// It is a snapshot: a compare-and-swap based on it fails if the row
	// moved on since. Nil after resync passes: read the store.
	Instance *Instance
}

// result says when to look at the instance again. The zero result is
// "done": the instance is looked at again only when its status changes or
// at the worker's resync interval.
type result struct {
	// RequeueAfter, when positive, asks for another pass after it.
	RequeueAfter time.Duration
}

// reconciler converges one instance towards what its status asks for. It is
// level-based: it reads the instance on every pass and acts on what it
// finds, so a repeated or late pass does no harm. Status changes go through
// compare-and-swap updates carrying req.Fence.
//
// A returned error is retried with a per-instance backoff; an error wrapped
// by TerminalError is not retried: the runtime fails the instance with the
// error's text as its reason. Reconcile must return soon after ctx is done.
// The runtime calls it from several goroutines, never twice at once for
// the same instance.
type reconciler interface {
	Reconcile(ctx context.Context, req request) (result, error)
}

// reconcilerFunc adapts a function to reconciler.
type reconcilerFunc func(ctx context.Context, req request) (result, error)

// Reconcile calls f.
func (f reconcilerFunc) Reconcile(ctx context.Context, req request) (result, error) {
	return f(ctx, req)
}

// TerminalError wraps err so that the runtime does not retry it but fails
// the instance with err's text as the reason. TerminalError(nil) is nil.
func TerminalError(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}

type terminalError struct{ err error }

func (e *terminalError) Error() string { return e.err.Error() }
func (e *terminalError) Unwrap() error { return e.err }

// isTerminal reports whether err (or an error it wraps) came from
// TerminalError.
func isTerminal(err error) bool {
	var t *terminalError
	return errors.As(err, &t)
}

// notifier tells the worker of a status at once which instance entered it
// (with the row as written), so a state change costs no tick latency and
// no query. It is
// in-process: replicas learn of each other's changes by the workers'
// resync interval. The zero value is not usable; use newNotifier. Safe for
// concurrent use; Notify never blocks.
type notifier struct {
	mu   sync.Mutex
	subs map[Status][]*subscription // guarded by mu
}

// newNotifier returns a notifier with no subscribers.
func newNotifier() *notifier { return &notifier{subs: map[Status][]*subscription{}} }

// subscription receives the IDs of the instances that entered one status.
type subscription struct {
	c  chan struct{}
	mu sync.Mutex
	// pending and woken are guarded by mu: the instances that entered the
	// status, by ID, latest write last; the IDs not yet returned by IDs.
	pending map[string]Instance
	woken   []string
}

// C receives after IDs were added; wake-ups coalesce.
func (s *subscription) C() <-chan struct{} { return s.c }

// IDs returns and forgets the IDs notified since the last call; their
// instances stay pending for take.
func (s *subscription) IDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := s.woken
	s.woken = nil
	return ids
}

// take returns and forgets the pending instance id, if any.
func (s *subscription) take(id string) (Instance, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	inst, ok := s.pending[id]
	delete(s.pending, id)
	return inst, ok
}

// Notify tells every subscriber of inst.Status that inst entered it.
func (n *notifier) Notify(inst Instance) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, sub := range n.subs[inst.Status] {
		sub.mu.Lock()
		sub.pending[inst.ID] = inst
		sub.woken = append(sub.woken, inst.ID)
		sub.mu.Unlock()
		select {
		case sub.c <- struct{}{}:
		default:
		}
	}
}

// Subscribe returns a subscription to s and a function that ends it.
func (n *notifier) Subscribe(s Status) (*subscription, func()) {
	sub := &subscription{c: make(chan struct{}, 1), pending: map[string]Instance{}}
	n.mu.Lock()
	n.subs[s] = append(n.subs[s], sub)
	n.mu.Unlock()
	return sub, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		subs := n.subs[s]
		for i, x := range subs {
			if x == sub {
				n.subs[s] = append(subs[:i:i], subs[i+1:]...)
				return
			}
		}
	}
}

// notifyingStore wakes workers after every successful instance write.
type notifyingStore struct {
	Store
	n *notifier
}

func (s notifyingStore) CreateInstance(ctx context.Context, inst Instance) error {
	if err := s.Store.CreateInstance(ctx, inst); err != nil {
		return err
	}
	s.n.Notify(inst)
	return nil
}

func (s notifyingStore) CreateInstanceChecked(ctx context.Context, inst Instance, check func(live int) error) error {
	if err := s.Store.CreateInstanceChecked(ctx, inst, check); err != nil {
		return err
	}
	s.n.Notify(inst)
	return nil
}

func (s notifyingStore) UpdateInstance(ctx context.Context, u Update) (Instance, error) {
	inst, err := s.Store.UpdateInstance(ctx, u)
	if err == nil && u.To != "" && u.To != u.From {
		s.n.Notify(inst)
	}
	return inst, err
}

// newNotifyingStore returns s wrapped so that every instance creation and
// status change wakes the workers of the new status through n.
func newNotifyingStore(s Store, n *notifier) Store { return notifyingStore{Store: s, n: n} }
