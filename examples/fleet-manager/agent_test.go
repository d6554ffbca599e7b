package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/internal/pgtest"
)

// testAgent is a data-plane agent speaking the wire contract of
// helpers' AGENT-CONTRACT.md over real HTTP, without Kubernetes: it
// reports whatever the test tells it runs.
type testAgent struct {
	base, cluster, token string
	etag                 string
}

func (a *testAgent) url(suffix string) string {
	return a.base + "/api/dinosaurs_mgmt/v1/agent-clusters/" + a.cluster + suffix
}

// call does one request with the agent's token and returns the status,
// the headers and the body.
func (a *testAgent) call(ctx context.Context, method, suffix string, body any, header ...string) (int, http.Header, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.url(suffix), r)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+a.token)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw, err
}

func (a *testAgent) heartbeat(ctx context.Context) error {
	status, _, raw, err := a.call(ctx, http.MethodPut, "/status", map[string]any{"phase": "ready", "capacity": map[string]int{"units": 0}, "agent_version": "test"})
	if err == nil && status != http.StatusNoContent {
		err = fmt.Errorf("heartbeat: %d %s", status, raw)
	}
	return err
}

func (a *testAgent) report(t *testing.T, r map[string]any) {
	t.Helper()
	status, _, raw, err := a.call(t.Context(), http.MethodPut, "/dinosaurs/status", r)
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, status, "%s", raw)
}

// waitDesired long-polls the desired instances until they are want.
func (a *testAgent) waitDesired(t *testing.T, want []string, timeout time.Duration) {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); {
		status, h, raw, err := a.call(t.Context(), http.MethodGet, "/dinosaurs?wait=5s", nil, "If-None-Match", a.etag)
		require.NoError(t, err)
		if status == http.StatusNotModified {
			continue
		}
		require.Equal(t, http.StatusOK, status, "%s", raw)
		a.etag = h.Get("ETag")
		var list struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		require.NoError(t, json.Unmarshal(raw, &list))
		got = []string{}
		for _, i := range list.Items {
			got = append(got, i.ID)
		}
		if slices.Equal(got, want) {
			return
		}
	}
	t.Fatalf("desired instances %v, want %v", got, want)
}

// TestAgentDataPlane runs the manager with the agent data plane and an
// agent speaking the wire contract over HTTP: the cluster becomes ready at
// the agent's heartbeat, a created instance is desired on it and ready at
// the host the agent reports, and a deleted one is gone once the agent no
// longer reports it. On SQLite in memory and on PostgreSQL.
func TestAgentDataPlane(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testAgentDataPlane(t, "sqlite://:memory:") })
	t.Run("postgres", func(t *testing.T) { testAgentDataPlane(t, pgtest.FreshDB(t)) })
}

