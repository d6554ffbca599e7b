package fleet

import (
	"context"
)

// DataPlane runs instances on clusters. The provisioning worker calls Apply
// until the instance is ready; the deprovision worker calls Remove. Both
// must be idempotent and safe for concurrent use; both may block on I/O.
//
// Implementations: fleet/inmem (in memory) and fleet/dataplane, which runs each instance as a machine through a
// machines.Provider per cluster.
type DataPlane interface {
	// Apply makes sure inst runs on inst.ClusterID and reports its state.
	Apply(ctx context.Context, inst Instance) (DataPlaneStatus, error)
	// Remove stops inst; removing an unknown instance succeeds. An error
	// wrapping ErrRemovePending means it is under way: the worker calls
	// Remove again after Options.RetryInterval.
	Remove(ctx context.Context, inst Instance) error
}

// DataPlaneStatus is what the data plane reports about an instance.
type DataPlaneStatus struct {
	// Ready is true when the instance serves at Host.
	Ready bool
	Host  string
	// Started is true when this Apply started the instance (it was not
	// running): the caller then checks that the instance still exists, as
	// a delete may have finished while it was started.
	Started bool
	// FailedReason, when set, fails the instance: the data plane gave up.
	FailedReason string
}

// Sweeper is the optional interface of a DataPlane that can list what it
// runs, so that a sweep removes what no live instance owns: machines of
// deleted instances that a late pass started, or that a previous manager
// left behind. Running returns one Instance per machine: its ID,
// ClusterID, Host and, as CreatedAt, when the machine started. It may
// block on I/O. Sweep removes the one machine Running reported as inst
// (its ID and Host), not the instance's other machines.
type Sweeper interface {
	Running(ctx context.Context) ([]Instance, error)
	Sweep(ctx context.Context, inst Instance) error
}

// ExternalResources are the resources outside the data plane an instance
// needs (a DNS record, an SSO client). The preparing worker creates them,
// the ready worker keeps them in sync, the deleting worker removes them.
// Both methods are idempotent, safe for concurrent use, and may block.
type ExternalResources interface {
	Ensure(ctx context.Context, inst Instance) error
	Remove(ctx context.Context, inst Instance) error
}
