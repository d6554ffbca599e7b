package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/fleetkit/fleetkit/deprecation"
)

// checkFlags are the flags of check and of pluto's detect commands.
type checkFlags struct {
	target, output, rulesFile, valuesFile               string
	cluster                                             bool
	kubeconfig, kubeContext, namespace                  string
	clusterSources                                      listFlag
	flux, only, chartCache, apiVersions                 string
	includeCRDs, includeSecrets                         bool
	sources, targetVersions                             mapFlag
	columns, components                                 listFlag
	dirs                                                appendFlag
	noHeaders, noFooter, onlyRemoved, verbose           bool
	ignoreDeprecations, ignoreRemovals, ignoreNoReplace bool
	failOnInvalid                                       bool
	maxFileSize                                         int64
}

func (cf *checkFlags) define(fs *flag.FlagSet, defaultOutput string) {
	cf.sources, cf.targetVersions = mapFlag{}, mapFlag{}
	fs.StringVar(&cf.target, "target", "", "Kubernetes `release` to check against (default: the newest the rules know, "+
		deprecation.DefaultRules().Newest(deprecation.ComponentKubernetes).String()+"; with -cluster, the cluster's version)")
	fs.Var(cf.targetVersions, "target-versions", "`component=version` targets, comma-separated, repeatable (pluto's; k8s=v1.30 is -target v1.30)")
	fs.Var(cf.targetVersions, "t", "same as -target-versions")
	fs.StringVar(&cf.output, "output", defaultOutput, "output format: table (kdave's), normal, wide, custom, markdown, csv, json or yaml (pluto's)")
	fs.StringVar(&cf.output, "o", defaultOutput, "same as -output")
	fs.Var(&cf.columns, "columns", "`list` of columns for -o custom (required), markdown and csv: NAME, FILEPATH, NAMESPACE, KIND, VERSION, REPLACEMENT, DEPRECATED, DEPRECATED IN, REMOVED, REMOVED IN, COMPONENT, REPL AVAIL, REPL AVAIL IN, LINE, STATE")
	fs.BoolVar(&cf.noHeaders, "no-headers", false, "leave out the header line of the tabular formats")
	fs.BoolVar(&cf.noHeaders, "H", false, "same as -no-headers")
	fs.BoolVar(&cf.noFooter, "no-footer", false, "leave out the summary line of -o table")
	fs.StringVar(&cf.rulesFile, "rules", "", "extra rules `file` in pluto's versions.yaml format; its rows override the built-in ones")
	fs.StringVar(&cf.rulesFile, "additional-versions", "", "same as -rules (pluto's name)")
	fs.StringVar(&cf.rulesFile, "f", "", "same as -rules")
	fs.Var(&cf.components, "components", "`list` of components to check (default every one the rules know: "+strings.Join(deprecation.BuiltinComponents(), ",")+")")
	fs.BoolVar(&cf.onlyRemoved, "only-show-removed", false, "only report APIs removed in the target (changes the exit code too)")
	fs.BoolVar(&cf.onlyRemoved, "r", false, "same as -only-show-removed")
	fs.BoolVar(&cf.ignoreDeprecations, "ignore-deprecations", false, "do not exit 2 for deprecated APIs")
	fs.BoolVar(&cf.ignoreRemovals, "ignore-removals", false, "do not exit 3 for removed APIs")
	fs.BoolVar(&cf.ignoreNoReplace, "ignore-unavailable-replacements", false, "do not exit 4 for APIs whose replacement is not served in the target")
	fs.BoolVar(&cf.failOnInvalid, "fail-on-invalid", false, "exit 1 for a document that is not valid YAML or JSON (reported either way)")
	fs.BoolVar(&cf.verbose, "v", false, "say on stderr which files were skipped and why, and what was read")
	fs.Int64Var(&cf.maxFileSize, "max-file-size", deprecation.DefaultMaxFileSize, "largest file read, in `bytes`; a larger one is reported invalid")
	fs.Var(&cf.dirs, "directory", "a `dir` to check (pluto's detect-files -d); repeatable")
	fs.Var(&cf.dirs, "d", "same as -directory")
	fs.StringVar(&cf.valuesFile, "values", "", "values `file` for the charts among the paths (a directory with Chart.yaml, or a .tgz), rendered for the target")

	fs.BoolVar(&cf.cluster, "cluster", false, "check the cluster: its Helm releases and the apiVersions its live objects were written with")
	fs.Var(&cf.clusterSources, "cluster-sources", "with -cluster: `list` of what to read: helm, api-resources (default both)")
	fs.StringVar(&cf.kubeconfig, "kubeconfig", "", "with -cluster: kubeconfig `file` (default $KUBECONFIG, ~/.kube/config, else in-cluster)")
	fs.StringVar(&cf.kubeContext, "kube-context", "", "with -cluster: the kubeconfig `context` (default the current one)")
	fs.StringVar(&cf.namespace, "namespace", "", "with -cluster: only this namespace; for charts: the release namespace")
	fs.StringVar(&cf.namespace, "n", "", "same as -namespace")

	fs.StringVar(&cf.flux, "flux", "", "build the Flux repository at `path` offline (Kustomizations and HelmReleases) and check what it renders")
	fs.StringVar(&cf.only, "only", "", "with -flux: build only this Kustomization (namespace/name or name) and what it needs")
	fs.StringVar(&cf.chartCache, "chart-cache", "", "with -flux: `dir` of remote charts as helm pull leaves them (<chart>-<version>.tgz or <chart>/); nothing is fetched")
	fs.BoolVar(&cf.includeCRDs, "include-crds", false, "with -flux: keep CustomResourceDefinitions in the objects listed (they are checked either way)")
	fs.BoolVar(&cf.includeSecrets, "include-secrets", false, "with -flux: keep Secrets in the objects listed (they are checked either way)")
	fs.StringVar(&cf.apiVersions, "api-versions", "", "with -flux: `list` (comma-separated group/version or group/version/Kind) that charts see as served, beyond the target's built-in APIs and the repository's CRDs")
	fs.Var(cf.sources, "sources", "with -flux: `name=path` points a GitRepository/OCIRepository at a local directory (repeatable, comma-separated)")
}

