package agentapi

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the agent API's series. Their labels are closed sets: the
// endpoint is one of five names, the code an HTTP status, and a cluster
// is named only once its agent's token was checked against an existing
// cluster, so no client can add series.
type metrics struct {
	requests  *prometheus.CounterVec
	heartbeat *prometheus.GaugeVec
}

// Endpoint labels.
const (
	endpointCluster        = "cluster"
	endpointInstances      = "instances"
	endpointInstanceStatus = "instance_status"
	endpointClusterStatus  = "cluster_status"
	endpointOther          = "other"
)

func newMetrics(reg prometheus.Registerer, kind string) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	constLabels := prometheus.Labels{"kind": kind}
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "fleetkit_fleet", Name: "agent_api_requests_total", ConstLabels: constLabels,
			Help: "Requests to the agent API by endpoint and HTTP status.",
		}, []string{"endpoint", "code"}),
		heartbeat: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "fleetkit_fleet", Name: "agent_heartbeat_timestamp_seconds", ConstLabels: constLabels,
			Help: "When this replica last accepted a heartbeat of the cluster's agent (Unix time); an alert on its age finds a silent agent.",
		}, []string{"cluster"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.heartbeat} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) request(endpoint string, code int) {
	if m != nil {
		m.requests.WithLabelValues(endpoint, strconv.Itoa(code)).Inc()
	}
}

func (m *metrics) beat(clusterID string, at time.Time) {
	if m != nil {
		m.heartbeat.WithLabelValues(clusterID).Set(float64(at.UnixNano()) / 1e9)
	}
}
