//go:build !linux

package childproc

import "os/exec"

// setParentDeath does nothing where there is no parent-death signal: the
// test's cleanup stops the process.
func setParentDeath(*exec.Cmd) {}
