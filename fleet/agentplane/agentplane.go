package agentplane

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/cluster"
)

// DefaultStaleAfter is Options.StaleAfter's default: three missed
// heartbeats of an agent that beats every 10 s.
const DefaultStaleAfter = 30 * time.Second

// Errors of Remove and New.
var (
	// ErrStillRunning means the agent still reports the instance: Remove
	// is called again (the workers retry with backoff).
	ErrStillRunning = errors.New("agentplane: the agent still runs the instance")
	// ErrNoReport means no report arrived since the instance left the
	// desired set, so its removal is not confirmed yet.
	ErrNoReport = errors.New("agentplane: no agent report since the instance was removed")
	// ErrInvalid is an invalid Options.
	ErrInvalid = errors.New("agentplane: invalid options")
)

// Options configures a DataPlane.
type Options struct {
	// Kind is the kind's name ("dinosaur"), required: reports are per kind.
	Kind string
	// StaleAfter is how old a cluster's last heartbeat may be for it to
	// take new instances (0: DefaultStaleAfter).
	StaleAfter time.Duration
}

// DataPlane is the agent data plane of one kind; see the package doc.
type DataPlane struct {
	st    fleet.AgentReports
	kind  string
	stale time.Duration
}

var (
	_ fleet.DataPlane           = (*DataPlane)(nil)
	_ fleet.ClusterView         = (*DataPlane)(nil)
	_ cluster.Provider          = (*DataPlane)(nil)
	_ cluster.FleetshardChecker = (*DataPlane)(nil)
)

// New returns the data plane of opts.Kind reading reports from st.
func New(st fleet.AgentReports, opts Options) (*DataPlane, error) {
	if st == nil {
		return nil, fmt.Errorf("%w: the store keeps no agent reports", ErrInvalid)
	}
	if opts.Kind == "" {
		return nil, fmt.Errorf("%w: no kind", ErrInvalid)
	}
	if opts.StaleAfter < 0 {
		return nil, fmt.Errorf("%w: negative StaleAfter %s", ErrInvalid, opts.StaleAfter)
	}
	if opts.StaleAfter == 0 {
		opts.StaleAfter = DefaultStaleAfter
	}
	return &DataPlane{st: st, kind: opts.Kind, stale: opts.StaleAfter}, nil
}

// Apply implements fleet.DataPlane: the instance is ready at the host its
// agent reports, failed when the agent reports it failed, else not ready
// yet. The agent starts it on its own (the instance is in the desired set
// while provisioning or ready), so Apply never starts anything.
func (d *DataPlane) Apply(ctx context.Context, inst fleet.Instance) (fleet.DataPlaneStatus, error) {
	r, err := d.st.AgentReport(ctx, d.kind, inst.ClusterID)
	if err != nil {
		return fleet.DataPlaneStatus{}, err
	}
	rep, ok := r.Instances[inst.ID]
	switch {
	case !ok:
		return fleet.DataPlaneStatus{}, nil
	case rep.Phase == fleet.PhaseReady && rep.Host != "":
		return fleet.DataPlaneStatus{Ready: true, Host: rep.Host}, nil
	case rep.Phase == fleet.PhaseFailed:
		reason := rep.Reason
		if reason == "" {
			reason = "the agent of cluster " + inst.ClusterID + " reported it failed"
		}
		return fleet.DataPlaneStatus{FailedReason: reason}, nil
	}
	return fleet.DataPlaneStatus{}, nil
}

// Remove implements fleet.DataPlane: the agent removes an instance once it
// leaves the desired set, and Remove is done once a report received after
// inst entered its status no longer lists it. In status deleting the
// deprovision step already saw such a report, and the instance never
// became desired again: the latest report not listing it is enough.
// Until then it returns ErrStillRunning or ErrNoReport, and the worker
// tries again; an instance never placed is removed at once.
func (d *DataPlane) Remove(ctx context.Context, inst fleet.Instance) error {
	if inst.ClusterID == "" {
		return nil
	}
	r, err := d.st.AgentReport(ctx, d.kind, inst.ClusterID)
	if err != nil {
		return err
	}
	if _, listed := r.Instances[inst.ID]; listed {
		return fmt.Errorf("%w: %s on cluster %s", ErrStillRunning, inst.ID, inst.ClusterID)
	}
	if inst.Status == fleet.StatusDeleting || r.InstancesAt.After(inst.StatusSince) {
		return nil
	}
	return fmt.Errorf("%w: %s on cluster %s, %s since %s", ErrNoReport, inst.ID, inst.ClusterID, inst.Status, inst.StatusSince.Format(time.RFC3339Nano))
}

// Create implements cluster.Provider: an agent cluster exists already.
func (d *DataPlane) Create(context.Context, cluster.Cluster) error { return nil }

// Ready implements cluster.Provider: an agent cluster is provisioned.
func (d *DataPlane) Ready(context.Context, cluster.Cluster) (bool, error) { return true, nil }

// Delete implements cluster.Provider: the control plane owns nothing on
// the cluster (the cluster worker deletes it once it has no instances).
func (d *DataPlane) Delete(context.Context, cluster.Cluster) (bool, error) { return true, nil }

// FleetshardReady implements cluster.FleetshardChecker: the cluster is
// ready once its agent has sent a heartbeat.
func (d *DataPlane) FleetshardReady(ctx context.Context, c cluster.Cluster) (bool, error) {
	r, err := d.st.AgentReport(ctx, d.kind, c.ID)
	if err != nil {
		return false, err
	}
	return !r.HeartbeatAt.IsZero(), nil
}

// ViewClusters implements fleet.ClusterView: it leaves out the clusters
// whose agent has not sent a heartbeat within StaleAfter (unschedulable),
// and gives the others the capacity their agent reports.
func (d *DataPlane) ViewClusters(ctx context.Context, clusters []cluster.Cluster) ([]cluster.Cluster, error) {
	reports, err := d.st.AgentReportsOf(ctx, d.kind)
	if err != nil {
		return nil, err
	}
	out := clusters[:0]
	for _, c := range clusters {
		r, ok := reports[c.ID]
		if !ok || !d.fresh(r) {
			continue
		}
		c.Capacity = r.Heartbeat.Capacity
		out = append(out, c)
	}
	return out, nil
}

// Schedulable reports whether cluster id's agent sent a heartbeat within
// StaleAfter, so placement may put instances there.
func (d *DataPlane) Schedulable(ctx context.Context, id string) (bool, error) {
	r, err := d.st.AgentReport(ctx, d.kind, id)
	if err != nil {
		return false, err
	}
	return d.fresh(r), nil
}

func (d *DataPlane) fresh(r fleet.AgentReport) bool {
	return !r.HeartbeatAt.IsZero() && time.Since(r.HeartbeatAt) <= d.stale
}
