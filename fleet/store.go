package fleet

import (
	"context"
	"time"

	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/lease"
	"github.com/fleetkit/fleetkit/fleet/search"
)

// Store is the persistence of a fleet: instances, clusters and leases. The
// implementations are fleet/sqlite (embedded default) and fleet/postgres;
// fleet/storetest is the conformance suite both pass. A Store is safe for
// concurrent use; every method may block on I/O.
type Store interface {
	// Instances.

	// CreateInstance inserts inst as given (ID, times and status set by the
	// caller). A live instance of the same kind and name in the same scope
	// makes it fail with ErrNameTaken (a unique index, not a query).
	CreateInstance(ctx context.Context, inst Instance) error
	// CreateInstanceChecked is CreateInstance guarded by check, in one
	// transaction: it first takes a lock on inst's kind and scope
	// (organisation, else owner) that serialises every
	// CreateInstanceChecked of that scope across all the processes
	// sharing the database, then sums the capacity units (Instance.Units)
	// of the live instances of the kind in the scope and calls check with
	// the sum (the count, when every instance is one unit). An error from check is
	// returned as is and nothing is written. check runs under the lock:
	// it must be quick. This is what keeps a quota across replicas.
	CreateInstanceChecked(ctx context.Context, inst Instance, check func(live int) error) error
	// GetInstance returns the instance with id, soft-deleted or not, or
	// ErrNotFound.
	GetInstance(ctx context.Context, id string) (Instance, error)
	// ListInstances returns one page of the instances q selects and the
	// number of instances it selects in all.
	ListInstances(ctx context.Context, q Query) ([]Instance, int, error)
	// UpdateInstance applies u as a compare-and-swap on the status (and on
	// the fencing token when u.Fence is set) and returns the row after the
	// write. A lost swap is a *ConflictError, an illegal transition a
	// *TransitionError, a stale token lease.ErrStaleFence, a missing or soft
	// deleted row ErrNotFound, a non-empty host that another live row
	// records ErrHostTaken.
	UpdateInstance(ctx context.Context, u Update) (Instance, error)

	// Clusters.

	// CreateCluster inserts c; an existing ID is cluster.ErrExists.
	CreateCluster(ctx context.Context, c cluster.Cluster) error
	// GetCluster returns the cluster with id or ErrNotFound.
	GetCluster(ctx context.Context, id string) (cluster.Cluster, error)
	// ListClusters returns every cluster, ordered by ID.
	ListClusters(ctx context.Context) ([]cluster.Cluster, error)
	// UpdateCluster is UpdateInstance for clusters.
	UpdateCluster(ctx context.Context, u cluster.Update) (cluster.Cluster, error)

	// Leader leases, one row per name, created on demand.

	// AcquireLease takes the lease name for holder for ttl, or renews it
	// when holder already holds it. In one transaction it re-checks the
	// current holder; taking over (a new holder, or the row's first use)
	// increments the fencing token. Another holder's unexpired lease is
	// lease.ErrHeld.
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (lease.Lease, error)
	// ReleaseLease ends l early if it is still held with l's token.
	ReleaseLease(ctx context.Context, l lease.Lease) error
}

// SharedStore is the optional interface of a Store that several replicas
// share (fleet/postgres): a Service on it always runs its workers under
// leader election, since two replicas running the same worker would each
// start every instance.
type SharedStore interface {
	NeedsLeader() bool
}

// Update is a compare-and-swap change of one instance.
type Update struct {
	ID string
	// From is the status the row must have; To the status it gets ("" means
	// From). The change must pass CheckTransition.
	From, To Status
	// Non-nil fields are written.
	ClusterID    *string
	Host         *string
	FailedReason *string
	// Owner hands the instance to another user (not empty); a name taken
	// in the new owner's scope is ErrNameTaken.
	Owner *string
	// NoReauthentication sets Instance.NoReauthentication.
	NoReauthentication *bool
	// SoftDelete sets DeletedAt, which releases the name.
	SoftDelete bool
	// Fence, when set, makes the write conditional on the lease token.
	Fence lease.Fence
}

// Order is one term of an ORDER BY.
type Order struct {
	Field string // a column: id, name, owner, organisation, cloud_provider, region, status, instance_type, cluster_id, created_at, updated_at, status_since
	Desc  bool
}

// Query selects instances. The zero Query selects every live instance.
type Query struct {
	// Kind restricts to one kind ("" means all).
	Kind string
	// Owner and Organisation restrict visibility: by organisation when it
	// is set, else by owner when it is set.
	Owner        string
	Organisation string
	// Statuses restricts to these statuses (none means any).
	Statuses []Status
	// ClusterID restricts to one cluster.
	ClusterID string
	// Search is a parsed search expression (nil means none).
	Search search.Expr
	// OrderBy terms; ID ascending is always appended as a tie-breaker.
	// Nil means created_at ascending.
	OrderBy []Order
	// Page counts from 1 (0 means 1); Size is the page size (0 means 100,
	// at most 1000; negative means no rows: count only). PageSize says
	// what a Size means.
	Page, Size int
	// IncludeDeleted also selects soft-deleted rows.
	IncludeDeleted bool
}

// PageSize is the number of rows a page of q holds: Size, 100 when Size is
// 0, at most 1000, none when Size is negative. Stores page with it.
func (q Query) PageSize() int {
	switch {
	case q.Size < 0:
		return 0
	case q.Size == 0:
		return defaultPageSize
	}
	return min(q.Size, maxPageSize)
}
