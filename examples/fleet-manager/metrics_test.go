package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet/fleettest"
	"github.com/fleetkit/fleetkit/fleet/httpapi/openapitest"
	"github.com/fleetkit/fleetkit/internal/pgtest"
)

// TestInstanceMetrics: on the process data plane, the metrics calls
// answer what the instance's own service exposes, and its request counter
// follows the requests the instance gets. On SQLite in memory and on
// PostgreSQL; every exchange is checked against the served document.
func TestInstanceMetrics(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testInstanceMetrics(t, "sqlite://:memory:") })
	t.Run("postgres", func(t *testing.T) { testInstanceMetrics(t, pgtest.FreshDB(t)) })
}

// requestsOf returns the instance's count of answered GET / (200).
func requestsOf(t *testing.T, fm *manager, id string) float64 {
	t.Helper()
	r := fm.Do(t, alice, http.MethodGet, "dinosaurs/"+id+"/metrics/query?filters=fleetkit_instance_requests_total", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	for _, it := range r.Items() {
		m := it["metric"].(map[string]any)
		require.Equal(t, "fleetkit_instance_requests_total", m["__name__"])
		require.Equal(t, id, m["instance_id"])
		if m["handler"] == "GET /{$}" && m["code"] == "200" {
			return it["value"].(float64)
		}
	}
	t.Fatalf("no GET / series: %s", r.Raw)
	return 0
}

func testInstanceMetrics(t *testing.T, db string) {
	t.Setenv("FLEETKIT_CACHE", t.TempDir())
	fm := start(t, "-database-url", db)
	fm.Check = openapitest.Fetch(t, fm.Client).Check
	id, host := fm.createReady(t, "rex", 30*time.Second)

	before := requestsOf(t, fm, id)
	assert.GreaterOrEqual(t, before, 1.0, "createReady asked the instance once")
	for range 3 {
		_, ok := info(host)
		require.True(t, ok)
	}
	assert.Equal(t, before+3, requestsOf(t, fm, id), "the counter is the instance's, live")

	r := fm.Do(t, alice, http.MethodGet, "dinosaurs/"+id+"/metrics/query", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.Equal(t, "MetricsInstantQueryList", r.Str("kind"))
	names := map[string]map[string]any{}
	for _, it := range r.Items() {
		m := it["metric"].(map[string]any)
		names[m["__name__"].(string)] = m
	}
	require.Contains(t, names, "fleetkit_instance_info")
	assert.Equal(t, map[string]any{"__name__": "fleetkit_instance_info", "instance_id": id, "kind": "dinosaur", "name": "rex"}, names["fleetkit_instance_info"])
	assert.Contains(t, names, "fleetkit_instance_start_time_seconds")

	r = fm.Do(t, alice, http.MethodGet, "dinosaurs/"+id+"/metrics/query_range?duration=5&interval=1&filters=fleetkit_instance_info", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	require.Len(t, r.Items(), 1, "%s", r.Raw)
	assert.NotEmpty(t, r.Items()[0]["values"])

	r = fm.Do(t, alice, http.MethodGet, "dinosaurs/"+id+"/metrics/federate", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(r.Raw)))
	require.NoError(t, err)
	assert.Contains(t, fams, "fleetkit_instance_requests_total")
	assert.Contains(t, fams, "fleetkit_instance_info")

	// Another user does not see the instance, its metrics neither.
	r = fm.Do(t, fleettest.User{Name: "bob"}, http.MethodGet, "dinosaurs/"+id+"/metrics/query", nil)
	assert.Equal(t, http.StatusNotFound, r.Status, "%s", r.Raw)
	assert.Equal(t, "DINOSAURS-MGMT-7", r.Code())

	// Once deleted it has none: not ready (21) while it goes, then gone.
	require.Equal(t, http.StatusAccepted, fm.Do(t, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil).Status)
	r = fm.Do(t, alice, http.MethodGet, "dinosaurs/"+id+"/metrics/query", nil)
	assert.Contains(t, []string{"DINOSAURS-MGMT-21", "DINOSAURS-MGMT-7"}, r.Code(), "%s", r.Raw)
	fm.WaitStatus(t, alice, id, "gone", 30*time.Second)
}
