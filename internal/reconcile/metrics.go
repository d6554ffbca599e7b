package reconcile

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are one engine's children of the shared collectors.
type metrics struct {
	depth    prometheus.Gauge
	duration prometheus.Observer
	retries  prometheus.Counter
	errors   prometheus.Counter
}

// newMetrics registers the collectors on reg, or takes those already
// registered there (several engines, one registry), and returns the
// children labelled name. With a nil reg the collectors are unregistered:
// updating them costs little and nobody reads them.
func newMetrics(reg prometheus.Registerer, name string) (metrics, error) {
	label := []string{"name"}
	depth := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "fleetkit", Subsystem: "reconcile", Name: "queue_depth",
		Help: "Keys queued and ready to be reconciled, by engine.",
	}, label)
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: "fleetkit", Subsystem: "reconcile", Name: "duration_seconds",
		Help:    "Time of one Reconcile call, by engine.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
	}, label)
	retries := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "fleetkit", Subsystem: "reconcile", Name: "retries_total",
		Help: "Keys queued again after a backoff (an error, a panic or Requeue), by engine.",
	}, label)
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "fleetkit", Subsystem: "reconcile", Name: "errors_total",
		Help: "Reconcile calls that failed (errors, terminal errors, panics) and failed lists, by engine.",
	}, label)
	if reg != nil {
		var err error
		if depth, err = register(reg, depth); err != nil {
			return metrics{}, err
		}
		if duration, err = register(reg, duration); err != nil {
			return metrics{}, err
		}
		if retries, err = register(reg, retries); err != nil {
			return metrics{}, err
		}
		if errs, err = register(reg, errs); err != nil {
			return metrics{}, err
		}
	}
	return metrics{
		depth:    depth.WithLabelValues(name),
		duration: duration.WithLabelValues(name),
		retries:  retries.WithLabelValues(name),
		errors:   errs.WithLabelValues(name),
	}, nil
}

// register registers c on reg, or returns the collector of the same
// description already there.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, fmt.Errorf("reconcile: register metrics: %w", err)
}
