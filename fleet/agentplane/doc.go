// Package agentplane is the agent data plane of a fleet.Service: instances
// run on data-plane clusters where an agent (examples/fleet-agent) pulls
// the desired instances from the control plane's agent API (fleet/agentapi)
// and reports what it runs. The control plane never reaches a cluster: it
// reads the agents' reports from the Store (fleet.AgentReports).
//
// A DataPlane is, for one kind:
//   - a fleet.DataPlane: Apply is ready with the host the agent reports,
//     failed when the agent reports a failure, else not ready; Remove is
//     done once the agent's report no longer lists the instance (see
//     Remove);
//   - a cluster.Provider and cluster.FleetshardChecker: a configured
//     cluster needs no provisioning and becomes ready at its agent's first
//     heartbeat;
//   - a fleet.ClusterView: placement skips a cluster whose last heartbeat
//     is older than Options.StaleAfter and uses the capacity its agent
//     reports. A silent agent makes its cluster unschedulable; its
//     instances keep their status.
//
// A DataPlane holds no state of its own, so it is safe for concurrent use
// and any replica may run it.
//
//	dp, err := agentplane.New(store, agentplane.Options{Kind: "dinosaur"})
//	svc, err := fleet.New(store, fleet.Options{Kind: fleet.Dinosaur, DataPlane: dp, ClusterProvider: dp, Clusters: clusters})
package agentplane
