//go:build unix

package process

import (
	"os/exec"
	"syscall"
)

// setGroup puts the process in a process group of its own, so that signals
// reach its children too; with session, in a session of its own as well,
// apart from the manager's terminal (its Ctrl-C, its hang-up).
func setGroup(cmd *exec.Cmd, session bool) {
	if session {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// terminate sends SIGTERM to the process group pgid.
func terminate(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGTERM) }

// killGroup sends SIGKILL to the process group pgid.
func killGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }
