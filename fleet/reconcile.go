package fleet

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Request names the instance a Reconciler converges and the fencing token
// its writes must carry (zero when no leader election runs).
type Request struct {
	ID    string
	Fence Fence
	// Instance, when set, is the row as this process just wrote it (the
	// write that woke the worker), so the reconciler may skip reading it.
	// It is a snapshot: a compare-and-swap based on it fails if the row
	// moved on since. Nil after resync passes: read the store.
	Instance *Instance
}

// Result says when to look at the instance again. The zero Result is
// "done": the instance is looked at again only when its status changes or
// at the worker's resync interval.
type Result struct {
	// RequeueAfter, when positive, asks for another pass after it.
	RequeueAfter time.Duration
}

// Reconciler converges one instance towards what its status asks for. It is
// level-based: it reads the instance on every pass and acts on what it
// finds, so a repeated or late pass does no harm. Status changes go through
// compare-and-swap updates carrying req.Fence.
//
// A returned error is retried with a per-instance backoff; an error wrapped
// by TerminalError is not retried: the runtime fails the instance with the
// error's text as its reason. Reconcile must return soon after ctx is done.
// The runtime calls it from several goroutines, never twice at once for
// the same instance.
type Reconciler interface {
	Reconcile(ctx context.Context, req Request) (Result, error)
}

// ReconcilerFunc adapts a function to Reconciler.
type ReconcilerFunc func(ctx context.Context, req Request) (Result, error)

// Reconcile calls f.
func (f ReconcilerFunc) Reconcile(ctx context.Context, req Request) (Result, error) {
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

// IsTerminal reports whether err (or an error it wraps) came from
// TerminalError.
func IsTerminal(err error) bool {
	var t *terminalError
	return errors.As(err, &t)
}

// Notifier tells the worker of a status at once which instance entered it
// (with the row as written), so a state change costs no tick latency and
// no query. It is
// in-process: replicas learn of each other's changes by the workers'
// resync interval. The zero value is not usable; use NewNotifier. Safe for
// concurrent use; Notify never blocks.
type Notifier struct {
	mu   sync.Mutex
	subs map[Status][]*Subscription // guarded by mu
}

// NewNotifier returns a Notifier with no subscribers.
func NewNotifier() *Notifier { return &Notifier{subs: map[Status][]*Subscription{}} }

// Subscription receives the IDs of the instances that entered one status.
type Subscription struct {
	c  chan struct{}
	mu sync.Mutex
	// pending is guarded by mu: the instances that entered the status, by
	// ID, latest write last.
	pending map[string]Instance
}

// C receives after IDs were added; wake-ups coalesce.
func (s *Subscription) C() <-chan struct{} { return s.c }

// Drain returns and forgets the pending instances.
func (s *Subscription) Drain() []Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Instance, 0, len(s.pending))
	for _, inst := range s.pending {
		out = append(out, inst)
	}
	clear(s.pending)
	return out
}

// forget drops the pending instances with these IDs: a list pass read
// them since, so their snapshots are stale.
func (s *Subscription) forget(ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.pending, id)
	}
}

// Notify tells every subscriber of inst.Status that inst entered it.
func (n *Notifier) Notify(inst Instance) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, sub := range n.subs[inst.Status] {
		sub.mu.Lock()
		sub.pending[inst.ID] = inst
		sub.mu.Unlock()
		select {
		case sub.c <- struct{}{}:
		default:
		}
	}
}

// Subscribe returns a subscription to s and a function that ends it.
func (n *Notifier) Subscribe(s Status) (*Subscription, func()) {
	sub := &Subscription{c: make(chan struct{}, 1), pending: map[string]Instance{}}
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
	n *Notifier
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

// NotifyingStore returns s wrapped so that every instance creation and
// status change wakes the workers of the new status through n.
func NotifyingStore(s Store, n *Notifier) Store { return notifyingStore{Store: s, n: n} }
