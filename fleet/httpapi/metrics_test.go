package httpapi_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/auth"
	"github.com/fleetkit/fleetkit/fleet/fleettest"
	"github.com/fleetkit/fleetkit/fleet/httpapi"
	"github.com/fleetkit/fleetkit/fleet/httpapi/openapitest"
	"github.com/fleetkit/fleetkit/fleet/inmem"
)

// instanceServer is a real HTTP service exposing a Prometheus registry
// in the text format, as an instance's service does.
type instanceServer struct {
	*httptest.Server
	requests prometheus.Counter
	latency  prometheus.Histogram
}

func newInstanceServer(t *testing.T, id string) *instanceServer {
	reg := prometheus.NewRegistry()
	s := &instanceServer{
		requests: prometheus.NewCounter(prometheus.CounterOpts{Name: "instance_requests_total", Help: "Requests.", ConstLabels: prometheus.Labels{"instance_id": id}}),
		latency:  prometheus.NewHistogram(prometheus.HistogramOpts{Name: "instance_request_seconds", Help: "Latency.", Buckets: []float64{0.1, 1}}),
	}
	up := prometheus.NewGauge(prometheus.GaugeOpts{Name: "instance_up", Help: "Up.", ConstLabels: prometheus.Labels{"instance_id": id}})
	up.Set(1)
	reg.MustRegister(s.requests, s.latency, up)
	s.Server = httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(s.Close)
	return s
}

func (s *instanceServer) host() string { return strings.TrimPrefix(s.URL, "http://") }

type metricsHarness struct {
	client *fleettest.Client
	store  *inmem.Store
}

func newMetricsHarness(t *testing.T, kind fleet.Kind, opts httpapi.Options) *metricsHarness {
	st := inmem.NewStore()
	svc, err := fleet.New(st, fleet.Options{Kind: kind})
	require.NoError(t, err)
	secret := []byte("test-secret")
	opts.Auth, err = auth.NewJWTAuthenticator(auth.JWTOptions{HS256Secret: secret})
	require.NoError(t, err)
	api, err := httpapi.New(svc, opts)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	kind, err = kind.Normalize()
	require.NoError(t, err)
	c := &fleettest.Client{BaseURL: srv.URL, Kind: kind, Secret: secret}
	c.Check = openapitest.Fetch(t, c).Check
	return &metricsHarness{client: c, store: st}
}

// put stores an instance of the harness's kind owned by alice (org acme).
func (h *metricsHarness) put(t *testing.T, status fleet.Status, host string) string {
	now := time.Now().UTC()
	id := fleet.NewID()
	inst := fleet.Instance{ID: id, Kind: h.client.Kind.Name, Name: "i" + strings.ToLower(id), Owner: "alice", Organisation: "acme",
		CloudProvider: "aws", Region: "us-east-1", MultiAZ: true, InstanceType: "standard", Status: status, Host: host,
		CreatedAt: now, UpdatedAt: now, StatusSince: now}
	require.NoError(t, h.store.CreateInstance(context.Background(), inst))
	return inst.ID
}

var (
	alice   = fleettest.User{Name: "alice", Org: "acme"}
	bob     = fleettest.User{Name: "bob", Org: "acme"}
	mallory = fleettest.User{Name: "mallory", Org: "evil"}
)

func value(t *testing.T, items []map[string]any, name string) (float64, map[string]any) {
	t.Helper()
	for _, it := range items {
		m, _ := it["metric"].(map[string]any)
		if m["__name__"] == name {
			v, _ := it["value"].(float64)
			return v, it
		}
	}
	t.Fatalf("no series %s in %v", name, items)
	return 0, nil
}

