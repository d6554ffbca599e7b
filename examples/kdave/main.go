package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/examples/kdave/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}, cli.Features{Delegate: delegate})
	stop()
	os.Exit(code)
}

// fullName is the binary that has every feature.
const fullName = "kdave-full"

// findFull returns the path of kdave-full: $KDAVE_FULL, else next to this
// executable, else on PATH.
func findFull() (string, error) {
	if p := os.Getenv("KDAVE_FULL"); p != "" {
		return p, nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), fullName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return exec.LookPath(fullName)
}

// delegate runs args in kdave-full with this process's streams; a signal
// that stops kdave is passed on as an interrupt, so the exporter shuts
// down gracefully.
func delegate(ctx context.Context, args []string, stdio cli.IO) int {
	path, err := findFull()
	if err != nil {
		fmt.Fprintf(stdio.Stderr, "kdave: %s needs %s (go build ./examples/kdave/%s), which is not in $KDAVE_FULL, next to kdave or on PATH: %v\n",
			args[0], fullName, fullName, err)
		return deprecation.ExitError
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdio.Stdin, stdio.Stdout, stdio.Stderr
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 15 * time.Second
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return deprecation.ExitOK
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode()
	}
	fmt.Fprintf(stdio.Stderr, "kdave: %s: %v\n", path, err)
	return deprecation.ExitError
}