// aliasDefaults are what pluto's commands set before their flags.
var aliasDefaults = map[string][]string{
	"detect-helm":           {"-cluster", "-cluster-sources", "helm"},
	"detect-api-resources":  {"-cluster", "-cluster-sources", "api-resources"},
	"detect-all-in-cluster": {"-cluster"},
}

// check runs the check command, or pluto's detect command cmd with the
// same flags; all is the whole command line, handed to kdave-full when
// needed.
func check(ctx context.Context, all []string, cmd string, args []string, stdio IO, f Features) int {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	var cf checkFlags
	defaultOutput := string(deprecation.FormatTable)
	if cmd != "check" {
		defaultOutput = string(deprecation.FormatNormal) // pluto's commands print pluto's output
	}
	cf.define(fs, defaultOutput)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `usage: kdave check [flags] PATH... (files, directories, charts, - for stdin; flags before or after)
       kdave check -cluster [flags]
       kdave check -flux PATH [flags]
exit codes: 0 nothing found, 1 error, 2 deprecated, 3 removed, 4 no replacement in the target (the highest that applies)`)
		fs.PrintDefaults()
	}
	paths, err := parseInterleaved(fs, append(slices.Clone(aliasDefaults[cmd]), args...))
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return deprecation.ExitOK
		}
		return deprecation.ExitError
	}
	paths = append(paths, cf.dirs...)
	if cmd == "detect-files" && len(paths) == 0 {
		paths = []string{"."} // pluto: the current directory
	}
	if len(paths) == 0 && !cf.cluster && cf.flux == "" {
		fs.Usage()
		return deprecation.ExitError
	}
	fail := func(err error) int {
		fmt.Fprintln(stdio.Stderr, "kdave:", err)
		return deprecation.ExitError
	}

	// What needs kdave-full goes there, whole.
	charts, plain := splitCharts(paths)
	if (cf.cluster && f.Cluster == nil) || (cf.flux != "" && f.Flux == nil) || (len(charts) > 0 && f.RenderChart == nil) {
		what := "-cluster"
		switch {
		case cf.flux != "":
			what = "-flux"
		case !cf.cluster:
			what = "checking a chart"
		}
		return delegate(ctx, all, stdio, f, what)
	}

	format, err := deprecation.ParseFormat(cf.output)
	if err != nil {
		return fail(err)
	}
	wopts := deprecation.WriteOptions{Format: format, NoHeaders: cf.noHeaders}
	if len(cf.columns) > 0 {
		if wopts.Columns, err = deprecation.ParseColumns(cf.columns); err != nil {
			return fail(err)
		}
	}
	if format == deprecation.FormatCustom && len(wopts.Columns) == 0 {
		return fail(errors.New("-o custom needs -columns"))
	}
	rules, copts, err := cf.checkerOptions()
	if err != nil {
		return fail(err)
	}
	exit := deprecation.ExitOptions{IgnoreDeprecations: cf.ignoreDeprecations, IgnoreRemovals: cf.ignoreRemovals,
		IgnoreUnavailableReplacements: cf.ignoreNoReplace, FailOnInvalid: cf.failOnInvalid}

	if cf.flux != "" {
		checker, err := deprecation.NewChecker(rules, copts)
		if err != nil {
			return fail(err)
		}
		if format == deprecation.FormatYAML {
			return fail(errors.New("-flux prints table, json or pluto's tabular formats"))
		}
		code, err := f.Flux(ctx, checker, FluxOptions{
			Path: cf.flux, Only: cf.only, Sources: cf.sources, ChartCache: cf.chartCache,
			IncludeCRDs: cf.includeCRDs, IncludeSecrets: cf.includeSecrets, APIVersions: splitList(cf.apiVersions),
			Write: wopts, Exit: exit, OnlyRemoved: cf.onlyRemoved, Stdout: stdio.Stdout,
		})
		if err != nil {
			return fail(err)
		}
		return code
	}

	var rep *deprecation.Report
	if cf.cluster {
		sources := cf.clusterSources
		if len(sources) == 0 {
			sources = listFlag{"helm", "api-resources"}
		}
		for _, s := range sources {
			if s != "helm" && s != "api-resources" {
				return fail(fmt.Errorf("-cluster-sources: unknown %q (want helm, api-resources)", s))
			}
		}
		rep, err = f.Cluster(ctx, ClusterOptions{Kubeconfig: cf.kubeconfig, Context: cf.kubeContext, Namespace: cf.namespace,
			Rules: rules, Target: copts.Target, ComponentTargets: copts.ComponentTargets,
			Helm: slices.Contains(sources, "helm"), APIResources: slices.Contains(sources, "api-resources")}, stdio.Stderr)
	} else {
		rep, err = cf.checkPaths(ctx, rules, copts, plain, charts, stdio.Stdin, f)
	}
	if err != nil {
		return fail(err)
	}
	return writeReport(rep, wopts, exit, cf.onlyRemoved, cf.noFooter, cf.verbose, stdio)
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var l listFlag
	_ = l.Set(s)
	return l
}

