package gitops

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"
	"helm.sh/helm/v3/pkg/strvals"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/fleetkit/fleetkit/deprecation/helm"
)

// helmPrefix starts the node ID of a HelmRelease, keeping it apart from
// the Kustomization of the same namespace and name.
const helmPrefix = "HelmRelease/"

// hrSpec is the part of a Flux HelmRelease that rendering uses.
type hrSpec struct {
	Namespace, Name string
	// ReleaseName and TargetNamespace are what Helm installs.
	ReleaseName, TargetNamespace string
	// Chart is where the chart comes from: spec.chart.spec, or the
	// object spec.chartRef names.
	Chart ChartSource
	// DependsOn holds the node IDs of the HelmReleases it depends on.
	DependsOn []string
	// Values is spec.values; ValuesFrom spec.valuesFrom.
	Values     map[string]any
	ValuesFrom []hrValuesRef
	// SkipSchemaValidation is spec.install or spec.upgrade
	// disableSchemaValidation.
	SkipSchemaValidation bool
	// PostRenderers are the kustomize sections of spec.postRenderers.
	PostRenderers []map[string]any
	// Owner is the node ID of the Kustomization that rendered it.
	Owner string
	// Labels are the object's labels.
	Labels map[string]string
}

// ChartSource names a chart: a source object (HelmRepository,
// GitRepository, Bucket, OCIRepository, HelmChart, ExternalArtifact) and,
// for a HelmRepository or GitRepository, the chart's name or path in it
// and its version (a semver constraint, "" for the newest).
type ChartSource struct {
	Kind, Name, Namespace string
	Chart, Version        string
}

func (c ChartSource) String() string {
	s := c.Kind + "/" + c.Namespace + "/" + c.Name
	if c.Chart != "" {
		s += " chart " + c.Chart
	}
	if c.Version != "" {
		s += " version " + c.Version
	}
	return s
}

// ID returns the node ID: "HelmRelease/namespace/name".
func (h *hrSpec) ID() string { return helmPrefix + h.Namespace + "/" + h.Name }

// hrValuesRef is one entry of spec.valuesFrom.
type hrValuesRef struct {
	valuesRef
	// ValuesKey is the data key to read; "" means values.yaml.
	ValuesKey string
	// TargetPath, when set, places the key's raw value at this dotted
	// path instead of merging it as YAML.
	TargetPath string
}

func parseHelmRelease(o Object, owner string) *hrSpec {
	ns := o.Namespace
	if ns == "" {
		ns = defaultNamespace
	}
	h := &hrSpec{
		Namespace:       ns,
		Name:            o.Name,
		ReleaseName:     str(o.Body, "spec", "releaseName"),
		TargetNamespace: str(o.Body, "spec", "targetNamespace"),
		Owner:           owner,
		Labels:          stringMap(lookup(o.Body, "metadata", "labels")),
	}
	if ref, ok := lookup(o.Body, "spec", "chartRef").(map[string]any); ok {
		h.Chart = ChartSource{Kind: str(ref, "kind"), Name: str(ref, "name"), Namespace: str(ref, "namespace")}
	} else {
		h.Chart = ChartSource{
			Kind:      str(o.Body, "spec", "chart", "spec", "sourceRef", "kind"),
			Name:      str(o.Body, "spec", "chart", "spec", "sourceRef", "name"),
			Namespace: str(o.Body, "spec", "chart", "spec", "sourceRef", "namespace"),
			Chart:     str(o.Body, "spec", "chart", "spec", "chart"),
			Version:   str(o.Body, "spec", "chart", "spec", "version"),
		}
		if h.Chart.Kind == "" {
			h.Chart.Kind = kindHelmRepository
		}
	}
	if h.Chart.Namespace == "" {
		h.Chart.Namespace = ns
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
		h.ValuesFrom = append(h.ValuesFrom, hrValuesRef{
			valuesRef:  valuesRef{Kind: str(r, "kind"), Name: str(r, "name"), Optional: opt},
			ValuesKey:  str(r, "valuesKey"),
			TargetPath: str(r, "targetPath"),
		})
	}
	for _, key := range []string{"install", "upgrade"} {
		if v, _ := lookup(o.Body, "spec", key, "disableSchemaValidation").(bool); v {
			h.SkipSchemaValidation = true
		}
	}
	for _, p := range list(o.Body, "spec", "postRenderers") {
		if k, ok := p["kustomize"].(map[string]any); ok {
			h.PostRenderers = append(h.PostRenderers, k)
		}
	}
	return h
}

