package fleet

import (
	"context"
	"errors"
	"fmt"
)

// ClusterProvider creates and deletes data plane clusters. The cluster
// worker calls it; every method is idempotent, safe for concurrent use and
// may block on I/O. An error wrapped by TerminalError fails the cluster.
type ClusterProvider interface {
	// Create starts creating c (cluster_accepted → cluster_provisioning).
	Create(ctx context.Context, c Cluster) error
	// Ready reports whether c is provisioned (→ cluster_provisioned).
	Ready(ctx context.Context, c Cluster) (bool, error)
	// Delete removes c and reports whether it is gone (deprovisioning →
	// cleanup).
	Delete(ctx context.Context, c Cluster) (bool, error)
}

// FleetshardChecker is the optional interface of a ClusterProvider that
// knows when the cluster's operator is up (waiting_for_fleetshard_operator
// → ready). Without it the cluster is ready once terraformed.
type FleetshardChecker interface {
	FleetshardReady(ctx context.Context, c Cluster) (bool, error)
}

// clusterWorker drives every cluster through its statuses, one step per
// pass. It is level-based: each pass reads the clusters and moves each one
// as far as its provider allows.
type clusterWorker struct {
	st        Store
	provider  ClusterProvider
	terraform []func(context.Context, Cluster) (bool, error)
}

func (w *clusterWorker) pass(ctx context.Context, fence Fence) error {
	clusters, err := w.st.ListClusters(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range clusters {
		if err := w.step(ctx, fence, c); err != nil {
			errs = append(errs, fmt.Errorf("cluster %s: %w", c.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (w *clusterWorker) step(ctx context.Context, fence Fence, c Cluster) error {
	for {
		next, err := w.next(ctx, c)
		if err != nil {
			if !isTerminal(err) {
				return err
			}
			reason := err.Error()
			_, uerr := w.st.UpdateCluster(ctx, ClusterUpdate{ID: c.ID, From: c.Status, To: ClusterFailed, FailedReason: &reason, Fence: fence})
			return uerr
		}
		if next == c.Status {
			return nil
		}
		c, err = w.st.UpdateCluster(ctx, ClusterUpdate{ID: c.ID, From: c.Status, To: next, Fence: fence})
		if err != nil {
			if errors.Is(err, ErrConflict) {
				return nil // someone moved it; the next pass sees where
			}
			return err
		}
	}
}

// next returns the status c can move to now (c.Status: none).
func (w *clusterWorker) next(ctx context.Context, c Cluster) (ClusterStatus, error) {
	switch c.Status {
	case ClusterAccepted:
		if err := w.provider.Create(ctx, c); err != nil {
			return c.Status, err
		}
		return ClusterProvisioning, nil
	case ClusterProvisioning:
		ok, err := w.provider.Ready(ctx, c)
		if err != nil || !ok {
			return c.Status, err
		}
		return ClusterProvisioned, nil
	case ClusterProvisioned:
		for _, step := range w.terraform {
			done, err := step(ctx, c)
			if err != nil || !done {
				return c.Status, err
			}
		}
		return ClusterWaitingForFleetshard, nil
	case ClusterWaitingForFleetshard:
		if fc, ok := w.provider.(FleetshardChecker); ok {
			ready, err := fc.FleetshardReady(ctx, c)
			if err != nil || !ready {
				return c.Status, err
			}
		}
		return ClusterReady, nil
	case ClusterDeprovisioning:
		_, live, err := w.st.ListInstances(ctx, Query{ClusterID: c.ID, Size: -1})
		if err != nil || live > 0 {
			return c.Status, err // wait until its instances are gone
		}
		gone, err := w.provider.Delete(ctx, c)
		if err != nil || !gone {
			return c.Status, err
		}
		return ClusterCleanup, nil
	default:
		return c.Status, nil
	}
}
