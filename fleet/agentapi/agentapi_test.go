package agentapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/agentapi"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/inmem"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

const base = "/api/dinosaurs_mgmt/v1/agent-clusters/"

type fixture struct {
	st  *inmem.Store
	h   *agentapi.Handler
	log *bytes.Buffer
}

func newFixture(t *testing.T, opts agentapi.Options) *fixture {
	t.Helper()
	st := inmem.NewStore()
	for _, id := range []string{"a", "b"} {
		require.NoError(t, st.CreateCluster(context.Background(), cluster.Cluster{ID: id, CloudProvider: "aws", Region: "us-east-1", Status: cluster.Ready}))
	}
	var log bytes.Buffer
	opts.Kind, opts.Secret, opts.Logger = fleet.Dinosaur, secret, slog.New(slog.NewTextHandler(&log, nil))
	h, err := agentapi.New(st, opts)
	require.NoError(t, err)
	return &fixture{st: st, h: h, log: &log}
}

// place creates an instance of kind dinosaur on clusterID in status.
func (f *fixture) place(t *testing.T, name, clusterID string, status fleet.Status) fleet.Instance {
	t.Helper()
	now := time.Now().UTC()
	i := fleet.Instance{ID: fleet.NewID(), Kind: "dinosaur", Name: name, Owner: "alice", CloudProvider: "aws", Region: "us-east-1",
		InstanceType: "standard", Status: status, ClusterID: clusterID, CreatedAt: now, UpdatedAt: now, StatusSince: now}
	require.NoError(t, f.st.CreateInstance(context.Background(), i))
	return i
}

// do serves one request; token "" sends none.
func (f *fixture) do(t *testing.T, method, path, token string, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, r)
	return w
}

// requireError checks the API's error shape.
func requireError(t *testing.T, w *httptest.ResponseRecorder, status int, code string) {
	t.Helper()
	require.Equal(t, status, w.Code, w.Body.String())
	var body map[string]string
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body), w.Body.String())
	assert.Equal(t, "Error", body["kind"])
	assert.Equal(t, code, body["code"])
	assert.NotEmpty(t, body["id"])
	assert.NotEmpty(t, body["reason"])
}

// TestAuthorization: every endpoint refuses a missing or invalid token
// (401), cluster A's token on cluster B (403), and a valid token of an
// unknown cluster (404); the tokens never reach the log.
func TestAuthorization(t *testing.T) {
	f := newFixture(t, agentapi.Options{})
	tokA, tokB := agentapi.Token(secret, "dinosaur", "a"), agentapi.Token(secret, "dinosaur", "b")
	endpoints := []struct{ method, suffix, body string }{
		{http.MethodGet, "", ""},
		{http.MethodGet, "/dinosaurs", ""},
		{http.MethodPut, "/dinosaurs/status", `{}`},
		{http.MethodPut, "/status", `{"phase":"ready","capacity":{"units":3},"agent_version":"v1"}`},
	}
	cases := []struct {
		name, cluster, token string
		status               int
		code                 string
	}{
		{"no token", "b", "", 401, "DINOSAURS-MGMT-15"},
		{"not a cluster token", "b", "abc", 401, "DINOSAURS-MGMT-15"},
		{"forged MAC", "b", tokB[:len(tokB)-2] + "AA", 401, "DINOSAURS-MGMT-15"},
		{"another kind's token", "b", agentapi.Token(secret, "kafka", "b"), 401, "DINOSAURS-MGMT-15"},
		{"another secret", "b", agentapi.Token([]byte("another-secret-of-32-bytes......"), "dinosaur", "b"), 401, "DINOSAURS-MGMT-15"},
		{"cluster A's token on B", "b", tokA, 403, "DINOSAURS-MGMT-11"},
		{"unknown cluster", "zz", agentapi.Token(secret, "dinosaur", "zz"), 404, "DINOSAURS-MGMT-7"},
	}
	for _, e := range endpoints {
		for _, c := range cases {
			t.Run(e.method+e.suffix+"/"+c.name, func(t *testing.T) {
				requireError(t, f.do(t, e.method, base+c.cluster+e.suffix, c.token, e.body), c.status, c.code)
			})
		}
		t.Run(e.method+e.suffix+"/own token", func(t *testing.T) {
			w := f.do(t, e.method, base+"b"+e.suffix, tokB, e.body)
			assert.Contains(t, []int{200, 204}, w.Code, w.Body.String())
		})
	}
	// A's token wrote nothing on B: B's reports are B's agent's.
	r, err := f.st.AgentReport(context.Background(), "dinosaur", "a")
	require.NoError(t, err)
	assert.Zero(t, r, "nothing written for cluster a")
	r, err = f.st.AgentReport(context.Background(), "dinosaur", "b")
	require.NoError(t, err)
	assert.Equal(t, 3, r.Heartbeat.Capacity)
	assert.NotContains(t, f.log.String(), tokA)
	assert.NotContains(t, f.log.String(), tokB)
}

