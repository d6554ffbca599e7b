package agent

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetkit/fleetkit/fleet"
)

// metrics are the agent's collectors, registered on Options.Registerer.
type metrics struct {
	desired       prometheus.Gauge
	instances     *prometheus.GaugeVec
	applies       *prometheus.CounterVec
	deletes       *prometheus.CounterVec
	requests      *prometheus.CounterVec
	lastList      prometheus.Gauge
	lastHeartbeat prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		desired: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "fleetkit", Subsystem: "agent", Name: "desired_instances",
			Help: "Instances the control plane last placed on this cluster."}),
		instances: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "fleetkit", Subsystem: "agent", Name: "instances",
			Help: "Instances in the last status report sent, by phase."}, []string{"phase"}),
		applies: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "fleetkit", Subsystem: "agent", Name: "applies_total",
			Help: "Server-side applies of instance objects, by object kind and result."}, []string{"kind", "result"}),
		deletes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "fleetkit", Subsystem: "agent", Name: "deletes_total",
			Help: "Deletions of instance objects, by object kind and result."}, []string{"kind", "result"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "fleetkit", Subsystem: "agent", Name: "control_plane_requests_total",
			Help: "Calls to the control plane's agent API, by call (list, report, heartbeat) and result."}, []string{"call", "result"}),
		lastList: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "fleetkit", Subsystem: "agent", Name: "last_list_timestamp_seconds",
			Help: "When the control plane last answered a list of the desired instances."}),
		lastHeartbeat: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "fleetkit", Subsystem: "agent", Name: "last_heartbeat_timestamp_seconds",
			Help: "When the control plane last accepted a heartbeat."}),
	}
	for _, p := range []string{fleet.PhaseInstalling, fleet.PhaseReady, fleet.PhaseFailed} {
		m.instances.WithLabelValues(p)
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.desired, m.instances, m.applies, m.deletes, m.requests, m.lastList, m.lastHeartbeat} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("agent: metrics: %w", err)
			}
		}
	}
	return m, nil
}

// setPhases counts the phases of a report sent.
func (m *metrics) setPhases(r map[string]fleet.InstanceReport) {
	n := map[string]int{}
	for _, s := range r {
		n[s.Phase]++
	}
	for _, p := range []string{fleet.PhaseInstalling, fleet.PhaseReady, fleet.PhaseFailed} {
		m.instances.WithLabelValues(p).Set(float64(n[p]))
	}
}
