package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/lease"
	"github.com/fleetkit/fleetkit/fleet/search"
)

// The standard reconcilers of the seeds, one per status. Each reads the
// instance, returns at once when it is no longer in the worker's status
// (level-based: a late or repeated pass is harmless), and moves it on with
// a compare-and-swap carrying the request's fence.

// getIn returns the instance of req and whether it is live in status: the
// snapshot the request carries, else a read.
func getIn(ctx context.Context, st Store, req request, status Status) (Instance, bool, error) {
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
	// view, when set, is the data plane's view of the clusters
	// (ClusterView), applied to every placement.
	view ClusterView

	// mu serialises placements, so two instances never take the last free
	// units of a cluster at once (one replica runs this worker at a time).
	mu sync.Mutex
	// clusters is a snapshot of the cluster list, read again when older
	// than clusterTTL; guarded by mu.
	clusters   []cluster.Cluster
	clustersAt time.Time
	// placed is the cluster list the last placement saw (clusters through
	// view); guarded by mu.
	placed []cluster.Cluster
}

// clusterTTL bounds how stale the accepted worker's cluster list may be.
const clusterTTL = time.Second

func (r *acceptedReconciler) Reconcile(ctx context.Context, req request) (result, error) {
	inst, ok, err := getIn(ctx, r.st, req, StatusAccepted)
	if err != nil || !ok {
		return result{}, err
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
		return result{RequeueAfter: r.retry}, nil // waits; the worker's timeout fails it
	}
	if err != nil {
		return result{}, err
	}
	if !r.limited(id) {
		// Unlimited capacity: no placement can invalidate this one, so
		// the write need not be serialised with the others.
		r.mu.Unlock()
		locked = false
	}
	_, err = r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: StatusAccepted, To: StatusPreparing, ClusterID: &id, Fence: req.Fence})
	return result{}, ignoreConflict(err)
}

// limited reports whether cluster id counts capacity. Called with mu held.
func (r *acceptedReconciler) limited(id string) bool {
	for _, c := range r.placed {
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
	r.placed = r.clusters
	if r.view != nil {
		viewed, err := r.view.ViewClusters(ctx, slices.Clone(r.clusters))
		if err != nil {
			return "", fmt.Errorf("data plane: view clusters: %w", err)
		}
		r.placed = viewed
	}
	usage := make([]cluster.Usage, 0, len(r.placed))
	for _, c := range r.placed {
		u := cluster.Usage{Cluster: c}
		if c.Status == cluster.Ready && c.Capacity > 0 {
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
func (r *acceptedReconciler) used(ctx context.Context, c cluster.Cluster) (int, error) {
	if len(c.InstanceTypes) == 0 {
		_, n, err := r.st.ListInstances(ctx, Query{ClusterID: c.ID, Size: -1})
		return n * r.units(""), err
	}
	total := 0
	for _, t := range c.InstanceTypes {
		_, n, err := r.st.ListInstances(ctx, Query{ClusterID: c.ID, Size: -1, Search: search.Cond{Field: "instance_type", Op: search.OpEq, Values: []string{t}}})
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

func (r *preparingReconciler) Reconcile(ctx context.Context, req request) (result, error) {
	inst, ok, err := getIn(ctx, r.st, req, StatusPreparing)
	if err != nil || !ok {
		return result{}, err
	}
	if err := r.res.Ensure(ctx, inst); err != nil {
		return result{}, fmt.Errorf("external resources: %w", err)
	}
	_, err = r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: StatusPreparing, To: StatusProvisioning, Fence: req.Fence})
	return result{}, ignoreConflict(err)
}

// provisioningReconciler asks the data plane and waits for ready.
type provisioningReconciler struct {
	st   Store
	dp   DataPlane
	poll time.Duration
}

func (r *provisioningReconciler) Reconcile(ctx context.Context, req request) (result, error) {
	inst, ok, err := getIn(ctx, r.st, req, StatusProvisioning)
	if err != nil || !ok {
		return result{}, err
	}
	s, err := apply(ctx, r.dp, inst)
	switch {
	case err != nil:
		return result{}, err
	case !s.Ready:
		return result{RequeueAfter: r.poll}, settleStarted(ctx, r.st, r.dp, inst, s)
	}
	_, err = r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: StatusProvisioning, To: StatusReady, Host: &s.Host, Fence: req.Fence})
	if taken, err := hostTaken(ctx, r.dp, inst, err); taken {
		return result{RequeueAfter: r.poll}, err
	}
	if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
		// Moved on while it was started (deleted, say): converge the
		// data plane to where the row is now.
		return result{}, settle(ctx, r.st, r.dp, inst)
	}
	return result{}, err
}

// wantsRunning reports whether inst should have something running on the
// data plane.
func wantsRunning(inst Instance) bool {
	return inst.DeletedAt == nil && (inst.Status == StatusProvisioning || inst.Status == StatusReady)
}

// settle converges the data plane to the instance's row as it is now: a
// pass that read the instance before a delete finished may have started it
// after the delete removed it; then it is removed again.
func settle(ctx context.Context, st Store, dp DataPlane, inst Instance) error {
	cur, err := st.GetInstance(ctx, inst.ID)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return err
	case wantsRunning(cur):
		return nil
	}
	if err := dp.Remove(ctx, inst); err != nil {
		return fmt.Errorf("data plane: remove %s, no longer live: %w", inst.ID, err)
	}
	return nil
}

