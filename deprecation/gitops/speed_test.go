package gitops_test

import (
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fleetkit/fleetkit/deprecation/gitops"
	"github.com/fleetkit/fleetkit/internal/gcpolicy"
)

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakHeap runs fn while sampling the live heap every millisecond and
// returns fn's wall time and the largest heap seen.
func peakHeap(fn func()) (time.Duration, uint64) {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var (
		peak uint64
		wg   sync.WaitGroup
	)
	done := make(chan struct{})
	wg.Go(func() {
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	start := time.Now()
	fn()
	d := time.Since(start)
	close(done)
	wg.Wait()
	return d, peak
}

// pairs builds opts with parallelism 1 and with the default, alternately
// (so both see the same load on a shared machine), and reports the wall
// time and peak heap of each and the speedup: serial time over parallel
// time, summed over the pairs.
func pairs(b *testing.B, opts gitops.Options, wantOK int) {
	b.Helper()
	build := func(par int) (time.Duration, uint64) {
		o := opts
		o.Parallelism = par
		runtime.GC() // each build starts from a clean heap, as a new process does
		return peakHeap(func() { buildOK(b, o, wantOK) })
	}
	var (
		serial, parallel         time.Duration
		serialCPU, parallelCPU   time.Duration
		serialPeak, parallelPeak uint64
		n                        int
	)
	for b.Loop() {
		c := cpuTime()
		d, p := build(1)
		serialCPU += cpuTime() - c
		serial += d
		serialPeak = max(serialPeak, p)
		c = cpuTime()
		d, p = build(0)
		parallelCPU += cpuTime() - c
		parallel += d
		parallelPeak = max(parallelPeak, p)
		n++
	}
	// CPU time is the work done, which other processes on a shared
	// machine change less than the wall time.
	b.ReportMetric(float64(serialCPU.Milliseconds())/float64(n), "serial-cpu-ms")
	b.ReportMetric(float64(parallelCPU.Milliseconds())/float64(n), "parallel-cpu-ms")
	b.ReportMetric(float64(serial.Milliseconds())/float64(n), "serial-ms")
	b.ReportMetric(float64(parallel.Milliseconds())/float64(n), "parallel-ms")
	b.ReportMetric(float64(serial)/float64(parallel), "speedup")
	b.ReportMetric(float64(serialPeak)/(1<<20), "serial-peak-MiB")
	b.ReportMetric(float64(parallelPeak)/(1<<20), "parallel-peak-MiB")
}

// BenchmarkSpeedup builds the generated repository of 200
// Kustomizations and 100 HelmReleases serially and in parallel, in pairs.
func BenchmarkSpeedup(b *testing.B) {
	repo := genRepo(b, 200, 100)
	gcPolicies(b, func(b *testing.B) { pairs(b, gitops.Options{Path: repo}, 300) })
}

// gcPolicies runs f under Go's default collector and under the batch
// policy examples/gitops sets (gcpolicy.Batch; a no-op when GOGC or
// GOMEMLIMIT is set).
func gcPolicies(b *testing.B, f func(*testing.B)) {
	b.Run("gc=default", f)
	b.Run("gc=batch", func(b *testing.B) {
		defer gcpolicy.Batch()()
		f(b)
	})
}

// genHomeOps writes a repository laid out like public home-ops
// repositories: a flux-system Kustomization renders the repository
// sources and the cluster-apps Kustomization, whose build renders one
// Flux Kustomization per app (88, in 8 namespaces, with ~50 dependsOn
// edges between them, a targetNamespace and postBuild variables from a
// ConfigMap); 80 of the apps hold a HelmRelease of one of four shared
// charts from a chart repository (some with dependsOn on another
// release), with values and valuesFrom.
func genHomeOps(tb testing.TB) (dir string, releases int) {
	tb.Helper()
	pkgs := tb.TempDir()
	for _, c := range [][2]string{{"app-template", "3.0.0"}, {"app-template", "3.1.0"}, {"redis", "19.0.0"}, {"postgres", "15.2.0"}} {
		packageChart(tb, pkgs, c[0], c[1])
	}
	repoURL, _ := chartRepo(tb, pkgs)
	dir = tb.TempDir()
	files := map[string]string{
		"kubernetes/flux/ks.yaml": `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: flux-system, namespace: flux-system}
spec:
  path: ./kubernetes/flux
  sourceRef: {kind: GitRepository, name: flux-system}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: cluster-apps, namespace: flux-system}
spec:
  path: ./kubernetes/apps
  sourceRef: {kind: GitRepository, name: flux-system}
  postBuild:
    substituteFrom: [{kind: ConfigMap, name: cluster-settings}]
`,
		"kubernetes/flux/settings.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cluster-settings, namespace: flux-system}\ndata: {DOMAIN: home.example.com, TZ: Europe/Paris}\n",
		"kubernetes/flux/repos.yaml":    fmt.Sprintf("apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {name: charts, namespace: flux-system}\nspec: {url: %q}\n", repoURL),
	}
	var nsDirs []string
	charts := [][2]string{{"app-template", "3.1.0"}, {"app-template", "3.0.0"}, {"redis", "19.0.0"}, {"postgres", "15.2.0"}}
	for i := range 88 {
		ns := fmt.Sprintf("ns-%d", i%8)
		app := fmt.Sprintf("app-%02d", i)
		base := "kubernetes/apps/" + ns
		if i < 8 {
			nsDirs = append(nsDirs, ns)
			files[base+"/namespace.yaml"] = fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns)
		}
		deps := ""
		if i >= 8 && i%8 < 6 { // 48 edges
			deps = fmt.Sprintf("  dependsOn: [{name: app-%02d}]\n", i-8)
		}
		files[base+"/"+app+"/ks.yaml"] = fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: %[1]s, namespace: flux-system}
spec:
  path: ./kubernetes/apps/%[2]s/%[1]s/app
  targetNamespace: %[2]s
  sourceRef: {kind: GitRepository, name: flux-system}
%[3]s  postBuild:
    substitute: {APP: %[1]s}
    substituteFrom: [{kind: ConfigMap, name: cluster-settings}]
`, app, ns, deps)
		resources := []string{"configmap.yaml"}
		files[base+"/"+app+"/app/configmap.yaml"] = fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: %s-values}\ndata:\n  values.yaml: |\n    replicas: %d\n", app, 1+i%3)
		if i < 80 {
			releases++
			c := charts[i%4]
			hrDeps := ""
			if i%8 == 7 {
				hrDeps = fmt.Sprintf("  dependsOn: [{name: app-%02d, namespace: %s}]\n", i-1, fmt.Sprintf("ns-%d", (i-1)%8))
			}
			files[base+"/"+app+"/app/helmrelease.yaml"] = fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: %[1]s}
spec:
  chart:
    spec:
      chart: %[2]s
      version: %[3]s
      sourceRef: {kind: HelmRepository, name: charts, namespace: flux-system}
%[4]s  valuesFrom: [{kind: ConfigMap, name: %[1]s-values}]
  values:
    ingress: {host: "${APP}.${DOMAIN}"}
`, app, c[0], c[1], hrDeps)
			resources = append(resources, "helmrelease.yaml")
		}
		files[base+"/"+app+"/app/kustomization.yaml"] = "resources: [" + strings.Join(resources, ", ") + "]\n"
	}
	for _, ns := range nsDirs {
		var res []string
		res = append(res, "namespace.yaml")
		for i := range 88 {
			if fmt.Sprintf("ns-%d", i%8) == ns {
				res = append(res, fmt.Sprintf("app-%02d/ks.yaml", i))
			}
		}
		files["kubernetes/apps/"+ns+"/kustomization.yaml"] = "resources: [" + strings.Join(res, ", ") + "]\n"
	}
	files["kubernetes/apps/kustomization.yaml"] = "resources: [" + strings.Join(nsDirs, ", ") + "]\n"
	writeTree(tb, dir, files)
	return dir, releases
}

// BenchmarkHomeOps builds the home-ops-like repository (90
// Kustomizations, 80 HelmReleases of charts fetched from a repository on
// loopback, once per run) serially and in parallel, in pairs.
func BenchmarkHomeOps(b *testing.B) {
	dir, releases := genHomeOps(b)
	gcPolicies(b, func(b *testing.B) {
		pairs(b, gitops.Options{Path: filepath.Join(dir, "kubernetes"), Root: dir, FetchCharts: true}, 90+releases)
	})
}
