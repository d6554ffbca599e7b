package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/gitops"
	"github.com/fleetkit/fleetkit/deprecation/gitops/gitrepo"
)

// defaultNamespace is flux-local's default for -n.
const defaultNamespace = "flux-system"

// boolOpt is an argparse BooleanOptionalAction: --x sets it, --no-x
// clears it.
type boolOpt struct {
	v   *bool
	neg bool
}

func (b boolOpt) String() string {
	if b.v == nil {
		return "false"
	}
	return fmt.Sprint(*b.v != b.neg)
}

func (b boolOpt) Set(s string) error {
	v, err := parseBool(s)
	if err != nil {
		return err
	}
	*b.v = v != b.neg
	return nil
}

func (b boolOpt) IsBoolFlag() bool { return true }

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "1", "t", "true", "yes":
		return true, nil
	case "0", "f", "false", "no":
		return false, nil
	}
	return false, fmt.Errorf("not a boolean: %q", s)
}

// optional registers --name and --no-name for v, defaulting to def.
func optional(fs *flag.FlagSet, v *bool, name string, def bool, help string) {
	*v = def
	fs.Var(boolOpt{v: v}, name, fmt.Sprintf("%s (default %v; --no-%s to turn off)", help, def, name))
	fs.Var(boolOpt{v: v, neg: true}, "no-"+name, "turns off --"+name)
}

// listFlag collects comma-separated values; repeatable.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(s string) error {
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

// pairsFlag collects comma-separated key=value pairs; repeatable. A bare
// key (allowed when bare is set) maps to "".
type pairsFlag struct {
	m    map[string]string
	bare bool
}

func (p *pairsFlag) String() string { return fmt.Sprint(p.m) }

func (p *pairsFlag) Set(s string) error {
	if p.m == nil {
		p.m = make(map[string]string)
	}
	for _, kv := range strings.Split(s, ",") {
		if kv = strings.TrimSpace(kv); kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if (!ok && !p.bare) || k == "" {
			return fmt.Errorf("want key=value, got %q", kv)
		}
		p.m[k] = v
	}
	return nil
}

// selector holds flux-local's selector and common flags, and ours.
type selector struct {
	path         string
	sources      pairsFlag
	all          bool
	namespace    string
	labels       pairsFlag
	skipCRDs     bool
	skipSecrets  bool
	skipKinds    listFlag
	skipInvalid  bool
	kustomize    string
	parallelism  int
	noCache      bool
	chartCache   string
	offline      bool
	outputFile   string
	helm         helmFlags
	helmFlagsSet bool
}

// helmFlags are flux-local's and helm template's flags for HelmReleases.
type helmFlags struct {
	kubeVersion    string
	apiVersions    listFlag
	registryConfig string
	skipInvalidHR  bool
	isUpgrade      bool
	noHooks        bool
	showOnly       listFlag
	wipeSecrets    bool
}

// newFlags returns a flag set with the selector flags (and, with helm,
// the Helm flags) registered into s.
func newFlags(name string, s *selector, helm bool, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&s.path, "path", ".", "`directory` with the Flux Kustomizations (a cluster's, or the repository); spec.path is relative to the git repository holding it")
	s.sources.bare = true
	fs.Var(&s.sources, "sources", "GitRepository/OCIRepository/Bucket/ExternalArtifact `name=dir` (comma-separated, repeatable): where a source other than the repository is; a bare name is the repository itself")
	fs.BoolVar(&s.all, "all-namespaces", false, "all namespaces")
	fs.BoolVar(&s.all, "A", false, "all namespaces (short for --all-namespaces)")
	fs.StringVar(&s.namespace, "namespace", defaultNamespace, "the `namespace` of the objects")
	fs.StringVar(&s.namespace, "n", defaultNamespace, "the `namespace` (short for --namespace)")
	fs.Var(&s.labels, "label-selector", "only objects with these labels: `k=v`[,k=v…]")
	fs.Var(&s.labels, "l", "short for --label-selector")
	optional(fs, &s.skipCRDs, "skip-crds", true, "leave CustomResourceDefinitions out of the output")
	optional(fs, &s.skipSecrets, "skip-secrets", true, "leave Secrets out of the output")
	fs.Var(&s.skipKinds, "skip-kinds", "leave these `kinds` out of the output (comma-separated)")
	optional(fs, &s.skipInvalid, "skip-invalid-kustomization-paths", false, "accepted for flux-local's scripts: a Kustomization whose path is missing fails alone, never the run")
	fs.StringVar(&s.kustomize, "kustomize-build-flags", "", "not supported: kustomize runs in-process with Flux's settings")
	fs.IntVar(&s.parallelism, "parallelism", 0, "nodes built at once (default: the number of CPUs)")
	fs.BoolVar(&s.noCache, "no-cache", false, "render every HelmRelease again and do not use --chart-cache")
	fs.StringVar(&s.chartCache, "chart-cache", "", "`dir` where fetched charts are kept between runs (and charts as helm pull leaves them are found)")
	fs.BoolVar(&s.offline, "offline", false, "fetch no chart: remote charts not in --chart-cache are reported as not rendered")
	fs.StringVar(&s.outputFile, "output-file", "", "write the output to this `file` (default: stdout)")
	if helm {
		s.helmFlagsSet = true
		fs.StringVar(&s.helm.kubeVersion, "kube-version", "", "Kubernetes `version` charts are rendered for (.Capabilities.KubeVersion; default: the newest the deprecation rules know)")
		fs.Var(&s.helm.apiVersions, "api-versions", "extra `APIs` charts see in .Capabilities.APIVersions (comma-separated)")
		fs.Var(&s.helm.apiVersions, "a", "short for --api-versions")
		fs.StringVar(&s.helm.registryConfig, "registry-config", "", "not supported: registries are reached without credentials")
		optional(fs, &s.helm.skipInvalidHR, "skip-invalid-helm-release-paths", true, "accepted for flux-local's scripts: a HelmRelease whose chart path is missing fails alone")
		fs.BoolVar(&s.helm.isUpgrade, "is-upgrade", false, "render with .Release.IsUpgrade (helm template --is-upgrade)")
		fs.BoolVar(&s.helm.noHooks, "no-hooks", false, "leave hooks out (helm template --no-hooks)")
		fs.Var(&s.helm.showOnly, "show-only", "only the manifests of these `templates` (helm template --show-only; comma-separated, repeatable)")
		optional(fs, &s.helm.wipeSecrets, "wipe-secrets", true, "replace Secret values with placeholders in the output")
	}
	return fs
}

