package gitops_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	ggcr "github.com/google/go-containerregistry/pkg/registry"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/repo"

	"github.com/fleetkit/fleetkit/deprecation/gitops"
)

// writeTree writes files (path → content) under dir.
func writeTree(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(tb, os.WriteFile(p, []byte(body), 0o644))
	}
}

// packageChart writes a chart named name at version whose Deployment's
// image is "<name>:<version>", packages it into dir and returns the
// archive's path and bytes.
func packageChart(tb testing.TB, dir, name, version string) (string, []byte) {
	tb.Helper()
	src := tb.TempDir()
	writeTree(tb, src, map[string]string{
		"Chart.yaml":  fmt.Sprintf("apiVersion: v2\nname: %s\nversion: %s\n", name, version),
		"values.yaml": "replicas: 1\n",
		"templates/deploy.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}}
spec:
  replicas: {{ .Values.replicas }}
  template:
    spec: {containers: [{name: app, image: "{{ .Chart.Name }}:{{ .Chart.Version }}"}]}
`,
	})
	chrt, err := loader.LoadDir(src)
	require.NoError(tb, err)
	path, err := chartutil.Save(chrt, dir)
	require.NoError(tb, err)
	data, err := os.ReadFile(path)
	require.NoError(tb, err)
	return path, data
}

// requestLog counts the requests a test server answered, by path.
type requestLog struct {
	mu sync.Mutex // guards paths
	// paths counts requests by URL path.
	paths map[string]int
}

func (l *requestLog) add(path string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.paths == nil {
		l.paths = make(map[string]int)
	}
	l.paths[path]++
}

func (l *requestLog) count(suffix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for p, c := range l.paths {
		if strings.HasSuffix(p, suffix) {
			n += c
		}
	}
	return n
}

// chartServers starts, on loopback, a chart repository holding web 1.0.0
// and 1.1.0 (the packages and index.yaml Helm writes, served as files,
// which is what Helm's repotest server does; repotest itself does not
// build in this module: it pulls in a registry whose OpenTelemetry
// dependencies conflict with ours), and an OCI registry (the in-memory
// registry of go-containerregistry) to which Helm's registry client
// pushes the same two charts as <registry>/charts/web.
func chartServers(t *testing.T) (repoURL, ociHost string, repoLog, ociLog *requestLog) {
	t.Helper()
	pkgs := t.TempDir()
	_, v1 := packageChart(t, pkgs, "web", "1.0.0")
	_, v11 := packageChart(t, pkgs, "web", "1.1.0")
	repoURL, repoLog = chartRepo(t, pkgs)

	ociLog = &requestLog{}
	reg := ggcr.New(ggcr.Logger(log.New(io.Discard, "", 0)))
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ociLog.add(r.URL.Path)
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	ociHost = strings.TrimPrefix(ts.URL, "http://")
	client, err := registry.NewClient(registry.ClientOptPlainHTTP(), registry.ClientOptCredentialsFile(filepath.Join(t.TempDir(), "creds.json")))
	require.NoError(t, err)
	for v, data := range map[string][]byte{"1.0.0": v1, "1.1.0": v11} {
		_, err := client.Push(data, ociHost+"/charts/web:"+v)
		require.NoError(t, err)
	}
	ociLog.paths = nil // count what the builds ask for
	return repoURL, ociHost, repoLog, ociLog
}

// chartRepo serves the chart packages in dir as a chart repository, with
// the index.yaml Helm writes for them, on loopback.
func chartRepo(tb testing.TB, dir string) (string, *requestLog) {
	tb.Helper()
	log := &requestLog{}
	files := http.FileServer(http.Dir(dir))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.add(r.URL.Path)
		files.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	index, err := repo.IndexDirectory(dir, srv.URL)
	require.NoError(tb, err)
	require.NoError(tb, index.WriteFile(filepath.Join(dir, "index.yaml"), 0o644))
	return srv.URL, log
}

// remoteRepo writes a Flux repository whose HelmReleases use every kind
// of remote chart source.
func remoteRepo(t *testing.T, repoURL, ociHost string) string {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"clusters/apps.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: apps, namespace: flux-system}
spec:
  path: ./apps
  sourceRef: {kind: GitRepository, name: flux-system}
`,
		"apps/sources.yaml": fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: charts, namespace: apps}
spec: {url: %[1]q}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: oci-charts, namespace: apps}
spec: {type: oci, url: "oci://%[2]s/charts", insecure: true}
---
apiVersion: source.toolkit.fluxcd.io/v1beta2
kind: OCIRepository
metadata: {name: web-oci, namespace: apps}
spec:
  url: oci://%[2]s/charts/web
  insecure: true
  ref: {semver: "~1.0"}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata: {name: web-chart, namespace: apps}
spec:
  chart: web
  version: "1.1.0"
  sourceRef: {kind: HelmRepository, name: charts}
`, repoURL, ociHost),
		"apps/releases.yaml": release("exact", `chart: {spec: {chart: web, version: "1.0.0", sourceRef: {kind: HelmRepository, name: charts}}}`) +
			release("exact-again", `chart: {spec: {chart: web, version: "1.0.0", sourceRef: {kind: HelmRepository, name: charts}}}`) +
			release("range", `chart: {spec: {chart: web, version: ">=1.0.0 <2.0.0", sourceRef: {kind: HelmRepository, name: charts}}}`) +
			release("oci-repo", `chart: {spec: {chart: web, version: "1.1.0", sourceRef: {kind: HelmRepository, name: oci-charts}}}`) +
			release("oci-ref", `chartRef: {kind: OCIRepository, name: web-oci}`) +
			release("helmchart-ref", `chartRef: {kind: HelmChart, name: web-chart}`),
	})
	return dir
}

func release(name, chart string) string {
	return fmt.Sprintf(`---
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: %s, namespace: apps}
spec:
  %s
