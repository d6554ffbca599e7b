// Command kdave finds Kubernetes objects that use deprecated or removed
// API versions, as pluto does, with pluto's flags and exit codes.
//
//	kdave check [flags] PATH...       files, directories, - for stdin
//	kdave list-versions [flags]       the rules
//	kdave detect-files -d DIR ...     pluto's commands, pluto's output
//
// This binary links only package deprecation, so that a check starts in a
// few megabytes. Checking Helm charts, the cluster (-cluster), Flux
// repositories (-flux) and the exporter (serve) need Helm, client-go and
// kustomize: kdave runs the command in kdave-full (go build
// ./examples/kdave/kdave-full), found in $KDAVE_FULL, next to kdave, or on
// PATH, with the same arguments. The exit code is pluto's: 0 nothing found,
// 1 error, 2 deprecated API, 3 removed API, 4 no replacement API in the
// target; the highest that applies wins.
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
