package gitops

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
	"github.com/fleetkit/fleetkit/internal/dag"
)

// Errors returned by Build and reported on nodes.
var (
	// ErrPath is returned when Options.Path is not a readable directory.
	ErrPath = errors.New("gitops: bad repository path")
	// ErrUnknownNode is returned when Options.Only names no Kustomization
	// or HelmRelease, or more than one.
	ErrUnknownNode = errors.New("gitops: unknown kustomization")
	// ErrNotFound is reported on a node whose spec.path, chart, or a
	// ConfigMap or Secret it reads, is not in the repository.
	ErrNotFound = errors.New("gitops: not found")
	// ErrRemoteChart is reported, as a skipped node, on a HelmRelease
	// whose chart is remote when Options.FetchCharts is off and
	// Options.ChartCache does not hold it. HelmReleases that depend on it
	// still render.
	ErrRemoteChart = errors.New("gitops: not rendered: remote chart")
	// ErrFetch is reported on a HelmRelease whose remote chart could not
	// be fetched.
	ErrFetch = errors.New("gitops: fetching chart")
	// ErrNotRendered is reported, as a skipped node, on every HelmRelease
	// of a Build with Options.NoRender.
	ErrNotRendered = errors.New("gitops: not rendered")
	// ErrRenderTimeout is reported on a HelmRelease whose chart did not
	// render within Options.RenderTimeout.
	ErrRenderTimeout = errors.New("gitops: chart rendering timed out")
)

// kustomizeMu guards the one piece of process-wide state a kustomize
// build uses: kyaml's OpenAPI schema, which krusty resets at the start of
// every build and replaces for a kustomization with an openapi field.
// Builds of repositories with no openapi field set the same (built-in)
// schema and hold it for reading, so they run in parallel (kyaml locks
// its own schema variables, and `go test -race` on the parallel
// benchmark repository finds no race); a repository with one holds it
// for writing, so its custom schema never leaks into a concurrent build.
// Each build reads the repository's in-memory copy, which is read-only
// once loaded, through its own buildFS.
var kustomizeMu sync.RWMutex

// loadRestrictions lets a kustomization read files outside its own
// directory, as Flux does. It cannot read outside the repository: builds
// read only the in-memory copy of the repository and mapped sources.
const loadRestrictions = types.LoadRestrictionsNone

// maxFileBytes bounds one file of the repository: larger files are left
// out of the in-memory copy (a build that reads one fails as if it were
// missing), so a stray disk image in a repository cannot exhaust memory.
const maxFileBytes = 32 << 20

