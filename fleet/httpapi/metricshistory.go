package httpapi

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// sample is one series' value in one scrape. Labels include __name__.
type sample struct {
	key    string
	labels map[string]string
	value  float64
	ms     int64 // the exposition's timestamp; 0: the scrape's
}

// flatten turns families into samples, sorted by series: counters, gauges
// and untyped values as they are; summaries and histograms as their
// _sum, _count and quantile or bucket series, as Prometheus stores them.
func flatten(fams []*dto.MetricFamily) []sample {
	var out []sample
	add := func(name string, m *dto.Metric, extra map[string]string, v float64) {
		labels := map[string]string{"__name__": name}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		for k, val := range extra {
			labels[k] = val
		}
		out = append(out, sample{key: seriesKey(labels), labels: labels, value: v, ms: m.GetTimestampMs()})
	}
	for _, f := range fams {
		name := f.GetName()
		for _, m := range f.GetMetric() {
			switch {
			case m.Counter != nil:
				add(name, m, nil, m.GetCounter().GetValue())
			case m.Gauge != nil:
				add(name, m, nil, m.GetGauge().GetValue())
			case m.Untyped != nil:
				add(name, m, nil, m.GetUntyped().GetValue())
			case m.Summary != nil:
				s := m.GetSummary()
				for _, q := range s.GetQuantile() {
					add(name, m, map[string]string{"quantile": formatFloat(q.GetQuantile())}, q.GetValue())
				}
				add(name+"_sum", m, nil, s.GetSampleSum())
				add(name+"_count", m, nil, float64(s.GetSampleCount()))
			case m.Histogram != nil:
				h := m.GetHistogram()
				inf := false
				for _, b := range h.GetBucket() {
					inf = inf || math.IsInf(b.GetUpperBound(), 1)
					add(name+"_bucket", m, map[string]string{"le": formatFloat(b.GetUpperBound())}, float64(b.GetCumulativeCount()))
				}
				if !inf {
					add(name+"_bucket", m, map[string]string{"le": "+Inf"}, float64(h.GetSampleCount()))
				}
				add(name+"_sum", m, nil, h.GetSampleSum())
				add(name+"_count", m, nil, float64(h.GetSampleCount()))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

func formatFloat(f float64) string {
	if math.IsInf(f, 1) {
		return "+Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// seriesKey identifies a series: its labels in name order.
func seriesKey(labels map[string]string) string {
	names := make([]string, 0, len(labels))
	for k := range labels {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(labels["__name__"])
	for _, k := range names {
		if k == "__name__" {
			continue
		}
		b.WriteString("\xff" + k + "\xfe" + labels[k])
	}
	return b.String()
}

// scrape is one reading of an instance's metrics.
type scrape struct {
	at      time.Time
	samples []sample // immutable once recorded
}

// metricsHistory keeps the recent scrapes of each instance for
// query_range: at most perInstance scrapes of an instance, at most one per
// spacing, and at most maxSamples samples over all instances (the
// instance whose oldest scrape is oldest gives way first). Safe for
// concurrent use.
type metricsHistory struct {
	perInstance int
	maxSamples  int
	spacing     time.Duration

	mu    sync.Mutex
	byID  map[string][]scrape // guarded by mu: oldest first
	total int                 // guarded by mu: samples held
}

func newMetricsHistory(perInstance, maxSamples int, spacing time.Duration) *metricsHistory {
	return &metricsHistory{perInstance: perInstance, maxSamples: maxSamples, spacing: spacing, byID: map[string][]scrape{}}
}

// record keeps sc for instance id, unless the last one kept is more
// recent than the spacing or sc alone is over the budget.
func (h *metricsHistory) record(id string, sc scrape) {
	if len(sc.samples) > h.maxSamples {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	list := h.byID[id]
	if n := len(list); n > 0 && sc.at.Sub(list[n-1].at) < h.spacing {
		return
	}
	list = append(list, sc)
	h.total += len(sc.samples)
	if len(list) > h.perInstance {
		h.total -= len(list[0].samples)
		list = append(list[:0:0], list[1:]...)
	}
	h.byID[id] = list
	for h.total > h.maxSamples {
		h.evictOldest()
	}
}

// evictOldest drops the oldest scrape held. h.mu must be held.
func (h *metricsHistory) evictOldest() {
	oldest := ""
	var at time.Time
	for id, list := range h.byID {
		if oldest == "" || list[0].at.Before(at) {
			oldest, at = id, list[0].at
		}
	}
	list := h.byID[oldest]
	h.total -= len(list[0].samples)
	if len(list) == 1 {
		delete(h.byID, oldest)
		return
	}
	h.byID[oldest] = list[1:]
}

// since returns the scrapes of id taken at or after t, oldest first.
func (h *metricsHistory) since(id string, t time.Time) []scrape {
	h.mu.Lock()
	defer h.mu.Unlock()
	list := h.byID[id]
	i := sort.Search(len(list), func(i int) bool { return !list[i].at.Before(t) })
	return append([]scrape(nil), list[i:]...)
}

// forget drops the scrapes of id.
func (h *metricsHistory) forget(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, sc := range h.byID[id] {
		h.total -= len(sc.samples)
	}
	delete(h.byID, id)
}