// settleStarted is settle for an Apply that started the instance.
func settleStarted(ctx context.Context, st Store, dp DataPlane, inst Instance, s DataPlaneStatus) error {
	if !s.Started {
		return nil
	}
	return settle(ctx, st, dp, inst)
}

// hostTaken handles an update refused because another live instance
// still records the host the data plane gave inst (a dead instance's
// address, reused): inst's machine is removed, to be started again on
// another address by the next pass. It reports whether err was that.
func hostTaken(ctx context.Context, dp DataPlane, inst Instance, err error) (bool, error) {
	if !errors.Is(err, ErrHostTaken) {
		return false, nil
	}
	if rerr := dp.Remove(ctx, inst); rerr != nil {
		return true, fmt.Errorf("data plane: remove %s: %w (%w)", inst.ID, rerr, err)
	}
	return true, nil
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
// plane and answering (Apply checks; the data plane starts it again when
// it lost it or it stopped answering, and the new host is recorded) and its
// external resources in place. While it does not run, its row says so:
// FailedReason is set on the ready instance (the API's failed_reason, the
// original's degraded signal) until it answers again.
type readyReconciler struct {
	st   Store
	dp   DataPlane
	res  ExternalResources
	poll time.Duration
	kind Kind
}

func (r *readyReconciler) Reconcile(ctx context.Context, req request) (result, error) {
	inst, ok, err := getIn(ctx, r.st, req, StatusReady)
	if err != nil || !ok {
		return result{}, err
	}
	s, err := apply(ctx, r.dp, inst)
	if err == nil {
		err = settleStarted(ctx, r.st, r.dp, inst, s)
	}
	if err != nil || !s.Ready {
		reason := fmt.Sprintf("%s %s is not running on cluster %s", r.kind.Display, inst.ID, inst.ClusterID)
		if err != nil {
			reason += ": " + err.Error()
		}
		if inst.FailedReason == "" {
			_, uerr := r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: StatusReady, FailedReason: &reason, Fence: req.Fence})
			if isTerminal(err) {
				err = nil // a data plane that gave up: the row says why
			}
			if uerr = ignoreConflict(uerr); uerr != nil {
				return result{}, errors.Join(err, uerr)
			}
		}
		if err != nil {
			return result{}, err
		}
		return result{RequeueAfter: r.poll}, nil
	}
	if s.Host != inst.Host || inst.FailedReason != "" {
		cleared := ""
		_, err := r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: StatusReady, Host: &s.Host, FailedReason: &cleared, Fence: req.Fence})
		if taken, err := hostTaken(ctx, r.dp, inst, err); taken {
			return result{RequeueAfter: r.poll}, err
		}
		if errors.Is(err, ErrConflict) || errors.Is(err, ErrNotFound) {
			return result{}, settle(ctx, r.st, r.dp, inst)
		}
		if err != nil {
			return result{}, err
		}
	}
	return result{}, r.res.Ensure(ctx, inst)
}

// deprovisionReconciler removes the instance from the data plane.
type deprovisionReconciler struct {
	st Store
	dp DataPlane
}

