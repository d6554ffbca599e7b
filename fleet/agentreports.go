package fleet

import (
	"context"
	"time"

	"github.com/fleetkit/fleetkit/fleet/cluster"
)

// AgentReports is the optional interface of a Store that keeps what the
// agents of data-plane clusters report (fleet/agentapi writes it,
// fleet/agentplane reads it): per kind and cluster, the latest report of
// the instances the agent runs and its latest heartbeat. Keeping them in
// the Store lets any replica receive a report and the leader's workers see
// it. fleet/inmem, fleet/sqlite and fleet/postgres implement it; it is safe
// for concurrent use and every method may block on I/O.
type AgentReports interface {
	// PutInstanceReports replaces the instance report of the agent of
	// kind on clusterID with reports, stamped with the store's clock.
	// Only the IDs of live instances of kind placed on clusterID are
	// kept: the others are dropped, never written.
	PutInstanceReports(ctx context.Context, kind, clusterID string, reports map[string]InstanceReport) error
	// PutHeartbeat replaces the heartbeat of the agent of kind on
	// clusterID with h, stamped with the store's clock.
	PutHeartbeat(ctx context.Context, kind, clusterID string, h Heartbeat) error
	// AgentReport returns what the agent of kind on clusterID last
	// reported; the zero AgentReport when it never reported.
	AgentReport(ctx context.Context, kind, clusterID string) (AgentReport, error)
	// AgentReportsOf returns the reports of every cluster's agent of kind,
	// by cluster ID.
	AgentReportsOf(ctx context.Context, kind string) (map[string]AgentReport, error)
}

// Instance phases an agent reports (InstanceReport.Phase).
const (
	PhaseInstalling = "installing"
	PhaseReady      = "ready"
	PhaseFailed     = "failed"
)

// InstanceReport is what an agent observes of one instance it runs.
type InstanceReport struct {
	// Phase is PhaseInstalling, PhaseReady or PhaseFailed.
	Phase string `json:"phase"`
	// Host is where the instance answers (host:port), when ready.
	Host string `json:"host,omitempty"`
	// Reason says why, when failed.
	Reason string `json:"reason,omitempty"`
}

// Heartbeat is an agent's report of itself and its cluster.
type Heartbeat struct {
	Phase string `json:"phase"`
	// Capacity is the cluster's capacity in units; 0 means unlimited.
	Capacity     int    `json:"capacity"`
	AgentVersion string `json:"agent_version"`
}

// AgentReport is what a Store keeps of one agent.
type AgentReport struct {
	// Instances is the latest complete instance report (nil: none yet),
	// received at InstancesAt (zero: never).
	Instances   map[string]InstanceReport
	InstancesAt time.Time
	// Heartbeat is the latest heartbeat, received at HeartbeatAt (zero:
	// never).
	Heartbeat   Heartbeat
	HeartbeatAt time.Time
}

// ClusterView is the optional interface of a DataPlane that knows more of
// its clusters than the Store does (fleet/agentplane: its agents'
// heartbeats). The accepted worker shows the Placement the clusters as
// ViewClusters returns them: it may leave out a cluster that cannot take
// instances now (an agent gone silent) and replace a cluster's Capacity
// (the capacity its agent reports). It is called under the placement
// lock, with a copy of the Store's cluster list it may modify, so it must
// be quick; it may block on I/O and must be safe for concurrent use.
type ClusterView interface {
	ViewClusters(ctx context.Context, clusters []cluster.Cluster) ([]cluster.Cluster, error)
}
