package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }

// cluster is the example repository's cluster, relative to this package:
// its spec.paths are relative to the git repository holding it.
const cluster = "repo/clusters/production"

// cli runs the command line and returns its exit code, stdout and
// stderr.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// ok runs the command line, which must succeed, and returns its stdout.
func ok(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := cli(t, args...)
	require.Equal(t, 0, code, "gitops %v\nstdout:\n%s\nstderr:\n%s", args, out, errOut)
	return out
}

func TestGet(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"get", "ks", "-A", "--path", cluster}, "" +
			"NAMESPACE      NAME                 PATH                                                 \n" +
			"flux-system    apps                 ./examples/gitops/repo/apps/production               \n" +
			"flux-system    flux-system          ./examples/gitops/repo/clusters/production           \n" +
			"flux-system    infra-configs        ./examples/gitops/repo/infrastructure/configs        \n" +
			"flux-system    infra-controllers    ./examples/gitops/repo/infrastructure/controllers    \n"},
		{[]string{"get", "kustomization", "apps", "-o", "wide", "--path", cluster}, "" +
			"NAME    PATH                                      HELMREPOS    OCIREPOS    RELEASES    \n" +
			"apps    ./examples/gitops/repo/apps/production    0            0           1           \n"},
		{[]string{"get", "hr", "--path", cluster, "-A"}, "" +
			"NAMESPACE        NAME             REVISION    CHART                                                  SOURCE         \n" +
			"ingress-nginx    ingress-nginx    None        ingress-nginx-./examples/gitops/repo/charts/ingress    flux-system    \n" +
			"podinfo          podinfo          None        podinfo-./examples/gitops/repo/charts/podinfo          flux-system    \n"},
		{[]string{"get", "hr", "--path", cluster}, "no HelmRelease objects found in 'flux-system' namespace\n"},
		{[]string{"get", "ks", "nope", "--path", cluster}, "Kustomization object 'nope' not found in 'flux-system' namespace\n"},
		{[]string{"get", "hr", "podinfo", "-n", "podinfo", "-l", "team=none", "--path", cluster}, "HelmRelease object 'podinfo' not found in 'podinfo' namespace\n"},
		{[]string{"get", "cluster", "--path", cluster}, "" +
			"PATH                        KUSTOMIZATIONS    \n" +
			"repo/clusters/production    4                 \n"},
		{[]string{"get", "cluster", "--path", cluster, "-o", "json", "--enable-images", "--only-images"}, `[
    "ghcr.io/stefanprodan/podinfo:6.5.0",
    "registry.k8s.io/ingress-nginx/controller:v1.9.4"
]
`},
		{[]string{"get", "images", "--path", cluster, "-A"}, "" +
			"KIND           NAMESPACE        NAME             IMAGE                                              \n" +
			"HelmRelease    ingress-nginx    ingress-nginx    registry.k8s.io/ingress-nginx/controller:v1.9.4    \n" +
			"HelmRelease    podinfo          podinfo          ghcr.io/stefanprodan/podinfo:6.5.0                 \n"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			assert.Equal(t, tt.want, ok(t, tt.args...))
		})
	}

	// The cluster as flux-local's manifest: Kustomizations with their
	// HelmReleases, ConfigMaps and images.
	var m struct {
		Clusters []struct {
			Path           string
			Kustomizations []struct {
				Name         string
				HelmReleases []struct {
					Name   string
					Chart  map[string]string
					Images []string
				} `json:"helm_releases"`
				ConfigMaps []struct{ Name string } `json:"config_maps"`
			}
		}
	}
	require.NoError(t, json.Unmarshal([]byte(ok(t, "get", "cluster", "--path", cluster, "-o", "json", "--enable-images")), &m))
	require.Len(t, m.Clusters, 1)
	ks := m.Clusters[0].Kustomizations
	require.Len(t, ks, 4)
	assert.Equal(t, "apps", ks[0].Name)
	require.Len(t, ks[0].HelmReleases, 1)
	assert.Equal(t, "podinfo", ks[0].HelmReleases[0].Name)
	assert.Equal(t, map[string]string{"name": "./examples/gitops/repo/charts/podinfo", "repo_name": "flux-system", "repo_namespace": "flux-system", "repo_kind": "GitRepository"}, ks[0].HelmReleases[0].Chart)
	assert.Equal(t, []string{"ghcr.io/stefanprodan/podinfo:6.5.0"}, ks[0].HelmReleases[0].Images)
	assert.Equal(t, "podinfo-values", ks[0].ConfigMaps[0].Name)

	code, _, _ := cli(t, "get", "ks", "-o", "table", "--path", cluster)
	assert.Equal(t, exitUsage, code)
	code, _, _ = cli(t, "get", "nothing")
	assert.Equal(t, exitUsage, code)
}

