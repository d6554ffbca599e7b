package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/docker"
	"github.com/fleetkit/fleetkit/rollout"
)

func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }

// linterBin builds examples/linter once per test binary.
var linterBin struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func buildLinterForTest(t *testing.T) string {
	t.Helper()
	testenv.LookPath(t, "go")
	linterBin.once.Do(func() {
		linterBin.dir, linterBin.err = os.MkdirTemp("", "fleetkit-quickstart-test-")
		if linterBin.err != nil {
			return
		}
		linterBin.path, linterBin.err = buildLinter(context.Background(), linterBin.dir, "linter")
	})
	require.NoError(t, linterBin.err)
	return linterBin.path
}

// startFleet runs the quickstart's stack on free ports until the test
// ends, on local processes, or on provider (Docker) with images of prefix.
func startFleet(t *testing.T, machines int, health time.Duration, provider machines.Provider, image string) *stack {
	t.Helper()
	testenv.Short(t)
	var bin string
	if provider == nil {
		bin = buildLinterForTest(t)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan *stack, 1)
	done := make(chan error, 1)
	cfg := stackConfig{
		LBAddr: "127.0.0.1:0", MMAddr: "127.0.0.1:0", Secret: "test-secret",
		Machines: machines, HealthInterval: health, LinterBin: bin,
		Languages: []string{"python", "java"}, Version: "1.0",
		Logger:   slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Provider: provider, Image: image,
	}
	go func() { done <- runStack(ctx, cfg, func(st *stack) { ready <- st }) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
		if provider == nil {
			out, _ := exec.Command("pgrep", "-f", bin).Output()
			assert.Empty(t, strings.TrimSpace(string(out)), "every linter process is gone after shutdown")
			return
		}
		left, err := provider.List(context.Background(), nil)
		require.NoError(t, err)
		assert.Empty(t, left, "every container is gone after shutdown")
	})
	select {
	case st := <-ready:
		return st
	case err := <-done:
		t.Fatalf("the fleet did not start: %v", err)
	case <-time.After(120 * time.Second):
		t.Fatal("the fleet did not start within 120s")
	}
	return nil
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

// post sends a JSON body and decodes the JSON answer.
func post(t *testing.T, url, body string) (int, map[string]any) {
	t.Helper()
	resp, err := httpClient.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var ans map[string]any
	_ = json.Unmarshal(raw, &ans)
	return resp.StatusCode, ans
}

// mm calls the machine manager and requires 200.
func mm(t *testing.T, st *stack, path, body string) {
	t.Helper()
	code, ans := post(t, st.MMURL+path, body)
	require.Equal(t, http.StatusOK, code, "%s %s: %v", path, body, ans)
	require.Equal(t, "ok", ans["status"])
}

type linterStatus struct {
	Version      string `json:"version"`
	Lang         string `json:"lang"`
	RequestCount int64  `json:"request_count"`
	IsHealthy    bool   `json:"is_healthy"`
}

// status returns GET /status of the machine manager: ip → linter.
func status(t *testing.T, st *stack) map[string]linterStatus {
	t.Helper()
	resp, err := httpClient.Get(st.MMURL + "/status")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var ans struct {
		Linters []map[string]linterStatus `json:"linters"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ans))
	out := map[string]linterStatus{}
	for _, l := range ans.Linters {
		maps.Copy(out, l)
	}
	return out
}

// live returns the healthy machines of lang: ip → version.
func live(t *testing.T, st *stack, lang string) map[string]string {
	out := map[string]string{}
	for ip, l := range status(t, st) {
		if l.Lang == lang && l.IsHealthy {
			out[ip] = l.Version
		}
	}
	return out
}

// requestCount reads a machine's own /health.
func requestCount(t *testing.T, ip string) int64 {
	t.Helper()
	resp, err := httpClient.Get("http://" + ip + "/health")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var h struct {
		RequestCount int64 `json:"requestCount"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	return h.RequestCount
}

// lintN sends n lints of code through the balancer and returns the status
// codes seen.
func lintN(t *testing.T, st *stack, lang, code string, n int) map[int]int {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"code": code})
	codes := map[int]int{}
	for range n {
		resp, err := httpClient.Post(st.LBURL+"/lint/"+lang, "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		codes[resp.StatusCode]++
	}
	return codes
}

// routed returns the balancer's backends of lang: uri → version.
func routed(t *testing.T, st *stack, lang string) map[string]string {
	h, err := st.Balancer.Health(context.Background())
	require.NoError(t, err)
	out := map[string]string{}
	for v, uris := range h.Backends[lang] {
		for _, u := range uris {
			out[u] = v
		}
	}
	return out
}

