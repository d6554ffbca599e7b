// Package childproc starts the child processes of integration tests (a
// database server, a fleet-manager replica) so that they die with the test
// binary, even when it is killed: Linux's parent-death signal, set before
// exec, from an OS thread locked for the child's life — the kernel sends
// the signal when the thread that forked the child ends, and the Go
// runtime may end threads at any time.
//
//	p, err := childproc.Start(cmd)
//	if err != nil { ... }
//	defer p.Release() // after the process has exited
//	<-p.Exited()
package childproc
