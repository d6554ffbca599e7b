package helm

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/fleetkit/fleetkit/deprecation"
)

// RenderOptions tunes Render and RenderChart.
type RenderOptions struct {
	// Target is the Kubernetes release the chart is rendered for:
	// .Capabilities.KubeVersion, and the built-in APIs in
	// .Capabilities.APIVersions (see ServedAPIs). Charts that branch on
	// either render what they would deploy there; Helm's defaults (1.20,
	// and an API list that still holds removed APIs) would render old
	// apiVersions and corrupt the findings. Required.
	Target deprecation.Version
	// Rules say which built-in APIs Target serves; nil means
	// deprecation.DefaultRules().
	Rules *deprecation.RuleSet
	// APIVersions are added to what the chart sees as served:
	// "group/version" or "group/version/Kind" (the CRDs a repository
	// installs, say).
	APIVersions []string
	// ReleaseName defaults to the chart's name; Namespace to "default".
	ReleaseName string
	Namespace   string
	// Values override the chart's values.yaml.
	Values map[string]any
	// IsUpgrade renders with .Release.IsUpgrade set (helm template
	// --is-upgrade).
	IsUpgrade bool
	// NoHooks leaves hooks out (--no-hooks); SkipTests leaves out test
	// hooks only (--skip-tests).
	NoHooks, SkipTests bool
	// SkipCRDs leaves the chart's crds/ directory out (--skip-crds).
	SkipCRDs bool
	// SkipSchemaValidation skips values.schema.json
	// (--skip-schema-validation).
	SkipSchemaValidation bool
	// ShowOnly keeps only the manifests of these templates, as
	// --show-only: paths in the chart ("templates/deploy.yaml"), globs
	// allowed. A pattern that matches nothing is an error.
	ShowOnly []string
}

// RenderChart loads the chart at path (a directory or a packaged chart)
// and renders it with Render.
func RenderChart(ctx context.Context, path string, opts RenderOptions) ([]byte, error) {
	if opts.Target.IsZero() {
		return nil, fmt.Errorf("%w: RenderOptions.Target is required", ErrInvalidOptions)
	}
	chrt, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("helm: loading chart %s: %w", path, err)
	}
	out, err := Render(ctx, chrt, opts)
	if err != nil {
		return nil, fmt.Errorf("helm: rendering chart %s: %w", path, err)
	}
	return out, nil
}

// Render renders a chart client-side, as `helm template` does, and
// returns its manifest followed by its hooks' manifests, as one
// multi-document stream (each document headed by its "# Source:"
// comment) for deprecation.Checker. Nothing is sent to a cluster.
//
// The capabilities are the target's, never Helm's defaults: Helm's
// client-only mode would add its own API list, which serves APIs the
// target removed, so this runs a dry-run install against capabilities set
// here and a Kubernetes client that talks to nothing.
//
// Helm does not stop a template that is rendering when ctx is done; Render
// returns ctx's error at once and leaves that rendering to finish on its
// own goroutine, so a chart that never finishes cannot hold up the caller.
func Render(ctx context.Context, chrt *chart.Chart, opts RenderOptions) ([]byte, error) {
	if opts.Target.IsZero() {
		return nil, fmt.Errorf("%w: RenderOptions.Target is required", ErrInvalidOptions)
	}
	kube, err := chartutil.ParseKubeVersion(opts.Target.String())
	if err != nil {
		return nil, fmt.Errorf("helm: target %v: %w", opts.Target, err)
	}
	rules := opts.Rules
	if rules == nil {
		rules = deprecation.DefaultRules()
	}
	apis := ServedAPIs(rules, opts.Target)
	for _, a := range opts.APIVersions {
		if a = strings.TrimSpace(a); a != "" {
			apis[a] = true
		}
	}
	cfg := &action.Configuration{
		Capabilities: &chartutil.Capabilities{
			KubeVersion: *kube,
			APIVersions: slices.Sorted(maps.Keys(apis)),
			HelmVersion: chartutil.DefaultCapabilities.HelmVersion,
		},
		KubeClient: &kubefake.PrintingKubeClient{Out: io.Discard},
		Releases:   storage.Init(driver.NewMemory()),
		Log:        func(string, ...any) {},
	}
	in := action.NewInstall(cfg)
	in.DryRun, in.DryRunOption, in.Replace = true, "client", true
	in.IncludeCRDs, in.SkipCRDs = !opts.SkipCRDs, opts.SkipCRDs
	in.IsUpgrade, in.DisableHooks = opts.IsUpgrade, opts.NoHooks
	in.SkipSchemaValidation = opts.SkipSchemaValidation
	in.ReleaseName = opts.ReleaseName
	if in.ReleaseName == "" {
		in.ReleaseName = chrt.Name()
	}
	in.Namespace = opts.Namespace
	if in.Namespace == "" {
		in.Namespace = "default"
	}
	done := make(chan installed, 1) // buffered: an abandoned render does not block
	go install(ctx, in, chrt, opts.Values, done)
	var a installed
	select {
	case a = <-done:
	case <-ctx.Done():
		return nil, fmt.Errorf("helm: %w", ctx.Err())
	}
	if a.err != nil {
		return nil, a.err
	}
	return manifest(a.rel, opts)
}

// installed is the outcome of install.
type installed struct {
	rel *release.Release
	err error
}

// install runs a dry-run install and sends its outcome on done. It is the
// one goroutine Render may leave behind: Helm's template engine cannot be
// stopped, so a render that outlives ctx runs to its end here (helmtest's
// AbandonedRenders names it for leak checks).
func install(ctx context.Context, in *action.Install, chrt *chart.Chart, vals map[string]any, done chan<- installed) {
	rel, err := in.RunWithContext(ctx, chrt, vals)
	done <- installed{rel, err}
}