func TestBuild(t *testing.T) {
	// The HelmRelease: values from valuesFrom (replicas 2, image tag),
	// the host patched in by the overlay and substituted from the
	// cluster's ConfigMap, the PDB's apiVersion from the served APIs.
	hr := ok(t, "build", "hr", "podinfo", "-n", "podinfo", "--path", cluster)
	for _, want := range []string{
		"---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: podinfo\n",
		"  replicas: 2\n",
		"        image: ghcr.io/stefanprodan/podinfo:6.5.0\n",
		"  - host: podinfo.example.com\n",
	} {
		assert.Contains(t, hr, want)
	}
	assert.Equal(t, 3, strings.Count(hr, "---\n"), hr)
	assert.Equal(t, "---\napiVersion: cert.example.com/v1\nkind: ClusterIssuer\nmetadata:\n  name: letsencrypt\nspec:\n  email: ops@example.com\n",
		ok(t, "build", "ks", "infra-configs", "--path", cluster), "substituteFrom the cluster's ConfigMap")

	all := ok(t, "build", "all", cluster, "--enable-helm")
	assert.Contains(t, all, "kind: GitRepository\n")
	assert.Contains(t, all, "kind: PodDisruptionBudget\n")
	assert.NotContains(t, all, "kind: CustomResourceDefinition\n", "--skip-crds is the default")
	assert.Contains(t, ok(t, "build", "all", cluster, "--enable-helm", "--no-skip-crds"), "name: clusterissuers.cert.example.com\n", "the chart's crds/")
	assert.NotContains(t, ok(t, "build", "all", cluster), "kind: PodDisruptionBudget\n", "HelmReleases need --enable-helm")

	assert.Equal(t, "---\napiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata:\n  name: podinfo\nspec:\n  minAvailable: 1\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: podinfo\n",
		ok(t, "build", "hr", "podinfo", "-n", "podinfo", "--path", cluster, "--show-only", "templates/pdb.yaml"))
	skipped := ok(t, "build", "hr", "podinfo", "-n", "podinfo", "--path", cluster, "--skip-kinds", "Deployment,Ingress")
	assert.Equal(t, 1, strings.Count(skipped, "---\n"))

	file := filepath.Join(t.TempDir(), "out.yaml")
	assert.Empty(t, ok(t, "build", "ks", "apps", "--path", cluster, "--output-file", file))
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Contains(t, string(data), "kind: HelmRelease\n")

	// The chart needs Kubernetes 1.21: rendered for 1.20 it fails, and
	// says why.
	code, out, errOut := cli(t, "build", "hr", "podinfo", "-n", "podinfo", "--path", cluster, "--kube-version", "v1.20.0")
	assert.Equal(t, exitError, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "HelmRelease podinfo/podinfo failed:")
	assert.Contains(t, errOut, "kubeVersion")
}

// gitRepo copies the example repository into a new git repository (at
// examples/gitops/repo, where its paths point) with one commit, and
// returns the repository's directory.
func gitRepo(t *testing.T) string {
	t.Helper()
	testenv.LookPath(t, "git")
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(filepath.Join(dir, "examples/gitops/repo"), os.DirFS("repo")))
	git(t, dir, "init", "-q")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "base")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// edit replaces old with new in a file of the repository.
func edit(t *testing.T, dir, file, old, new string) {
	t.Helper()
	p := filepath.Join(dir, "examples/gitops/repo", file)
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Contains(t, string(data), old)
	require.NoError(t, os.WriteFile(p, []byte(strings.Replace(string(data), old, new, 1)), 0o644))
}