func TestClusterAndDesired(t *testing.T) {
	f := newFixture(t, agentapi.Options{})
	tok := agentapi.Token(secret, "dinosaur", "a")
	w := f.do(t, http.MethodGet, base+"a", tok, "")
	require.Equal(t, 200, w.Code)
	assert.JSONEq(t, `{"id":"a","kind":"Cluster","cloud_provider":"aws","region":"us-east-1","multi_az":false,"status":"ready","instance_types":[]}`, w.Body.String())

	prov := f.place(t, "p", "a", fleet.StatusProvisioning)
	ready := f.place(t, "r", "a", fleet.StatusReady)
	f.place(t, "pre", "a", fleet.StatusPreparing)
	f.place(t, "dep", "a", fleet.StatusDeprovision)
	f.place(t, "failed", "a", fleet.StatusFailed)
	f.place(t, "other", "b", fleet.StatusReady)
	w = f.do(t, http.MethodGet, base+"a/dinosaurs", tok, "")
	require.Equal(t, 200, w.Code)
	var list struct {
		Kind  string           `json:"kind"`
		Items []map[string]any `json:"items"`
	}
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &list))
	assert.Equal(t, "DinosaurList", list.Kind)
	got := map[string]string{}
	for _, i := range list.Items {
		got[i["id"].(string)] = i["status"].(string)
		assert.Equal(t, "Dinosaur", i["kind"])
		assert.Equal(t, "alice", i["owner"])
		assert.Equal(t, "standard", i["instance_type"])
	}
	assert.Equal(t, map[string]string{prov.ID: "provisioning", ready.ID: "ready"}, got, "only provisioning and ready instances of the cluster")
	etag := w.Header().Get("ETag")
	require.NotEmpty(t, etag)
	// A matching If-None-Match without wait: 304 at once.
	w = f.do(t, http.MethodGet, base+"a/dinosaurs", tok, "", "If-None-Match", etag)
	assert.Equal(t, http.StatusNotModified, w.Code)
	assert.Empty(t, w.Body.String())
	// Another ETag: the list.
	w = f.do(t, http.MethodGet, base+"a/dinosaurs", tok, "", "If-None-Match", `"old"`)
	assert.Equal(t, 200, w.Code)
	assert.Equal(t, etag, w.Header().Get("ETag"))
}

