package gitops

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"helm.sh/helm/v3/pkg/strvals"
)

// ErrRemoteChart is reported, as a skipped node, on a HelmRelease whose
// chart is not available locally (a HelmRepository, an OCIRepository or a
// chartRef): nothing is downloaded. HelmReleases that depend on it still
// render.
var ErrRemoteChart = errors.New("gitops: not rendered: remote chart")

// helmPrefix starts the node ID of a HelmRelease, keeping it apart from
// the Kustomization of the same namespace and name.
const helmPrefix = "HelmRelease/"

// HelmRelease is the part of a Flux HelmRelease that rendering uses.
type HelmRelease struct {
	Namespace, Name string
	// ReleaseName and TargetNamespace are what Helm installs.
	ReleaseName, TargetNamespace string
	// Chart is spec.chart.spec.chart: a path in a GitRepository, or a
	// chart name in a HelmRepository.
	Chart string
	// ChartVersion is spec.chart.spec.version (a HelmRepository chart).
	ChartVersion string
	// SourceKind, SourceName and SourceNamespace name the chart's source;
	// SourceKind is empty for a spec.chartRef.
	SourceKind, SourceName, SourceNamespace string
	// DependsOn holds the node IDs of the HelmReleases it depends on.
	DependsOn []string
	// Values is spec.values; ValuesFrom spec.valuesFrom.
	Values     map[string]any
	ValuesFrom []HelmValuesReference
	// Owner is the node ID of the Kustomization that rendered it.
	Owner string
}

// ID returns the node ID: "HelmRelease/namespace/name".
func (h *HelmRelease) ID() string { return helmPrefix + h.Namespace + "/" + h.Name }

// HelmValuesReference is one entry of spec.valuesFrom.
type HelmValuesReference struct {
	ValuesReference
	// ValuesKey is the data key to read; "" means values.yaml.
	ValuesKey string
	// TargetPath, when set, places the key's raw value at this dotted
	// path instead of merging it as YAML.
	TargetPath string
}

func parseHelmRelease(o Object, owner string) *HelmRelease {
	ns := o.Namespace
	if ns == "" {
		ns = defaultNamespace
	}
	h := &HelmRelease{
		Namespace:       ns,
		Name:            o.Name,
		ReleaseName:     str(o.Body, "spec", "releaseName"),
		TargetNamespace: str(o.Body, "spec", "targetNamespace"),
		Chart:           str(o.Body, "spec", "chart", "spec", "chart"),
		ChartVersion:    str(o.Body, "spec", "chart", "spec", "version"),
		SourceKind:      str(o.Body, "spec", "chart", "spec", "sourceRef", "kind"),
		SourceName:      str(o.Body, "spec", "chart", "spec", "sourceRef", "name"),
		SourceNamespace: str(o.Body, "spec", "chart", "spec", "sourceRef", "namespace"),
		Owner:           owner,
	}
	if h.SourceNamespace == "" {
		h.SourceNamespace = ns
	}
	if h.TargetNamespace == "" {
		h.TargetNamespace = ns
	}
	if h.ReleaseName == "" {
		h.ReleaseName = h.Name
		if t := str(o.Body, "spec", "targetNamespace"); t != "" {
			h.ReleaseName = t + "-" + h.Name
		}
	}
	for _, d := range list(o.Body, "spec", "dependsOn") {
		dns := str(d, "namespace")
		if dns == "" {
			dns = ns
		}
		h.DependsOn = append(h.DependsOn, helmPrefix+dns+"/"+str(d, "name"))
	}
	h.Values, _ = lookup(o.Body, "spec", "values").(map[string]any)
	for _, r := range list(o.Body, "spec", "valuesFrom") {
		opt, _ := r["optional"].(bool)
		h.ValuesFrom = append(h.ValuesFrom, HelmValuesReference{
			ValuesReference: ValuesReference{Kind: str(r, "kind"), Name: str(r, "name"), Optional: opt},
			ValuesKey:       str(r, "valuesKey"),
			TargetPath:      str(r, "targetPath"),
		})
	}
	return h
}

