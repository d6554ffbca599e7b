package fleet

import (
	"context"
	"errors"
	"fmt"

	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/lease"
)

// clusterWorker drives every cluster through its statuses, one step per
// pass. It is level-based: each pass reads the clusters and moves each one
// as far as its provider allows.
type clusterWorker struct {
	st        Store
	provider  cluster.Provider
	terraform []func(context.Context, cluster.Cluster) (bool, error)
}

func (w *clusterWorker) pass(ctx context.Context, fence lease.Fence) error {
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

func (w *clusterWorker) step(ctx context.Context, fence lease.Fence, c cluster.Cluster) error {
	for {
		next, err := w.next(ctx, c)
		if err != nil {
			if !isTerminal(err) {
				return err
			}
			reason := err.Error()
			_, uerr := w.st.UpdateCluster(ctx, cluster.Update{ID: c.ID, From: c.Status, To: cluster.Failed, FailedReason: &reason, Fence: fence})
			return uerr
		}
		if next == c.Status {
			return nil
		}
		c, err = w.st.UpdateCluster(ctx, cluster.Update{ID: c.ID, From: c.Status, To: next, Fence: fence})
		if err != nil {
			if errors.Is(err, ErrConflict) {
				return nil // someone moved it; the next pass sees where
			}
			return err
		}
	}
}

// next returns the status c can move to now (c.Status: none).
func (w *clusterWorker) next(ctx context.Context, c cluster.Cluster) (cluster.Status, error) {
	switch c.Status {
	case cluster.Accepted:
		if err := w.provider.Create(ctx, c); err != nil {
			return c.Status, err
		}
		return cluster.Provisioning, nil
	case cluster.Provisioning:
		ok, err := w.provider.Ready(ctx, c)
		if err != nil || !ok {
			return c.Status, err
		}
		return cluster.Provisioned, nil
	case cluster.Provisioned:
		for _, step := range w.terraform {
			done, err := step(ctx, c)
			if err != nil || !done {
				return c.Status, err
			}
		}
		return cluster.WaitingForFleetshard, nil
	case cluster.WaitingForFleetshard:
		if fc, ok := w.provider.(cluster.FleetshardChecker); ok {
			ready, err := fc.FleetshardReady(ctx, c)
			if err != nil || !ready {
				return c.Status, err
			}
		}
		return cluster.Ready, nil
	case cluster.Deprovisioning:
		_, live, err := w.st.ListInstances(ctx, Query{ClusterID: c.ID, Size: -1})
		if err != nil || live > 0 {
			return c.Status, err // wait until its instances are gone
		}
		gone, err := w.provider.Delete(ctx, c)
		if err != nil || !gone {
			return c.Status, err
		}
		return cluster.Cleanup, nil
	default:
		return c.Status, nil
	}
}
