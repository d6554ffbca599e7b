package process

import (
	"os/exec"
	"syscall"
)

const parentDeathSupported = true

// setParentDeath has the kernel send sig to cmd's process when the thread
// that starts it ends. Called after setGroup, which made SysProcAttr.
func setParentDeath(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = sig
}