`, name, chart)
}

// Remote charts are fetched with the Helm SDK from a chart repository
// and an OCI registry, each (URL, chart, version) once per run, however
// many HelmReleases use it.
func TestBuildRemoteCharts(t *testing.T) {
	repoURL, ociHost, repoLog, ociLog := chartServers(t)
	dir := remoteRepo(t, repoURL, ociHost)
	res, err := gitops.Build(context.Background(), gitops.Options{Path: dir, FetchCharts: true, SkipChecks: true})
	require.NoError(t, err)
	want := map[string]string{
		"exact":         "web:1.0.0",
		"exact-again":   "web:1.0.0",
		"range":         "web:1.1.0",
		"oci-repo":      "web:1.1.0",
		"oci-ref":       "web:1.0.0",
		"helmchart-ref": "web:1.1.0",
	}
	for name, image := range want {
		n := res.Node("HelmRelease/apps/" + name)
		require.NotNil(t, n, name)
		require.Equal(t, gitops.StatusOK, n.Status, "%s: %s", name, n.Error)
		assert.Equal(t, []string{image}, n.Images, name)
	}
	// exact, exact-again: one fetch; range and helmchart-ref resolve to
	// different (URL, version) keys: the constraint, and the exact version.
	assert.Equal(t, 1, repoLog.count("/index.yaml"), "the index is fetched once")
	assert.Equal(t, 1, repoLog.count("/web-1.0.0.tgz"), "web 1.0.0 is fetched once for two releases")
	assert.Equal(t, 2, repoLog.count("/web-1.1.0.tgz"), "by the range and by the HelmChart's exact version")
	assert.Equal(t, 5, res.Stats.ChartsFetched)
	assert.Positive(t, ociLog.count("/tags/list"), "the OCIRepository's semver range lists the tags")

	// A shared Cache: the second Build of the same repository fetches
	// nothing and renders nothing again.
	cache := gitops.NewCache()
	first, err := gitops.Build(context.Background(), gitops.Options{Path: dir, FetchCharts: true, SkipChecks: true, Cache: cache})
	require.NoError(t, err)
	assert.Equal(t, 5, first.Stats.ChartsFetched)
	assert.Equal(t, 6, first.Stats.HelmReleases)
	again, err := gitops.Build(context.Background(), gitops.Options{Path: dir, FetchCharts: true, SkipChecks: true, Cache: cache})
	require.NoError(t, err)
	assert.Equal(t, 0, again.Stats.ChartsFetched)
	assert.Equal(t, 0, again.Stats.HelmReleases, "every render is reused")
	noCache, err := gitops.Build(context.Background(), gitops.Options{Path: dir, FetchCharts: true, SkipChecks: true, Cache: cache, NoCache: true})
	require.NoError(t, err)
	assert.Equal(t, 6, noCache.Stats.HelmReleases, "--no-cache renders again")
}

// Charts fetched at an exact version are kept in ChartCache: the next
// run reads them from there. Without FetchCharts nothing is fetched and
// the releases are skipped.
func TestBuildChartCacheDir(t *testing.T) {
	repoURL, ociHost, repoLog, _ := chartServers(t)
	dir := remoteRepo(t, repoURL, ociHost)
	cacheDir := t.TempDir()
	opts := gitops.Options{Path: dir, FetchCharts: true, SkipChecks: true, ChartCache: cacheDir, Only: "HelmRelease/apps/exact"}
	res, err := gitops.Build(context.Background(), opts)
	require.NoError(t, err)
	require.Equal(t, gitops.StatusOK, res.Node("HelmRelease/apps/exact").Status)
	assert.Equal(t, 1, res.Stats.ChartsFetched)
	res, err = gitops.Build(context.Background(), opts)
	require.NoError(t, err)
	require.Equal(t, gitops.StatusOK, res.Node("HelmRelease/apps/exact").Status)
	assert.Equal(t, 0, res.Stats.ChartsFetched, "read from the chart cache")
	assert.Equal(t, 1, repoLog.count("/web-1.0.0.tgz"))

	opts.FetchCharts, opts.ChartCache = false, ""
	res, err = gitops.Build(context.Background(), opts)
	require.NoError(t, err)
	n := res.Node("HelmRelease/apps/exact")
	assert.Equal(t, gitops.StatusSkipped, n.Status)
	assert.ErrorIs(t, n.Err, gitops.ErrRemoteChart)
}

// Only a HelmRelease: the Kustomization that holds it is built and only
// that release is rendered.
func TestBuildOnlyHelmRelease(t *testing.T) {
	repoURL, ociHost, _, _ := chartServers(t)
	dir := remoteRepo(t, repoURL, ociHost)
	res, err := gitops.Build(context.Background(), gitops.Options{Path: dir, FetchCharts: true, SkipChecks: true, Only: "HelmRelease/range"})
	require.NoError(t, err)
	var ids []string
	for _, n := range res.Nodes {
		ids = append(ids, n.ID+"="+string(n.Status))
	}
	assert.Equal(t, []string{"HelmRelease/apps/range=ok", "flux-system/apps=ok"}, ids)
	assert.Equal(t, 1, res.Stats.Kustomizations)
	assert.Equal(t, 1, res.Stats.HelmReleases)

	_, err = gitops.Build(context.Background(), gitops.Options{Path: dir, Only: "HelmRelease/nope"})
	require.ErrorIs(t, err, gitops.ErrUnknownNode)
}

// spec.postRenderers' kustomize patches and images apply to the rendered
// manifest; a chartRef to an ExternalArtifact reads the chart from the
// directory Sources maps it to.
func TestBuildPostRenderersAndExternalArtifact(t *testing.T) {
	dir := t.TempDir()
	chart := t.TempDir()
	writeTree(t, chart, map[string]string{
		"Chart.yaml":            "apiVersion: v2\nname: app\nversion: 0.1.0\n",
		"templates/deploy.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: {{ .Release.Name }}}\nspec:\n  replicas: 1\n  template:\n    spec: {containers: [{name: app, image: \"nginx:1.25\"}]}\n",
	})
	writeTree(t, dir, map[string]string{
		"clusters/ks.yaml": gitops.FluxKustomization("apps", "./apps"),
		"apps/hr.yaml": `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: app, namespace: apps}
spec:
  chartRef: {kind: ExternalArtifact, name: app-chart}
  postRenderers:
  - kustomize:
      images: [{name: nginx, newTag: "1.27"}]
      patches:
      - target: {kind: Deployment}
        patch: |
          - op: replace
            path: /spec/replicas
            value: 3
`,
	})
	res, err := gitops.Build(context.Background(), gitops.Options{Path: dir, SkipChecks: true, Sources: map[string]string{"apps/app-chart": chart}})
	require.NoError(t, err)
	n := res.Node("HelmRelease/apps/app")
	require.NotNil(t, n)
	require.Equal(t, gitops.StatusOK, n.Status, n.Error)
	assert.Equal(t, []string{"nginx:1.27"}, n.Images)
	require.Len(t, n.Objects, 1)
	assert.Equal(t, 3, n.Objects[0].Body["spec"].(map[string]any)["replicas"])

	// Without a mapping the ExternalArtifact is a remote chart: skipped.
	res, err = gitops.Build(context.Background(), gitops.Options{Path: dir, SkipChecks: true})
	require.NoError(t, err)
	assert.ErrorIs(t, res.Node("HelmRelease/apps/app").Err, gitops.ErrRemoteChart)
}