// Options configures Build.
type Options struct {
	// Path is the directory whose Flux Kustomizations are built (a
	// cluster's directory, or the whole repository). Required.
	Path string
	// Root is the repository: the source a Kustomization's or chart's
	// GitRepository (one not in Sources) is read from, so spec.path is
	// relative to it. Empty means Path. Path must be inside Root.
	Root string
	// FS, when set, is the repository's content (a git revision, say),
	// read in place of the directory Root on disk: Root is only the name
	// its files have in paths and errors, and Path must be inside Root.
	FS fs.FS
	// Sources maps a GitRepository, OCIRepository, Bucket or
	// ExternalArtifact ("namespace/name" or "name") to a local directory.
	// A GitRepository without an entry is the repository.
	Sources map[string]string
	// Parallelism bounds the nodes built at once; 0 means GOMAXPROCS.
	Parallelism int
	// Only, when set, builds just one node and what it needs: a
	// Kustomization ("namespace/name", or a name that is unique) with the
	// HelmReleases it holds, or a HelmRelease ("HelmRelease/namespace/name"
	// or "HelmRelease/name"), with the Kustomizations that render it.
	// Names are those written in the repository.
	Only string
	// Target is the Kubernetes release to check and render for; zero
	// means the newest the rules know of. Ignored when Checker is set.
	Target deprecation.Version
	// Checker checks every node's objects; nil means one built from
	// deprecation.DefaultRules() and Target. Its target is the Kubernetes
	// version charts are rendered for.
	Checker *deprecation.Checker
	// SkipChecks leaves NodeResult.Findings empty: nothing is checked.
	SkipChecks bool
	// FetchCharts fetches the remote charts of HelmReleases with the Helm
	// SDK: HelmRepository (HTTP(S) index or OCI), OCIRepository and
	// HelmChart chartRefs. Without it, only ChartCache is looked in and
	// other remote charts are reported as not rendered (ErrRemoteChart).
	FetchCharts bool
	// ChartCache is a directory of remote charts: as `helm pull` leaves
	// them (<chart>-<version>.tgz, or a directory <chart>-<version> or
	// <chart>), looked in first; charts fetched at an exact version or
	// digest are kept there too, for the next run.
	ChartCache string
	// Cache, shared by several Builds, fetches each chart and renders
	// each HelmRelease once for all of them; nil means one for this Build.
	Cache *Cache
	// NoCache renders every HelmRelease, even one rendered before with
	// the same inputs, and neither reads nor writes ChartCache.
	NoCache bool
	// NoRender lists the HelmReleases the builds find without rendering
	// them: each is reported as skipped with ErrNotRendered.
	NoRender bool
	// Helm holds `helm template`'s flags.
	Helm HelmOptions
	// RenderTimeout bounds one chart's rendering; 0 means 2 minutes.
	RenderTimeout time.Duration
	// IncludeCRDs and IncludeSecrets keep CustomResourceDefinitions and
	// Secrets in NodeResult.Objects; they are left out by default. They
	// are checked either way.
	IncludeCRDs, IncludeSecrets bool
	// APIVersions are added to what HelmRelease charts see as served
	// (.Capabilities.APIVersions): "group/version" or
	// "group/version/Kind". The built-in APIs of the target and the CRDs
	// in the repository are always there.
	APIVersions []string
}

// HelmOptions are the flags of `helm template` that change what a
// HelmRelease renders to.
type HelmOptions struct {
	// IsUpgrade sets .Release.IsUpgrade; NoHooks leaves hooks out;
	// SkipTests leaves test hooks out; SkipSchemaValidation skips the
	// charts' values.schema.json.
	IsUpgrade, NoHooks, SkipTests, SkipSchemaValidation bool
	// ShowOnly keeps the manifests of these templates only.
	ShowOnly []string
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
	Path string `json:"path,omitempty"`
	// Chart is a HelmRelease's chart source, as written.
	Chart *ChartSource `json:"chart,omitempty"`
	// Labels are the Flux object's labels.
	Labels map[string]string `json:"labels,omitempty"`
	// Owner is the Kustomization whose build holds a HelmRelease.
	Owner  string `json:"owner,omitempty"`
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
	// Documents counts the rendered documents checked for findings
	// (CRDs and Secrets included).
	Documents int `json:"documents"`
}

// Result is what Build found.
type Result struct {
	// Nodes holds every node the run considered, sorted by ID.
	Nodes []*NodeResult `json:"nodes"`
	// Stats counts the work done.
	Stats Stats `json:"stats"`
	// apis are the group/versions (and group/version/kinds) the target
	// serves: its built-in APIs, the repository's CRDs and
	// Options.APIVersions; removed the group/version/kinds it no longer
	// serves.
	apis, removed map[string]bool
}

// Served reports whether the target serves objects of apiVersion and
// kind: a built-in API it has not removed, a CRD of the repository or one
// of Options.APIVersions (Flux's own APIs count as served: Flux applies
// these objects). It knows APIs at the group/version level (and the kinds
// the deprecation rules name), not their schemas.
func (r *Result) Served(apiVersion, kind string) bool {
	if r.apis[apiVersion+"/"+kind] {
		return true
	}
	if g, _, ok := strings.Cut(apiVersion, "/"); ok && strings.HasSuffix(g, ".toolkit.fluxcd.io") {
		return true // Flux serves its own APIs where it applies these objects
	}
	return r.apis[apiVersion] && !r.removed[apiVersion+"/"+kind]
}

