package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/fleetkit/fleetkit/machines/docker"
)

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// startManager runs the binary's run until the test ends (or stop is
// called) and returns the API's base URL.
func startManager(t *testing.T, args ...string) (url string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, testWriter{t}, func(a string) { ready <- a }) }()
	var once bool
	stop = func() {
		if once {
			return
		}
		once = true
		cancel()
		require.NoError(t, <-done)
	}
	t.Cleanup(stop)
	select {
	case a := <-ready:
		return "http://" + a, stop
	case err := <-done:
		t.Fatalf("run: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the manager did not start")
	}
	return "", nil
}

func post(t *testing.T, url, body string) map[string]any {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var ans map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ans))
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s: %v", url, ans)
	return ans
}

// backends returns the balancer's python backends: uri → version.
func backends(t *testing.T, b *balancer.Balancer) map[string]string {
	h, err := b.Health(context.Background())
	require.NoError(t, err)
	out := map[string]string{}
	for v, uris := range h.Backends["python"] {
		for _, u := range uris {
			out[u] = v
		}
	}
	return out
}

func TestMain(m *testing.M) {
	// The fault suite runs this test binary as the machine-manager binary.
	if os.Getenv(managerEnv) != "" {
		main()
		os.Exit(0)
	}
	testenv.MainLeakChecked(m)
}

