//go:build !linux

package process

import (
	"os"
	"syscall"
)

// startTime reports whether process pid runs; the start time is not known
// here (0), so a reused PID cannot be told from the machine.
func startTime(pid int) (uint64, bool) {
	p, err := os.FindProcess(pid)
	if err != nil {
		return 0, false
	}
	return 0, p.Signal(syscall.Signal(0)) == nil
}