// values merges valuesFrom in order, then spec.values, as Flux does.
func (b *builder) values(h *HelmRelease) (map[string]any, error) {
	vals := make(map[string]any)
	for _, ref := range h.ValuesFrom {
		o, ok := b.config(ref.Kind, h.Namespace, ref.Name)
		if !ok {
			if ref.Optional {
				continue
			}
			return nil, fmt.Errorf("%w: valuesFrom %s %s/%s", ErrNotFound, ref.Kind, h.Namespace, ref.Name)
		}
		data, err := configData(o)
		if err != nil {
			return nil, fmt.Errorf("valuesFrom: %w", err)
		}
		key := ref.ValuesKey
		if key == "" {
			key = "values.yaml"
		}
		v, ok := data[key]
		if !ok {
			if ref.Optional {
				continue
			}
			return nil, fmt.Errorf("%w: valuesFrom %s %s has no key %s", ErrNotFound, ref.Kind, ref.Name, key)
		}
		if ref.TargetPath != "" {
			// Escape the value so commas and backslashes in it are not
			// read as strvals syntax.
			v = strings.NewReplacer(`\`, `\\`, `,`, `\,`).Replace(v)
			if err := strvals.ParseInto(ref.TargetPath+"="+v, vals); err != nil {
				return nil, fmt.Errorf("valuesFrom %s %s targetPath %s: %w", ref.Kind, ref.Name, ref.TargetPath, err)
			}
			continue
		}
		var m map[string]any
		if err := yaml.Unmarshal([]byte(v), &m); err != nil {
			return nil, fmt.Errorf("valuesFrom %s %s key %s: %w", ref.Kind, ref.Name, key, err)
		}
		vals = mergeMaps(vals, m)
	}
	return mergeMaps(vals, h.Values), nil
}

// mergeMaps merges b into a, deeply; b wins.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if bm, ok := v.(map[string]any); ok {
			if am, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(am, bm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// render renders one HelmRelease whose chart is local.
func (b *builder) render(ctx context.Context, id string) (*NodeResult, error) {
	b.mu.Lock()
	h := b.hrs[id]
	b.mu.Unlock()
	n := &NodeResult{ID: id, Kind: kindHelmRelease, Namespace: h.Namespace, Name: h.Name, Path: h.Chart, DependsOn: h.DependsOn}
	var dir string
	if h.SourceKind == kindGitRepository {
		root := b.root
		if d, ok := b.source(h.SourceNamespace, h.SourceName); ok {
			root = d
		}
		dir = filepath.Join(root, filepath.FromSlash(h.Chart))
		if rel, err := filepath.Rel(root, dir); err != nil || strings.HasPrefix(rel, "..") {
			return n, fmt.Errorf("%w: chart %s leaves its source", ErrNotFound, h.Chart)
		}
	} else {
		if dir = b.cachedChart(h); dir == "" {
			return n, ErrRemoteChart
		}
		n.Path = dir
	}
	vals, err := b.values(h)
	if err != nil {
		return n, err
	}
	chrt, err := loader.Load(dir)
	if err != nil {
		return n, fmt.Errorf("load chart: %w", err)
	}
	rel, err := b.template(ctx, h, chrt, vals)
	if err != nil {
		return n, fmt.Errorf("helm template: %w", err)
	}
	manifest := rel.Manifest
	for _, hook := range rel.Hooks {
		manifest += "\n---\n" + hook.Manifest
	}
	all, err := decodeObjects(id, []byte(manifest))
	if err != nil {
		return n, fmt.Errorf("rendered manifest: %w", err)
	}
	return n, b.collect(ctx, n, all, []byte(manifest))
}

// template renders a chart as `helm template` does, with the target's
// Kubernetes version and served APIs as the capabilities. Helm's
// client-only mode would add its own default API list, which serves APIs
// the target removed, so this runs a dry-run install against capabilities
// set here and a Kubernetes client that talks to nothing.
func (b *builder) template(ctx context.Context, h *HelmRelease, chrt *chart.Chart, vals map[string]any) (*release.Release, error) {
	cfg := &action.Configuration{
		Capabilities: &chartutil.Capabilities{
			KubeVersion: *b.kubeVersion,
			APIVersions: b.apiVersions,
			HelmVersion: chartutil.DefaultCapabilities.HelmVersion,
		},
		KubeClient: &kubefake.PrintingKubeClient{Out: io.Discard},
		Releases:   storage.Init(driver.NewMemory()),
		Log:        func(string, ...any) {},
	}
	install := action.NewInstall(cfg)
	install.DryRun = true
	install.DryRunOption = "client"
	install.Replace = true
	install.IncludeCRDs = true
	install.ReleaseName = h.ReleaseName
	install.Namespace = h.TargetNamespace
	return install.RunWithContext(ctx, chrt, vals)
}

// kubeVersion returns the Helm capabilities' Kubernetes version for the
// checker's target.
func kubeVersion(target fmt.Stringer) (*chartutil.KubeVersion, error) {
	kv, err := chartutil.ParseKubeVersion(target.String())
	if err != nil {
		return nil, fmt.Errorf("gitops: kube version %s: %w", target, err)
	}
	return kv, nil
}

// cachedChart finds a remote (HelmRepository) chart in Options.ChartCache,
// as `helm pull` leaves it: <chart>-<version>.tgz, or an unpacked
// directory <chart>-<version> or <chart>. It returns "" when there is none:
// nothing is ever fetched.
func (b *builder) cachedChart(h *HelmRelease) string {
	if b.opts.ChartCache == "" || h.SourceKind != "HelmRepository" || h.Chart == "" || strings.ContainsAny(h.Chart, `/\`) {
		return ""
	}
	var names []string
	if h.ChartVersion != "" {
		names = append(names, h.Chart+"-"+h.ChartVersion+".tgz", h.Chart+"-"+h.ChartVersion)
	}
	names = append(names, h.Chart)
	for _, name := range names {
		p := filepath.Join(b.opts.ChartCache, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}
