// Package machines is the concept of a machine: one running instance of a
// service that answers HTTP on an "ip:port" address — a linter of the
// linter fleet, a fleet instance. A machine knows nothing of what it runs:
// its Spec says how to run it (an image or a command, arguments,
// environment, port, health path, start timeout) and its labels say what
// it is to whoever created it. rollout builds the linter's spec (the
// linter's command line, linter.Args, and its language and version as
// labels); fleet/dataplane builds an instance's.
//
// The package holds the Provider interface (the MachineProvider of the
// design: Create, Remove, List by label Selector, Get), the domain types
// Spec, Machine, Selector and Event, the optional Watcher interface for
// machines that exit on their own, and WaitReady, the readiness poll the
// providers share. A Machine's Reason says what its provider sees wrong
// with it (a crash loop, an eviction, a missing image). It imports nothing
// heavy; the implementations live in subpackages:
//
//   - machines/process: machines are local processes on free loopback
//     ports — the embedded default, no Docker needed;
//   - machines/docker: machines are Docker containers, selected by the
//     engine's label filters and found again by their labels after a
//     restart;
//   - machines/kubernetes: machines are Pods on a Kubernetes cluster,
//     adopted by label after a restart, listed from an informer's cache by
//     label selector;
//   - machines/machinestest: an in-memory provider whose machines are real
//     loopback HTTP servers (a fake linter), for tests of code that uses
//     machines, and the conformance suite every provider passes
//     (RunConformance);
//   - machines/health: a health checker that polls /health of a set of
//     targets and reports each result as an event.
//
// # Concurrency
//
// Providers are safe for concurrent use; their methods block on I/O and
// honour their ctx. Create returns only once the machine is running (and
// healthy when Spec.HealthPath is set) and leaves nothing behind when it
// fails. Watch runs until its ctx is done; events are hints that wake a
// level-based reconciler, List is the truth.
//
// # Labels
//
// Every machine carries io.fleetkit.managed=true, io.fleetkit.provider
// (the provider's name) and io.fleetkit.port, plus the Spec's own labels
// (which may not use the io.fleetkit. prefix). List selects by them: a
// caller asks for the machines it owns (rollout: its owner label and a
// language; fleet/dataplane: one instance's), not for the whole fleet. A
// docker or kubernetes provider finds its machines again through them; a
// process provider keeps them in memory, or, with a state file, records
// them there and adopts them after a restart.
//
// # Usage
//
//	p, err := process.New(process.Options{})
//	if err != nil { ... }
//	defer p.Close()
//	m, err := p.Create(ctx, machines.Spec{
//		Command:    "linter",
//		Args:       []string{"-language", "python", "-version", "1.0", "-addr", "{addr}"}, // {addr}: 127.0.0.1:PORT
//		Labels:     map[string]string{"team": "lint"},
//		HealthPath: machines.DefaultHealthPath,
//	})
//	if err != nil { ... }
//	resp, err := http.Post(m.URL()+"/lint", "application/json", body)
//	...
//	ours, err := p.List(ctx, machines.Selector{"team": "lint"})
//	err = p.Remove(ctx, m.ID)
package machines
