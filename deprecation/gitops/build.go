package gitops

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
	"helm.sh/helm/v3/pkg/chartutil"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/internal/dag"
)

// Errors returned by Build and reported on nodes.
var (
	// ErrPath is returned when Options.Path is not a readable directory.
	ErrPath = errors.New("gitops: bad repository path")
	// ErrUnknownNode is returned when Options.Only names no Kustomization,
	// or more than one.
	ErrUnknownNode = errors.New("gitops: unknown kustomization")
	// ErrNotFound is reported on a node whose spec.path, or a ConfigMap
	// or Secret it substitutes from, is not in the repository.
	ErrNotFound = errors.New("gitops: not found")
)

// kustomizeMu serialises kustomize builds: kustomize keeps package-level
// state (its plugin and field-spec registries) that is not safe for
// concurrent builds. It guards nothing of this package but the in-memory
// file systems the builds read and the generated files written to them.
var kustomizeMu sync.Mutex

// Options configures Build.
type Options struct {
	// Path is the repository (or a directory in it) to build. Required.
	Path string
	// Sources maps a GitRepository or OCIRepository ("namespace/name" or
	// "name") to a local directory. A source without an entry is the
	// repository at Path.
	Sources map[string]string
	// Parallelism bounds the nodes built at once; 0 means GOMAXPROCS.
	Parallelism int
	// Only, when set, builds just this Kustomization ("namespace/name",
	// or a name that is unique), what it depends on, and the HelmReleases
	// it holds with theirs.
	Only string
	// Target is the Kubernetes release to check against; zero means the
	// newest the rules know of. Ignored when Checker is set.
	Target deprecation.Version
	// Checker checks every node's objects; nil means one built from
	// deprecation.DefaultRules() and Target.
	Checker *deprecation.Checker
	// ChartCache is a directory of remote charts, as `helm pull` leaves
	// them (<chart>-<version>.tgz, or a directory <chart>-<version> or
	// <chart>); HelmReleases of a HelmRepository chart found there are
	// rendered, the others are reported as not rendered. Nothing is
	// fetched.
	ChartCache string
	// IncludeCRDs and IncludeSecrets keep CustomResourceDefinitions and
	// Secrets in NodeResult.Objects; they are left out by default. They
	// are checked either way.
	IncludeCRDs, IncludeSecrets bool
}

// Status is the outcome of one node.
type Status string

// Node statuses.
const (
	StatusOK      Status = "ok"      // built and checked
	StatusFailed  Status = "failed"  // its build failed, it is in a cycle, or a dependency is missing
	StatusSkipped Status = "skipped" // a dependency failed, or the run was cancelled
)

// NodeResult is what one Flux Kustomization built to, or one HelmRelease
// rendered to.
type NodeResult struct {
	// ID is "namespace/name" for a Kustomization and
	// "HelmRelease/namespace/name" for a HelmRelease.
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Path is the directory built (spec.path), or the chart.
	Path   string `json:"path,omitempty"`
	Status Status `json:"status"`
	// Error is Err's text.
	Error string `json:"error,omitempty"`
	Err   error  `json:"-"`
	// DependsOn holds the IDs of the node's dependencies.
	DependsOn []string `json:"dependsOn,omitempty"`
	// Objects are the rendered objects, CRDs and Secrets left out unless
	// Options asks for them.
	Objects []Object `json:"objects,omitempty"`
	// Images are the values of every image key in the objects, sorted and
	// unique.
	Images []string `json:"images,omitempty"`
	// Findings are the deprecated or removed APIs among the objects.
	Findings []deprecation.Finding `json:"findings,omitempty"`
}

// Result is what Build found.
type Result struct {
	// Nodes holds every node the run considered, sorted by ID.
	Nodes []*NodeResult `json:"nodes"`
}

// Node returns the node with this ID, or nil.
func (r *Result) Node(id string) *NodeResult {
	i, ok := slices.BinarySearchFunc(r.Nodes, id, func(n *NodeResult, id string) int { return strings.Compare(n.ID, id) })
	if !ok {
		return nil
	}
	return r.Nodes[i]
}

