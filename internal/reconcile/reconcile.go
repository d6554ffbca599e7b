package reconcile

import (
	"context"
	"errors"
	"time"
)

// Errors of the package.
var (
	// ErrInvalid reports invalid Options.
	ErrInvalid = errors.New("reconcile: invalid options")
	// ErrPanic wraps the value a Reconciler panicked with; the key is
	// retried with backoff.
	ErrPanic = errors.New("reconcile: reconciler panicked")
	// ErrRunning is returned by Run while another Run of the same engine
	// has not returned.
	ErrRunning = errors.New("reconcile: engine already running")
)

// Result says whether and when to look at a key again. The zero Result is
// "done": the key is reconciled again only when it is enqueued or listed.
type Result struct {
	// Requeue asks for another pass after the key's backoff, as an error
	// would, without counting an error.
	Requeue bool
	// RequeueAfter, when positive, asks for another pass after it and
	// resets the key's backoff; it takes precedence over Requeue.
	RequeueAfter time.Duration
}

// Reconciler converges the state named by key. It is level-based: it reads
// what is there on every call, so a repeated or late call does no harm.
//
// The engine calls it from up to Options.Concurrency goroutines, never
// twice at once for the same key. It must return soon after ctx is done.
type Reconciler interface {
	Reconcile(ctx context.Context, key string) (Result, error)
}

// Func adapts a function to Reconciler.
type Func func(ctx context.Context, key string) (Result, error)

// Reconcile calls f.
func (f Func) Reconcile(ctx context.Context, key string) (Result, error) { return f(ctx, key) }

// TerminalError wraps err so that the engine does not retry the key: the
// error is counted and logged, and the key waits for its next Enqueue or
// resync. TerminalError(nil) is nil.
func TerminalError(err error) error {
	if err == nil {
		return nil
	}
	return &terminalError{err: err}
}

type terminalError struct{ err error }

func (e *terminalError) Error() string { return "terminal error: " + e.err.Error() }
func (e *terminalError) Unwrap() error { return e.err }

// IsTerminal reports whether err, or an error it wraps, came from
// TerminalError.
func IsTerminal(err error) bool {
	var t *terminalError
	return errors.As(err, &t)
}

// Sleep waits d or until ctx is done; it reports whether d passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
