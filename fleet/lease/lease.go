// Package lease is the leader election data of package fleet: the leases a
// fleet.Store holds (one per worker name) and the fencing tokens that make
// a deposed leader's late writes fail. A fleet.Service takes and renews the
// leases; this package holds no state of its own.
package lease

import (
	"errors"
	"time"
)

// Lease is a held leader lease.
type Lease struct {
	Name      string
	Holder    string
	Token     int64
	ExpiresAt time.Time
}

// Fence returns the fencing token that worker writes under l carry.
func (l Lease) Fence() Fence { return Fence{Lease: l.Name, Token: l.Token} }

// Fence is the fencing token of a lease. A write carrying a non-zero Fence
// succeeds only while the lease row still has that token; the zero Fence
// (API writes) is not checked.
type Fence struct {
	Lease string
	Token int64
}

// IsZero reports whether f carries no token.
func (f Fence) IsZero() bool { return f.Lease == "" }

// Errors of a fleet.Store's leases and fenced writes; test them with
// errors.Is.
var (
	// ErrHeld means another holder owns an unexpired lease.
	ErrHeld = errors.New("fleet: lease held by another replica")
	// ErrStaleFence means a worker write carried a fencing token that is no
	// longer the lease's current one: its writer was deposed.
	ErrStaleFence = errors.New("fleet: stale fencing token")
)