// Stats counts the work of one Build.
type Stats struct {
	// Kustomizations counts kustomize builds, HelmReleases chart renders
	// (a render shared through Options.Cache counts once), ChartsFetched
	// charts downloaded.
	Kustomizations int `json:"kustomizations"`
	HelmReleases   int `json:"helmReleases"`
	ChartsFetched  int `json:"chartsFetched"`
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
	root    string // the repository, absolute
	path    string // Options.Path, absolute
	checker *deprecation.Checker
	cache   *Cache
	stats   stats
	// renderTimeout bounds a render.
	renderTimeout time.Duration
	// mem holds a copy of the repository and sources, read-only once
	// loaded; every build reads it through a buildFS of its own.
	mem filesys.FileSystem
	// configs are the ConfigMaps and Secrets in the repository, by
	// "Kind/namespace/name" (namespace may be empty); sources likewise
	// the Flux source objects. Read-only once loaded.
	configs, sources map[string]Object
	// raws are the Flux Kustomizations as read from the repository's
	// files; rawHRs the HelmReleases. container and contents say which
	// build renders which (see contain); scopes what each build reads;
	// onlyChain holds the markers of Options.Only and the Kustomizations
	// that render it. Read-only once loaded.
	raws      []*ksSpec
	rawHRs    []rawHR
	byMarker  map[string]*ksSpec
	scopes    []scope
	container map[string]string
	contents  map[string][]string
	onlyChain map[string]bool
	// customSchema is set when a kustomization in the repository has an
	// openapi field: its builds take kustomizeMu for writing.
	customSchema bool
	// parsed says what decoding found in the files load decoded, so
	// generated kustomizations need not decode them again. Read-only once
	// loaded.
	parsed map[string]parseState
	// refused holds the files builds may not read, with the reason.
	// Read-only once loaded.
	refused map[string]error
	// chartFiles holds the local charts read, by directory.
	chartFiles onceMap[string, chartFiles]

	apiVersions []string // CRDs and Options.APIVersions, set before rendering
	rulesKey    string   // the checker's rules, in render keys

	// mu guards ks, hrs, claimed, built, builtSources, crds and listed.
	mu  sync.Mutex
	ks  map[string]*ksSpec
	hrs map[string]*hrSpec
	// claimed maps the marker of a raw Kustomization to the node it
	// became; a marker is claimed once.
	claimed map[string]string
	// built holds the ConfigMaps and Secrets rendered by Kustomizations,
	// keyed like configs; builtSources the source objects.
	built, builtSources map[string]Object
	// crds holds the group/versions (and group/version/kinds) of the CRDs
	// in the repository and its build output.
	crds map[string]bool
	// listed caches manifests, by directory: several Kustomizations may
	// build one path.
	listed map[string][]string
}

// rawHR is a HelmRelease as read from a file of the repository.
type rawHR struct {
	namespace, name, file string
}

