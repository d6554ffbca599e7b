package balancer

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

const namespace = "fleetkit_balancer"

// balancerMetrics are the Balancer's metrics.
type balancerMetrics struct {
	ejections       *prometheus.CounterVec
	weight          *prometheus.GaugeVec
	effectiveWeight *prometheus.GaugeVec
}

func newBalancerMetrics(reg prometheus.Registerer) (*balancerMetrics, error) {
	m := &balancerMetrics{
		ejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "ejections_total",
			Help:      "Backends ejected by passive health checking.",
		}, []string{"language", "version"}),
		weight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace,
			Name:      "weight",
			Help:      "Configured weight of a version (1 per version present when no ratio is set).",
		}, []string{"language", "version"}),
		effectiveWeight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace,
			Name:      "effective_weight",
			Help:      "Share of traffic a version gets now, in units of the ratio total, after the weight of versions with no healthy backend is redistributed.",
		}, []string{"language", "version"}),
	}
	if err := register(reg, m.ejections, m.weight, m.effectiveWeight); err != nil {
		return nil, err
	}
	return m, nil
}

// proxyMetrics are the Proxy's metrics.
type proxyMetrics struct {
	requests *prometheus.CounterVec
	failures *prometheus.CounterVec
	duration *prometheus.HistogramVec
	retries  *prometheus.CounterVec
}

func newProxyMetrics(reg prometheus.Registerer) (*proxyMetrics, error) {
	m := &proxyMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "requests_total",
			Help:      "Upstream attempts by language, version, backend and the status code the attempt produced (an upstream answer, or 499/502/504 for a failure). Requests that reached no backend have empty version and backend, and language \"other\" when the balancer does not hold the language.",
		}, []string{"language", "version", "backend", "code"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "backend_failures_total",
			Help:      "Upstream attempts that failed by the backend's doing, which passive health counts: reason \"status\" for a 5xx answer, \"connection\" for a connection refused, reset or closed before the answer was whole. Timeouts, answers too large to pass and clients that go away are not in it.",
		}, []string{"language", "version", "reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace,
			Name:      "request_duration_seconds",
			Help:      "Time to serve a /lint request, retries included, by language and the version that answered.",
			Buckets:   []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"language", "version"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "retries_total",
			Help:      "Requests retried on another backend after a connection failure.",
		}, []string{"language"}),
	}
	if err := register(reg, m.requests, m.failures, m.duration, m.retries); err != nil {
		return nil, err
	}
	return m, nil
}

func register(reg prometheus.Registerer, cs ...prometheus.Collector) error {
	var errs []error
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("balancer: registering metrics: %w", err)
	}
	return nil
}
