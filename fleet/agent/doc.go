// Package agent is the data-plane side of the fleet's agent data plane:
// the agent that runs in a data-plane cluster (examples/fleet-agent),
// pulls the instances the control plane placed on its cluster, creates
// them with Kubernetes objects and reports their status back. The wire
// contract is the control plane's agent API (package fleet/agentapi):
//
//	GET .../agent-clusters/{id}/<kind>s            desired instances (long poll, ETag)
//	PUT .../agent-clusters/{id}/<kind>s/status     complete status report
//	PUT .../agent-clusters/{id}/status             heartbeat and capacity
//
// For each desired instance the agent server-side applies (field manager
// "fleet-agent") the objects its kind's template renders (DefaultTemplate;
// Options.Template replaces it): a root Secret "<kind>-<id>" holding the
// instance's credentials, and a Deployment of the per-instance service
// and a Service owned by it. Every object carries the labels
// app.kubernetes.io/managed-by=fleet-agent, fleetkit.io/instance and
// fleetkit.io/kind. An instance no longer desired has its root Secret and
// its other objects deleted explicitly, so nothing depends on a garbage
// collector.
//
// The agent keeps no state of its own: what exists is read from the
// cluster (informers on the labelled objects), so a restarted agent
// adopts what it made and applies nothing twice, and an object deleted
// by hand is applied again at once. Convergence is level-based and per
// instance (internal/reconcile): events wake it, a resync every
// Options.Resync covers what no event said, and failures back off. Before
// the control plane has answered once, nothing is removed; an agent cut
// off from it keeps every instance running.
//
// The report lists every instance the agent has objects (or Pods) for:
// ready with its host once every Deployment has an available replica,
// failed with a reason when its objects are refused or its Pods cannot
// start, installing otherwise.
//
//	a, err := agent.New(kubeClient, agent.Options{
//		ControlPlane: "https://fleet.example.com", Kind: fleet.Dinosaur,
//		Cluster: "c1", Token: token, Namespace: "dinosaurs",
//	})
//	if err != nil {
//		return err
//	}
//	return a.Run(ctx)
//
// An Agent's Run may be called once; Healthy is safe for concurrent use.
package agent
