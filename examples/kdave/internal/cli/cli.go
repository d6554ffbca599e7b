package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/fleetkit/fleetkit/deprecation"
)

// IO is a command's standard streams.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// ClusterOptions say what `check -cluster` reads.
type ClusterOptions struct {
	// Kubeconfig and Context select the cluster ("" for the defaults:
	// $KUBECONFIG, ~/.kube/config, else in-cluster; the current context).
	Kubeconfig, Context string
	// Namespace limits the scan ("" for all).
	Namespace string
	// Rules and ComponentTargets are the checker's; a zero Target means
	// the cluster's version.
	Rules            *deprecation.RuleSet
	Target           deprecation.Version
	ComponentTargets map[string]deprecation.Version
	// Helm and APIResources select the Helm releases and the live objects
	// (their last applied configuration and managed fields).
	Helm, APIResources bool
}

// FluxOptions say what `check -flux` builds (see gitops.Options) and how
// it writes the outcome.
type FluxOptions struct {
	Path, Only, ChartCache      string
	Sources                     map[string]string
	IncludeCRDs, IncludeSecrets bool
	APIVersions                 []string
	// Write, Exit and OnlyRemoved apply to the findings as for files.
	Write       deprecation.WriteOptions
	Exit        deprecation.ExitOptions
	OnlyRemoved bool
	Stdout      io.Writer
}

// Features are what kdave-full adds. A nil function means this binary
// does not have it; a command that needs it goes to Delegate.
type Features struct {
	// RenderChart renders the chart at path for target, with the APIs rules
	// say target serves (so -rules files count there too).
	RenderChart func(ctx context.Context, path string, rules *deprecation.RuleSet, target deprecation.Version, namespace string, values map[string]any) ([]byte, error)
	// Cluster scans the cluster.
	Cluster func(ctx context.Context, opts ClusterOptions, stderr io.Writer) (*deprecation.Report, error)
	// Flux builds a Flux repository, writes its nodes and findings, and
	// returns the exit code.
	Flux func(ctx context.Context, c *deprecation.Checker, opts FluxOptions) (int, error)
	// Serve runs the exporter with its flags and returns the exit code.
	Serve func(ctx context.Context, args []string, stdio IO) int
	// Delegate runs the whole command line in the binary that has the
	// features (kdave-full) and returns its exit code.
	Delegate func(ctx context.Context, args []string, stdio IO) int
}

const usage = `usage: kdave <command> [flags]

commands:
  check          check manifest files, directories or stdin (-) for deprecated
                 APIs; with kdave-full also charts, Flux repositories (-flux)
                 and the cluster's Helm releases and live objects (-cluster)
  list-versions  print the rules: every deprecated apiVersion and kind known
  serve          (kdave-full) export the deprecated APIs of the cluster's Helm
                 releases as Prometheus metrics (/metrics, /health, /releases)

pluto's commands work too: detect-files [-d DIR], detect FILE|-, detect-helm,
detect-api-resources, detect-all-in-cluster; they print pluto's output (-o normal).

run "kdave check -h", "kdave list-versions -h" or "kdave serve -h" for their flags.
`

// Run runs the command line args (without the program name) and returns
// the exit code.
func Run(ctx context.Context, args []string, stdio IO, f Features) int {
	if len(args) == 0 {
		fmt.Fprint(stdio.Stderr, usage)
		return deprecation.ExitError
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "check":
		return check(ctx, args, "check", rest, stdio, f)
	case "detect-files", "detect", "detect-helm", "detect-api-resources", "detect-all-in-cluster":
		return check(ctx, args, cmd, rest, stdio, f)
	case "list-versions":
		return listVersions(rest, stdio)
	case "serve":
		if f.Serve == nil {
			return delegate(ctx, args, stdio, f, "serve")
		}
		return f.Serve(ctx, rest, stdio)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdio.Stdout, usage)
		return deprecation.ExitOK
	}
	fmt.Fprintf(stdio.Stderr, "kdave: unknown command %q\n%s", cmd, usage)
	return deprecation.ExitError
}

// delegate hands the command line to kdave-full.
func delegate(ctx context.Context, args []string, stdio IO, f Features, what string) int {
	if f.Delegate == nil {
		fmt.Fprintf(stdio.Stderr, "kdave: %s is not built into this binary\n", what)
		return deprecation.ExitError
	}
	return f.Delegate(ctx, args, stdio)
}

// isChart reports whether path is a Helm chart: a directory holding
// Chart.yaml, or a packaged chart (.tgz, .tar.gz). It only looks at the
// file system, so the lean binary can tell without linking Helm.
func isChart(path string) bool {
	if strings.HasSuffix(path, ".tgz") || strings.HasSuffix(path, ".tar.gz") {
		st, err := os.Stat(path)
		return err == nil && !st.IsDir()
	}
	st, err := os.Stat(filepath.Join(path, "Chart.yaml"))
	return err == nil && !st.IsDir()
}
