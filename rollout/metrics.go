package rollout

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Manager's metrics, all prefixed fleetkit_rollout_.
type metrics struct {
	transitions  *prometheus.CounterVec   // language, kind
	reconcileErr *prometheus.CounterVec   // language
	createTime   *prometheus.HistogramVec // language
}

func newMetrics(reg prometheus.Registerer, m *Manager) (*metrics, error) {
	x := &metrics{
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "fleetkit", Subsystem: "rollout", Name: "transitions_total",
			Help: "Rollout phase changes by language and kind (init, update, rollback, abort).",
		}, []string{"language", "kind"}),
		reconcileErr: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "fleetkit", Subsystem: "rollout", Name: "reconcile_errors_total",
			Help: "Reconcile passes that failed (and will be retried), by language.",
		}, []string{"language"}),
		createTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "fleetkit", Subsystem: "rollout", Name: "machine_create_seconds",
			Help:    "Time from asking the provider for a machine to the machine being healthy and routed.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"language"}),
	}
	for _, c := range []prometheus.Collector{x.transitions, x.reconcileErr, x.createTime, (*fleetCollector)(m)} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("%w: registering metrics: %w", ErrInvalidConfig, err)
		}
	}
	return x, nil
}

var (
	machinesDesc = prometheus.NewDesc("fleetkit_rollout_machines",
		"Machines the manager owns, by language, version and health.", []string{"language", "version", "healthy"}, nil)
	percentDesc = prometheus.NewDesc("fleetkit_rollout_step_percent",
		"The new version's share at the current step of an update; 0 when none is in progress.", []string{"language", "target"}, nil)
)

// fleetCollector reads the Manager's status at scrape time.
type fleetCollector Manager

func (c *fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- machinesDesc
	ch <- percentDesc
}

func (c *fleetCollector) Collect(ch chan<- prometheus.Metric) {
	m := (*Manager)(c)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := m.Status(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(machinesDesc, err)
		return
	}
	for _, l := range st.Languages {
		counts := map[[2]string]int{}
		for _, mc := range l.Machines {
			h := "false"
			if mc.Healthy {
				h = "true"
			}
			counts[[2]string{mc.Version, h}]++
		}
		for k, n := range counts {
			ch <- prometheus.MustNewConstMetric(machinesDesc, prometheus.GaugeValue, float64(n), l.Language, k[0], k[1])
		}
		if _, ok := m.langs[l.Language]; ok {
			ch <- prometheus.MustNewConstMetric(percentDesc, prometheus.GaugeValue, float64(l.Percent), l.Language, l.Phase.Target)
		}
	}
}