// builder is the state of one Build.
type builder struct {
	opts    Options
	root    string
	checker *deprecation.Checker
	// mem holds a copy of the repository and sources; guarded by
	// kustomizeMu, as are generated.
	mem       filesys.FileSystem
	generated map[string]bool // directories given a generated kustomization.yaml
	// configs are the ConfigMaps and Secrets in the repository, by
	// "Kind/namespace/name" (namespace may be empty). Read-only once
	// loaded.
	configs map[string]Object

	kubeVersion *chartutil.KubeVersion // the checker's target, for Helm

	// mu guards ks, hrs and built.
	mu  sync.Mutex
	ks  map[string]*Kustomization
	hrs map[string]*HelmRelease
	// built holds the ConfigMaps and Secrets rendered by Kustomizations,
	// keyed like configs.
	built map[string]Object
}

// Build builds the Flux Kustomizations in opts.Path. The error is non-nil
// only when the run cannot start (a bad path or Only); a node's failure
// is reported on the node.
func Build(ctx context.Context, opts Options) (*Result, error) {
	root, err := filepath.Abs(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPath, err)
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a directory", ErrPath, opts.Path)
	}
	b := &builder{
		opts:      opts,
		root:      root,
		checker:   opts.Checker,
		mem:       filesys.MakeFsInMemory(),
		generated: make(map[string]bool),
		configs:   make(map[string]Object),
		ks:        make(map[string]*Kustomization),
		hrs:       make(map[string]*HelmRelease),
		built:     make(map[string]Object),
	}
	if b.checker == nil {
		if b.checker, err = deprecation.NewChecker(nil, deprecation.Options{Target: opts.Target}); err != nil {
			return nil, fmt.Errorf("gitops: checker: %w", err)
		}
	}
	if b.kubeVersion, err = kubeVersion(b.checker.Target()); err != nil {
		return nil, err
	}
	if err := b.load(ctx); err != nil {
		return nil, err
	}
	var g dag.Graph[string]
	for _, id := range slices.Sorted(maps.Keys(b.ks)) {
		if err := g.Add(id, b.ks[id].DependsOn...); err != nil {
			return nil, fmt.Errorf("gitops: %w", err)
		}
	}
	var targets []string
	if opts.Only != "" {
		id, err := b.resolve(opts.Only)
		if err != nil {
			return nil, err
		}
		targets = []string{id}
	}
	var (
		outMu sync.Mutex // guards out
		out   = make(map[string]*NodeResult)
	)
	par := cmp.Or(opts.Parallelism, runtime.GOMAXPROCS(0))
	fn := func(ctx context.Context, id string) ([]dag.Node[string], error) {
		var (
			n    *NodeResult
			disc []dag.Node[string]
			err  error
		)
		if strings.HasPrefix(id, helmPrefix) {
			n, err = b.render(ctx, id)
			if errors.Is(err, ErrRemoteChart) {
				// Not rendered, yet not failed: the HelmReleases that
				// depend on it still render.
				n.Err, err = err, nil
			}
		} else {
			n, disc, err = b.build(ctx, id)
		}
		outMu.Lock()
		out[id] = n
		outMu.Unlock()
		return disc, err
	}
	errs, err := g.Run(ctx, dag.Options[string]{Parallelism: par, Targets: targets}, fn)
	if err != nil {
		return nil, fmt.Errorf("gitops: %w", err)
	}
	if len(targets) > 0 {
		// The target's HelmReleases were discovered but depend on it, so
		// the run did not need them: render them and their dependencies.
		herrs, err := b.renderOwned(ctx, targets[0], errs, par, fn)
		if err != nil {
			return nil, err
		}
		maps.Copy(errs, herrs)
	}
	res := &Result{Nodes: make([]*NodeResult, 0, len(errs))}
	for id, err := range errs {
		n := out[id]
		if n == nil {
			n = b.node(id)
		}
		if err == nil {
			err = n.Err
		}
		n.Status, n.Err = StatusOK, err
		switch {
		case err == nil:
		case errors.Is(err, dag.ErrDependency), errors.Is(err, ErrRemoteChart), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			n.Status, n.Error = StatusSkipped, err.Error()
		default:
			n.Status, n.Error = StatusFailed, err.Error()
		}
		if err != nil {
			n.Objects, n.Images, n.Findings = nil, nil, nil
		}
		res.Nodes = append(res.Nodes, n)
	}
	sort.Slice(res.Nodes, func(i, j int) bool { return res.Nodes[i].ID < res.Nodes[j].ID })
	return res, nil
}