// TestRemoteBalancerAndRestart drives a balancer through its admin API
// (balancer.Client), as the binary does, with process machines; then
// restarts the manager: the machines outlive it (recorded in the machines
// file), the new one adopts them and the balancer keeps them; teardown
// removes them.
func TestRemoteBalancerAndRestart(t *testing.T) {
	testenv.Short(t)
	goTool := testenv.LookPath(t, "go")
	dir := t.TempDir()
	bin := filepath.Join(dir, "linter")
	out, err := exec.Command(goTool, "build", "-o", bin, "github.com/fleetkit/fleetkit/examples/linter").CombinedOutput()
	require.NoError(t, err, "%s", out)

	bal, err := balancer.New(balancer.Options{})
	require.NoError(t, err)
	admin, err := balancer.NewAdmin(bal, balancer.AdminOptions{Secret: "s3cret"})
	require.NoError(t, err)
	lb := httptest.NewServer(admin)
	t.Cleanup(lb.Close)

	cfg := filepath.Join(dir, "mm.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `
health: {interval: 100ms}
state_file: %s
balancer: {address: %q, secret: s3cret}
languages:
  python:
    version: "1.0"
    versions:
      "1.0": {command: %q}
      "2.0": {command: %q}
`, filepath.Join(dir, "state.json"), lb.URL, bin, bin), 0o600))
	args := []string{"-provider", "process", "-config", cfg, "-addr", "127.0.0.1:0"}
	t.Cleanup(func() { // whatever the test leaves
		_ = run(context.Background(), append([]string{"teardown"}, args...), testWriter{t}, nil)
	})

	url, stop := startManager(t, args...)
	a := post(t, url+"/create", `{"lang":"python"}`)["ip"].(string)
	b := post(t, url+"/create", `{"lang":"python"}`)["ip"].(string)
	assert.Equal(t, map[string]string{"http://" + a: "1.0", "http://" + b: "1.0"}, backends(t, bal))
	post(t, url+"/init-update", `{"lang":"python","version":"2.0"}`)
	ratio, _ := bal.Ratio("python")
	assert.Equal(t, map[string]int{"1.0": 99, "2.0": 1}, ratio)
	got := backends(t, bal)
	require.Len(t, got, 2)
	assert.Equal(t, "1.0", got["http://"+b], "the oldest machine was replaced")
	before := got
	stop() // the machines outlive the manager

	for u := range before {
		resp, err := http.Get(u + "/health")
		require.NoError(t, err, "%s still answers after the manager stopped", u)
		_ = resp.Body.Close()
	}
	url, stop = startManager(t, args...)
	var st struct {
		Linters  []map[string]map[string]any `json:"linters"`
		Rollouts map[string]struct {
			Target   string `json:"target"`
			Step     int    `json:"step"`
			Machines int    `json:"machines"`
		} `json:"rollouts"`
	}
	require.Eventually(t, func() bool {
		resp, err := http.Get(url + "/status")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return json.NewDecoder(resp.Body).Decode(&st) == nil && len(st.Linters) == 2
	}, 10*time.Second, 20*time.Millisecond, "the restarted manager adopts both machines")
	for _, l := range st.Linters {
		for ip, s := range l {
			assert.Equal(t, before["http://"+ip], s["version"], ip)
			assert.Equal(t, true, s["is_healthy"], ip)
		}
	}
	assert.Equal(t, before, backends(t, bal), "the balancer kept the same backends")
	assert.Equal(t, "2.0", st.Rollouts["python"].Target)
	assert.Equal(t, 1, st.Rollouts["python"].Step, "the phase survived the restart")
	assert.Equal(t, 2, st.Rollouts["python"].Machines, "and the desired count")
	stop()

	require.NoError(t, run(context.Background(), append([]string{"teardown"}, args...), testWriter{t}, nil))
	assert.Empty(t, backends(t, bal), "teardown removes the backends")
	for u := range before {
		_, err := http.Get(u + "/health")
		assert.Error(t, err, "teardown stops %s", u)
	}
}

// TestDockerRestartRediscovers restarts a manager on Docker: the containers
// outlive it, and the new one finds them by their labels, keeps them in the
// balancer and carries the rollout on from the state file.
func TestDockerRestartRediscovers(t *testing.T) {
	testenv.Short(t)
	dockerTool := testenv.LookPath(t, "docker")
	for _, v := range []string{"1.0", "2.0"} {
		if err := exec.Command(dockerTool, "image", "inspect", "fleetkit/linter:"+v).Run(); err != nil {
			testenv.Missing(t, "image fleetkit/linter:%s (build it with scripts/build-images.sh)", v)
		}
	}
	name := fmt.Sprintf("mm-restart-test-%d", os.Getpid())
	p, err := docker.New(docker.Options{Name: name})
	require.NoError(t, err)
	t.Cleanup(func() { // whatever the test leaves
		left, _ := p.List(context.Background(), nil)
		for _, m := range left {
			_ = p.Remove(context.Background(), m.ID)
		}
		_ = p.Close()
	})
	if _, err := p.List(context.Background(), nil); err != nil {
		testenv.Missing(t, "the Docker Engine: %v", err)
	}

	bal, err := balancer.New(balancer.Options{})
	require.NoError(t, err)
	admin, err := balancer.NewAdmin(bal, balancer.AdminOptions{Secret: "s3cret"})
	require.NoError(t, err)
	lb := httptest.NewServer(admin)
	t.Cleanup(lb.Close)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "mm.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `
health: {interval: 200ms}
state_file: %s
balancer: {address: %q, secret: s3cret}
languages:
  python:
    version: "1.0"
    versions:
      "1.0": {image: "fleetkit/linter:1.0"}
      "2.0": {image: "fleetkit/linter:2.0"}
`, filepath.Join(dir, "state.json"), lb.URL), 0o600))
	args := []string{"-provider", "docker", "-name", name, "-config", cfg, "-addr", "127.0.0.1:0"}

	url, stop := startManager(t, args...)
	post(t, url+"/create", `{"lang":"python"}`)
	post(t, url+"/create", `{"lang":"python"}`)
	post(t, url+"/init-update", `{"lang":"python","version":"2.0"}`)
	before := backends(t, bal)
	require.Len(t, before, 2)
	stop()

	url, stop = startManager(t, args...)
	require.Eventually(t, func() bool {
		resp, err := http.Get(url + "/status")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var st struct {
			Linters []map[string]struct {
				Version   string `json:"version"`
				IsHealthy bool   `json:"is_healthy"`
			} `json:"linters"`
		}
		if json.NewDecoder(resp.Body).Decode(&st) != nil || len(st.Linters) != 2 {
			return false
		}
		for _, l := range st.Linters {
			for ip, s := range l {
				if before["http://"+ip] != s.Version || !s.IsHealthy {
					return false
				}
			}
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "the restarted manager reports the same machines")
	assert.Equal(t, before, backends(t, bal), "the balancer keeps the same backends")
	ratio, _ := bal.Ratio("python")
	assert.Equal(t, map[string]int{"1.0": 99, "2.0": 1}, ratio)

	// Finish the update with the new manager, then clean up through the API.
	for range 4 {
		post(t, url+"/update", `{"lang":"python"}`)
	}
	after := backends(t, bal)
	require.Len(t, after, 2)
	for u, v := range after {
		assert.Equal(t, "2.0", v)
		post(t, url+"/remove", `{"ip":"`+strings.TrimPrefix(u, "http://")+`"}`)
	}
	stop()
	left, err := p.List(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, left)
}
