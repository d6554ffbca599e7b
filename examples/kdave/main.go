// Command kdave finds Kubernetes objects that use deprecated or removed
// API versions.
//
//	kdave check [-target v1.NN] [-rules FILE] [-o table|json|yaml] PATH...
//
// PATH is a manifest file, a directory (walked for *.yaml, *.yml and
// *.json) or "-" for stdin. The exit code is pluto's: 0 nothing found,
// 1 error, 2 deprecated API, 3 removed API, 4 no replacement API in the
// target; the highest that applies wins.
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

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/gitops"
)

const usage = `usage: kdave <command> [flags]

commands:
  check   check manifest files, directories or stdin (-), or the cluster's
          Helm releases (-cluster), for deprecated APIs
  serve   export the deprecated APIs of the cluster's Helm releases as
          Prometheus metrics (/metrics, /health, /releases)

run "kdave check -h" or "kdave serve -h" for their flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return deprecation.ExitError
	}
	switch args[0] {
	case "check":
		return check(ctx, args[1:], stdin, stdout, stderr)
	case "serve":
		if err := runServe(ctx, args[1:]); err != nil {
			fmt.Fprintln(stderr, "kdave:", err)
			return deprecation.ExitError
		}
		return deprecation.ExitOK
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return deprecation.ExitOK
	}
	fmt.Fprintf(stderr, "kdave: unknown command %q\n%s", args[0], usage)
	return deprecation.ExitError
}

func check(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	rules := deprecation.DefaultRules()
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	target := fs.String("target", "", "Kubernetes release to check against (default "+rules.Newest(deprecation.ComponentKubernetes).String()+", the newest in the rules)")
	rulesFile := fs.String("rules", "", "extra rules `file` in pluto's versions.yaml format; its rows override the built-in ones")
	output := fs.String("o", "table", "output format: table, json or yaml")
	cluster := fs.Bool("cluster", false, "check the deployed Helm releases of the cluster instead of PATHs")
	kubeconfig := fs.String("kubeconfig", "", "with -cluster: kubeconfig `file` (default $KUBECONFIG, ~/.kube/config, else in-cluster)")
	namespace := fs.String("namespace", "", "with -cluster: only this namespace; for charts: the release namespace")
	flux := fs.String("flux", "", "build the Flux repository at `path` offline (Kustomizations and HelmReleases) and check what it renders")
	only := fs.String("only", "", "with -flux: build only this Kustomization (namespace/name or name) and what it needs")
	chartCache := fs.String("chart-cache", "", "with -flux: `dir` of remote charts as helm pull leaves them (<chart>-<version>.tgz or <chart>/); nothing is fetched")
	includeCRDs := fs.Bool("include-crds", false, "with -flux: keep CustomResourceDefinitions in the objects listed (they are checked either way)")
	includeSecrets := fs.Bool("include-secrets", false, "with -flux: keep Secrets in the objects listed (they are checked either way)")
	apiVersions := fs.String("api-versions", "", "with -flux: `list` (comma-separated group/version or group/version/Kind) that charts see as served, beyond the target's built-in APIs and the repository's CRDs")
	sources := sourcesFlag{}
	fs.Var(sources, "sources", "with -flux: `name=path` points a GitRepository/OCIRepository at a local directory (repeatable, comma-separated)")
	valuesFile := fs.String("values", "", "values `file` for the charts among PATHs (a directory with Chart.yaml, or a .tgz), rendered for the target")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: kdave check [flags] PATH... (a file, a directory, a chart, or - for stdin)\n       kdave check -cluster [flags]\n       kdave check -flux PATH [-only NAME] [-sources name=path] [-include-crds] [-include-secrets] [-api-versions a/v1,b/v2]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return deprecation.ExitOK
		}
		return deprecation.ExitError
	}
	if fs.NArg() == 0 && !*cluster && *flux == "" {
		fs.Usage()
		return deprecation.ExitError
	}
	fail := func(err error) int {
		fmt.Fprintln(stderr, "kdave:", err)
		return deprecation.ExitError
	}

	format, err := deprecation.ParseFormat(*output)
	if err != nil {
		return fail(err)
	}
	var opts deprecation.Options
	if *target != "" {
		if opts.Target, err = deprecation.ParseVersion(*target); err != nil {
			return fail(err)
		}
	}
	if *rulesFile != "" {
		extra, err := loadRules(*rulesFile)
		if err != nil {
			return fail(err)
		}
		rules = deprecation.Merge(rules, extra)
	}
	checker, err := deprecation.NewChecker(rules, opts)
	if err != nil {
		return fail(err)
	}
	if *flux != "" {
		if format == deprecation.FormatYAML {
			return fail(errors.New("-flux prints table or json"))
		}
		code, err := checkFlux(ctx, checker, gitops.Options{
			Path: *flux, Only: *only, Sources: sources, ChartCache: *chartCache,
			IncludeCRDs: *includeCRDs, IncludeSecrets: *includeSecrets, APIVersions: splitList(*apiVersions),
		}, format, stdout)
		if err != nil {
			return fail(err)
		}
		return code
	}
	var rep *deprecation.Report
	if *cluster {
		// Without -target, the cluster's own version is the target.
		line := newProgressLine(stderr)
		rep, err = checkCluster(ctx, *kubeconfig, rules, opts.Target, *namespace, line.update)
		line.done()
	} else {
		rep, err = checkPaths(ctx, checker, stdin, *valuesFile, *namespace, fs.Args())
	}
	if err != nil {
		return fail(err)
	}
	if err := rep.Write(stdout, format); err != nil {
		return fail(err)
	}
	return rep.ExitCode()
}

func loadRules(path string) (*deprecation.RuleSet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rules, err := deprecation.LoadRules(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rules, nil
}