// checkerOptions builds the rules and the checker's options from the
// flags: extra rules, components, targets (checked against what the rules
// know).
func (cf *checkFlags) checkerOptions() (*deprecation.RuleSet, deprecation.Options, error) {
	var opts deprecation.Options
	rules := deprecation.DefaultRules()
	if cf.rulesFile != "" {
		extra, err := LoadRules(cf.rulesFile)
		if err != nil {
			return nil, opts, err
		}
		rules = deprecation.Merge(rules, extra)
	}
	if len(cf.components) > 0 {
		var err error
		if rules, err = rules.Select(cf.components...); err != nil {
			return nil, opts, err
		}
	}
	known := rules.Components()
	for comp, text := range cf.targetVersions {
		if !slices.Contains(known, comp) {
			return nil, opts, fmt.Errorf("-target-versions: %w: %q (the rules are for %s)", deprecation.ErrUnknownComponent, comp, strings.Join(known, ", "))
		}
		v, err := deprecation.ParseVersion(text)
		if err != nil {
			return nil, opts, fmt.Errorf("-target-versions %s: %w", comp, err)
		}
		if comp == deprecation.ComponentKubernetes {
			opts.Target = v
			continue
		}
		if opts.ComponentTargets == nil {
			opts.ComponentTargets = map[string]deprecation.Version{}
		}
		opts.ComponentTargets[comp] = v
	}
	if cf.target != "" {
		v, err := deprecation.ParseVersion(cf.target)
		if err != nil {
			return nil, opts, fmt.Errorf("-target: %w", err)
		}
		if !opts.Target.IsZero() && opts.Target != v {
			return nil, opts, fmt.Errorf("-target %s and -target-versions k8s=%s disagree", v, opts.Target)
		}
		opts.Target = v
	}
	if !opts.Target.IsZero() {
		if err := rules.CheckTarget(opts.Target); err != nil {
			return nil, opts, err
		}
	}
	return rules, opts, nil
}

