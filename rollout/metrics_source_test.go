package rollout_test

import (
	"context"
	"math"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/rollout"
)

func TestCounterErrorRates(t *testing.T) {
	reg := prometheus.NewRegistry()
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: rollout.DefaultRequestsMetric, Help: "h"},
		[]string{"language", "version", "backend", "code"})
	reg.MustRegister(requests)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)

	for name, g := range map[string]prometheus.Gatherer{
		"in-process": reg,
		"scraped":    rollout.NewScrapeGatherer(srv.URL, nil),
	} {
		t.Run(name, func(t *testing.T) {
			requests.Reset()
			src := rollout.NewCounterErrorRates(g, rollout.CounterOptions{})
			ctx := context.Background()
			old, new, err := src.ErrorRates(ctx, "python", "1.0", "2.0")
			require.NoError(t, err)
			assert.True(t, math.IsNaN(old) && math.IsNaN(new), "no requests: NaN")

			requests.WithLabelValues("python", "1.0", "a", "200").Add(90)
			requests.WithLabelValues("python", "1.0", "a", "502").Add(10)
			requests.WithLabelValues("python", "2.0", "b", "200").Add(3)
			requests.WithLabelValues("python", "2.0", "b", "500").Add(1)
			requests.WithLabelValues("java", "2.0", "c", "500").Add(50) // another language
			old, new, err = src.ErrorRates(ctx, "python", "1.0", "2.0")
			require.NoError(t, err)
			assert.InDelta(t, 0.1, old, 1e-9)
			assert.InDelta(t, 0.25, new, 1e-9)

			// The next call counts only what happened since.
			requests.WithLabelValues("python", "2.0", "b", "200").Add(4)
			old, new, err = src.ErrorRates(ctx, "python", "1.0", "2.0")
			require.NoError(t, err)
			assert.True(t, math.IsNaN(old))
			assert.InDelta(t, 0, new, 1e-9)
		})
	}
	_, _, err := rollout.NewCounterErrorRates(rollout.NewScrapeGatherer("http://127.0.0.1:1/metrics", nil), rollout.CounterOptions{}).
		ErrorRates(context.Background(), "python", "1.0", "2.0")
	require.Error(t, err)
}
