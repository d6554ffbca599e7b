package fleet

import (
	"slices"

	"github.com/fleetkit/fleetkit/fleet/cluster"
)

// Status is the lifecycle state of an instance.
type Status string

// Instance statuses. accepted → preparing → provisioning → ready; the first
// three (and ready) may fail; ready and failed (and the first three) go to
// deprovision on a delete request, then deleting, then the row is soft
// deleted (DeletedAt set, status stays deleting). As in the original, a
// ready instance may be suspended (Service.Suspend: ready → suspending →
// suspended, its data plane stopped, its cluster place and quota kept) and
// resumed (Service.Resume: suspended → resuming → ready); each of the three
// may fail or be deleted, and suspending and resuming may be reversed.
const (
	StatusAccepted     Status = "accepted"
	StatusPreparing    Status = "preparing"
	StatusProvisioning Status = "provisioning"
	StatusReady        Status = "ready"
	StatusFailed       Status = "failed"
	StatusDeprovision  Status = "deprovision"
	StatusDeleting     Status = "deleting"
	StatusSuspending   Status = "suspending"
	StatusSuspended    Status = "suspended"
	StatusResuming     Status = "resuming"
)

// transitions lists, for every status of an instance (S is Status) or of a
// cluster (S is cluster.Status), the statuses it may move to. It is the
// single source of truth: stores refuse any other change. A write that
// keeps a known status (From == To) is always allowed.
func transitions[S Status | cluster.Status]() map[S][]S {
	var t any
	switch any(*new(S)).(type) {
	case Status:
		t = instanceTransitions()
	case cluster.Status:
		t = cluster.Transitions()
	}
	return t.(map[S][]S)
}

// CheckTransition returns a *TransitionError unless from → to is allowed
// for an instance (S is Status) or a cluster (S is cluster.Status): the
// single source of truth every Store enforces. A write that keeps a known
// status (from == to) is always allowed.
func CheckTransition[S Status | cluster.Status](from, to S) error {
	next, known := transitions[S]()[from]
	if (from == to && known) || slices.Contains(next, to) {
		return nil
	}
	return &TransitionError{From: string(from), To: string(to)}
}

func instanceTransitions() map[Status][]Status {
	return map[Status][]Status{
		StatusAccepted:     {StatusPreparing, StatusFailed, StatusDeprovision},
		StatusPreparing:    {StatusProvisioning, StatusFailed, StatusDeprovision},
		StatusProvisioning: {StatusReady, StatusFailed, StatusDeprovision},
		StatusReady:        {StatusFailed, StatusDeprovision, StatusSuspending},
		StatusFailed:       {StatusDeprovision},
		StatusDeprovision:  {StatusDeleting},
		StatusDeleting:     {},
		StatusSuspending:   {StatusSuspended, StatusResuming, StatusFailed, StatusDeprovision},
		StatusSuspended:    {StatusResuming, StatusFailed, StatusDeprovision},
		StatusResuming:     {StatusReady, StatusSuspending, StatusFailed, StatusDeprovision},
	}
}

// Statuses returns every instance status in lifecycle order.
func Statuses() []Status {
	return []Status{StatusAccepted, StatusPreparing, StatusProvisioning, StatusReady, StatusFailed, StatusDeprovision, StatusDeleting,
		StatusSuspending, StatusSuspended, StatusResuming}
}

// Valid reports whether s is a known instance status.
func (s Status) Valid() bool { return slices.Contains(Statuses(), s) }