// renderOwned renders the HelmReleases that owner's build discovered and
// the HelmReleases they depend on, which done has not seen.
func (b *builder) renderOwned(ctx context.Context, owner string, done map[string]error, par int, fn dag.Func[string]) (map[string]error, error) {
	var (
		g       dag.Graph[string]
		targets []string
	)
	b.mu.Lock()
	for _, id := range slices.Sorted(maps.Keys(b.hrs)) {
		if _, ran := done[id]; ran {
			continue
		}
		h := b.hrs[id]
		if err := g.Add(id, h.DependsOn...); err != nil {
			b.mu.Unlock()
			return nil, fmt.Errorf("gitops: %w", err)
		}
		if h.Owner == owner {
			targets = append(targets, id)
		}
	}
	b.mu.Unlock()
	if len(targets) == 0 {
		return nil, nil
	}
	errs, err := g.Run(ctx, dag.Options[string]{Parallelism: par, Targets: targets}, fn)
	if err != nil {
		return nil, fmt.Errorf("gitops: %w", err)
	}
	return errs, nil
}

// resolve turns Options.Only into a node ID.
func (b *builder) resolve(only string) (string, error) {
	if strings.Contains(only, "/") {
		if _, ok := b.ks[only]; !ok {
			return "", fmt.Errorf("%w: %s", ErrUnknownNode, only)
		}
		return only, nil
	}
	var found []string
	for id, k := range b.ks {
		if k.Name == only {
			found = append(found, id)
		}
	}
	if len(found) != 1 {
		return "", fmt.Errorf("%w: %s matches %d kustomizations", ErrUnknownNode, only, len(found))
	}
	return found[0], nil
}

// node returns an empty result for a known Kustomization.
func (b *builder) node(id string) *NodeResult {
	b.mu.Lock()
	k, h := b.ks[id], b.hrs[id]
	b.mu.Unlock()
	if h != nil {
		return &NodeResult{ID: id, Kind: kindHelmRelease, Namespace: h.Namespace, Name: h.Name, Path: h.Chart, DependsOn: h.DependsOn}
	}
	ns, name, _ := strings.Cut(id, "/")
	n := &NodeResult{ID: id, Kind: kindKustomization, Namespace: ns, Name: name}
	if k != nil {
		n.DependsOn = k.DependsOn
		n.Path = k.Path
	}
	return n
}

// load copies the repository and mapped sources into memory and reads the
// Flux objects, ConfigMaps and Secrets of the repository.
func (b *builder) load(ctx context.Context) error {
	roots := []string{b.root}
	for _, dir := range b.opts.Sources {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return fmt.Errorf("%w: source %s: %w", ErrPath, dir, err)
		}
		roots = append(roots, abs)
	}
	for i, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == ".git" {
					return filepath.SkipDir
				}
				return b.mem.MkdirAll(path)
			}
			if !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := b.mem.WriteFile(path, data); err != nil {
				return err
			}
			if i == 0 && isManifest(path) {
				b.discover(path, data)
			}
			return nil
		})
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrPath, err)
		}
	}
	return nil
}

func isManifest(path string) bool {
	ext := filepath.Ext(path)
	return ext == ".yaml" || ext == ".yml"
}

// discover records the Flux objects of one file. Files that are not
// Kubernetes YAML (Helm templates, values) are ignored.
func (b *builder) discover(path string, data []byte) {
	rel, _ := filepath.Rel(b.root, path)
	objs, _ := decodeObjects(filepath.ToSlash(rel), data)
	for _, o := range objs {
		switch {
		case isFlux(o, groupKustomize, kindKustomization):
			k := parseKustomization(o)
			if _, dup := b.ks[k.ID()]; !dup {
				b.ks[k.ID()] = k
			}
		case o.APIVersion == "v1" && (o.Kind == kindConfigMap || o.Kind == kindSecret):
			b.configs[o.Kind+"/"+o.Namespace+"/"+o.Name] = o
		}
	}
}

// source returns the local directory Options.Sources maps a source to.
func (b *builder) source(namespace, name string) (string, bool) {
	dir, ok := b.opts.Sources[namespace+"/"+name]
	if !ok {
		dir, ok = b.opts.Sources[name]
	}
	if !ok {
		return "", false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir, true
	}
	return abs, true
}

// config finds a ConfigMap or Secret rendered by a build or, failing
// that, in the repository; one without a namespace matches any.
func (b *builder) config(kind, namespace, name string) (Object, bool) {
	b.mu.Lock()
	o, ok := b.built[kind+"/"+namespace+"/"+name]
	b.mu.Unlock()
	if ok {
		return o, true
	}
	if o, ok := b.configs[kind+"/"+namespace+"/"+name]; ok {
		return o, true
	}
	o, ok = b.configs[kind+"//"+name]
	return o, ok
}

