package gitops_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/fleetkit/fleetkit/deprecation/gitops"
)

// genRepo writes a Flux repository of nks Kustomizations, each with five
// manifests and a dependency on the one before it in its group of ten (so
// the graph has chains and parallel branches), and nhr HelmReleases of one
// local chart spread over them.
func genRepo(tb testing.TB, nks, nhr int) string {
	tb.Helper()
	root := tb.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	write("charts/web/Chart.yaml", "apiVersion: v2\nname: web\nversion: 0.1.0\n")
	write("charts/web/values.yaml", "image: nginx:1.25\nreplicas: 2\n")
	write("charts/web/templates/deploy.yaml", `apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec: {containers: [{name: web, image: {{ .Values.image | quote }}}]}
---
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata: {name: {{ .Release.Name }}}
spec: {minAvailable: 1}
`)
	for i := range nks {
		dep := ""
		if i%10 != 0 {
			dep = fmt.Sprintf("  dependsOn:\n  - name: ks-%03d\n", i-1)
		}
		write(fmt.Sprintf("clusters/prod/ks-%03d.yaml", i), fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ks-%03d, namespace: flux-system}
spec:
  path: ./apps/app-%03d
  sourceRef: {kind: GitRepository, name: flux-system}
%s  postBuild:
    substitute: {team: team-%d}
`, i, i, dep, i%7))
		for j := range 5 {
			write(fmt.Sprintf("apps/app-%03d/obj-%d.yaml", i, j), fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata: {name: app-%03d-%d, namespace: "${team}"}
spec:
  selector: {matchLabels: {app: a%d}}
  template:
    metadata: {labels: {app: a%d}}
    spec: {containers: [{name: c, image: "registry.example/app-%03d:%d"}]}
`, i, j, j, j, i, j))
		}
	}
	for k := range nhr {
		write(fmt.Sprintf("apps/app-%03d/hr-%03d.yaml", k%nks, k), fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web-%03d, namespace: web}
spec:
  chart:
    spec:
      chart: ./charts/web
      sourceRef: {kind: GitRepository, name: flux-system, namespace: flux-system}
  values: {replicas: %d}
`, k, 1+k%3))
	}
	return filepath.Join(root)
}

// buildOK builds opts, which must build every node (want of them, unless
// want is 0), and returns the number of nodes.
func buildOK(tb testing.TB, opts gitops.Options, want int) int {
	tb.Helper()
	res, err := gitops.Build(context.Background(), opts)
	if err != nil {
		tb.Fatal(err)
	}
	for _, n := range res.Nodes {
		if n.Status != gitops.StatusOK {
			tb.Fatalf("%s: %s %s", n.ID, n.Status, n.Error)
		}
	}
	if want > 0 && len(res.Nodes) != want {
		tb.Fatalf("built %d nodes, want %d", len(res.Nodes), want)
	}
	return len(res.Nodes)
}

// BenchmarkBuild builds a generated repository of 200 Kustomizations and
// 100 HelmReleases: the whole repository with parallelism 1 and with the
// default, and one target's needs alone.
func BenchmarkBuild(b *testing.B) {
	repo := genRepo(b, 200, 100)
	check := func(b *testing.B, opts gitops.Options, wantNodes int) {
		b.ReportMetric(float64(buildOK(b, opts, wantNodes)), "nodes")
	}
	b.Run("whole/parallelism=1", func(b *testing.B) {
		for b.Loop() {
			check(b, gitops.Options{Path: repo, Parallelism: 1}, 300)
		}
	})
	b.Run(fmt.Sprintf("whole/parallelism=%d", runtime.GOMAXPROCS(0)), func(b *testing.B) {
		for b.Loop() {
			check(b, gitops.Options{Path: repo}, 300)
		}
	})
	// ks-009 is the end of a chain of ten; with its HelmReleases.
	b.Run("only=ks-009", func(b *testing.B) {
		for b.Loop() {
			check(b, gitops.Options{Path: repo, Only: "flux-system/ks-009"}, 0)
		}
	})
}

// TestBuildGeneratedParallel builds a generated repository, with Flux's
// kustomize settings on some Kustomizations, one node at a time and many
// at once: the results must not differ. Under -race it is the check that
// kustomize builds may run concurrently.
func TestBuildGeneratedParallel(t *testing.T) {
	repo := genRepo(t, 40, 20)
	for i := range 10 {
		p := filepath.Join(repo, fmt.Sprintf("clusters/prod/styled-%d.yaml", i))
		body := fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: styled-%d, namespace: flux-system}
spec:
  path: ./apps/app-%03d
  sourceRef: {kind: GitRepository, name: flux-system}
  targetNamespace: styled
  namePrefix: s%d-
  images: [{name: "registry.example/app-%03d", newTag: styled}]
  patches:
  - target: {kind: Deployment}
    patch: |
      - op: add
        path: /spec/replicas
        value: 4
  postBuild:
    substitute: {team: styled}
`, i, i, i, i)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	summary := func(par int) []string {
		res, err := gitops.Build(context.Background(), gitops.Options{Path: repo, Parallelism: par})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range res.Nodes {
			line := fmt.Sprintf("%s %s %v %d", n.ID, n.Status, n.Images, len(n.Findings))
			for _, o := range n.Objects {
				line += " " + o.Namespace + "/" + o.Name
			}
			out = append(out, line)
		}
		return out
	}
	one := summary(1)
	if len(one) != 80 { // 50 Kustomizations, 20 HelmReleases and the 10 the styled ones render
		t.Fatalf("%d nodes, want 80", len(one))
	}
	if want := "flux-system/styled-3 ok [registry.example/app-003:styled] 0 styled/s3-web-003 styled/s3-app-003-0"; !strings.HasPrefix(one[slices.IndexFunc(one, func(s string) bool { return strings.HasPrefix(s, "flux-system/styled-3 ") })], want) {
		t.Errorf("styled-3 built wrong: %v", one)
	}
	for range 3 {
		if many := summary(8); !slices.Equal(one, many) {
			t.Fatalf("parallel build differs:\n%v\n%v", one, many)
		}
	}
}

// Building one Kustomization touches its dependency closure only: the
// kustomize builds and chart renders are counted.
func TestBuildOnlyClosure(t *testing.T) {
	repo := genRepo(t, 40, 20)
	for _, tt := range []struct {
		only            string
		builds, renders int
	}{
		{"ks-009", 10, 1},             // ks-000…ks-009 (a chain), and hr-009 that ks-009 holds
		{"ks-010", 1, 1},              // the head of a chain: itself, and hr-010
		{"ks-035", 6, 0},              // ks-030…ks-035; HelmReleases only go to app-000…app-019
		{"HelmRelease/web-012", 3, 1}, // ks-010…ks-012, which holds it
	} {
		t.Run(tt.only, func(t *testing.T) {
			res, err := gitops.Build(context.Background(), gitops.Options{Path: repo, Only: tt.only, SkipChecks: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range res.Nodes {
				if n.Status != gitops.StatusOK {
					t.Errorf("%s: %s %s", n.ID, n.Status, n.Error)
				}
			}
			if res.Stats.Kustomizations != tt.builds || res.Stats.HelmReleases != tt.renders {
				t.Errorf("built %d Kustomizations and rendered %d HelmReleases, want %d and %d", res.Stats.Kustomizations, res.Stats.HelmReleases, tt.builds, tt.renders)
			}
			if len(res.Nodes) != tt.builds+tt.renders {
				t.Errorf("%d nodes, want %d", len(res.Nodes), tt.builds+tt.renders)
			}
		})
	}
}