// manifest joins a release's manifest and hooks as `helm template` prints
// them, then applies ShowOnly.
func manifest(rel *release.Release, opts RenderOptions) ([]byte, error) {
	var b strings.Builder
	b.WriteString(strings.TrimSpace(rel.Manifest))
	b.WriteString("\n")
	if !opts.NoHooks {
		for _, h := range rel.Hooks {
			if opts.SkipTests && isTestHook(h) {
				continue
			}
			fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", h.Path, h.Manifest)
		}
	}
	if len(opts.ShowOnly) == 0 {
		return []byte(b.String()), nil
	}
	out, missing := ShowOnly([]byte(b.String()), opts.ShowOnly)
	if len(missing) > 0 {
		return nil, fmt.Errorf("%w: could not find template %s in chart", ErrInvalidOptions, missing[0])
	}
	return out, nil
}

// ShowOnly keeps the manifests of a rendered chart (as Render returns it)
// that come from templates matching patterns (paths in the chart such as
// "templates/deploy.yaml", globs allowed), in the order helm template
// --show-only prints them. It returns the patterns that matched nothing.
func ShowOnly(manifest []byte, patterns []string) ([]byte, []string) {
	split := releaseutil.SplitManifests(string(manifest))
	keys := slices.Collect(maps.Keys(split))
	slices.SortFunc(keys, func(a, b string) int { return manifestIndex(a) - manifestIndex(b) })
	var (
		out     strings.Builder
		missing []string
	)
	for _, pattern := range patterns {
		pattern = filepath.ToSlash(pattern)
		found := false
		for _, k := range keys {
			m := split[k]
			sub := sourceLine.FindStringSubmatch(m)
			if len(sub) == 0 {
				continue
			}
			if ok, _ := filepath.Match(pattern, sub[1]); ok {
				fmt.Fprintf(&out, "---\n%s\n", m)
				found = true
			}
		}
		if !found {
			missing = append(missing, pattern)
		}
	}
	return []byte(out.String()), missing
}

// sourceLine finds a manifest's template path below the chart's name.
var sourceLine = regexp.MustCompile(`# Source: [^/]+/(.+)`)

// manifestIndex returns N of SplitManifests' "manifest-N" keys.
func manifestIndex(key string) int {
	var n int
	fmt.Sscanf(key, "manifest-%d", &n)
	return n
}

func isTestHook(h *release.Hook) bool {
	return slices.Contains(h.Events, release.HookTest)
}

// stableAPIs are built-in group/versions that no rule covers, with the
// release that first served them (empty: before any release a target can
// name).
var stableAPIs = []struct{ apiVersion, since string }{
	{"v1", ""},
	{"admissionregistration.k8s.io/v1", "v1.16.0"},
	{"apiextensions.k8s.io/v1", "v1.16.0"},
	{"apiregistration.k8s.io/v1", ""},
	{"apps/v1", ""},
	{"authentication.k8s.io/v1", ""},
	{"authorization.k8s.io/v1", ""},
	{"autoscaling/v1", ""},
	{"autoscaling/v2", "v1.23.0"},
	{"batch/v1", ""},
	{"certificates.k8s.io/v1", "v1.19.0"},
	{"coordination.k8s.io/v1", ""},
	{"discovery.k8s.io/v1", "v1.21.0"},
	{"events.k8s.io/v1", "v1.19.0"},
	{"flowcontrol.apiserver.k8s.io/v1", "v1.29.0"},
	{"networking.k8s.io/v1", ""},
	{"node.k8s.io/v1", "v1.20.0"},
	{"policy/v1", "v1.21.0"},
	{"rbac.authorization.k8s.io/v1", ""},
	{"scheduling.k8s.io/v1", ""},
	{"storage.k8s.io/v1", ""},
}

// ServedAPIs returns the built-in group/versions, and group/version/kinds,
// that Kubernetes target serves, as far as the rules and a table of stable
// APIs tell: an API removed in or before target is not served, a
// replacement is served from the release it became available in. It is
// what charts see in .Capabilities.APIVersions (with
// RenderOptions.APIVersions), so a chart that tests
// .Capabilities.APIVersions.Has picks what the target serves.
func ServedAPIs(rules *deprecation.RuleSet, target deprecation.Version) map[string]bool {
	served := make(map[string]bool)
	for _, a := range stableAPIs {
		if a.since == "" || !target.Less(deprecation.MustParseVersion(a.since)) {
			served[a.apiVersion] = true
		}
	}
	// A replacement API may itself be removed later (extensions/v1beta1
	// → policy/v1beta1 → policy/v1): what a rule removes stays removed.
	removed := make(map[string]bool)
	var k8s []deprecation.Rule
	for _, r := range rules.Rules() {
		if r.Component != "" && r.Component != deprecation.ComponentKubernetes {
			continue
		}
		k8s = append(k8s, r)
		if !r.RemovedIn.IsZero() && !target.Less(r.RemovedIn) {
			removed[r.APIVersion+"/"+r.Kind] = true
		}
	}
	add := func(apiVersion, kind string) {
		if removed[apiVersion+"/"+kind] {
			return
		}
		served[apiVersion] = true
		if kind != "" {
			served[apiVersion+"/"+kind] = true
		}
	}
	for _, r := range k8s {
		add(r.APIVersion, r.Kind)
		if r.ReplacementAvailable(target) {
			add(r.ReplacementAPI, r.Kind)
		}
	}
	return served
}
