//go:build !linux

package process

import (
	"os/exec"
	"syscall"
)

const parentDeathSupported = false

func setParentDeath(*exec.Cmd, syscall.Signal) {}