func TestReports(t *testing.T) {
	f := newFixture(t, agentapi.Options{})
	tok := agentapi.Token(secret, "dinosaur", "a")
	mine := f.place(t, "m", "a", fleet.StatusProvisioning)
	theirs := f.place(t, "t", "b", fleet.StatusProvisioning)
	body, _ := json.Marshal(map[string]fleet.InstanceReport{
		mine.ID: {Phase: "ready", Host: "dinosaur-x.ns.svc:8080"}, theirs.ID: {Phase: "ready", Host: "evil:1"}, "nope": {Phase: "installing"},
	})
	w := f.do(t, http.MethodPut, base+"a/dinosaurs/status", tok, string(body))
	require.Equal(t, http.StatusNoContent, w.Code, w.Body.String())
	r, err := f.st.AgentReport(context.Background(), "dinosaur", "a")
	require.NoError(t, err)
	assert.Equal(t, map[string]fleet.InstanceReport{mine.ID: {Phase: "ready", Host: "dinosaur-x.ns.svc:8080"}}, r.Instances)
	b, err := f.st.AgentReport(context.Background(), "dinosaur", "b")
	require.NoError(t, err)
	assert.Zero(t, b, "a report through cluster a never writes cluster b")

	for name, c := range map[string]struct {
		path, body string
		status     int
		code       string
	}{
		"bad phase":      {"a/dinosaurs/status", `{"x":{"phase":"running"}}`, 400, "DINOSAURS-MGMT-21"},
		"ready no host":  {"a/dinosaurs/status", `{"x":{"phase":"ready"}}`, 400, "DINOSAURS-MGMT-21"},
		"not JSON":       {"a/dinosaurs/status", `{`, 400, "DINOSAURS-MGMT-21"},
		"no phase":       {"a/status", `{"capacity":{"units":1}}`, 400, "DINOSAURS-MGMT-21"},
		"negative units": {"a/status", `{"phase":"ready","capacity":{"units":-1}}`, 400, "DINOSAURS-MGMT-21"},
		"oversized":      {"a/dinosaurs/status", `{"x":{"phase":"failed","reason":"` + strings.Repeat("y", 1<<20) + `"}}`, 413, "DINOSAURS-MGMT-17"},
		"oversized beat": {"a/status", `{"phase":"ready","agent_version":"` + strings.Repeat("y", 1<<20) + `"}`, 413, "DINOSAURS-MGMT-17"},
	} {
		t.Run(name, func(t *testing.T) {
			requireError(t, f.do(t, http.MethodPut, base+c.path, tok, c.body), c.status, c.code)
		})
	}
	r2, err := f.st.AgentReport(context.Background(), "dinosaur", "a")
	require.NoError(t, err)
	assert.Equal(t, r.Instances, r2.Instances, "refused reports write nothing")

	t.Run("wrong method", func(t *testing.T) {
		requireError(t, f.do(t, http.MethodPost, base+"a/status", tok, `{}`), 405, "DINOSAURS-MGMT-10")
	})
	t.Run("unknown path", func(t *testing.T) {
		requireError(t, f.do(t, http.MethodGet, base+"a/kafkas", tok, ""), 404, "DINOSAURS-MGMT-7")
	})
	t.Run("bad wait", func(t *testing.T) {
		requireError(t, f.do(t, http.MethodGet, base+"a/dinosaurs?wait=soon", tok, ""), 400, "DINOSAURS-MGMT-21")
	})
}

// TestLongPoll: a long-poll returns when the desired set changes, and 304
// when the wait ends first; waiters are bounded.
func TestLongPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, agentapi.Options{PollInterval: time.Second, MaxWaiters: 1})
		tok := agentapi.Token(secret, "dinosaur", "a")
		w := f.do(t, http.MethodGet, base+"a/dinosaurs", tok, "")
		etag := w.Header().Get("ETag")

		// Unchanged: 304 once the wait ends, not before.
		start := time.Now()
		w = f.do(t, http.MethodGet, base+"a/dinosaurs?wait=20s", tok, "", "If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, w.Code)
		assert.Equal(t, 20*time.Second, time.Since(start))
		// The wait is capped at 60s.
		start = time.Now()
		w = f.do(t, http.MethodGet, base+"a/dinosaurs?wait=1h", tok, "", "If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, w.Code)
		assert.Equal(t, agentapi.MaxWait, time.Since(start))

		// Changed while waiting: 200 with the new set within a poll.
		done := make(chan *httptest.ResponseRecorder, 1)
		go func() { done <- f.do(t, http.MethodGet, base+"a/dinosaurs?wait=60s", tok, "", "If-None-Match", etag) }()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.Empty(t, done, "still waiting")
		// Only one waiter at a time: another is told to come back.
		busy := f.do(t, http.MethodGet, base+"a/dinosaurs?wait=60s", tok, "", "If-None-Match", etag)
		requireError(t, busy, http.StatusServiceUnavailable, "DINOSAURS-MGMT-9")
		assert.Equal(t, "1", busy.Header().Get("Retry-After"))

		changed := time.Now()
		inst := f.place(t, "new", "a", fleet.StatusProvisioning)
		w = <-done
		assert.LessOrEqual(t, time.Since(changed), time.Second)
		require.Equal(t, 200, w.Code)
		assert.NotEqual(t, etag, w.Header().Get("ETag"))
		assert.Contains(t, w.Body.String(), inst.ID)

		// A client gone stops its wait.
		ctx, cancel := context.WithCancel(context.Background())
		r := httptest.NewRequestWithContext(ctx, http.MethodGet, base+"a/dinosaurs?wait=60s", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		r.Header.Set("If-None-Match", w.Header().Get("ETag"))
		rec := httptest.NewRecorder()
		go func() { time.Sleep(time.Second); cancel() }()
		start = time.Now()
		f.h.ServeHTTP(rec, r)
		assert.Equal(t, time.Second, time.Since(start))
	})
}

