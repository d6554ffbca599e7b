package inmem

import (
	"context"
	"maps"

	"github.com/fleetkit/fleetkit/fleet"
)

// agentKey names the agent of one kind on one cluster.
type agentKey struct{ kind, cluster string }

// PutInstanceReports implements fleet.AgentReports.
func (s *Store) PutInstanceReports(_ context.Context, kind, clusterID string, reports map[string]fleet.InstanceReport) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	kept := make(map[string]fleet.InstanceReport, len(reports))
	for id, r := range reports {
		if i, ok := s.instances[id]; ok && i.DeletedAt == nil && i.Kind == kind && i.ClusterID == clusterID {
			kept[id] = r
		}
	}
	k := agentKey{kind, clusterID}
	a := s.agents[k]
	a.Instances, a.InstancesAt = kept, now()
	s.agents[k] = a
	return nil
}

// PutHeartbeat implements fleet.AgentReports.
func (s *Store) PutHeartbeat(_ context.Context, kind, clusterID string, h fleet.Heartbeat) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := agentKey{kind, clusterID}
	a := s.agents[k]
	a.Heartbeat, a.HeartbeatAt = h, now()
	s.agents[k] = a
	return nil
}

// AgentReport implements fleet.AgentReports.
func (s *Store) AgentReport(_ context.Context, kind, clusterID string) (fleet.AgentReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneReport(s.agents[agentKey{kind, clusterID}]), nil
}

// AgentReportsOf implements fleet.AgentReports.
func (s *Store) AgentReportsOf(_ context.Context, kind string) (map[string]fleet.AgentReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]fleet.AgentReport{}
	for k, a := range s.agents {
		if k.kind == kind {
			out[k.cluster] = cloneReport(a)
		}
	}
	return out, nil
}

// cloneReport copies a's map, which the caller may modify.
func cloneReport(a fleet.AgentReport) fleet.AgentReport {
	a.Instances = maps.Clone(a.Instances)
	return a
}
