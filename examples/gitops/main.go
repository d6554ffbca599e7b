package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/fleetkit/fleetkit/internal/gcpolicy"
)

const usage = `usage: gitops [--log-level LEVEL] <command> <resource> [NAME] [flags]

commands:
  get ks|hr|cluster|images    print the Kustomizations, HelmReleases, clusters or images
  build ks|hr|all             print the objects they render, as a YAML stream
  diff ks|hr|images           diff them against another version (--path-orig, --branch-orig)
  test                        build everything; report every failure

resources may be written as flux-local does: ks, kustomization, kustomizations;
hr, helmrelease, helmreleases; cl, cluster, clusters.
run "gitops <command> <resource> -h" for the flags.
`

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// errUsage marks an error in the command line.
var errUsage = errors.New("usage")

func main() {
	// One command is one build, and its garbage dies with the process:
	// the collector waits for a large heap (GOGC or GOMEMLIMIT override).
	gcpolicy.Batch()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run runs one command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// --log-level is flux-local's only global flag; the builds log
	// nothing, so it is accepted and ignored.
	for len(args) > 0 && (args[0] == "--log-level" || args[0] == "-log-level") {
		if len(args) < 2 {
			fmt.Fprint(stderr, usage)
			return exitUsage
		}
		args = args[2:]
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return exitOK
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "get", "build", "diff":
		if len(rest) == 0 {
			fmt.Fprint(stderr, usage)
			return exitUsage
		}
		err = dispatch(ctx, cmd, resource(rest[0]), rest[1:], stdout, stderr)
	case "test":
		err = runTest(ctx, rest, stdout, stderr)
	default:
		err = fmt.Errorf("%w: unknown command %q", errUsage, cmd)
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, "gitops:", err)
		return exitUsage
	case errors.Is(err, errTestsFailed):
		return exitError
	default:
		fmt.Fprintln(stderr, "gitops error:", err)
		return exitError
	}
}

// resource maps flux-local's names and aliases of a resource to one.
func resource(s string) string {
	switch s {
	case "ks", "kustomization", "kustomizations":
		return "ks"
	case "hr", "helmrelease", "helmreleases":
		return "hr"
	case "cl", "cluster", "clusters":
		return "cluster"
	}
	return s
}

func dispatch(ctx context.Context, cmd, res string, args []string, stdout, stderr io.Writer) error {
	switch cmd + " " + res {
	case "get ks", "get hr":
		return runGet(ctx, res, args, stdout, stderr)
	case "get cluster":
		return runGetCluster(ctx, args, stdout, stderr)
	case "get images":
		return runGetImages(ctx, args, stdout, stderr)
	case "build ks", "build hr", "build all":
		return runBuild(ctx, res, args, stdout, stderr)
	case "diff ks", "diff hr":
		return runDiff(ctx, res, args, stdout, stderr)
	case "diff images":
		return runDiffImages(ctx, args, stdout, stderr)
	}
	return fmt.Errorf("%w: unknown command %q", errUsage, cmd+" "+res)
}