// vars returns k's post-build variables: substituteFrom in order, then
// substitute, which wins.
func (b *builder) vars(k *Kustomization) (map[string]string, error) {
	vars := make(map[string]string)
	for _, ref := range k.SubstituteFrom {
		o, ok := b.config(ref.Kind, k.Namespace, ref.Name)
		if !ok {
			if ref.Optional {
				continue
			}
			return nil, fmt.Errorf("%w: substituteFrom %s %s/%s", ErrNotFound, ref.Kind, k.Namespace, ref.Name)
		}
		data, err := configData(o)
		if err != nil {
			return nil, fmt.Errorf("substituteFrom: %w", err)
		}
		for key, v := range data {
			vars[key] = v
		}
	}
	for key, v := range k.Substitute {
		vars[key] = v
	}
	return vars, nil
}

// build builds one Kustomization.
func (b *builder) build(ctx context.Context, id string) (*NodeResult, []dag.Node[string], error) {
	n := b.node(id)
	b.mu.Lock()
	k := b.ks[id]
	b.mu.Unlock()
	root := b.root
	if dir, ok := b.source(k.SourceNamespace, k.SourceName); ok {
		root = dir
	}
	dir := filepath.Join(root, filepath.FromSlash(k.Path))
	if rel, err := filepath.Rel(root, dir); err != nil || strings.HasPrefix(rel, "..") {
		return n, nil, fmt.Errorf("%w: spec.path %s leaves its source", ErrNotFound, k.Path)
	}
	vars, err := b.vars(k)
	if err != nil {
		return n, nil, err
	}
	docs, err := b.kustomize(k, dir)
	if err != nil {
		return n, nil, err
	}
	var (
		all  []Object
		data bytes.Buffer
		disc []dag.Node[string]
	)
	for _, d := range docs {
		y := d.yaml
		if len(vars) > 0 && d.annotations[substituteAnnotation] != "disabled" {
			y = []byte(substitute(string(y), vars))
		}
		objs, err := decodeObjects(id, y)
		if err != nil {
			return n, nil, fmt.Errorf("after substitution: %w", err)
		}
		all = append(all, objs...)
		data.WriteString("---\n")
		data.Write(y)
	}
	b.mu.Lock()
	for _, o := range all {
		switch {
		case isFlux(o, groupKustomize, kindKustomization):
			nk := parseKustomization(o)
			if _, ok := b.ks[nk.ID()]; !ok {
				b.ks[nk.ID()] = nk
				disc = append(disc, dag.Node[string]{ID: nk.ID(), Deps: nk.DependsOn})
			}
		case isFlux(o, groupHelm, kindHelmRelease):
			h := parseHelmRelease(o, id)
			if _, ok := b.hrs[h.ID()]; !ok {
				b.hrs[h.ID()] = h
				disc = append(disc, dag.Node[string]{ID: h.ID(), Deps: append([]string{id}, h.DependsOn...)})
			}
		case o.APIVersion == "v1" && (o.Kind == kindConfigMap || o.Kind == kindSecret):
			b.built[o.Kind+"/"+o.Namespace+"/"+o.Name] = o
		}
	}
	b.mu.Unlock()
	if err := b.collect(ctx, n, all, data.Bytes()); err != nil {
		return n, nil, err
	}
	return n, disc, nil
}

// collect fills n with the objects, images and findings of a build.
func (b *builder) collect(ctx context.Context, n *NodeResult, all []Object, data []byte) error {
	check, err := b.checker.Check(ctx, n.ID, data)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	n.Findings = check.Findings
	for _, o := range all {
		if (o.Kind == "CustomResourceDefinition" && !b.opts.IncludeCRDs) || (o.Kind == kindSecret && o.APIVersion == "v1" && !b.opts.IncludeSecrets) {
			continue
		}
		n.Objects = append(n.Objects, o)
	}
	n.Images = images(n.Objects)
	return nil
}

// doc is one resource of a kustomize build.
type doc struct {
	yaml        []byte
	annotations map[string]string
}

