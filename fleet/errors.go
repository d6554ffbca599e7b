package fleet

import (
	"errors"
	"fmt"
)

// Errors returned by this package and by Store implementations. Callers
// test them with errors.Is; fleet/httpapi maps them to the original's
// error codes in one place.
var (
	// ErrNotFound means no live or soft-deleted row has the ID.
	ErrNotFound = errors.New("fleet: not found")
	// ErrNameTaken means a live instance of the same kind already has the
	// name in the owner's scope (organisation, else owner). It comes from
	// the store's unique index, never from a prior query.
	ErrNameTaken = errors.New("fleet: name already used")
	// ErrHostTaken means an update would record a host that another live
	// instance records: a host is never recorded twice (the store's
	// unique index), so that a stale host never reaches another tenant.
	ErrHostTaken = errors.New("fleet: host recorded by another instance")
	// ErrConflict is matched by every *ConflictError: a compare-and-swap
	// status update found another status.
	ErrConflict = errors.New("fleet: status changed concurrently")
	// ErrIllegalTransition is matched by every *TransitionError.
	ErrIllegalTransition = errors.New("fleet: illegal status transition")
	// ErrInvalid wraps every validation failure of a request or a value.
	ErrInvalid = errors.New("fleet: invalid")
	// ErrNoCapacity means no cluster can take the instance now.
	ErrNoCapacity = errors.New("fleet: no cluster has capacity")
	// ErrRemovePending is wrapped by a DataPlane's Remove that has not
	// seen the instance go yet (fleet/agentplane: its agent still reports
	// it): the worker looks again after Options.RetryInterval, as it does
	// for an Apply that is not ready, instead of logging an error and
	// backing off.
	ErrRemovePending = errors.New("fleet: removal not confirmed yet")
)

// ConflictError is returned by a compare-and-swap update that lost: the row
// was not in the Expected status any more. Actual is the status read after
// the failed write (informational: it may have changed again since).
type ConflictError struct {
	ID       string
	Expected string
	Actual   string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("fleet: %s: expected status %q, found %q", e.ID, e.Expected, e.Actual)
}

// Is makes errors.Is(err, ErrConflict) true.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

// TransitionError is an illegal status change.
type TransitionError struct {
	From, To string
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("fleet: illegal status transition %s -> %s", e.From, e.To)
}

// Is makes errors.Is(err, ErrIllegalTransition) true.
func (e *TransitionError) Is(target error) bool { return target == ErrIllegalTransition }