func (r *deprovisionReconciler) Reconcile(ctx context.Context, req request) (result, error) {
	inst, ok, err := getIn(ctx, r.st, req, StatusDeprovision)
	if err != nil || !ok {
		return result{}, err
	}
	if err := r.dp.Remove(ctx, inst); err != nil {
		return result{}, fmt.Errorf("data plane: %w", err)
	}
	_, err = r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: StatusDeprovision, To: StatusDeleting, Fence: req.Fence})
	return result{}, ignoreConflict(err)
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

func (r *deletingReconciler) Reconcile(ctx context.Context, req request) (result, error) {
	inst, ok, err := getIn(ctx, r.st, req, StatusDeleting)
	if err != nil || !ok {
		return result{}, err
	}
	if err := r.dp.Remove(ctx, inst); err != nil {
		return result{}, fmt.Errorf("data plane: %w", err)
	}
	if err := r.res.Remove(ctx, inst); err != nil {
		return result{}, fmt.Errorf("external resources: %w", err)
	}
	_, err = r.st.UpdateInstance(ctx, Update{ID: inst.ID, From: StatusDeleting, SoftDelete: true, Fence: req.Fence})
	return result{}, ignoreConflict(err)
}

// generalWorker counts instances by status, deprovisions expired trial
// instances and those of deny-listed owners.
type generalWorker struct {
	st   Store
	kind string
	deny denyList
	m    *serviceMetrics
}

func (w *generalWorker) pass(ctx context.Context, fence lease.Fence) error {
	counts := map[Status]int{}
	now := time.Now()
	var errs []error
	for page := 1; ; page++ {
		insts, total, err := w.st.ListInstances(ctx, Query{Kind: w.kind, Page: page, Size: maxPageSize, OrderBy: []Order{{Field: "id"}}})
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
		if page*maxPageSize >= total {
			break
		}
	}
	for _, s := range Statuses() {
		w.m.instances.WithLabelValues(string(s)).Set(float64(counts[s]))
	}
	return errors.Join(errs...)
}

// sweeper removes from the data plane what no live instance owns: machines
// of instances deleted while a late pass started them, left behind by
// another manager, or started by this replica while it led and since
// replaced by the new leader's (a ready row records another host). It runs
// on every replica, each sweeping what its own data plane sees. A row,
// once soft deleted, never comes back, and an instance runs only after its
// row exists, so listing the data plane first and the rows second never
// removes a machine a live row owns; a machine at another host than its
// ready row records is left alone for a grace period, the time for the
// leader to record the host of a machine it just started.
// sweepConcurrency bounds the removals of one sweep in flight.
const sweepConcurrency = 16

type sweeper struct {
	st      Store
	running Sweeper
	kind    string
	grace   time.Duration
	log     *slog.Logger
}

func (w *sweeper) pass(ctx context.Context, _ lease.Fence) error {
	running, err := w.running.Running(ctx)
	if err != nil || len(running) == 0 {
		return err
	}
	live := make(map[string]Instance, len(running))
	for page := 1; ; page++ {
		insts, total, err := w.st.ListInstances(ctx, Query{Kind: w.kind, Page: page, Size: maxPageSize, OrderBy: []Order{{Field: "id"}}})
		if err != nil {
			return err
		}
		for _, inst := range insts {
			live[inst.ID] = inst
		}
		if page*maxPageSize >= total {
			break
		}
	}
	var (
		mu   sync.Mutex
		errs []error
		g    errgroup.Group
	)
	// Removals run side by side: after a failover the old leader's data
	// plane may hold the whole fleet, and a machine may take its stop
	// timeout to go.
	g.SetLimit(sweepConcurrency)
	for _, r := range running {
		inst, ok := live[r.ID]
		switch {
		case !ok || inst.Status == StatusFailed || inst.Status == StatusAccepted || inst.Status == StatusPreparing:
		case inst.Status == StatusReady && inst.Host != "" && r.Host != inst.Host && !r.CreatedAt.IsZero() && time.Since(r.CreatedAt) > w.grace:
		default:
			continue
		}
		w.log.Info("fleet: sweeping a machine no live instance owns", "id", r.ID, "cluster", r.ClusterID, "host", r.Host)
		g.Go(func() error {
			if err := w.running.Sweep(ctx, r); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("data plane: sweep %s: %w", r.ID, err))
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait()
	return errors.Join(errs...)
}
