// Package process is the embedded default machines.Provider: each machine
// is a local process of a service binary (the linter), listening on a free
// loopback port. It needs no Docker.
//
// Create picks a free port on 127.0.0.1 (listening on port 0, then
// closing), runs Spec.Command with Spec.Args — by default the linter's
// "-language L -version V -addr 127.0.0.1:PORT" — in a process group of
// its own, and waits until Spec.HealthPath answers 200 (or the port
// accepts connections) within the start timeout. When another program
// takes the port before the service binds it, Create tries another port.
// A process that exits or never gets ready is killed and reported with
// the tail of its output.
//
// Remove sends SIGTERM to the whole group, SIGKILL after StopTimeout, and
// returns once the process is reaped, so a service's children die with
// it. One goroutine per process owns cmd.Wait; a process that exits
// without Remove is reported through Watch and stays in List as exited
// until it is removed.
//
// By default machines are kept in memory: a new Provider does not know the
// processes of an old one (List is empty after a restart), and Close stops
// every process the Provider started. A manager killed without Close leaves
// its machines running, unless Options.ParentDeathSignal (Linux) has the
// kernel signal them the moment it dies.
//
// With Options.StateFile, machines outlive their manager as containers do:
// each runs in a session of its own, is recorded (PID, process start time,
// address, labels) the moment its process starts, writes its output to a
// file, and the next Provider of that state file adopts the ones still
// running (List, Remove and Watch work on them). Options.KeepOnClose makes
// Close leave the machines running, so that stopping the manager is not
// stopping the fleet; removing them is then an explicit act (Remove).
//
// # Concurrency
//
// A Provider is safe for concurrent use. Create and Remove block; Watch
// blocks until its ctx is done.
//
// # Usage
//
//	p, err := process.New(process.Options{StopTimeout: 5 * time.Second})
//	if err != nil { ... }
//	defer p.Close()
//	m, err := p.Create(ctx, machines.Spec{
//		Command: "/usr/local/bin/linter", Args: linter.Args("python", "1.0", "{addr}"),
//		HealthPath: "/health",
//	})
package process