// LoadRules reads a rules file in pluto's versions.yaml format.
func LoadRules(path string) (*deprecation.RuleSet, error) {
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

// splitCharts separates the Helm charts among paths from the rest.
func splitCharts(paths []string) (charts, plain []string) {
	for _, p := range paths {
		if p != deprecation.Stdin && isChart(p) {
			charts = append(charts, p)
		} else {
			plain = append(plain, p)
		}
	}
	return charts, plain
}

// checkPaths checks manifests, and renders the charts (client-side, for
// the checker's target) before checking them. A chart that fails to
// render is an error entry, not the end of the run.
func (cf *checkFlags) checkPaths(ctx context.Context, rules *deprecation.RuleSet, opts deprecation.Options, plain, charts []string, stdin io.Reader, f Features) (*deprecation.Report, error) {
	c, err := deprecation.NewChecker(rules, opts)
	if err != nil {
		return nil, err
	}
	rep := &deprecation.Report{Target: c.Target(), Targets: c.Targets()}
	if len(plain) > 0 {
		if rep, err = c.CheckPathsWith(ctx, stdin, deprecation.PathOptions{MaxFileSize: cf.maxFileSize}, plain...); err != nil {
			return nil, err
		}
	}
	if len(charts) == 0 {
		return rep, nil
	}
	values, err := readValues(cf.valuesFile)
	if err != nil {
		return nil, err
	}
	for _, chart := range charts {
		out, err := f.RenderChart(ctx, chart, c.Rules(), c.Target(), cf.namespace, values)
		if err != nil {
			rep.AddError(chart, err)
			continue
		}
		res, err := c.Check(ctx, chart, out)
		if err != nil {
			return nil, err
		}
		rep.Add(res)
	}
	return rep, nil
}

func readValues(path string) (map[string]any, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// writeReport writes rep as asked, the problems on stderr (kdave's table
// holds them itself), and returns the exit code.
func writeReport(rep *deprecation.Report, w deprecation.WriteOptions, exit deprecation.ExitOptions, onlyRemoved, noFooter, verbose bool, stdio IO) int {
	if onlyRemoved {
		rep = rep.OnlyRemoved()
	}
	if verbose {
		for _, s := range rep.Skipped {
			fmt.Fprintf(stdio.Stderr, "kdave: skipped %s: %s\n", s.Path, s.Reason)
		}
	}
	var err error
	if w.Format == deprecation.FormatTable {
		err = writeTable(rep, noFooter, stdio.Stdout)
	} else {
		if err = rep.WriteWith(stdio.Stdout, w); err == nil {
			err = rep.WriteErrors(prefixed{stdio.Stderr})
		}
	}
	if err != nil {
		fmt.Fprintln(stdio.Stderr, "kdave:", err)
		return deprecation.ExitError
	}
	if verbose {
		fmt.Fprintf(stdio.Stderr, "kdave: %d source(s), %d document(s), %d finding(s), %d unreadable, %d invalid, %d skipped; target Kubernetes %s\n",
			rep.Sources, rep.Documents, len(rep.Findings), len(rep.Errors), len(rep.Invalid), len(rep.Skipped), rep.Target)
	}
	return rep.ExitCodeWith(exit)
}

// writeTable writes kdave's table, without its summary line for
// -no-footer.
func writeTable(rep *deprecation.Report, noFooter bool, w io.Writer) error {
	if !noFooter {
		return rep.WriteTable(w)
	}
	var b strings.Builder
	if err := rep.WriteTable(&b); err != nil {
		return err
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[:i+1]
	} else {
		out = ""
	}
	_, err := io.WriteString(w, out)
	return err
}

// prefixed writes each line with "kdave: " in front.
type prefixed struct{ w io.Writer }

func (p prefixed) Write(b []byte) (int, error) {
	if _, err := io.WriteString(p.w, "kdave: "+string(b)); err != nil {
		return 0, err
	}
	return len(b), nil
}