// checkStage asserts the machine split of lang, that the balancer holds
// exactly the live machines with the expected ratio, and that 100 lints
// through the balancer land exactly as the ratio says.
func checkStage(t *testing.T, st *stack, lang, stage string, wantSplit map[string]int, wantRatio map[string]int) {
	t.Helper()
	machines := live(t, st, lang)
	split := map[string]int{}
	for _, v := range machines {
		split[v]++
	}
	require.Equal(t, wantSplit, split, "%s: machine split", stage)
	wantRouted := map[string]string{}
	for ip, v := range machines {
		wantRouted["http://"+ip] = v
	}
	require.Equal(t, wantRouted, routed(t, st, lang), "%s: the balancer holds exactly the live machines", stage)
	ratio, _ := st.Balancer.Ratio(lang)
	require.Equal(t, wantRatio, ratio, "%s: traffic ratio", stage)

	before := map[string]int64{}
	for ip := range machines {
		before[ip] = requestCount(t, ip)
	}
	codes := lintN(t, st, lang, "print('hello world')\n", 100)
	require.Equal(t, map[int]int{200: 100}, codes, "%s: every lint succeeds", stage)
	for ip, v := range machines {
		require.Zero(t, wantRatio[v]%split[v], "%s: the test expects an even split within a version", stage)
		want := int64(wantRatio[v] / split[v])
		assert.Equal(t, want, requestCount(t, ip)-before[ip], "%s: requests on %s (%s)", stage, ip, v)
	}
}

// TestEndToEndRollout walks a real fleet (process machines, the real
// balancer in-process, the machine manager's HTTP API) through an update
// 1.0 → 2.0, every step forward and back, then breaks a 1.2 machine.
func TestEndToEndRollout(t *testing.T) {
	walkRollout(t, startFleet(t, 2, 100*time.Millisecond, nil, ""))
}

// TestEndToEndRolloutDocker is the same walk on Docker containers of the
// fleetkit/linter images (scripts/build-images.sh).
func TestEndToEndRolloutDocker(t *testing.T) {
	walkRollout(t, startFleet(t, 2, 250*time.Millisecond, dockerProvider(t), "fleetkit/linter"))
}

func walkRollout(t *testing.T, st *stack) {
	steps := rollout.DefaultSteps()
	split := func(p int, old, new string) map[string]int {
		o, n := rollout.MachineSplit(2, p)
		out := map[string]int{}
		if o > 0 {
			out[old] += o
		}
		if n > 0 {
			out[new] += n
		}
		return out
	}

	checkStage(t, st, "python", "start", map[string]int{"1.0": 2}, map[string]int{"1.0": 100})
	checkStage(t, st, "java", "start", map[string]int{"1.0": 2}, map[string]int{"1.0": 100})

	start := time.Now()
	mm(t, st, "/init-update", `{"lang":"python","version":"2.0"}`)
	for i, p := range steps {
		if i > 0 {
			mm(t, st, "/update", `{"lang":"python"}`)
		}
		checkStage(t, st, "python", fmt.Sprintf("forward %d%%", p), split(p, "1.0", "2.0"), rollout.Ratio("1.0", "2.0", p, 100))
	}
	t.Logf("full update of 2 machines through %d steps, with 100 lints per step: %s", len(steps), time.Since(start).Round(time.Millisecond))
	code, ans := post(t, st.MMURL+"/update", `{"lang":"python"}`)
	require.Equal(t, http.StatusBadRequest, code, "past the last step: %v", ans)
	require.Equal(t, "error", ans["status"])

	for i := len(steps) - 2; i >= 0; i-- {
		mm(t, st, "/rollback", `{"lang":"python"}`)
		p := steps[i]
		checkStage(t, st, "python", fmt.Sprintf("back to %d%%", p), split(p, "1.0", "2.0"), rollout.Ratio("1.0", "2.0", p, 100))
	}
	mm(t, st, "/rollback", `{"lang":"python"}`) // from the first step: cancel
	checkStage(t, st, "python", "rolled back to 1.0", map[string]int{"1.0": 2}, map[string]int{"1.0": 100})
	checkStage(t, st, "java", "java untouched", map[string]int{"1.0": 2}, map[string]int{"1.0": 100})

	// Version 1.2 crashes on empty code: roll it out to every python machine.
	mm(t, st, "/init-update", `{"lang":"python","version":"1.2"}`)
	for range steps[1:] {
		mm(t, st, "/update", `{"lang":"python"}`)
	}
	checkStage(t, st, "python", "all on 1.2", map[string]int{"1.2": 2}, map[string]int{"1.2": 100})
	machines := slices.Sorted(maps.Keys(live(t, st, "python")))
	require.Len(t, machines, 2)

	codes := lintN(t, st, "python", "", 1) // breaks the machine that gets it
	require.NotContains(t, codes, http.StatusOK, "the crashing lint is not a 200: %v", codes)
	var broken, healthy string
	require.Eventually(t, func() bool {
		for ip, l := range status(t, st) {
			if l.Lang == "python" && !l.IsHealthy {
				broken = ip
			}
		}
		return broken != ""
	}, 15*time.Second, 20*time.Millisecond, "no machine was reported unhealthy")
	healthy = machines[0]
	if healthy == broken {
		healthy = machines[1]
	}
	s := status(t, st)
	require.Contains(t, s, broken, "the unhealthy machine stays in /status")
	assert.False(t, s[broken].IsHealthy)
	assert.True(t, s[healthy].IsHealthy)
	require.Eventually(t, func() bool {
		_, in := routed(t, st, "python")["http://"+broken]
		return !in
	}, 10*time.Second, 10*time.Millisecond, "the unhealthy machine leaves the balancer")
	require.Equal(t, map[string]string{"http://" + healthy: "1.2"}, routed(t, st, "python"))

	before := requestCount(t, healthy)
	codes = lintN(t, st, "python", "print('hello world')\n", 100)
	require.Equal(t, map[int]int{200: 100}, codes, "every request succeeds on the healthy machine")
	assert.Equal(t, int64(100), requestCount(t, healthy)-before)
	require.Eventually(t, func() bool { return status(t, st)[healthy].RequestCount >= before+100 }, 5*time.Second, 20*time.Millisecond,
		"/status reports the request count from the health checks")
}