// Build builds the Flux Kustomizations in opts.Path. The error is non-nil
// only when the run cannot start (a bad path or Only); a node's failure
// is reported on the node.
func Build(ctx context.Context, opts Options) (*Result, error) {
	b := &builder{
		opts:          opts,
		checker:       opts.Checker,
		cache:         opts.Cache,
		renderTimeout: cmp.Or(opts.RenderTimeout, 2*time.Minute),
		mem:           filesys.MakeFsInMemory(),
		configs:       make(map[string]Object),
		sources:       make(map[string]Object),
		byMarker:      make(map[string]*ksSpec),
		ks:            make(map[string]*ksSpec),
		hrs:           make(map[string]*hrSpec),
		claimed:       make(map[string]string),
		built:         make(map[string]Object),
		builtSources:  make(map[string]Object),
		crds:          make(map[string]bool),
		listed:        make(map[string][]string),
		refused:       make(map[string]error),
		parsed:        make(map[string]parseState),
	}
	if b.cache == nil {
		b.cache = NewCache()
	}
	if err := b.paths(); err != nil {
		return nil, err
	}
	var err error
	if b.checker == nil {
		if b.checker, err = deprecation.NewChecker(nil, deprecation.Options{Target: opts.Target}); err != nil {
			return nil, fmt.Errorf("gitops: checker: %w", err)
		}
	}
	if err := b.load(ctx); err != nil {
		return nil, err
	}
	b.container, b.contents = b.contain(b.raws)
	var g dag.Graph[string]
	for _, k := range b.raws {
		if _, contained := b.container[k.marker]; contained {
			continue // its container's build renders it
		}
		if _, dup := b.ks[k.ID()]; dup {
			continue
		}
		b.ks[k.ID()] = k
		if k.marker != "" {
			b.claimed[k.marker] = k.ID()
		}
		if err := g.Add(k.ID(), k.DependsOn...); err != nil {
			return nil, fmt.Errorf("gitops: %w", err)
		}
	}
	var (
		targets []string
		only    *ksSpec
		onlyHR  *rawHR
	)
	if opts.Only != "" {
		if only, onlyHR, err = b.resolve(opts.Only); err != nil {
			return nil, err
		}
		// The target is reached through the builds that render it: they
		// and what it becomes in their output are targets too.
		b.onlyChain = make(map[string]bool)
		root := only
		for m := only.marker; m != ""; m = b.container[m] {
			b.onlyChain[m] = true
			root = b.byMarker[m]
		}
		id, ok := b.claimed[root.marker]
		if !ok {
			id = root.ID()
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
			if b.opts.NoRender {
				n, err = b.node(id), ErrNotRendered
			} else {
				n, err = b.render(ctx, id)
			}
			if errors.Is(err, ErrRemoteChart) || errors.Is(err, ErrNotRendered) {
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
	// HelmReleases render once every Kustomization they may read from is
	// built, so the APIs their charts see (the CRDs of the whole build) do
	// not depend on timing.
	b.apiVersions = b.extraAPIs()
	b.rulesKey = rulesDigest(b.checker.Rules())
	var pick func(h *hrSpec) bool
	if only != nil {
		b.mu.Lock()
		owner := b.claimed[only.marker]
		b.mu.Unlock()
		if owner == "" {
			owner = only.ID()
		}
		pick = func(h *hrSpec) bool { return h.Owner == owner }
		if onlyHR != nil {
			pick = func(h *hrSpec) bool { return h.Owner == owner && h.Name == onlyHR.name }
		}
	}
	herrs, err := b.renderReleases(ctx, pick, errs, par, fn)
	if err != nil {
		return nil, err
	}
	maps.Copy(errs, herrs)
	res := &Result{Nodes: make([]*NodeResult, 0, len(errs))}
	for id, err := range errs {
		n := out[id]
		if n == nil {
			n = b.node(id)
		}
		b.describe(n)
		if err == nil {
			err = n.Err
		}
		n.Status, n.Err = StatusOK, err
		switch {
		case err == nil:
		case errors.Is(err, dag.ErrDependency), errors.Is(err, ErrRemoteChart), errors.Is(err, ErrNotRendered), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			n.Status, n.Error = StatusSkipped, err.Error()
		default:
			n.Status, n.Error = StatusFailed, err.Error()
		}
		if err != nil {
			n.Objects, n.Images, n.Findings, n.Documents = nil, nil, nil, 0
		}
		res.Nodes = append(res.Nodes, n)
	}
	sort.Slice(res.Nodes, func(i, j int) bool { return res.Nodes[i].ID < res.Nodes[j].ID })
	res.Stats = Stats{
		Kustomizations: int(b.stats.builds.Load()),
		HelmReleases:   int(b.stats.renders.Load()),
		ChartsFetched:  int(b.stats.fetches.Load()),
	}
	res.apis = b.servedAPIs()
	res.removed = make(map[string]bool)
	for _, r := range b.checker.Rules().Rules() {
		if !r.RemovedIn.IsZero() && !b.checker.Target().Less(r.RemovedIn) {
			res.removed[r.APIVersion+"/"+r.Kind] = true
		}
	}
	return res, nil
}

// paths sets root and path from Options.
func (b *builder) paths() error {
	if b.opts.Path == "" {
		return fmt.Errorf("%w: Options.Path is required", ErrPath)
	}
	path, err := filepath.Abs(b.opts.Path)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrPath, err)
	}
	root := path
	if b.opts.Root != "" {
		if root, err = filepath.Abs(b.opts.Root); err != nil {
			return fmt.Errorf("%w: %w", ErrPath, err)
		}
	}
	if !within(root, path) {
		return fmt.Errorf("%w: %s is not inside %s", ErrPath, b.opts.Path, b.opts.Root)
	}
	b.root, b.path = root, path
	return nil
}

// describe fills in what a node's spec says, whether or not it was built.
func (b *builder) describe(n *NodeResult) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h := b.hrs[n.ID]; h != nil {
		c := h.Chart
		n.Chart, n.Labels, n.Owner = &c, h.Labels, h.Owner
		return
	}
	if k := b.ks[n.ID]; k != nil {
		n.Labels = k.Labels
	}
}

