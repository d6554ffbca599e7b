package gitops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/Masterminds/semver/v3"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
)

// maxChartBytes bounds a downloaded chart archive or repository index:
// a hostile or broken server cannot grow memory without bound.
const maxChartBytes = 64 << 20

// Cache is what several Builds of one run share, so that work done for
// one is not done again for another (the two sides of a diff, say):
// remote charts, fetched once per (URL, chart, version); repository
// indexes, fetched once per URL; and rendered HelmReleases, kept by
// everything that changes what they render (the chart's content, values,
// release name and namespace, target version, served APIs, Helm flags and
// post-renderers). Entries are never evicted: use one Cache per run.
//
// A Cache is safe for concurrent use. The zero value is ready to use.
type Cache struct {
	// mu guards indexes, charts and renders; each entry is filled once,
	// outside the lock, by the first caller.
	mu      sync.Mutex
	indexes map[string]*flight[*repo.IndexFile]
	charts  map[remoteChart]*flight[[]byte]
	renders map[string]*flight[[]byte]
}

// NewCache returns an empty Cache.
func NewCache() *Cache { return &Cache{} }

// flight is one value computed once for all callers.
type flight[T any] struct {
	done chan struct{}
	val  T
	err  error
}

// once returns the value of key in m, computing it with fn the first time;
// callers of a key in flight wait for it. A value whose computation was
// cut off by its context is not kept: the next caller tries again.
func once[K comparable, T any](mu *sync.Mutex, m *map[K]*flight[T], key K, fn func() (T, error)) (T, error) {
	mu.Lock()
	if *m == nil {
		*m = make(map[K]*flight[T])
	}
	if f, ok := (*m)[key]; ok {
		mu.Unlock()
		<-f.done
		return f.val, f.err
	}
	f := &flight[T]{done: make(chan struct{})}
	(*m)[key] = f
	mu.Unlock()
	f.val, f.err = fn()
	if errors.Is(f.err, context.Canceled) || errors.Is(f.err, context.DeadlineExceeded) {
		mu.Lock()
		delete(*m, key)
		mu.Unlock()
	}
	close(f.done)
	return f.val, f.err
}

// onceMap is a map of values computed once, for one Build.
type onceMap[K comparable, T any] struct {
	mu sync.Mutex // guards m
	m  map[K]*flight[T]
}

func (o *onceMap[K, T]) do(key K, fn func() (T, error)) (T, error) {
	return once(&o.mu, &o.m, key, fn)
}

// render returns the manifest rendered for key, calling fn unless an
// equal render was done before (and noCache is false).
func (c *Cache) render(key string, noCache bool, fn func() ([]byte, error)) ([]byte, error) {
	if noCache {
		return fn()
	}
	return once(&c.mu, &c.renders, key, fn)
}

// renderKey identifies a render by everything that changes its output.
func renderKey(chartDigest, rulesKey string, opts helm.RenderOptions, showOnly []string, post []map[string]any) string {
	h := sha256.New()
	enc := json.NewEncoder(h) // sorts map keys: the same values give the same key
	_ = enc.Encode([]any{
		chartDigest, opts.Target.String(), sortedCopy(opts.APIVersions), opts.ReleaseName, opts.Namespace,
		opts.Values, opts.IsUpgrade, opts.NoHooks, opts.SkipTests, opts.SkipCRDs, showOnly,
		opts.SkipSchemaValidation, post, rulesKey,
	})
	return hex.EncodeToString(h.Sum(nil))
}

// rulesDigest stands for the rules in a render key: the served APIs
// derive from them.
func rulesDigest(rules *deprecation.RuleSet) string {
	data, _ := json.Marshal(rules.Rules())
	return digestBytes(data)
}

// remoteChart is a chart to fetch: from an OCI registry (URL "oci://…"
// naming the chart's repository) or from a chart repository's index.
type remoteChart struct {
	URL      string // the OCI repository, or the chart repository
	Chart    string // the chart's name in a chart repository
	Version  string // a version, a semver constraint, "" for the newest
	Digest   string // an OCI digest, which wins over Version
	Insecure bool   // plain HTTP to an OCI registry
}

