package fleet

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// The standard reconcilers of the seeds, one per status. Each reads the
// instance, returns at once when it is no longer in the worker's status
// (level-based: a late or repeated pass is harmless), and moves it on with
// a compare-and-swap carrying the request's fence.

// getIn returns the instance of req and whether it is live in status: the
// snapshot the request carries, else a read.
func getIn(ctx context.Context, st Store, req Request, status Status) (Instance, bool, error) {
	if req.Instance != nil && req.Instance.ID == req.ID {
		inst := *req.Instance
		return inst, inst.DeletedAt == nil && inst.Status == status, nil
	}
	inst, err := st.GetInstance(ctx, req.ID)
	if errors.Is(err, ErrNotFound) {
		return inst, false, nil
	}
	if err != nil {
		return inst, false, err
	}
	return inst, inst.DeletedAt == nil && inst.Status == status, nil
}

// ignoreConflict treats a lost swap as success: another writer moved the
// instance, and the level-based pass that follows sees where.
func ignoreConflict(err error) error {
	if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}

// acceptedReconciler places an accepted instance on a cluster.
type acceptedReconciler struct {
	st        Store
	placement Placement
	units     func(instanceType string) int
	retry     time.Duration

	// mu serialises placements, so two instances never take the last free
	// units of a cluster at once (one replica runs this worker at a time).
	mu sync.Mutex
	// clusters is a snapshot of the cluster list, read again when older
	// than clusterTTL; guarded by mu.
	clusters   []Cluster
	clustersAt time.Time
}

// clusterTTL bounds how stale the accepted worker's cluster list may be.
const clusterTTL = time.Second

func (r *acceptedReconciler) Reconcile(ctx context.Context, req Request) (Result, error) {
	inst, ok, err := getIn(ctx, r.st, req, StatusAccepted)
	if err != nil || !ok {
		return Result{}, err
	}
	r.mu.Lock()
	locked := true
	defer func() {
		if locked {
			r.mu.Unlock()
		}
	}()
	refresh := time.Since(r.clustersAt) > clusterTTL
	id, err := r.place(ctx, inst, refresh)
	if errors.Is(err, ErrNoCapacity) && !refresh {
		// The snapshot may predate a cluster becoming ready: read again.
		id, err = r.place(ctx, inst, true)
	}
	if errors.Is(err, ErrNoCapacity) {
		return Result{RequeueAfter: r.retry}, nil // waits; the worker's timeout fails it
	}
	if err != nil {
		return Result{}, err
	}
	if !r.limited(id) {
		// Unlimited capacity: no placement can invalidate this one, so
		// the write need not be serialised with the others.
		r.mu.Unlock()
		locked = false
	}
	_, err = r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: StatusAccepted, To: StatusPreparing, ClusterID: &id, Fence: req.Fence})
	return Result{}, ignoreConflict(err)
}

// limited reports whether cluster id counts capacity. Called with mu held.
func (r *acceptedReconciler) limited(id string) bool {
	for _, c := range r.clusters {
		if c.ID == id {
			return c.Capacity > 0
		}
	}
	return true
}

// place runs the placement over the cluster snapshot, read again first when
// refresh is set. Called with mu held.
func (r *acceptedReconciler) place(ctx context.Context, inst Instance, refresh bool) (string, error) {
	if refresh || r.clustersAt.IsZero() {
		clusters, err := r.st.ListClusters(ctx)
		if err != nil {
			return "", err
		}
		r.clusters, r.clustersAt = clusters, time.Now()
	}
	usage := make([]ClusterUsage, 0, len(r.clusters))
	for _, c := range r.clusters {
		u := ClusterUsage{Cluster: c}
		if c.Status == ClusterReady && c.Capacity > 0 {
			var err error
			if u.Used, err = r.used(ctx, c); err != nil {
				return "", err
			}
		}
		usage = append(usage, u)
	}
	return r.placement.Place(inst, r.units(inst.InstanceType), usage)
}

// used counts the capacity units of the live instances on c.
func (r *acceptedReconciler) used(ctx context.Context, c Cluster) (int, error) {
	if len(c.InstanceTypes) == 0 {
		_, n, err := r.st.ListInstances(ctx, Query{ClusterID: c.ID, Size: -1})
		return n * r.units(""), err
	}
	total := 0
	for _, t := range c.InstanceTypes {
		_, n, err := r.st.ListInstances(ctx, Query{ClusterID: c.ID, Size: -1, Search: Cond{Field: "instance_type", Op: OpEq, Values: []string{t}}})
		if err != nil {
			return 0, err
		}
		total += n * r.units(t)
	}
	return total, nil
}

// preparingReconciler creates the external resources.
type preparingReconciler struct {
	st  Store
	res ExternalResources
}

func (r *preparingReconciler) Reconcile(ctx context.Context, req Request) (Result, error) {
	inst, ok, err := getIn(ctx, r.st, req, StatusPreparing)
	if err != nil || !ok {
		return Result{}, err
	}
	if err := r.res.Ensure(ctx, inst); err != nil {
		return Result{}, fmt.Errorf("external resources: %w", err)
	}
	_, err = r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: StatusPreparing, To: StatusProvisioning, Fence: req.Fence})
	return Result{}, ignoreConflict(err)
}