// renderReleases renders the HelmReleases the builds found: all of them,
// or those pick chooses and the HelmReleases they depend on.
func (b *builder) renderReleases(ctx context.Context, pick func(*hrSpec) bool, done map[string]error, par int, fn dag.Func[string]) (map[string]error, error) {
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
		if pick != nil && pick(h) {
			targets = append(targets, id)
		}
	}
	b.mu.Unlock()
	if g.Len() == 0 || (pick != nil && len(targets) == 0) {
		return nil, nil
	}
	errs, err := g.Run(ctx, dag.Options[string]{Parallelism: par, Targets: targets}, fn)
	if err != nil {
		return nil, fmt.Errorf("gitops: %w", err)
	}
	return errs, nil
}

// resolve finds the raw Kustomization Options.Only names (by
// "namespace/name" or a unique name, as written in the repository) or,
// for a HelmRelease, the raw HelmRelease and the Kustomization whose build
// reads its file.
func (b *builder) resolve(only string) (*ksSpec, *rawHR, error) {
	if rest, ok := strings.CutPrefix(only, helmPrefix); ok {
		var found []rawHR
		for _, h := range b.rawHRs {
			if h.namespace+"/"+h.name == rest || (!strings.Contains(rest, "/") && h.name == rest) {
				found = append(found, h)
			}
		}
		if len(found) != 1 {
			return nil, nil, fmt.Errorf("%w: %s matches %d helmreleases", ErrUnknownNode, only, len(found))
		}
		m := b.enclosing(filepath.Join(b.root, filepath.FromSlash(found[0].file)), "")
		if m == "" {
			return nil, nil, fmt.Errorf("%w: %s: no Kustomization builds %s", ErrUnknownNode, only, found[0].file)
		}
		return b.byMarker[m], &found[0], nil
	}
	var found []*ksSpec
	for _, k := range b.raws {
		if k.ID() == only || (!strings.Contains(only, "/") && k.Name == only) {
			found = append(found, k)
		}
	}
	found = slices.CompactFunc(found, func(a, b *ksSpec) bool { return a.ID() == b.ID() })
	if len(found) != 1 {
		return nil, nil, fmt.Errorf("%w: %s matches %d kustomizations", ErrUnknownNode, only, len(found))
	}
	return found[0], nil, nil
}

// node returns an empty result for a known Kustomization.
func (b *builder) node(id string) *NodeResult {
	b.mu.Lock()
	k, h := b.ks[id], b.hrs[id]
	b.mu.Unlock()
	if h != nil {
		return &NodeResult{ID: id, Kind: kindHelmRelease, Namespace: h.Namespace, Name: h.Name, Path: h.Chart.Chart, DependsOn: h.DependsOn}
	}
	ns, name, _ := strings.Cut(id, "/")
	n := &NodeResult{ID: id, Kind: kindKustomization, Namespace: ns, Name: name}
	if k != nil {
		n.DependsOn = k.DependsOn
		n.Path = k.Path
	}
	return n
}

// extraAPIs returns what charts see as served beyond the target's
// built-in APIs: the repository's CRDs and Options.APIVersions, sorted.
func (b *builder) extraAPIs() []string {
	b.mu.Lock()
	apis := maps.Clone(b.crds)
	b.mu.Unlock()
	for _, a := range b.opts.APIVersions {
		if a = strings.TrimSpace(a); a != "" {
			apis[a] = true
		}
	}
	return slices.Sorted(maps.Keys(apis))
}

// servedAPIs returns everything charts see as served.
func (b *builder) servedAPIs() map[string]bool {
	apis := helm.ServedAPIs(b.checker.Rules(), b.checker.Target())
	for _, a := range b.apiVersions {
		apis[a] = true
	}
	b.mu.Lock()
	maps.Copy(apis, b.crds)
	b.mu.Unlock()
	return apis
}

