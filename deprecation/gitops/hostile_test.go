package gitops_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/deprecation/gitops"
)

// statuses maps each node to its status.
func statuses(res *gitops.Result) map[string]gitops.Status {
	out := make(map[string]gitops.Status)
	for _, n := range res.Nodes {
		out[n.ID] = n.Status
	}
	return out
}

// Hostile repositories fail the nodes they are in, with a clear error,
// and never the run, read outside the repository or exhaust memory.
func TestBuildHostileInput(t *testing.T) {
	// A billion-laughs document: each level doubles the expansion nine
	// times.
	var bomb strings.Builder
	bomb.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\ndata:\n  a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&bomb, "  a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: stolen}\n"})

	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"clusters/ks.yaml": gitops.FluxKustomization("aliases", "./aliases") + "---\n" + gitops.FluxKustomization("escape-path", "../../..") + "---\n" +
			gitops.FluxKustomization("escape-resource", "./escape") + "---\n" + gitops.FluxKustomization("symlink", "./linked") + "---\n" +
			gitops.FluxKustomization("good", "./good") + "---\n" + gitops.FluxKustomization("slow", "./slow"),
		"aliases/bomb.yaml":         bomb.String(),
		"escape/kustomization.yaml": fmt.Sprintf("resources: [%q]\n", filepath.Join(strings.Repeat("../", 12), outside, "secret.yaml")),
		"linked/ok.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\n",
		"good/cm.yaml":              "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: good}\n",
		"slow/hr.yaml": "apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: slow, namespace: slow}\nspec:\n  chart: {spec: {chart: ./charts/slow, sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}}}\n---\n" +
			"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: escape, namespace: slow}\nspec:\n  chart: {spec: {chart: ../../../etc, sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}}}\n",
		"charts/slow/Chart.yaml":        "apiVersion: v2\nname: slow\nversion: 0.1.0\n",
		"charts/slow/templates/cm.yaml": "{{- range until 30000 }}{{ range until 30000 }}{{ end }}{{ end }}\n",
	})
	// A symlink to a file outside the repository is not followed.
	require.NoError(t, os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(dir, "linked", "stolen.yaml")))

	res, err := gitops.Build(context.Background(), gitops.Options{Path: dir, SkipChecks: true, RenderTimeout: 300 * time.Millisecond, IncludeSecrets: true})
	require.NoError(t, err)
	assert.Equal(t, map[string]gitops.Status{
		"flux-system/aliases":         gitops.StatusFailed,
		"flux-system/escape-path":     gitops.StatusFailed,
		"flux-system/escape-resource": gitops.StatusFailed,
		"flux-system/symlink":         gitops.StatusOK,
		"flux-system/good":            gitops.StatusOK,
		"flux-system/slow":            gitops.StatusOK,
		"HelmRelease/slow/slow":       gitops.StatusFailed,
		"HelmRelease/slow/escape":     gitops.StatusFailed,
	}, statuses(res))
	assert.Contains(t, res.Node("flux-system/aliases").Error, "excessive aliasing")
	assert.ErrorIs(t, res.Node("flux-system/escape-path").Err, gitops.ErrNotFound)
	assert.Contains(t, res.Node("flux-system/escape-path").Error, "leaves its source")
	assert.NotContains(t, res.Node("flux-system/escape-resource").Error, "stolen")
	linked := res.Node("flux-system/symlink")
	require.Len(t, linked.Objects, 1, "the symlinked Secret is not read")
	assert.Equal(t, "ok", linked.Objects[0].Name)
	assert.ErrorIs(t, res.Node("HelmRelease/slow/slow").Err, gitops.ErrRenderTimeout)
	assert.ErrorIs(t, res.Node("HelmRelease/slow/escape").Err, gitops.ErrNotFound)
}

// A chart repository that answers with an endless index is cut off at
// the size limit: the release fails, memory stays bounded.
func TestBuildHostileChartServer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/yaml")
		chunk := []byte(strings.Repeat("#", 1<<16) + "\n")
		for i := 0; i < 2000; i++ { // 128 MiB, twice the limit
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"clusters/ks.yaml": gitops.FluxKustomization("apps", "./apps"),
		"apps/hr.yaml": fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmRepository
metadata: {name: big, namespace: apps}
spec: {url: %q}
`, srv.URL) + release("big", `chart: {spec: {chart: web, version: "1.0.0", sourceRef: {kind: HelmRepository, name: big}}}`),
	})
	res, err := gitops.Build(context.Background(), gitops.Options{Path: dir, SkipChecks: true, FetchCharts: true})
	require.NoError(t, err)
	n := res.Node("HelmRelease/apps/big")
	require.NotNil(t, n)
	assert.Equal(t, gitops.StatusFailed, n.Status)
	assert.ErrorIs(t, n.Err, gitops.ErrFetch)
	assert.Contains(t, n.Error, "larger than")
}