// values merges valuesFrom in order, then spec.values, as Flux does: a
// valuesKey's YAML merges deeply into what came before; with targetPath
// its raw value is set at that path. A missing ConfigMap, Secret or key
// fails the release unless the reference is optional.
func (b *builder) values(h *hrSpec) (map[string]any, error) {
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

// render renders one HelmRelease.
func (b *builder) render(ctx context.Context, id string) (*NodeResult, error) {
	b.mu.Lock()
	h := b.hrs[id]
	b.mu.Unlock()
	n := &NodeResult{ID: id, Kind: kindHelmRelease, Namespace: h.Namespace, Name: h.Name, Path: h.Chart.Chart, DependsOn: h.DependsOn}
	ch, err := b.chart(ctx, h.Namespace, h.Chart)
	if err != nil {
		return n, err
	}
	n.Path = ch.label
	vals, err := b.values(h)
	if err != nil {
		return n, err
	}
	opts := helm.RenderOptions{
		Target:               b.checker.Target(),
		Rules:                b.checker.Rules(),
		APIVersions:          b.apiVersions,
		ReleaseName:          h.ReleaseName,
		Namespace:            h.TargetNamespace,
		Values:               vals,
		IsUpgrade:            b.opts.Helm.IsUpgrade,
		NoHooks:              b.opts.Helm.NoHooks,
		SkipTests:            b.opts.Helm.SkipTests,
		SkipSchemaValidation: h.SkipSchemaValidation || b.opts.Helm.SkipSchemaValidation,
	}
	manifest, err := b.cache.render(renderKey(ch.digest, b.rulesKey, opts, b.opts.Helm.ShowOnly, h.PostRenderers), b.opts.NoCache, func() ([]byte, error) {
		b.stats.renders.Add(1)
		chrt, err := ch.load()
		if err != nil {
			return nil, fmt.Errorf("load chart: %w", err)
		}
		rctx, cancel := context.WithTimeout(ctx, b.renderTimeout)
		defer cancel()
		out, err := helm.Render(rctx, chrt, opts)
		if err != nil && ctx.Err() == nil && rctx.Err() != nil {
			// The run goes on: this release failed, it was not cut off.
			return nil, fmt.Errorf("%w after %s", ErrRenderTimeout, b.renderTimeout)
		}
		if err != nil {
			return nil, fmt.Errorf("helm template: %w", err)
		}
		if len(b.opts.Helm.ShowOnly) > 0 {
			// Unlike helm template, a pattern a chart does not match
			// leaves its release empty, not failed: a run renders many
			// charts.
			out, _ = helm.ShowOnly(out, b.opts.Helm.ShowOnly)
		}
		if len(h.PostRenderers) > 0 {
			if out, err = b.postRender(out, h.PostRenderers); err != nil {
				return nil, fmt.Errorf("post-renderer: %w", err)
			}
		}
		return out, nil
	})
	if err != nil {
		return n, err
	}
	all, err := decodeObjects(id, manifest)
	if err != nil {
		return n, fmt.Errorf("rendered manifest: %w", err)
	}
	return n, b.collect(ctx, n, all, manifest)
}

// postRender applies the kustomize post-renderers of a HelmRelease (its
// patches and images), in order, as helm-controller does: each runs
// kustomize over the rendered manifest, in memory.
func (b *builder) postRender(manifest []byte, renderers []map[string]any) ([]byte, error) {
	for _, r := range renderers {
		fsys := filesys.MakeFsInMemory()
		if err := fsys.WriteFile("/render/all.yaml", manifest); err != nil {
			return nil, err
		}
		kus := map[string]any{"resources": []any{"all.yaml"}}
		for _, key := range []string{"patches", "images", "patchesStrategicMerge", "patchesJson6902"} {
			if v, ok := r[key]; ok {
				kus[key] = v
			}
		}
		data, err := yaml.Marshal(kus)
		if err != nil {
			return nil, err
		}
		if err := fsys.WriteFile("/render/kustomization.yaml", data); err != nil {
			return nil, err
		}
		docs, err := b.runKustomize(fsys, "/render")
		if err != nil {
			return nil, err
		}
		var out bytes.Buffer
		for _, d := range docs {
			out.WriteString("---\n")
			out.Write(d.yaml)
		}
		manifest = out.Bytes()
	}
	return manifest, nil
}

// loadedChart is a chart found for a HelmRelease: load returns a fresh
// copy (rendering changes a chart's dependencies, so a chart is never
// shared between renders); digest identifies its content.
type loadedChart struct {
	label  string
	digest string
	load   func() (*chart.Chart, error)
}

// chart finds the chart of a HelmRelease in namespace ns: a directory of
// the repository or a mapped source, a chart in Options.ChartCache, or a
// chart fetched from a HelmRepository (HTTP(S) or OCI) or OCIRepository.
func (b *builder) chart(ctx context.Context, ns string, src ChartSource) (loadedChart, error) {
	switch src.Kind {
	case kindGitRepository, kindBucket, kindExternalArtifact:
		root := b.root
		if d, ok := b.source(src.Namespace, src.Name); ok {
			root = d
		} else if src.Kind != kindGitRepository {
			return loadedChart{}, fmt.Errorf("%w: %s: map it to a directory with Sources", ErrRemoteChart, src)
		}
		dir := filepath.Join(root, filepath.FromSlash(src.Chart))
		if !within(root, dir) {
			return loadedChart{}, fmt.Errorf("%w: chart %s leaves its source", ErrNotFound, src.Chart)
		}
		return b.localChart(dir)
	case kindHelmChart:
		o, ok := b.sourceObject(kindHelmChart, src.Namespace, src.Name)
		if !ok {
			return loadedChart{}, fmt.Errorf("%w: %s", ErrNotFound, src)
		}
		next := ChartSource{
			Kind:      str(o.Body, "spec", "sourceRef", "kind"),
			Name:      str(o.Body, "spec", "sourceRef", "name"),
			Namespace: src.Namespace,
			Chart:     str(o.Body, "spec", "chart"),
			Version:   str(o.Body, "spec", "version"),
		}
		if next.Kind == kindHelmChart {
			return loadedChart{}, fmt.Errorf("%w: %s refers to a HelmChart", ErrNotFound, src)
		}
		return b.chart(ctx, ns, next)
	}
	if dir := b.cachedChart(src); dir != "" {
		return b.diskChart(dir)
	}
	if !b.opts.FetchCharts {
		return loadedChart{}, ErrRemoteChart
	}
	var (
		ref remoteChart
		ok  bool
	)
	switch src.Kind {
	case kindHelmRepository:
		o, found := b.sourceObject(kindHelmRepository, src.Namespace, src.Name)
		if !found {
			return loadedChart{}, fmt.Errorf("%w: %s", ErrNotFound, src)
		}
		ref, ok = helmRepositoryChart(o, src)
	case kindOCIRepository:
		o, found := b.sourceObject(kindOCIRepository, src.Namespace, src.Name)
		if !found {
			return loadedChart{}, fmt.Errorf("%w: %s", ErrNotFound, src)
		}
		ref, ok = ociRepositoryChart(o)
	}
	if !ok {
		return loadedChart{}, fmt.Errorf("%w: %s: unsupported chart source", ErrRemoteChart, src)
	}
	data, err := b.cache.fetch(ctx, ref, b.chartDir(), &b.stats)
	if err != nil {
		return loadedChart{}, err
	}
	return loadedChart{
		label:  ref.String(),
		digest: digestBytes(data),
		load:   func() (*chart.Chart, error) { return loader.LoadArchive(bytes.NewReader(data)) },
	}, nil
}

// chartDir is where fetched charts are kept between runs, or "".
func (b *builder) chartDir() string {
	if b.opts.NoCache {
		return ""
	}
	return b.opts.ChartCache
}

// diskChart loads a chart from Options.ChartCache: a packaged chart or a
// directory.
func (b *builder) diskChart(path string) (loadedChart, error) {
	data, err := os.ReadFile(path)
	if err == nil {
		return loadedChart{label: path, digest: digestBytes(data), load: func() (*chart.Chart, error) { return loader.LoadArchive(bytes.NewReader(data)) }}, nil
	}
	chrt, err := loader.LoadDir(path)
	if err != nil {
		return loadedChart{}, fmt.Errorf("load chart: %w", err)
	}
	return loadedChart{label: path, digest: chartDigest(chrt), load: func() (*chart.Chart, error) { return loader.LoadDir(path) }}, nil
}

// localChart reads a chart directory from the repository's in-memory copy
// (never from disk: the repository may be a git revision), honouring its
// .helmignore as Helm does. The files are read once per Build.
func (b *builder) localChart(dir string) (loadedChart, error) {
	cf, err := b.chartFiles.do(dir, func() (chartFiles, error) {
		if !b.mem.Exists(filepath.Join(dir, "Chart.yaml")) {
			return chartFiles{}, fmt.Errorf("%w: chart %s", ErrNotFound, dir)
		}
		rules := ignore.Empty()
		if data, err := b.mem.ReadFile(filepath.Join(dir, ignore.HelmIgnore)); err == nil {
			if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
				return chartFiles{}, err
			}
		}
		rules.AddDefaults()
		var files []*loader.BufferedFile
		err := b.mem.Walk(dir, func(path string, fi fs.FileInfo, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(dir, path)
			if rel == "." {
				return nil
			}
			rel = filepath.ToSlash(rel)
			if rules.Ignore(rel, fi) {
				if fi.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if fi.IsDir() {
				return nil
			}
			data, err := b.mem.ReadFile(path)
			if err != nil {
				return err
			}
			files = append(files, &loader.BufferedFile{Name: rel, Data: bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))})
			return nil
		})
		if err != nil {
			return chartFiles{}, err
		}
		return chartFiles{files: files, digest: digestFiles(files)}, nil
	})
	if err != nil {
		return loadedChart{}, err
	}
	return loadedChart{label: b.rel(dir), digest: cf.digest, load: func() (*chart.Chart, error) {
		// LoadFiles keeps the slices it is given: hand it copies of the
		// file headers, the data is only read.
		cp := make([]*loader.BufferedFile, len(cf.files))
		for i, f := range cf.files {
			c := *f
			cp[i] = &c
		}
		return loader.LoadFiles(cp)
	}}, nil
}