// parse parses args, flags and positional arguments in any order (as
// argparse does), and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, fmt.Errorf("%w: %w", errUsage, err)
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// options returns the build options the flags ask for.
func (s *selector) options() (gitops.Options, error) {
	if s.kustomize != "" {
		return gitops.Options{}, fmt.Errorf("%w: --kustomize-build-flags is not supported (kustomize runs in-process)", errUsage)
	}
	if s.helm.registryConfig != "" {
		return gitops.Options{}, fmt.Errorf("%w: --registry-config is not supported (registries are reached without credentials)", errUsage)
	}
	path, err := filepath.Abs(s.path)
	if err != nil {
		return gitops.Options{}, err
	}
	root, err := gitrepo.Root(path)
	if err != nil {
		root = path // not in a git repository: the directory is the repository
	}
	opts := gitops.Options{
		Path: path, Root: root, Parallelism: s.parallelism, SkipChecks: true,
		FetchCharts: !s.offline, ChartCache: s.chartCache, NoCache: s.noCache,
		IncludeCRDs: !s.skipCRDs, IncludeSecrets: !s.skipSecrets,
		APIVersions: s.helm.apiVersions,
		Helm:        gitops.HelmOptions{IsUpgrade: s.helm.isUpgrade, NoHooks: s.helm.noHooks, SkipTests: true, ShowOnly: s.helm.showOnly},
	}
	for name, dir := range s.sources.m {
		if dir == "" {
			continue // the repository itself
		}
		if opts.Sources == nil {
			opts.Sources = make(map[string]string)
		}
		opts.Sources[name] = dir
	}
	if s.helm.kubeVersion != "" {
		if opts.Target, err = deprecation.ParseVersion(s.helm.kubeVersion); err != nil {
			return gitops.Options{}, fmt.Errorf("%w: --kube-version: %w", errUsage, err)
		}
	}
	return opts, nil
}

// only returns Options.Only for a named Kustomization or HelmRelease.
func (s *selector) only(kind, name string) string {
	if name == "" {
		return ""
	}
	id := name
	if !s.all && !strings.Contains(name, "/") {
		id = s.namespace + "/" + name
	}
	if kind == "hr" {
		id = "HelmRelease/" + id
	}
	return id
}

// pick returns the nodes of kind ("ks" or "hr") the selector names: by
// name, namespace (unless --all-namespaces) and labels, sorted by path,
// namespace and name.
func (s *selector) pick(res *gitops.Result, kind, name string) []*gitops.NodeResult {
	want := "Kustomization"
	if kind == "hr" {
		want = "HelmRelease"
	}
	var out []*gitops.NodeResult
	for _, n := range res.Nodes {
		if n.Kind != want || (name != "" && n.Name != name) || (!s.all && n.Namespace != s.namespace) {
			continue
		}
		match := true
		for k, v := range s.labels.m {
			if n.Labels[k] != v {
				match = false
			}
		}
		if match {
			out = append(out, n)
		}
	}
	slices.SortStableFunc(out, func(a, b *gitops.NodeResult) int {
		return strings.Compare(a.Path+"\x00"+a.Namespace+"\x00"+a.Name, b.Path+"\x00"+b.Namespace+"\x00"+b.Name)
	})
	return out
}

// notFound is flux-local's message for a selection that matched nothing.
func (s *selector) notFound(kind, name string) string {
	ns := s.namespace
	switch {
	case name != "" && !s.all:
		return fmt.Sprintf("%s object '%s' not found in '%s' namespace", kind, name, ns)
	case name != "":
		return fmt.Sprintf("%s object '%s' not found in 'None' namespace", kind, name)
	case !s.all:
		return fmt.Sprintf("no %s objects found in '%s' namespace", kind, ns)
	}
	return fmt.Sprintf("no %s objects found in cluster", kind)
}

// output returns where to write: --output-file, or stdout.
func (s *selector) output(stdout io.Writer) (io.Writer, func() error, error) {
	if s.outputFile == "" || s.outputFile == "/dev/stdout" || s.outputFile == "-" {
		return stdout, func() error { return nil }, nil
	}
	f, err := os.Create(s.outputFile)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

// objects returns a node's objects as the output flags ask: without the
// kinds of --skip-kinds, Secrets wiped with --wipe-secrets.
func (s *selector) objects(n *gitops.NodeResult) []gitops.Object {
	var out []gitops.Object
	for _, o := range n.Objects {
		if slices.Contains(s.skipKinds, o.Kind) {
			continue
		}
		if !s.helmFlagsSet || s.helm.wipeSecrets {
			o = gitops.WipeSecret(o)
		}
		out = append(out, o)
	}
	return out
}

// writeObjects writes objects as a YAML stream ("---" before each).
func writeObjects(w io.Writer, objs []gitops.Object) error {
	var b strings.Builder
	for _, o := range objs {
		data, err := gitops.MarshalObject(o, nil)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(data)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
