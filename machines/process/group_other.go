//go:build !unix

package process

import (
	"os"
	"os/exec"
)

// setGroup does nothing where process groups do not exist.
func setGroup(*exec.Cmd) {}

// terminate asks the process to stop.
func terminate(cmd *exec.Cmd) { _ = cmd.Process.Signal(os.Interrupt) }

// killGroup kills the process.
func killGroup(cmd *exec.Cmd) { _ = cmd.Process.Kill() }