func TestMetricsQuery(t *testing.T) {
	for _, kind := range []fleet.Kind{fleet.Kafka, fleet.Dinosaur} {
		t.Run(kind.Name, func(t *testing.T) {
			h := newMetricsHarness(t, kind, httpapi.Options{})
			inst := newInstanceServer(t, "x")
			id := h.put(t, fleet.StatusReady, inst.host())
			path := h.client.Kind.Plural + "/" + id + "/metrics/"

			inst.requests.Add(3)
			inst.latency.Observe(0.5)
			r := h.client.Do(t, alice, http.MethodGet, path+"query", nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
			assert.Equal(t, "MetricsInstantQueryList", r.Str("kind"))
			assert.Equal(t, id, r.Str("id"))
			v, it := value(t, r.Items(), "instance_requests_total")
			assert.Equal(t, 3.0, v)
			assert.Equal(t, "x", it["metric"].(map[string]any)["instance_id"])
			assert.InDelta(t, float64(time.Now().UnixMilli()), it["timestamp"], 60_000)
			v, _ = value(t, r.Items(), "instance_request_seconds_count")
			assert.Equal(t, 1.0, v)
			var buckets []string
			for _, it := range r.Items() {
				if m := it["metric"].(map[string]any); m["__name__"] == "instance_request_seconds_bucket" {
					buckets = append(buckets, m["le"].(string))
				}
			}
			assert.ElementsMatch(t, []string{"0.1", "1", "+Inf"}, buckets)

			// The values are the instance's present ones.
			inst.requests.Add(2)
			r = h.client.Do(t, bob, http.MethodGet, path+"query?filters=instance_requests_total&filters=instance_up", nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
			require.Len(t, r.Items(), 2, "only the filtered series: %s", r.Raw)
			v, _ = value(t, r.Items(), "instance_requests_total")
			assert.Equal(t, 5.0, v)
			v, _ = value(t, r.Items(), "instance_up")
			assert.Equal(t, 1.0, v)

			r = h.client.Do(t, alice, http.MethodGet, path+"query?filters=instance_requests_total,instance_up", nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
			assert.Len(t, r.Items(), 2, "comma-separated filters: %s", r.Raw)

			// A family name selects a histogram's series.
			r = h.client.Do(t, alice, http.MethodGet, path+"query?filters=instance_request_seconds", nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
			assert.Len(t, r.Items(), 5, "3 buckets, _sum and _count: %s", r.Raw)
		})
	}
}

func TestMetricsFederate(t *testing.T) {
	h := newMetricsHarness(t, fleet.Kafka, httpapi.Options{})
	inst := newInstanceServer(t, "fed")
	id := h.put(t, fleet.StatusReady, inst.host())
	inst.requests.Add(7)
	r := h.client.Do(t, alice, http.MethodGet, "kafkas/"+id+"/metrics/federate", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(r.Raw)))
	require.NoError(t, err, "%s", r.Raw)
	require.Contains(t, fams, "instance_requests_total")
	assert.Equal(t, 7.0, fams["instance_requests_total"].GetMetric()[0].GetCounter().GetValue())
	assert.Contains(t, fams, "instance_request_seconds")
	assert.Contains(t, fams, "instance_up")
}

func TestMetricsQueryRange(t *testing.T) {
	h := newMetricsHarness(t, fleet.Kafka, httpapi.Options{})
	inst := newInstanceServer(t, "r")
	id := h.put(t, fleet.StatusReady, inst.host())
	path := "kafkas/" + id + "/metrics/"

	// Readings at least a second apart are kept: each call reads the
	// instance, so three calls give three points of a growing counter.
	var last int64
	for i := range 3 {
		inst.requests.Inc()
		r := h.client.Do(t, alice, http.MethodGet, path+"query?filters=instance_requests_total", nil)
		require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
		_, it := value(t, r.Items(), "instance_requests_total")
		ts := int64(it["timestamp"].(float64))
		require.Greater(t, ts, last, "reading %d", i)
		last = ts
		// Wait on the clock for the spacing, not a fixed sleep.
		require.Eventually(t, func() bool { return time.Now().UnixMilli() >= ts+1000 }, 5*time.Second, 10*time.Millisecond)
	}
	inst.requests.Inc()
	r := h.client.Do(t, alice, http.MethodGet, path+"query_range?duration=5&interval=1&filters=instance_requests_total", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.Equal(t, "MetricsRangeQueryList", r.Str("kind"))
	assert.Equal(t, id, r.Str("id"))
	require.Len(t, r.Items(), 1, "%s", r.Raw)
	vals := r.Items()[0]["values"].([]any)
	var got []float64
	var prev float64
	for _, v := range vals {
		p := v.(map[string]any)
		ts := p["timestamp"].(float64)
		assert.Greater(t, ts, prev, "points in time order")
		prev = ts
		got = append(got, p["value"].(float64))
	}
	assert.Equal(t, []float64{1, 2, 3, 4}, got)

	// A coarser interval thins the points, keeping the first and newest.
	r = h.client.Do(t, alice, http.MethodGet, path+"query_range?duration=5&interval=3600&filters=instance_requests_total", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	vals = r.Items()[0]["values"].([]any)
	assert.Len(t, vals, 2, "%s", r.Raw)

	// The original's errors for the required parameters.
	for _, q := range []string{"", "duration=5", "interval=30", "duration=x&interval=30"} {
		r := h.client.Do(t, alice, http.MethodGet, path+"query_range?"+q, nil)
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", q, r.Raw)
		assert.Equal(t, "KAFKAS-MGMT-23", r.Code(), q)
	}
	for _, q := range []string{"duration=0&interval=30", "duration=4321&interval=30", "duration=5&interval=10801"} {
		r := h.client.Do(t, alice, http.MethodGet, path+"query_range?"+q, nil)
		assert.Equal(t, http.StatusBadRequest, r.Status, "%s: %s", q, r.Raw)
		assert.Equal(t, "KAFKAS-MGMT-21", r.Code(), q)
	}
}

func TestMetricsErrors(t *testing.T) {
	gone := newInstanceServer(t, "gone")
	goneHost := gone.host()
	gone.Close()
	// A listener that accepts and never answers: the scrape times out.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	notMetrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("dinosaur rex\n")) }))
	t.Cleanup(notMetrics.Close)
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(strings.Repeat("# HELP x y\n", 2000)))
	}))
	t.Cleanup(big.Close)

	h := newMetricsHarness(t, fleet.Kafka, httpapi.Options{Metrics: &httpapi.HTTPMetrics{Timeout: 300 * time.Millisecond, MaxBody: 4096}})
	inst := newInstanceServer(t, "ok")
	ready := h.put(t, fleet.StatusReady, inst.host())
	for _, tt := range []struct {
		name   string
		id     string
		user   fleettest.User
		status int
		code   string
	}{
		{"no token", ready, fleettest.User{}, http.StatusUnauthorized, "15"},
		{"another organisation", ready, mallory, http.StatusNotFound, "7"},
		{"unknown", "nothere", alice, http.StatusNotFound, "7"},
		{"provisioning", h.put(t, fleet.StatusProvisioning, ""), alice, http.StatusBadRequest, "21"},
		{"suspended", h.put(t, fleet.StatusSuspended, newInstanceServer(t, "s").host()), alice, http.StatusBadRequest, "21"},
		{"unreachable", h.put(t, fleet.StatusReady, goneHost), alice, http.StatusServiceUnavailable, "9"},
		{"never answers", h.put(t, fleet.StatusReady, ln.Addr().String()), alice, http.StatusServiceUnavailable, "9"},
		{"not the text format", h.put(t, fleet.StatusReady, strings.TrimPrefix(notMetrics.URL, "http://")), alice, http.StatusServiceUnavailable, "9"},
		{"over the size limit", h.put(t, fleet.StatusReady, strings.TrimPrefix(big.URL, "http://")), alice, http.StatusServiceUnavailable, "9"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, call := range []string{"query", "query_range?duration=5&interval=30", "federate"} {
				r := h.client.Do(t, tt.user, http.MethodGet, "kafkas/"+tt.id+"/metrics/"+call, nil)
				assert.Equal(t, tt.status, r.Status, "%s: %s", call, r.Raw)
				assert.Equal(t, "KAFKAS-MGMT-"+tt.code, r.Code(), "%s: %s", call, r.Raw)
			}
		})
	}
}