func (r remoteChart) String() string {
	s := r.URL
	if r.Chart != "" {
		s += " " + r.Chart
	}
	if r.Digest != "" {
		return s + "@" + r.Digest
	}
	if r.Version != "" {
		s += " " + r.Version
	}
	return s
}

// helmRepositoryChart is the chart src names in a HelmRepository object.
func helmRepositoryChart(o Object, src ChartSource) (remoteChart, bool) {
	u := str(o.Body, "spec", "url")
	insecure, _ := lookup(o.Body, "spec", "insecure").(bool)
	switch {
	case u == "" || src.Chart == "":
		return remoteChart{}, false
	case str(o.Body, "spec", "type") == "oci" || strings.HasPrefix(u, "oci://"):
		return remoteChart{URL: strings.TrimSuffix(u, "/") + "/" + src.Chart, Version: src.Version, Insecure: insecure}, true
	}
	return remoteChart{URL: u, Chart: src.Chart, Version: src.Version}, true
}

// ociRepositoryChart is the chart an OCIRepository object serves.
func ociRepositoryChart(o Object) (remoteChart, bool) {
	u := str(o.Body, "spec", "url")
	if !strings.HasPrefix(u, "oci://") {
		return remoteChart{}, false
	}
	insecure, _ := lookup(o.Body, "spec", "insecure").(bool)
	r := remoteChart{URL: u, Insecure: insecure, Digest: str(o.Body, "spec", "ref", "digest")}
	r.Version = str(o.Body, "spec", "ref", "tag")
	if s := str(o.Body, "spec", "ref", "semver"); s != "" {
		r.Version = s
	}
	return r, true
}

// fetch returns the archive of a remote chart: from dir (charts fetched by
// an earlier run) or downloaded, once per run. A downloaded chart is kept
// in dir when dir is set.
func (c *Cache) fetch(ctx context.Context, ref remoteChart, dir string, st *stats) ([]byte, error) {
	return once(&c.mu, &c.charts, ref, func() ([]byte, error) {
		var file string
		if dir != "" && (ref.Digest != "" || isExactVersion(ref.Version)) {
			// Only an exact reference names the same chart next time.
			file = filepath.Join(dir, "fetched", digestBytes([]byte(ref.String()))[:24]+".tgz")
			if data, err := os.ReadFile(file); err == nil {
				return data, nil
			}
		}
		var (
			data []byte
			err  error
		)
		if strings.HasPrefix(ref.URL, "oci://") {
			data, err = fetchOCI(ctx, ref)
		} else {
			data, err = c.fetchHTTP(ctx, ref)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrFetch, ref, err)
		}
		st.fetches.Add(1)
		if file != "" {
			// The cache is an optimisation: failing to keep a chart is
			// not an error.
			if os.MkdirAll(filepath.Dir(file), 0o755) == nil {
				tmp := file + ".tmp"
				if os.WriteFile(tmp, data, 0o644) == nil {
					_ = os.Rename(tmp, file)
				}
			}
		}
		return data, nil
	})
}

func isExactVersion(v string) bool {
	_, err := semver.StrictNewVersion(strings.TrimPrefix(v, "v"))
	return err == nil
}

// fetchHTTP downloads a chart from a chart repository: its index (once per
// repository URL) resolves the version, then the archive is downloaded.
func (c *Cache) fetchHTTP(ctx context.Context, ref remoteChart) ([]byte, error) {
	index, err := once(&c.mu, &c.indexes, ref.URL, func() (*repo.IndexFile, error) {
		data, err := httpGet(ctx, strings.TrimSuffix(ref.URL, "/")+"/index.yaml")
		if err != nil {
			return nil, err
		}
		var idx repo.IndexFile
		if err := sigsyaml.Unmarshal(data, &idx); err != nil {
			return nil, fmt.Errorf("index.yaml: %w", err)
		}
		idx.SortEntries()
		return &idx, nil
	})
	if err != nil {
		return nil, err
	}
	cv, err := index.Get(ref.Chart, ref.Version)
	if err != nil {
		return nil, err
	}
	if len(cv.URLs) == 0 {
		return nil, fmt.Errorf("chart %s %s has no URL in the index", ref.Chart, cv.Version)
	}
	u, err := repo.ResolveReferenceURL(ref.URL, cv.URLs[0])
	if err != nil {
		return nil, err
	}
	return httpGet(ctx, u)
}

