package rollout_test

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
	"github.com/fleetkit/fleetkit/rollout"
)

// errorRate is the error rate between two samples of a version; NaN
// without requests.
func errorRate(before, after map[string]rollout.VersionCounters, version string) float64 {
	req := after[version].Requests - before[version].Requests
	if req <= 0 {
		return math.NaN()
	}
	return (after[version].Failures - before[version].Failures) / req
}

func TestBalancerMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: rollout.DefaultRequestsMetric, Help: "h"},
		[]string{"language", "version", "backend", "code"})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: rollout.DefaultDurationMetric, Help: "h",
		Buckets: []float64{0.01, 0.1, 1}}, []string{"language", "version"})
	reg.MustRegister(requests, duration)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)

	for name, g := range map[string]prometheus.Gatherer{
		"in-process": reg,
		"scraped":    rollout.NewScrapeGatherer(srv.URL, nil),
	} {
		t.Run(name, func(t *testing.T) {
			requests.Reset()
			duration.Reset()
			// Failures from the codes, for a requests counter alone.
			src := rollout.NewBalancerMetrics(g, rollout.CounterOptions{IsError: func(code string) bool { return code >= "500" }})
			ctx := context.Background()
			first, err := src.Sample(ctx, "python")
			require.NoError(t, err)
			assert.Empty(t, first, "no requests yet")

			requests.WithLabelValues("python", "1.0", "a", "200").Add(90)
			requests.WithLabelValues("python", "1.0", "a", "502").Add(10)
			requests.WithLabelValues("python", "2.0", "b", "200").Add(3)
			requests.WithLabelValues("python", "2.0", "b", "500").Add(1)
			requests.WithLabelValues("java", "2.0", "c", "500").Add(50) // another language
			for range 98 {
				duration.WithLabelValues("python", "1.0").Observe(0.005)
			}
			duration.WithLabelValues("python", "1.0").Observe(0.5)
			duration.WithLabelValues("python", "1.0").Observe(0.5)
			second, err := src.Sample(ctx, "python")
			require.NoError(t, err)
			assert.InDelta(t, 0.1, errorRate(first, second, "1.0"), 1e-9)
			assert.InDelta(t, 0.25, errorRate(first, second, "2.0"), 1e-9)
			lat := second["1.0"].Latency
			require.Len(t, lat, 4)
			assert.True(t, math.IsInf(lat[3].UpperBound, 1))
			assert.Equal(t, 100.0, lat[3].Count)
			assert.Equal(t, 98.0, lat[0].Count)

			requests.WithLabelValues("python", "2.0", "b", "200").Add(4)
			third, err := src.Sample(ctx, "python")
			require.NoError(t, err)
			assert.True(t, math.IsNaN(errorRate(second, third, "1.0")))
			assert.InDelta(t, 0, errorRate(second, third, "2.0"), 1e-9)
		})
	}
	_, err := rollout.NewBalancerMetrics(rollout.NewScrapeGatherer("http://127.0.0.1:1/metrics", nil), rollout.CounterOptions{}).
		Sample(context.Background(), "python")
	require.Error(t, err)
}

// TestBalancerMetricsCountOnlyBackendFailures runs a real balancer in
// front of a new version whose answers clients make large or slow: those
// are 502s and 504s to the clients, but not the new version's failures, so
// its error rate stays 0 and the automatic mode would advance. 5xx answers
// it gives of its own are its failures.
func TestBalancerMetricsCountOnlyBackendFailures(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	bal, err := balancer.New(balancer.Options{Registerer: reg})
	require.NoError(t, err)
	proxy, err := balancer.NewProxy(bal, balancer.ProxyOptions{Registerer: reg, Timeout: 200 * time.Millisecond, MaxResponseBody: 1 << 10})
	require.NoError(t, err)
	t.Cleanup(proxy.CloseIdleConnections)
	backend := func(version string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			switch {
			case strings.Contains(string(body), "slow"): // past the timeout
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			case strings.Contains(string(body), "large"): // chunked, over the buffer
				for range 4 {
					_, _ = io.WriteString(w, strings.Repeat("x", 1<<10))
					http.NewResponseController(w).Flush()
				}
			case strings.Contains(string(body), "crash"):
				http.Error(w, `{"detail":"crashed"}`, http.StatusInternalServerError)
			default:
				_, _ = io.WriteString(w, `{"result":true,"version":"`+version+`"}`)
			}
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	require.NoError(t, bal.AddBackend(ctx, "python", "1.0", backend("1.0")))
	require.NoError(t, bal.AddBackend(ctx, "python", "2.0", backend("2.0")))
	require.NoError(t, bal.SetRatio(ctx, "python", map[string]int{"1.0": 50, "2.0": 50}))
	lint := func(code string) int {
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/lint/python", strings.NewReader(`{"code":"`+code+`"}`)))
		return rec.Code
	}
	src := rollout.NewBalancerMetrics(reg, rollout.CounterOptions{})
	before, err := src.Sample(ctx, "python")
	require.NoError(t, err)

	codes := map[int]int{}
	for range 4 {
		for _, code := range []string{"x", "slow", "large"} {
			codes[lint(code)]++
		}
	}
	require.Positive(t, codes[http.StatusGatewayTimeout], "%v", codes)
	require.Positive(t, codes[http.StatusBadGateway], "%v", codes)
	after, err := src.Sample(ctx, "python")
	require.NoError(t, err)
	assert.Zero(t, errorRate(before, after, "1.0"), "client-caused outcomes are no failures of 1.0")
	assert.Zero(t, errorRate(before, after, "2.0"), "client-caused outcomes are no failures of 2.0")
	assert.Positive(t, after["2.0"].Latency[len(after["2.0"].Latency)-1].Count, "latency is read")

	for range 4 {
		lint("crash")
	}
	crashed, err := src.Sample(ctx, "python")
	require.NoError(t, err)
	assert.InDelta(t, 1.0, errorRate(after, crashed, "1.0"), 1e-9, "every answer of 1.0 was a 500 of its own")
	assert.InDelta(t, 1.0, errorRate(after, crashed, "2.0"), 1e-9)
}
