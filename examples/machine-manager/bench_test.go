package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleetkit/fleetkit/balancer"
	"github.com/fleetkit/fleetkit/internal/kubetest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

// benchFleet is a manager on one provider with an in-process balancer
// (admin API and /lint/ proxy) on the host, which reaches processes,
// containers and Pod IPs alike.
type benchFleet struct {
	bal     *balancer.Balancer
	lb      string // the balancer's base URL
	manager string // the manager's base URL
}

// startBenchFleet starts the balancer and a manager with -provider
// provider, args and the python versions block versions (YAML, indented
// six spaces), stopped when b ends.
func startBenchFleet(b *testing.B, provider string, args []string, versions string) benchFleet {
	b.Helper()
	bal, lbURL := hostBalancer(b)

	dir := b.TempDir()
	cfg := filepath.Join(dir, "mm.yaml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `
health: {interval: 250ms}
remove_timeout: 30s
state_file: %s
balancer: {address: %q, secret: s3cret}
languages:
  python:
    version: "1.0"
    versions:
%s`, filepath.Join(dir, "state.json"), lbURL, versions), 0o600); err != nil {
		b.Fatal(err)
	}
	args = append([]string{"-provider", provider, "-config", cfg, "-addr", "127.0.0.1:0"}, args...)
	b.Cleanup(func() { // the machines go with the benchmark
		if err := run(context.Background(), append([]string{"teardown"}, args...), benchWriter{b}, nil); err != nil {
			b.Errorf("teardown: %v", err)
		}
	})

	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, benchWriter{b}, func(a string) { ready <- a }) }()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("run: %v", err)
		}
	})
	select {
	case a := <-ready:
		return benchFleet{bal: bal, lb: lbURL, manager: "http://" + a}
	case err := <-done:
		b.Fatalf("run: %v", err)
	case <-time.After(time.Minute):
		b.Fatal("the manager did not start")
	}
	return benchFleet{}
}

type benchWriter struct{ b *testing.B }

// Write keeps the manager's log out of the figures unless the benchmark
// fails.
func (w benchWriter) Write(p []byte) (int, error) {
	if w.b.Failed() {
		w.b.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

// post POSTs body to the manager's path and fails b unless it answers 200.
func (f benchFleet) post(b *testing.B, path, body string) map[string]any {
	b.Helper()
	resp, err := http.Post(f.manager+path, "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	var ans map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("%s: %d %v", path, resp.StatusCode, ans)
	}
	return ans
}

// routed reports whether the balancer holds uri as a python backend that
// passive health has not ejected.
func (f benchFleet) routed(b *testing.B, uri string) bool {
	h, err := f.bal.Health(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range h.Ejected {
		if e.URI == uri {
			return false
		}
	}
	for _, uris := range h.Backends["python"] {
		if slices.Contains(uris, uri) {
			return true
		}
	}
	return false
}

// benchProviders runs fn once per provider, in one benchmark run: process
// (the linter binary), Docker and Kubernetes (fleetkit/linter images on
// the shared test node). The versions blocks have 1.0 and 2.0.
func benchProviders(b *testing.B, fn func(b *testing.B, provider string, args []string, versions string)) {
	b.Run("process", func(b *testing.B) {
		goTool := testenv.LookPath(b, "go")
		bin := filepath.Join(b.TempDir(), "linter")
		if out, err := exec.Command(goTool, "build", "-o", bin, "github.com/fleetkit/fleetkit/examples/linter").CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		fn(b, "process", nil, fmt.Sprintf("      \"1.0\": {command: %q}\n      \"2.0\": {command: %q}\n", bin, bin))
	})
	images := "      \"1.0\": {image: \"fleetkit/linter:1.0\"}\n      \"2.0\": {image: \"fleetkit/linter:2.0\"}\n"
	b.Run("docker", func(b *testing.B) {
		dockerTool := testenv.LookPath(b, "docker")
		for _, v := range []string{"1.0", "2.0"} {
			if err := exec.Command(dockerTool, "image", "inspect", "fleetkit/linter:"+v).Run(); err != nil {
				testenv.Missing(b, "image fleetkit/linter:%s (build it with scripts/build-images.sh)", v)
			}
		}
		fn(b, "docker", []string{"-name", fmt.Sprintf("mm-bench-%d", os.Getpid())}, images)
	})
	b.Run("kubernetes", func(b *testing.B) {
		node := cluster.Get(b)
		if err := node.LoadImages(b.Context(), "fleetkit/linter:1.0", "fleetkit/linter:2.0"); err != nil {
			testenv.Missing(b, "%v (build the images with scripts/build-images.sh)", err)
		}
		ns := kubetest.Namespace(b, node)
		fn(b, "kubernetes", []string{"-kubeconfig", node.Kubeconfig(), "-namespace", ns, "-name", "mm-bench"}, images)
	})
}

// BenchmarkCreateToBalancer measures, in one run and with the same
// harness on each provider, 20 sequential POST /create of a python 1.0
// linter to the machine manager. /create returns once the machine runs
// (on Kubernetes: the Pod is Ready, its readiness probe on /health every
// second passed), answered the manager's health check and is a backend of
// the balancer: its latency is "create → healthy in the balancer". The
// benchmark then checks that the balancer holds it, not ejected. Teardown
// removes the machines (run it with -benchtime 1x: each iteration adds 20).
//
//	go test -run '^$' -bench BenchmarkCreateToBalancer -benchtime 1x ./examples/machine-manager
func BenchmarkCreateToBalancer(b *testing.B) {
	const n = 20
	benchProviders(b, func(b *testing.B, provider string, args []string, versions string) {
		f := startBenchFleet(b, provider, args, versions)
		for b.Loop() {
			took := make([]time.Duration, 0, n)
			for range n {
				start := time.Now()
				ip := f.post(b, "/create", `{"lang":"python"}`)["ip"].(string)
				took = append(took, time.Since(start))
				if !f.routed(b, "http://"+ip) {
					b.Fatalf("/create returned %s, not a healthy backend of the balancer", ip)
				}
			}
			p50, p99 := percentile(took, 50), percentile(took, 99)
			b.ReportMetric(float64(p50.Microseconds())/1000, "healthy_p50_ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, "healthy_p99_ms")
			b.Logf("%s: create → healthy in the balancer, %d sequential /create: p50 %s, p99 %s (min %s)", provider, n,
				p50.Round(time.Millisecond), p99.Round(time.Millisecond), slices.Min(took).Round(time.Millisecond))
		}
	})
}

// BenchmarkUpdateUnderLoad measures a full 5-step update (1, 5, 10, 50,
// 100 %) of 10 python linters 1.0 → 2.0 through the manager's API, each
// /update right after the previous returned, while two clients lint
// through the balancer without pause: the update's duration and the
// failed requests (any answer but 200, or no answer). One iteration only
// (-benchtime 1x): the fleet is on 2.0 afterwards.
//
//	go test -run '^$' -bench BenchmarkUpdateUnderLoad -benchtime 1x ./examples/machine-manager
func BenchmarkUpdateUnderLoad(b *testing.B) {
	const n = 10
	benchProviders(b, func(b *testing.B, provider string, args []string, versions string) {
		f := startBenchFleet(b, provider, args, versions)
		for range n {
			f.post(b, "/create", `{"lang":"python"}`)
		}
		for b.Loop() {
			var total, failed atomic.Int64
			ctx, stop := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			client := &http.Client{Timeout: 10 * time.Second}
			for range 2 {
				wg.Go(func() {
					for ctx.Err() == nil {
						total.Add(1)
						resp, err := client.Post(f.lb+"/lint/python", "application/json", strings.NewReader(`{"code": "import os,sys\n"}`))
						if err != nil {
							failed.Add(1)
							continue
						}
						if resp.StatusCode != http.StatusOK {
							failed.Add(1)
						}
						_ = resp.Body.Close()
					}
				})
			}
			start := time.Now()
			f.post(b, "/init-update", `{"lang":"python","version":"2.0"}`)
			for range 4 { // 5, 10, 50, 100 %
				f.post(b, "/update", `{"lang":"python"}`)
			}
			took := time.Since(start)
			stop()
			wg.Wait()
			b.ReportMetric(took.Seconds(), "update_s")
			b.ReportMetric(float64(total.Load()), "requests")
			b.ReportMetric(float64(failed.Load()), "failed")
			b.Logf("%s: 5-step update of %d machines under load: %s, %d requests, %d failed", provider, n,
				took.Round(time.Millisecond), total.Load(), failed.Load())
			h, err := f.bal.Health(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			if got := len(h.Backends["python"]["2.0"]); got != n || len(h.Backends["python"]) != 1 {
				b.Fatalf("after the update the balancer holds %v, want %d machines of 2.0 only", h.Backends["python"], n)
			}
		}
	})
}

// percentile is the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, max(0, (len(s)*p+99)/100-1))]
}