// kustomize builds dir for k with krusty, generating a kustomization.yaml
// in memory when dir has none, and one over it for k's own kustomize
// settings.
func (b *builder) kustomize(k *Kustomization, dir string) ([]doc, error) {
	kustomizeMu.Lock()
	defer kustomizeMu.Unlock()
	if !b.mem.IsDir(dir) {
		return nil, fmt.Errorf("%w: directory %s", ErrNotFound, dir)
	}
	if !hasKustomization(b.mem, dir) {
		if err := b.generate(dir); err != nil {
			return nil, fmt.Errorf("generate kustomization.yaml: %w", err)
		}
	}
	if k.overlay() {
		var err error
		if dir, err = b.writeOverlay(k, dir); err != nil {
			return nil, fmt.Errorf("kustomization overlay: %w", err)
		}
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsNone
	rm, err := krusty.MakeKustomizer(opts).Run(b.mem, dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build: %w", err)
	}
	docs := make([]doc, 0, rm.Size())
	for _, r := range rm.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("kustomize build: %w", err)
		}
		docs = append(docs, doc{yaml: y, annotations: r.GetAnnotations()})
	}
	return docs, nil
}

// overlayRoot holds, in memory only, the kustomizations written over a
// path for a Flux Kustomization's own settings.
const overlayRoot = "/.gitops-overlays"

// writeOverlay writes a kustomization.yaml that builds dir with k's
// targetNamespace, namePrefix, nameSuffix, images and patches, and
// returns its directory. Callers hold kustomizeMu.
func (b *builder) writeOverlay(k *Kustomization, dir string) (string, error) {
	odir := filepath.Join(overlayRoot, k.Namespace, k.Name)
	rel, err := filepath.Rel(odir, dir)
	if err != nil {
		return "", err
	}
	o := map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1",
		"kind":       "Kustomization",
		"resources":  []string{filepath.ToSlash(rel)},
	}
	for key, v := range map[string]string{"namespace": k.TargetNamespace, "namePrefix": k.NamePrefix, "nameSuffix": k.NameSuffix} {
		if v != "" {
			o[key] = v
		}
	}
	if len(k.Images) > 0 {
		o["images"] = k.Images
	}
	if len(k.Patches) > 0 {
		o["patches"] = k.Patches
	}
	data, err := yaml.Marshal(o)
	if err != nil {
		return "", err
	}
	if err := b.mem.MkdirAll(odir); err != nil {
		return "", err
	}
	return odir, b.mem.WriteFile(filepath.Join(odir, "kustomization.yaml"), data)
}

var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

func hasKustomization(fsys filesys.FileSystem, dir string) bool {
	for _, name := range kustomizationNames {
		if fsys.Exists(filepath.Join(dir, name)) {
			return true
		}
	}
	return false
}

// generate writes, in memory, a kustomization.yaml for dir listing every
// manifest in its tree, or the directory of a subtree that has its own
// kustomization. Callers hold kustomizeMu.
func (b *builder) generate(dir string) error {
	var resources []string
	err := b.mem.Walk(dir, func(path string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			if path != dir && hasKustomization(b.mem, path) && !b.generated[path] {
				rel, _ := filepath.Rel(dir, path)
				resources = append(resources, filepath.ToSlash(rel))
				return filepath.SkipDir
			}
			return nil
		}
		if !isManifest(path) || (b.generated[filepath.Dir(path)] && filepath.Base(path) == "kustomization.yaml") {
			return nil
		}
		data, err := b.mem.ReadFile(path)
		if err != nil {
			return err
		}
		if objs, err := decodeObjects(path, data); err != nil || len(objs) == 0 {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		resources = append(resources, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return err
	}
	var k strings.Builder
	k.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	for _, r := range resources {
		fmt.Fprintf(&k, "- %q\n", r)
	}
	if len(resources) == 0 {
		k.Reset()
		k.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n")
	}
	b.generated[dir] = true
	return b.mem.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k.String()))
}

// images returns the values of every image key in objs, sorted and
// unique.
// imageFields are the fields, beyond every "image" key, that name a
// container image in known kinds (by API group and kind), as flux-local
// reports them. A kind mapped to nil holds image patterns, not images, and
// is left out.
var imageFields = map[string][][]string{
	"postgresql.cnpg.io/Cluster":          {{"spec", "imageName"}},
	"kyverno.io/ClusterPolicy":            nil, // images in rules are patterns, not images
	"image.toolkit.fluxcd.io/ImagePolicy": nil,
}

func images(objs []Object) []string {
	seen := make(map[string]bool)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, c := range v {
				if s, ok := c.(string); ok && k == "image" && s != "" {
					seen[s] = true
					continue
				}
				walk(c)
			}
		case []any:
			for _, c := range v {
				walk(c)
			}
		}
	}
	for _, o := range objs {
		fields, known := imageFields[o.group()+"/"+o.Kind]
		if known && fields == nil {
			continue
		}
		walk(o.Body)
		for _, path := range fields {
			if s, ok := lookup(o.Body, path...).(string); ok && s != "" {
				seen[s] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}