// httpGet fetches a URL, reading at most maxChartBytes of its body.
func httpGet(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxChartBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxChartBytes {
		return nil, fmt.Errorf("GET %s: larger than %d bytes", u, maxChartBytes)
	}
	return data, nil
}

// fetchOCI pulls a chart from an OCI registry with Helm's registry
// client; a semver constraint is resolved against the repository's tags.
func fetchOCI(ctx context.Context, ref remoteChart) ([]byte, error) {
	opts := []registry.ClientOption{registry.ClientOptWriter(io.Discard), registry.ClientOptCredentialsFile(os.DevNull)}
	if ref.Insecure {
		opts = append(opts, registry.ClientOptPlainHTTP())
	}
	client, err := registry.NewClient(opts...)
	if err != nil {
		return nil, err
	}
	base := strings.TrimPrefix(ref.URL, "oci://")
	if _, err := url.Parse("oci://" + base); err != nil {
		return nil, err
	}
	target := base
	switch {
	case ref.Digest != "":
		target += "@" + ref.Digest
	case isExactVersion(ref.Version):
		target += ":" + ref.Version
	default:
		tag, err := newestTag(client, base, ref.Version)
		if err != nil {
			return nil, err
		}
		target += ":" + tag
	}
	type answer struct {
		res *registry.PullResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := client.Pull(target, registry.PullOptWithChart(true), registry.PullOptIgnoreMissingProv(true))
		done <- answer{res, err}
	}()
	select {
	case a := <-done:
		if a.err != nil {
			return nil, a.err
		}
		if len(a.res.Chart.Data) > maxChartBytes {
			return nil, fmt.Errorf("%s: larger than %d bytes", target, maxChartBytes)
		}
		return a.res.Chart.Data, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// newestTag returns the newest tag of an OCI repository within the
// constraint ("" or "*": any).
func newestTag(client *registry.Client, base, constraint string) (string, error) {
	tags, err := client.Tags(base)
	if err != nil {
		return "", err
	}
	c, err := semver.NewConstraint(cmpOr(constraint, "*"))
	if err != nil {
		return "", fmt.Errorf("version %q: %w", constraint, err)
	}
	var best *semver.Version
	bestTag := ""
	for _, t := range tags {
		v, err := semver.NewVersion(t)
		if err != nil || !c.Check(v) {
			continue
		}
		if best == nil || v.GreaterThan(best) {
			best, bestTag = v, t
		}
	}
	if best == nil {
		return "", fmt.Errorf("no tag of %s matches %q", base, constraint)
	}
	return bestTag, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func digestBytes(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// digestFiles identifies a chart by its files' names and contents.
func digestFiles(files []*loader.BufferedFile) string {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b *loader.BufferedFile) int { return strings.Compare(a.Name, b.Name) })
	h := sha256.New()
	for _, f := range sorted {
		fmt.Fprintf(h, "%s\x00%d\x00", f.Name, len(f.Data))
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// chartDigest identifies a loaded chart by its raw files and those of its
// dependencies.
func chartDigest(c *chart.Chart) string {
	var files []*loader.BufferedFile
	var walk func(prefix string, c *chart.Chart)
	walk = func(prefix string, c *chart.Chart) {
		for _, f := range c.Raw {
			files = append(files, &loader.BufferedFile{Name: prefix + f.Name, Data: f.Data})
		}
		for _, d := range c.Dependencies() {
			walk(prefix+"charts/"+d.Name()+"/", d)
		}
	}
	walk("", c)
	return digestFiles(files)
}

// stats counts the work of one Build.
type stats struct {
	builds, renders, fetches atomic.Int64
}