// The diff of a change to a value, an image and a chart version, as
// flux-local prints it: against HEAD, a branch, or a directory.
func TestDiff(t *testing.T) {
	dir := gitRepo(t)
	path := filepath.Join(dir, "examples/gitops/repo/clusters/production")
	edit(t, dir, "apps/production/podinfo-values.yaml", "replicaCount: 2", "replicaCount: 3")
	edit(t, dir, "charts/ingress/values.yaml", "controller:v1.9.4", "controller:v1.9.5")
	edit(t, dir, "charts/podinfo/Chart.yaml", "version: 6.5.0", "version: 6.5.1")

	const hrDiff = `--- HelmRelease: ingress-nginx/ingress-nginx Deployment: ingress-nginx/ingress-nginx-controller

+++ HelmRelease: ingress-nginx/ingress-nginx Deployment: ingress-nginx/ingress-nginx-controller

@@ -15,5 +15,5 @@

     spec:
       containers:
       - name: controller
-        image: registry.k8s.io/ingress-nginx/controller:v1.9.4
+        image: registry.k8s.io/ingress-nginx/controller:v1.9.5
 
--- HelmRelease: podinfo/podinfo Deployment: podinfo/podinfo

+++ HelmRelease: podinfo/podinfo Deployment: podinfo/podinfo

@@ -6,9 +6,9 @@

   labels:
     app.kubernetes.io/name: podinfo
     app.kubernetes.io/version: 6.5.0
-    helm.sh/chart: podinfo-6.5.0
+    helm.sh/chart: podinfo-6.5.1
 spec:
-  replicas: 2
+  replicas: 3
   selector:
     matchLabels:
       app.kubernetes.io/name: podinfo
`
	assert.Equal(t, hrDiff, ok(t, "diff", "hr", "-A", "--path", path), "against HEAD")

	const ksDiff = `--- ./examples/gitops/repo/apps/production Kustomization: flux-system/apps ConfigMap: podinfo/podinfo-values

+++ ./examples/gitops/repo/apps/production Kustomization: flux-system/apps ConfigMap: podinfo/podinfo-values

@@ -6,7 +6,7 @@

   namespace: podinfo
 data:
   values.yaml: |
-    replicaCount: 2
+    replicaCount: 3
     image:
       tag: 6.5.0
 
`
	assert.Equal(t, ksDiff, ok(t, "diff", "ks", "apps", "--path", path))
	assert.Empty(t, ok(t, "diff", "ks", "infra-configs", "--path", path), "no change")

	// Committed on a branch: --branch-orig compares with main; the
	// zero-context diff shows only the changed lines.
	git(t, dir, "checkout", "-qb", "change")
	git(t, dir, "commit", "-qam", "change")
	assert.Equal(t, hrDiff, ok(t, "diff", "hr", "-A", "--path", path, "--branch-orig", "main"))
	zero := ok(t, "diff", "hr", "podinfo", "-n", "podinfo", "--path", path, "--branch-orig", "main", "-u", "0")
	assert.Equal(t, `--- HelmRelease: podinfo/podinfo Deployment: podinfo/podinfo

+++ HelmRelease: podinfo/podinfo Deployment: podinfo/podinfo

@@ -9 +9 @@

-    helm.sh/chart: podinfo-6.5.0
+    helm.sh/chart: podinfo-6.5.1
@@ -11 +11 @@

-  replicas: 2
+  replicas: 3
`, zero)
	// --strip-attrs leaves the chart label out: only the replicas change.
	stripped := ok(t, "diff", "hr", "podinfo", "-n", "podinfo", "--path", path, "--branch-orig", "main", "-u", "0", "--strip-attrs", "helm.sh/chart")
	assert.NotContains(t, stripped, "helm.sh/chart")
	assert.Contains(t, stripped, "+  replicas: 3\n")
	limited := ok(t, "diff", "hr", "podinfo", "-n", "podinfo", "--path", path, "--branch-orig", "main", "--limit-bytes", "120")
	assert.True(t, strings.HasSuffix(limited, "[Diff truncated by flux-local]\n"), limited)

	// For bots: the changed objects per HelmRelease.
	var docs []struct {
		Kind, Namespace, Name string
		Diffs                 []struct{ Kind, Namespace, Name, Diff string }
	}
	require.NoError(t, json.Unmarshal([]byte(ok(t, "diff", "hr", "-A", "--path", path, "--branch-orig", "main", "-o", "json")), &docs))
	require.Len(t, docs, 2)
	assert.Equal(t, "ingress-nginx", docs[0].Name)
	assert.Equal(t, "podinfo", docs[1].Name)
	require.Len(t, docs[1].Diffs, 1)
	assert.Equal(t, "Deployment", docs[1].Diffs[0].Kind)
	assert.Contains(t, docs[1].Diffs[0].Diff, "+  replicas: 3")
	assert.True(t, strings.HasPrefix(ok(t, "diff", "hr", "-A", "--path", path, "--branch-orig", "main", "-o", "yaml"), "---\n- kustomization_path: \"\"\n  kind: HelmRelease\n"))

	assert.Equal(t, "HelmRelease: ingress-nginx/ingress-nginx\n- registry.k8s.io/ingress-nginx/controller:v1.9.4\n+ registry.k8s.io/ingress-nginx/controller:v1.9.5\n",
		ok(t, "diff", "images", "--path", path, "--branch-orig", "main"))

	// --path-orig: the other version as a directory.
	orig := filepath.Join(t.TempDir(), "examples/gitops/repo")
	require.NoError(t, os.CopyFS(orig, os.DirFS("repo")))
	assert.Equal(t, hrDiff, ok(t, "diff", "hr", "-A", "--path", path, "--path-orig", filepath.Join(orig, "clusters/production")))

	// A HelmRelease added on the branch diffs against nothing.
	edit(t, dir, "apps/base/podinfo/kustomization.yaml", "- release.yaml\n", "- release.yaml\n- canary.yaml\n")
	canary, err := os.ReadFile(filepath.Join(dir, "examples/gitops/repo/apps/base/podinfo/release.yaml"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "examples/gitops/repo/apps/base/podinfo/canary.yaml"), []byte(strings.Replace(string(canary), "name: podinfo\n", "name: canary\n", 1)), 0o644))
	added := ok(t, "diff", "hr", "canary", "-n", "podinfo", "--path", path)
	assert.True(t, strings.HasPrefix(added, "--- HelmRelease: podinfo/canary PodDisruptionBudget: podinfo/canary\n\n+++ HelmRelease: podinfo/canary PodDisruptionBudget: podinfo/canary\n\n@@ -0,0 +1,11 @@\n\n+---\n+apiVersion: policy/v1\n"), added)

	// Nothing was written into the repository.
	assert.Equal(t, " M examples/gitops/repo/apps/base/podinfo/kustomization.yaml\n?? examples/gitops/repo/apps/base/podinfo/canary.yaml\n", git(t, dir, "status", "--porcelain"))
}