func testAgentDataPlane(t *testing.T, db string) {
	t.Setenv("FLEETKIT_CACHE", t.TempDir())
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent-secret"), []byte("agent-token-key-0123456789abcdef\n"), 0o600))
	cfg := filepath.Join(dir, "fleet.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`
clusters:
  - {id: c1, cloud_provider: aws, region: us-east-1, multi_az: true}
  - {id: c2, cloud_provider: aws, region: us-east-1, multi_az: true}
interval: 500ms
agent:
  token_secret_file: agent-secret
  stale_after: 30s
`), 0o600))
	fm := start(t, "-database-url", db, "-config", cfg, "-data-plane", "agent")

	tokenOf := func(cluster string) string {
		var out bytes.Buffer
		require.NoError(t, run(t.Context(), []string{"cluster-token", "-config", cfg, "-kind", "dinosaur", "-cluster", cluster}, &out))
		return strings.TrimSpace(out.String())
	}
	a := &testAgent{base: fm.BaseURL, cluster: "c1", token: tokenOf("c1")}

	// c2's token cannot read c1; no token is 401.
	other := &testAgent{base: fm.BaseURL, cluster: "c1", token: tokenOf("c2")}
	status, _, raw, err := other.call(t.Context(), http.MethodGet, "/dinosaurs", nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, status, "%s", raw)
	assert.Contains(t, string(raw), `"code":"DINOSAURS-MGMT-11"`)
	status, _, _, err = (&testAgent{base: fm.BaseURL, cluster: "c1"}).call(t.Context(), http.MethodGet, "", nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusUnauthorized, status)

	// The agent's heartbeat, every second until the test ends.
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	// The manager creates its clusters as its workers start, a moment
	// after it serves: until then the agent's calls are 404, and a real
	// agent retries.
	require.Eventually(t, func() bool { return a.heartbeat(ctx) == nil }, 30*time.Second, 50*time.Millisecond, "the first heartbeat is taken")
	wg.Go(func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				_ = a.heartbeat(ctx) // a missed beat is retried at the next tick
			}
		}
	})
	status, _, raw, err = a.call(t.Context(), http.MethodGet, "", nil)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status, "%s", raw)
	assert.Contains(t, string(raw), `"id":"c1"`)
	// The manager's /metrics shows the agent's heartbeat and the refused calls.
	resp, err := http.Get(fm.BaseURL + "/metrics")
	require.NoError(t, err)
	metrics, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	assert.Contains(t, string(metrics), `fleetkit_fleet_agent_heartbeat_timestamp_seconds{cluster="c1",kind="dinosaur"}`)
	assert.Contains(t, string(metrics), `fleetkit_fleet_agent_api_requests_total{code="403",endpoint="instances",kind="dinosaur"} 1`)

	created := time.Now()
	r := fm.Do(t, alice, http.MethodPost, "dinosaurs?async=true", map[string]any{"name": "rex"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	id := r.Str("id")
	a.waitDesired(t, []string{id}, 30*time.Second)
	desiredIn := time.Since(created)
	a.report(t, map[string]any{id: map[string]string{"phase": "installing"}})
	host := "dinosaur-" + id + ".fleet.svc:8080"
	a.report(t, map[string]any{id: map[string]string{"phase": "ready", "host": host}})
	reported := time.Now()
	got := fm.WaitStatus(t, alice, id, "ready", 30*time.Second)
	readyIn := time.Since(reported)
	assert.Equal(t, host, got.Str("host"))
	assert.Equal(t, "c1", got.Str("cluster_id"))
	// The instance runs where the manager cannot reach it: its metrics
	// are unavailable, with the original's error body.
	r = fm.Do(t, alice, http.MethodGet, "dinosaurs/"+id+"/metrics/query", nil)
	assert.Equal(t, http.StatusServiceUnavailable, r.Status, "%s", r.Raw)
	assert.Equal(t, "DINOSAURS-MGMT-9", r.Code(), "%s", r.Raw)

	deleted := time.Now()
	require.Equal(t, http.StatusAccepted, fm.Do(t, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil).Status)
	a.waitDesired(t, []string{}, 30*time.Second)
	undesiredIn := time.Since(deleted)
	a.report(t, map[string]any{})
	reported = time.Now()
	fm.WaitStatus(t, alice, id, "gone", 60*time.Second)
	t.Logf("create → desired %s; ready report → ready %s; delete → not desired %s; empty report → gone %s",
		desiredIn.Round(time.Millisecond), readyIn.Round(time.Millisecond), undesiredIn.Round(time.Millisecond), time.Since(reported).Round(time.Millisecond))
}

func TestClusterToken(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "fleet.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("clusters: [{id: c1, cloud_provider: aws, region: us-east-1}]\nagent: {token_secret_file: s}\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s"), []byte("0123456789abcdef0123\n"), 0o600))
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"cluster-token", "-config", cfg, "-kind", "kafka", "-cluster", "c1"}, &out))
	assert.Regexp(t, `^fkc1\.c1\.[A-Za-z0-9_-]{43}\n$`, out.String())
	for name, args := range map[string][]string{
		"unknown cluster": {"-config", cfg, "-cluster", "c9"},
		"no cluster":      {"-config", cfg},
		"no config":       {"-cluster", "c1"},
	} {
		t.Run(name, func(t *testing.T) {
			assert.Error(t, run(t.Context(), append([]string{"cluster-token"}, args...), io.Discard))
		})
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "s"), []byte("short\n"), 0o600))
	assert.Error(t, run(t.Context(), []string{"cluster-token", "-config", cfg, "-cluster", "c1"}, io.Discard), "a short key is refused")
}