// TestLongPollPerCluster: one cluster's agent cannot take every waiter
// slot: its fifth long-poll is refused while another cluster's waits.
func TestLongPollPerCluster(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, agentapi.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		poll := func(cluster string) *httptest.ResponseRecorder {
			tok := agentapi.Token(secret, "dinosaur", cluster)
			etag := f.do(t, http.MethodGet, base+cluster+"/dinosaurs", tok, "").Header().Get("ETag")
			r := httptest.NewRequestWithContext(ctx, http.MethodGet, base+cluster+"/dinosaurs?wait=60s", nil)
			r.Header.Set("Authorization", "Bearer "+tok)
			r.Header.Set("If-None-Match", etag)
			w := httptest.NewRecorder()
			f.h.ServeHTTP(w, r)
			return w
		}
		done := make(chan *httptest.ResponseRecorder, 5)
		for range 4 {
			go func() { done <- poll("a") }()
		}
		synctest.Wait()
		require.Empty(t, done, "four long-polls of cluster a wait")
		requireError(t, poll("a"), http.StatusServiceUnavailable, "DINOSAURS-MGMT-9")
		go func() { done <- poll("b") }()
		synctest.Wait()
		require.Empty(t, done, "cluster b's long-poll waits")
		cancel()
		for range 5 {
			<-done
		}
		// Their slots are free again.
		tok := agentapi.Token(secret, "dinosaur", "a")
		etag := f.do(t, http.MethodGet, base+"a/dinosaurs", tok, "").Header().Get("ETag")
		start := time.Now()
		w := f.do(t, http.MethodGet, base+"a/dinosaurs?wait=2s", tok, "", "If-None-Match", etag)
		assert.Equal(t, http.StatusNotModified, w.Code)
		assert.Equal(t, 2*time.Second, time.Since(start))
	})
}

// TestMetrics: requests are counted by endpoint and status, a cluster's
// heartbeat is recorded only after its token was checked, and invented
// paths and clusters add no series.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	f := newFixture(t, agentapi.Options{Registerer: reg})
	tokB := agentapi.Token(secret, "dinosaur", "b")
	beat := `{"phase":"ready","capacity":{"units":3}}`
	requireStatus := func(w *httptest.ResponseRecorder, status int) {
		t.Helper()
		require.Equal(t, status, w.Code, w.Body.String())
	}
	requireStatus(f.do(t, http.MethodGet, base+"b", tokB, ""), 200)
	requireStatus(f.do(t, http.MethodGet, base+"b/dinosaurs", tokB, ""), 200)
	requireStatus(f.do(t, http.MethodPut, base+"b/status", tokB, beat), 204)
	requireStatus(f.do(t, http.MethodPut, base+"b/status", "", beat), 401)
	for i := range 50 { // invented clusters and paths
		requireStatus(f.do(t, http.MethodPut, base+fmt.Sprintf("x%d/status", i), agentapi.Token(secret, "dinosaur", fmt.Sprintf("x%d", i)), beat), 404)
		requireStatus(f.do(t, http.MethodGet, base+fmt.Sprintf("b/nope%d", i), tokB, ""), 404)
	}

	requests := func(endpoint, code string) float64 {
		return value(t, reg, "fleetkit_fleet_agent_api_requests_total", map[string]string{"endpoint": endpoint, "code": code})
	}
	assert.Equal(t, 1.0, requests("cluster", "200"))
	assert.Equal(t, 1.0, requests("instances", "200"))
	assert.Equal(t, 1.0, requests("cluster_status", "204"))
	assert.Equal(t, 1.0, requests("cluster_status", "401"))
	assert.Equal(t, 50.0, requests("cluster_status", "404"))
	assert.Equal(t, 50.0, requests("other", "404"))
	assert.Equal(t, 6, testutil.CollectAndCount(reg, "fleetkit_fleet_agent_api_requests_total"), "series: one per endpoint and status seen")
	assert.Equal(t, 1, testutil.CollectAndCount(reg, "fleetkit_fleet_agent_heartbeat_timestamp_seconds"), "only cluster b's accepted heartbeat")
	at := value(t, reg, "fleetkit_fleet_agent_heartbeat_timestamp_seconds", map[string]string{"cluster": "b"})
	assert.InDelta(t, float64(time.Now().Unix()), at, 60)
}

// value returns the value of the series of name with labels (and kind
// dinosaur) gathered from reg.
func value(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range labels {
				if got[k] != v {
					continue next
				}
			}
			require.Equal(t, "dinosaur", got["kind"])
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no series %s%v", name, labels)
	return 0
}