// test builds everything, reports each failure with its node and cause,
// and goes on: exit code 1.
func TestTestCommand(t *testing.T) {
	out := ok(t, "test", "--enable-helm", "-v", "--path", cluster)
	assert.Equal(t, ""+
		"./repo/clusters/production::apps::kustomization PASSED\n"+
		"./repo/clusters/production::flux-system::kustomization PASSED\n"+
		"./repo/clusters/production::infra-configs::kustomization PASSED\n"+
		"./repo/clusters/production::infra-controllers::kustomization PASSED\n"+
		"./repo/clusters/production::infra-controllers::ingress-nginx/ingress-nginx PASSED\n"+
		"./repo/clusters/production::apps::podinfo/podinfo PASSED\n"+
		"6 passed, 0 failed\n", out)

	dir := gitRepo(t)
	path := filepath.Join(dir, "examples/gitops/repo/clusters/production")
	// A broken Kustomization (its path is gone), a chart that fails to
	// render (a value of the wrong type) and a removed API.
	require.NoError(t, os.WriteFile(filepath.Join(path, "broken.yaml"), []byte(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: broken, namespace: flux-system}
spec:
  path: ./examples/gitops/repo/missing
  sourceRef: {kind: GitRepository, name: flux-system}
`), 0o644))
	edit(t, dir, "apps/production/podinfo-values.yaml", "    image:\n      tag: 6.5.0", "    image: broken")
	edit(t, dir, "charts/ingress/templates/deployment.yaml", "apiVersion: apps/v1", "apiVersion: extensions/v1beta1")
	code, out, _ := cli(t, "test", "--enable-helm", "--validate", "--path", path)
	assert.Equal(t, exitError, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	assert.True(t, strings.HasPrefix(lines[0], "FAILED "+path+"::apps::podinfo/podinfo - helm template: "), lines[0])
	assert.Contains(t, lines[0], "at <.Values.image.tag>: can't evaluate field tag")
	assert.Equal(t, "FAILED "+path+"::broken::kustomization - gitops: not found: directory "+filepath.Join(dir, "examples/gitops/repo/missing"), lines[1])
	assert.Equal(t, "FAILED "+path+"::infra-controllers::ingress-nginx/ingress-nginx - Deployment ingress-nginx-controller: extensions/v1beta1 is not served", lines[2])
	assert.Equal(t, "4 passed, 3 failed", lines[3])
}