// chartFiles are the files of a local chart.
type chartFiles struct {
	files  []*loader.BufferedFile
	digest string
}

// cachedChart finds a remote (HelmRepository) chart in Options.ChartCache,
// as `helm pull` leaves it: <chart>-<version>.tgz, or an unpacked
// directory <chart>-<version> or <chart>. It returns "" when there is none.
func (b *builder) cachedChart(src ChartSource) string {
	if b.chartDir() == "" || src.Kind != kindHelmRepository || src.Chart == "" || strings.ContainsAny(src.Chart, `/\`) {
		return ""
	}
	var names []string
	if src.Version != "" {
		names = append(names, src.Chart+"-"+src.Version+".tgz", src.Chart+"-"+src.Version)
	}
	names = append(names, src.Chart)
	for _, name := range names {
		p := filepath.Join(b.opts.ChartCache, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// runKustomize runs one kustomize build of dir over fsys.
func (b *builder) runKustomize(fsys filesys.FileSystem, dir string) ([]doc, error) {
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = loadRestrictions
	if b.customSchema {
		kustomizeMu.Lock()
		defer kustomizeMu.Unlock()
	} else {
		kustomizeMu.RLock()
		defer kustomizeMu.RUnlock()
	}
	rm, err := krusty.MakeKustomizer(opts).Run(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build: %w", err)
	}
	docs := make([]doc, 0, rm.Size())
	for _, r := range rm.Resources() {
		// The node as kyaml holds it: AsYAML would go through JSON.
		y, err := r.RNode.String()
		if err != nil {
			return nil, fmt.Errorf("kustomize build: %w", err)
		}
		docs = append(docs, doc{yaml: []byte(y), annotations: r.GetAnnotations()})
	}
	return docs, nil
}

// sortedCopy returns s sorted, without changing s.
func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
