package fleet

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

const namespace = "fleetkit_fleet"

// serviceMetrics are the metrics of a Service: workers, instances and
// leadership (fleet/httpapi has the API's).
type serviceMetrics struct {
	reconcileDuration *prometheus.HistogramVec
	reconciles        *prometheus.CounterVec
	instances         *prometheus.GaugeVec
	sinceCreated      *prometheus.HistogramVec
	leader            *prometheus.GaugeVec
	// engines receives the workers' reconcile engine metrics (nil: none),
	// labelled by worker name, which names the kind.
	engines prometheus.Registerer
}

// newServiceMetrics registers the metrics on reg (nil: none) with a
// constant kind label, so services of several kinds share one registry.
func newServiceMetrics(reg prometheus.Registerer, kind string) (*serviceMetrics, error) {
	m := &serviceMetrics{
		reconcileDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "reconcile_duration_seconds",
			Help:    "Time of one Reconcile call by worker.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"worker"}),
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "reconciles_total",
			Help: "Reconcile calls by worker and result (done, requeue, error, terminal, timeout).",
		}, []string{"worker", "result"}),
		instances: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "instances",
			Help: "Live instances by status, as counted by the general worker.",
		}, []string{"status"}),
		sinceCreated: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Name: "status_since_created_seconds",
			Help:    "Time from an instance's creation to its entering a status, by status.",
			Buckets: prometheus.ExponentialBuckets(0.01, 3, 12),
		}, []string{"status"}),
		leader: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Name: "leader",
			Help: "1 while this replica holds the lease of a worker, by worker.",
		}, []string{"worker"}),
	}
	if reg == nil {
		return m, nil
	}
	m.engines = reg
	reg = prometheus.WrapRegistererWith(prometheus.Labels{"kind": kind}, reg)
	for _, c := range []prometheus.Collector{m.reconcileDuration, m.reconciles, m.instances, m.sinceCreated, m.leader} {
		if err := reg.Register(c); err != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(err, &are) {
				return nil, fmt.Errorf("fleet: metrics already registered (one Service per kind and Registerer): %w", err)
			}
			return nil, fmt.Errorf("fleet: register metrics: %w", err)
		}
	}
	return m, nil
}
