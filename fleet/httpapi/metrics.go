package httpapi

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the API's, named like the service's (fleetkit_fleet_) with
// the same constant kind label.
type metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer, kind string) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "fleetkit_fleet", Name: "api_requests_total",
			Help: "API requests by route, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "fleetkit_fleet", Name: "api_request_duration_seconds",
			Help:    "API request latency by route and method.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"route", "method"}),
	}
	if reg == nil {
		return m, nil
	}
	reg = prometheus.WrapRegistererWith(prometheus.Labels{"kind": kind}, reg)
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, fmt.Errorf("httpapi: metrics already registered (one Handler per kind and Registerer): %w", err)
			}
			return nil, fmt.Errorf("httpapi: register metrics: %w", err)
		}
	}
	return m, nil
}