// rel returns path relative to the repository, with slashes.
func (b *builder) rel(path string) string {
	r, err := filepath.Rel(b.root, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(r)
}

// vars returns k's post-build variables: substituteFrom in order, then
// substitute, which wins.
func (b *builder) vars(k *ksSpec) (map[string]string, error) {
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

// build builds one Kustomization. It returns the Kustomizations its
// output holds (ordered after it) and, for the raw Kustomizations it was
// expected to render but did not, those as read; when the build fails,
// every raw Kustomization under it, which then fails with it.
func (b *builder) build(ctx context.Context, id string) (*NodeResult, []dag.Node[string], error) {
	n := b.node(id)
	b.mu.Lock()
	k := b.ks[id]
	b.mu.Unlock()
	disc, err := b.buildNode(ctx, n, k)
	if err != nil {
		return n, b.adopt(id, k.marker, true), err
	}
	return n, append(disc, b.adopt(id, k.marker, false)...), nil
}

// adopt claims the raw Kustomizations in marker's contents that no build
// rendered, as nodes that depend on parent; deep adopts their contents
// too, for a parent that failed and will not build them.
func (b *builder) adopt(parent, marker string, deep bool) []dag.Node[string] {
	if marker == "" {
		return nil
	}
	var disc []dag.Node[string]
	b.mu.Lock()
	defer b.mu.Unlock()
	stack := []struct{ parent, marker string }{{parent, marker}}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, m := range b.contents[p.marker] {
			if _, taken := b.claimed[m]; taken {
				continue
			}
			raw := b.byMarker[m]
			if _, dup := b.ks[raw.ID()]; dup {
				continue
			}
			b.ks[raw.ID()] = raw
			b.claimed[m] = raw.ID()
			disc = append(disc, dag.Node[string]{ID: raw.ID(), Deps: append(slices.Clone(raw.DependsOn), p.parent), Target: b.onlyChain[m]})
			if deep {
				stack = append(stack, struct{ parent, marker string }{raw.ID(), m})
			}
		}
	}
	return disc
}

// buildNode builds k into n and returns the Kustomizations of its output.
func (b *builder) buildNode(ctx context.Context, n *NodeResult, k *ksSpec) ([]dag.Node[string], error) {
	root := b.root
	if dir, ok := b.source(k.SourceNamespace, k.SourceName); ok {
		root = dir
	}
	dir := filepath.Join(root, filepath.FromSlash(k.Path))
	if rel, err := filepath.Rel(root, dir); err != nil || strings.HasPrefix(rel, "..") {
		return nil, fmt.Errorf("%w: spec.path %s leaves its source", ErrNotFound, k.Path)
	}
	vars, err := b.vars(k)
	if err != nil {
		return nil, err
	}
	docs, err := b.kustomize(k, dir)
	if err != nil {
		return nil, err
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
		objs, err := decodeObjects(n.ID, y)
		if err != nil {
			return nil, fmt.Errorf("after substitution: %w", err)
		}
		all = append(all, objs...)
		data.WriteString("---\n")
		data.Write(y)
	}
	// Parse and clean the objects outside the lock; only the shared maps
	// are updated under it.
	var (
		kss  []*ksSpec
		hrs  []*hrSpec
		keep []Object
	)
	for i, o := range all {
		switch {
		case isFlux(o, groupKustomize, kindKustomization):
			kss = append(kss, parseKustomization(o))
		case isFlux(o, groupHelm, kindHelmRelease):
			hrs = append(hrs, parseHelmRelease(o, n.ID))
		case isSourceKind(o), isCRD(o), o.APIVersion == "v1" && (o.Kind == kindConfigMap || o.Kind == kindSecret):
			keep = append(keep, o)
		}
		unmark(&all[i])
		setCommonMetadata(all[i], k.CommonLabels, k.CommonAnnotations)
	}
	b.mu.Lock()
	for _, nk := range kss {
		if nk.marker == k.marker && nk.marker != "" {
			continue // its own object
		}
		if _, taken := b.claimed[nk.marker]; taken && nk.marker != "" {
			continue // a node already: built as read, or by another build
		}
		if _, dup := b.ks[nk.ID()]; dup {
			continue
		}
		b.ks[nk.ID()] = nk
		if nk.marker != "" {
			b.claimed[nk.marker] = nk.ID()
		}
		disc = append(disc, dag.Node[string]{ID: nk.ID(), Deps: append(slices.Clone(nk.DependsOn), n.ID), Target: b.onlyChain[nk.marker]})
	}
	for _, h := range hrs {
		if _, ok := b.hrs[h.ID()]; !ok {
			b.hrs[h.ID()] = h
		}
	}
	for _, o := range keep {
		b.record(o, b.built, b.builtSources)
	}
	b.mu.Unlock()
	if err := b.collect(ctx, n, all, data.Bytes()); err != nil {
		return nil, err
	}
	return disc, nil
}

// setCommonMetadata adds spec.commonMetadata to an object's metadata, as
// kustomize-controller does after the build and substitution.
func setCommonMetadata(o Object, labels, annotations map[string]string) {
	for key, m := range map[string]map[string]string{"labels": labels, "annotations": annotations} {
		if len(m) == 0 {
			continue
		}
		meta, ok := o.Body["metadata"].(map[string]any)
		if !ok {
			meta = make(map[string]any)
			o.Body["metadata"] = meta
		}
		dst, ok := meta[key].(map[string]any)
		if !ok {
			dst = make(map[string]any, len(m))
			meta[key] = dst
		}
		for k, v := range m {
			dst[k] = v
		}
	}
}

// collect fills n with the objects, images and findings of a build.
func (b *builder) collect(ctx context.Context, n *NodeResult, all []Object, data []byte) error {
	n.Documents = len(all)
	if !b.opts.SkipChecks {
		check, err := b.checker.Check(ctx, n.ID, data)
		if err != nil {
			return fmt.Errorf("check: %w", err)
		}
		n.Findings, n.Documents = check.Findings, check.Documents
	}
	for _, o := range all {
		if n.Kind == kindHelmRelease && isCRD(o) {
			// For Result.Served: charts already saw the APIs known
			// when they rendered.
			b.mu.Lock()
			addCRD(b.crds, o)
			b.mu.Unlock()
		}
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

// kustomize builds dir for k with krusty. Like kustomize-controller, it
// writes k's kustomize settings into the path's kustomization, or into
// one generated for a path without one; both are written to the build's
// own buildFS, never to the repository or its shared in-memory copy.
func (b *builder) kustomize(k *ksSpec, dir string) ([]doc, error) {
	if !b.mem.IsDir(dir) {
		return nil, fmt.Errorf("%w: directory %s", ErrNotFound, dir)
	}
	fsys := &buildFS{FileSystem: b.mem, files: make(map[string][]byte), refused: b.refused}
	if err := b.writeKustomization(fsys, k, dir); err != nil {
		return nil, fmt.Errorf("kustomization: %w", err)
	}
	b.stats.builds.Add(1)
	return b.runKustomize(fsys, dir)
}

// buildFS is what one kustomize build reads: the repository's in-memory
// copy under the kustomization files written for this build alone.
type buildFS struct {
	filesys.FileSystem
	files   map[string][]byte // by cleaned absolute path
	refused map[string]error  // files that may not be read
}

func (f *buildFS) ReadFile(path string) ([]byte, error) {
	if data, ok := f.files[filepath.Clean(path)]; ok {
		return data, nil
	}
	if err := f.refused[filepath.Clean(path)]; err != nil {
		return nil, err
	}
	return f.FileSystem.ReadFile(path)
}

func (f *buildFS) WriteFile(path string, data []byte) error {
	f.files[filepath.Clean(path)] = data
	return nil
}

func (f *buildFS) Exists(path string) bool {
	_, ok := f.files[filepath.Clean(path)]
	return ok || f.FileSystem.Exists(path)
}

func (f *buildFS) IsDir(path string) bool {
	if _, ok := f.files[filepath.Clean(path)]; ok {
		return false
	}
	return f.FileSystem.IsDir(path)
}

func (f *buildFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	if _, ok := f.files[filepath.Clean(path)]; ok {
		return filesys.ConfirmedDir(filepath.Dir(filepath.Clean(path))), filepath.Base(path), nil
	}
	return f.FileSystem.CleanedAbs(path)
}

// writeKustomization writes dir's kustomization for k into fsys: the
// path's own with k's settings, or a generated one listing every manifest
// in the tree. A path with its own and no settings is left as it is.
func (b *builder) writeKustomization(fsys *buildFS, k *ksSpec, dir string) error {
	name := kustomizationName(b.mem, dir)
	kus := make(map[string]any)
	switch {
	case name != "" && !k.overlay():
		return nil
	case name != "":
		data, err := b.mem.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := yaml.Unmarshal(data, &kus); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
		if kus == nil {
			kus = make(map[string]any)
		}
	default:
		name = "kustomization.yaml"
		resources, err := b.manifests(dir)
		if err != nil {
			return fmt.Errorf("generate kustomization.yaml: %w", err)
		}
		kus["apiVersion"] = "kustomize.config.k8s.io/v1beta1"
		kus["kind"] = "Kustomization"
		kus["resources"] = resources
	}
	// As kustomize-controller: targetNamespace, namePrefix and nameSuffix
	// replace the kustomization's own; patches and components are
	// appended; an image replaces the entry of the same name.
	for key, v := range map[string]string{"namespace": k.TargetNamespace, "namePrefix": k.NamePrefix, "nameSuffix": k.NameSuffix} {
		if v != "" {
			kus[key] = v
		}
	}
	if len(k.Patches) > 0 {
		patches, _ := kus["patches"].([]any)
		kus["patches"] = append(patches, k.Patches...)
	}
	for _, c := range k.Components {
		components, _ := kus["components"].([]any)
		kus["components"] = append(components, c)
	}
	for _, img := range k.Images {
		images, _ := kus["images"].([]any)
		name := str(asMap(img), "name")
		i := slices.IndexFunc(images, func(x any) bool { return name != "" && str(asMap(x), "name") == name })
		if i >= 0 {
			images[i] = img
		} else {
			images = append(images, img)
		}
		kus["images"] = images
	}
	data, err := yaml.Marshal(kus)
	if err != nil {
		return err
	}
	return fsys.WriteFile(filepath.Join(dir, name), data)
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// kustomizationName returns the name of dir's kustomization file, or "".
func kustomizationName(fsys filesys.FileSystem, dir string) string {
	for _, name := range kustomizationNames {
		if fsys.Exists(filepath.Join(dir, name)) {
			return name
		}
	}
	return ""
}

func hasKustomizationName(path string) bool {
	return slices.Contains(kustomizationNames, filepath.Base(path))
}

// manifests lists, relative to dir, every manifest in its tree, or the
// directory of a subtree that has its own kustomization, as Flux does for
// a path without a kustomization.yaml.
func (b *builder) manifests(dir string) ([]string, error) {
	b.mu.Lock()
	resources, ok := b.listed[dir]
	b.mu.Unlock()
	if ok {
		return resources, nil
	}
	resources = []string{}
	err := b.mem.Walk(dir, func(path string, info fs.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() {
			if path != dir && kustomizationName(b.mem, path) != "" {
				rel, _ := filepath.Rel(dir, path)
				resources = append(resources, filepath.ToSlash(rel))
				return filepath.SkipDir
			}
			return nil
		}
		if !isManifest(path) {
			return nil
		}
		// A file that is not YAML is listed all the same, so the build
		// reports it, unless it is a template (a chart's, say), which
		// Flux's generated kustomization would not take either.
		st := b.parsed[path]
		var data []byte
		if st == notParsed || st == parsedBad {
			var err error
			if data, err = b.mem.ReadFile(path); err != nil {
				return err
			}
		}
		if st == notParsed {
			objs, err := decodeObjects(path, data)
			st = parsedObjects
			if err != nil {
				st = parsedBad
			} else if len(objs) == 0 {
				st = parsedEmpty
			}
		}
		if st == parsedEmpty || (st == parsedBad && bytes.Contains(data, []byte("{{"))) {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		resources = append(resources, filepath.ToSlash(rel))
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.listed[dir] = resources
	b.mu.Unlock()
	return resources, nil
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
