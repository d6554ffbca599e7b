// Package machinestest provides an in-memory machines.Provider for tests
// of code that uses machines (a rollout, a machine manager). Its machines
// are real HTTP servers on loopback ports, so callers exercise their real
// HTTP paths: by default each is a fake linter that reads the linter's
// command line from Spec.Args (linter.Args) and answers /health and /lint
// like the fleet's linter service, including version 1.2 dying on empty
// code. Tests can make creates fail (FailCreates), kill a machine
// (Kill), make its health fail (SetUnhealthy) and count its lints (Lints).
//
// RunConformance is the provider conformance suite the process, Docker
// and Kubernetes providers (and this one) pass: create, health, address,
// list by label selector, get, remove, idempotent remove, adoption by a
// restarted provider, context cancellation, start timeout, invalid specs
// and reported exits. Measure times creates and removes side by side for
// BENCHMARKS.md.
//
// # Concurrency
//
// A Provider is safe for concurrent use. Close stops every machine.
//
// # Usage
//
//	p := machinestest.New(machinestest.Options{})
//	defer p.Close()
//	m, _ := p.Create(ctx, machines.Spec{Args: linter.Args("python", "1.0", "{addr}")})
//	// POST m.URL()+"/lint" answers like a linter.
package machinestest