// provisioningReconciler asks the data plane and waits for ready.
type provisioningReconciler struct {
	st   Store
	dp   DataPlane
	poll time.Duration
}

func (r *provisioningReconciler) Reconcile(ctx context.Context, req Request) (Result, error) {
	inst, ok, err := getIn(ctx, r.st, req, StatusProvisioning)
	if err != nil || !ok {
		return Result{}, err
	}
	s, err := apply(ctx, r.dp, inst)
	switch {
	case err != nil:
		return Result{}, err
	case !s.Ready:
		return Result{RequeueAfter: r.poll}, nil
	}
	_, err = r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: StatusProvisioning, To: StatusReady, Host: &s.Host, Fence: req.Fence})
	return Result{}, ignoreConflict(err)
}

// apply applies inst on dp; a failure the data plane reports is terminal.
func apply(ctx context.Context, dp DataPlane, inst Instance) (DataPlaneStatus, error) {
	s, err := dp.Apply(ctx, inst)
	switch {
	case err != nil:
		return s, fmt.Errorf("data plane: %w", err)
	case s.FailedReason != "":
		return s, TerminalError(errors.New(s.FailedReason))
	}
	return s, nil
}

// readyReconciler keeps a ready instance converged: running on the data
// plane (re-applied if the data plane lost it; a new host is recorded) and
// its external resources in place.
type readyReconciler struct {
	st  Store
	dp  DataPlane
	res ExternalResources
}

func (r *readyReconciler) Reconcile(ctx context.Context, req Request) (Result, error) {
	inst, ok, err := getIn(ctx, r.st, req, StatusReady)
	if err != nil || !ok {
		return Result{}, err
	}
	s, err := apply(ctx, r.dp, inst)
	switch {
	case err != nil:
		return Result{}, err
	case s.Ready && s.Host != inst.Host:
		if _, err := r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: StatusReady, Host: &s.Host, Fence: req.Fence}); ignoreConflict(err) != nil {
			return Result{}, err
		}
	}
	return Result{}, r.res.Ensure(ctx, inst)
}

// deprovisionReconciler removes the instance from the data plane.
type deprovisionReconciler struct {
	st Store
	dp DataPlane
}

func (r *deprovisionReconciler) Reconcile(ctx context.Context, req Request) (Result, error) {
	inst, ok, err := getIn(ctx, r.st, req, StatusDeprovision)
	if err != nil || !ok {
		return Result{}, err
	}
	if err := r.dp.Remove(ctx, inst); err != nil {
		return Result{}, fmt.Errorf("data plane: %w", err)
	}
	_, err = r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: StatusDeprovision, To: StatusDeleting, Fence: req.Fence})
	return Result{}, ignoreConflict(err)
}

// deletingReconciler removes external resources and soft deletes the row,
// which releases the name and the quota. It removes the instance from the
// data plane again (idempotent) in case a ready pass that read the
// instance before its deletion re-applied it since.
type deletingReconciler struct {
	st  Store
	dp  DataPlane
	res ExternalResources
}

func (r *deletingReconciler) Reconcile(ctx context.Context, req Request) (Result, error) {
	inst, ok, err := getIn(ctx, r.st, req, StatusDeleting)
	if err != nil || !ok {
		return Result{}, err
	}
	if err := r.dp.Remove(ctx, inst); err != nil {
		return Result{}, fmt.Errorf("data plane: %w", err)
	}
	if err := r.res.Remove(ctx, inst); err != nil {
		return Result{}, fmt.Errorf("external resources: %w", err)
	}
	_, err = r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: StatusDeleting, SoftDelete: true, Fence: req.Fence})
	return Result{}, ignoreConflict(err)
}

// generalWorker counts instances by status, deprovisions expired trial
// instances and those of deny-listed owners.
type generalWorker struct {
	st   Store
	kind string
	deny DenyList
	m    *serviceMetrics
}

func (w *generalWorker) pass(ctx context.Context, fence Fence) error {
	counts := map[Status]int{}
	now := time.Now()
	var errs []error
	for page := 1; ; page++ {
		insts, total, err := w.st.ListInstances(ctx, Query{Kind: w.kind, Page: page, Size: MaxPageSize, OrderBy: []Order{{Field: "id"}}})
		if err != nil {
			return err
		}
		for _, inst := range insts {
			counts[inst.Status]++
			expired := inst.ExpiresAt != nil && now.After(*inst.ExpiresAt)
			denied := w.deny != nil && w.deny.Denied(inst.Owner, inst.Organisation)
			if (expired || denied) && CheckTransition(inst.Status, StatusDeprovision) == nil && inst.Status != StatusDeprovision {
				_, err := w.st.UpdateInstance(ctx, Update{ID: inst.ID, From: inst.Status, To: StatusDeprovision, Fence: fence})
				if err := ignoreConflict(err); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if page*MaxPageSize >= total {
			break
		}
	}
	for _, s := range Statuses() {
		w.m.instances.WithLabelValues(string(s)).Set(float64(counts[s]))
	}
	return errors.Join(errs...)
}
