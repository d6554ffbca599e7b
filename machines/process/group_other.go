//go:build !unix

package process

import (
	"os"
	"os/exec"
)

// setGroup does nothing where process groups do not exist.
func setGroup(*exec.Cmd, bool) {}

// terminate asks the process to stop.
func terminate(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Signal(os.Interrupt)
	}
}

// killGroup kills the process.
func killGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