// TestFullUpdateUnderLoad updates 10 machines through every step while a
// load generator lints through the balancer the whole time, and requires
// that no request fails. It logs the wall time of the update.
func TestFullUpdateUnderLoad(t *testing.T) {
	updateUnderLoad(t, startFleet(t, 0, time.Second, nil, ""), "process")
}

// TestFullUpdateUnderLoadDocker is the same on Docker containers.
func TestFullUpdateUnderLoadDocker(t *testing.T) {
	updateUnderLoad(t, startFleet(t, 0, time.Second, dockerProvider(t), "fleetkit/linter"), "docker")
}

// dockerProvider returns a Docker provider of its own name, or skips when
// the engine or the fleetkit/linter images are missing.
func dockerProvider(t *testing.T) machines.Provider {
	t.Helper()
	testenv.Short(t)
	dockerTool := testenv.LookPath(t, "docker")
	for _, v := range versions {
		if err := exec.Command(dockerTool, "image", "inspect", "fleetkit/linter:"+v).Run(); err != nil {
			testenv.Missing(t, "image fleetkit/linter:%s (build it with scripts/build-images.sh)", v)
		}
	}
	p, err := docker.New(docker.Options{Name: fmt.Sprintf("quickstart-e2e-%d", os.Getpid()), StopTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	// The first call also makes the client negotiate its API version before
	// concurrent use.
	if _, err := p.List(context.Background(), nil); err != nil {
		testenv.Missing(t, "the Docker Engine: %v", err)
	}
	return p
}

func updateUnderLoad(t *testing.T, st *stack, provider string) {
	const n = 10
	var createTimes []time.Duration
	for range n {
		start := time.Now()
		mm(t, st, "/create", `{"lang":"python"}`)
		createTimes = append(createTimes, time.Since(start))
	}
	sort.Slice(createTimes, func(i, j int) bool { return createTimes[i] < createTimes[j] })
	t.Logf("create → healthy (POST /create, %s provider), %d machines: median %s, max %s",
		provider, n, createTimes[n/2].Round(time.Millisecond), createTimes[n-1].Round(time.Millisecond))

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	body, _ := json.Marshal(map[string]string{"code": "x = 1\n"})
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				resp, err := httpClient.Post(st.LBURL+"/lint/python", "application/json", bytes.NewReader(body))
				code := 0
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					code = resp.StatusCode
				}
				mu.Lock()
				codes[code]++
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	mm(t, st, "/init-update", `{"lang":"python","version":"2.0"}`)
	for range rollout.DefaultSteps()[1:] {
		mm(t, st, "/update", `{"lang":"python"}`)
	}
	took := time.Since(start)
	stop()
	wg.Wait()
	t.Logf("full 5-step update of %d machines (%s) under load: %s; requests: %v", n, provider, took.Round(time.Millisecond), codes)
	versions := map[string]int{}
	for _, v := range live(t, st, "python") {
		versions[v]++
	}
	assert.Equal(t, map[string]int{"2.0": n}, versions)
	assert.Equal(t, []int{200}, slices.Collect(maps.Keys(codes)), "no request failed: %v", codes)
	assert.Greater(t, codes[200], 100)
}
