// Package machines is the concept of a machine of the linter fleet: one
// running instance of a service (a linter of one language and version)
// that answers HTTP on an "ip:port" address.
//
// The package holds the Provider interface (the MachineProvider of the
// design), the domain types Spec, Machine and Event, the optional Watcher
// interface for machines that exit on their own, the optional Selector
// interface (and Select, which falls back to List) for selection by label,
// and WaitReady, the readiness poll the providers share. A Machine's
// Reason says what its provider sees wrong with it (a crash loop, an
// eviction, a missing image). It imports nothing heavy; the
// implementations live in subpackages:
//
//   - machines/process: machines are local processes on free loopback
//     ports — the embedded default, no Docker needed;
//   - machines/docker: machines are Docker containers, found again by
//     their labels after a restart;
//   - machines/kubernetes: machines are Pods on a Kubernetes cluster,
//     adopted by label after a restart, listed from an informer's cache;
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
// (the provider's name), io.fleetkit.language, io.fleetkit.version and
// io.fleetkit.port, plus the Spec's own labels. A docker provider finds
// its containers again through them; a process provider keeps them in
// memory, or, with a state file, records them there and adopts them after
// a restart.
//
// # Usage
//
//	p, err := process.New(process.Options{})
//	if err != nil { ... }
//	defer p.Close()
//	m, err := p.Create(ctx, machines.Spec{
//		Language:   "python",
//		Version:    "1.0",
//		Command:    "linter", // runs: linter -language python -version 1.0 -addr 127.0.0.1:PORT
//		HealthPath: machines.DefaultHealthPath,
//	})
//	if err != nil { ... }
//	resp, err := http.Post(m.URL()+"/lint", "application/json", body)
//	...
//	err = p.Remove(ctx, m.ID)
package machines
