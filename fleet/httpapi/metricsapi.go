package httpapi

import (
	"context"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/auth"
	"github.com/fleetkit/fleetkit/internal/httpjson"
)

// The bounds of the original's query_range parameters.
const (
	maxRangeMinutes  = 4320
	maxRangeInterval = 10800
)

// Defaults of the scrape history (Options.MetricsHistory).
const (
	defaultHistoryScrapes = 720
	defaultHistorySamples = 200_000
	historySpacing        = time.Second
)

// instanceMetrics reads the metrics of a visible, ready instance and
// records the reading for query_range.
func (s *Handler) instanceMetrics(ctx context.Context, id string, p auth.Principal) (fleet.Instance, []*dto.MetricFamily, scrape, error) {
	inst, err := s.visibleInstance(ctx, id, p)
	if err != nil {
		return inst, nil, scrape{}, err
	}
	if inst.Status != fleet.StatusReady || inst.Host == "" {
		// Its metrics are gone or not there yet; what was recorded of an
		// earlier life (before a suspend) is not its present.
		s.history.forget(inst.ID)
		return inst, nil, scrape{}, apiErr(21, "%s %s is %s, not ready: it has no metrics to query", s.kind.Display, inst.ID, inst.Status)
	}
	at := time.Now()
	fams, err := s.opts.Metrics.Gather(ctx, inst)
	if err != nil {
		if errors.Is(err, ErrMetricsUnavailable) {
			s.log.Warn("fleet: instance metrics unavailable", "id", inst.ID, "err", err)
			return inst, nil, scrape{}, &apiError{code: 9, status: http.StatusServiceUnavailable,
				reason: "Unspecified error: the metrics of " + s.kind.Display + " " + inst.ID + " cannot be read now, try again later"}
		}
		return inst, nil, scrape{}, err
	}
	sc := scrape{at: at, samples: flatten(fams)}
	s.history.record(inst.ID, sc)
	return inst, fams, sc, nil
}

// metricFilters returns the filters query parameter as a set of metric
// names, given repeatedly (filters=a&filters=b) or comma-separated. Nil:
// every metric.
func metricFilters(r *http.Request) map[string]bool {
	var out map[string]bool
	for _, v := range r.URL.Query()["filters"] {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				if out == nil {
					out = map[string]bool{}
				}
				out[f] = true
			}
		}
	}
	return out
}

// wanted says whether filters select the sample: by its series name or
// by its family's (a histogram's name selects its _bucket, _sum, _count).
// A set, so that many filters cost no more per sample than one.
func wanted(filters map[string]bool, sm sample) bool {
	if filters == nil {
		return true
	}
	name := sm.labels["__name__"]
	if filters[name] {
		return true
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && filters[base] {
			return true
		}
	}
	return false
}

func sampleMs(sm sample, sc scrape) int64 {
	if sm.ms != 0 {
		return sm.ms
	}
	return sc.at.UnixMilli()
}

// metricsQuery answers GET …/{id}/metrics/query: the instance's series now.
func (s *Handler) metricsQuery(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	filters := metricFilters(r)
	inst, _, sc, err := s.instanceMetrics(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	items := make([]map[string]any, 0, len(sc.samples))
	for _, sm := range sc.samples {
		if wanted(filters, sm) {
			items = append(items, map[string]any{"metric": sm.labels, "timestamp": sampleMs(sm, sc), "value": jsonFloat(sm.value)})
		}
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"kind": "MetricsInstantQueryList", "id": inst.ID, "items": items})
	return nil
}

// rangeParam parses a required integer query parameter within [1, max],
// with the original's error for one missing or not a number.
func rangeParam(r *http.Request, name string, maxValue int) (int, error) {
	v := r.URL.Query().Get(name)
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, apiErr(23, "bad request, cannot parse query parameter '%s' '%s'", name, v)
	}
	if n < 1 || n > maxValue {
		return 0, apiErr(21, "query parameter %s must be between 1 and %d, not %d", name, maxValue, n)
	}
	return n, nil
}

// metricsQueryRange answers GET …/{id}/metrics/query_range: the instance's
// series over the last duration minutes, one point per interval seconds
// at most. The points are the readings this API made of the instance (one
// per metrics call, at most one a second), the present one included.
func (s *Handler) metricsQueryRange(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	duration, err := rangeParam(r, "duration", maxRangeMinutes)
	if err != nil {
		return err
	}
	interval, err := rangeParam(r, "interval", maxRangeInterval)
	if err != nil {
		return err
	}
	filters := metricFilters(r)
	inst, _, now, err := s.instanceMetrics(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	scrapes := s.history.since(inst.ID, now.at.Add(-time.Duration(duration)*time.Minute))
	if len(scrapes) == 0 || scrapes[len(scrapes)-1].at.Before(now.at) {
		// Not kept (spaced too closely, or over the budget): still the
		// present reading.
		scrapes = append(scrapes, now)
	}
	type series struct {
		metric map[string]string
		values []map[string]any
	}
	var order []string
	byKey := map[string]*series{}
	var last time.Time
	step := time.Duration(interval) * time.Second
	for i, sc := range scrapes {
		// One point per interval, the newest always.
		if i > 0 && i < len(scrapes)-1 && sc.at.Sub(last) < step {
			continue
		}
		last = sc.at
		for _, sm := range sc.samples {
			if !wanted(filters, sm) {
				continue
			}
			se, ok := byKey[sm.key]
			if !ok {
				se = &series{metric: sm.labels}
				byKey[sm.key] = se
				order = append(order, sm.key)
			}
			se.values = append(se.values, map[string]any{"timestamp": sampleMs(sm, sc), "value": jsonFloat(sm.value)})
		}
	}
	slices.Sort(order)
	items := make([]map[string]any, 0, len(order))
	for _, k := range order {
		items = append(items, map[string]any{"metric": byKey[k].metric, "values": byKey[k].values})
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"kind": "MetricsRangeQueryList", "id": inst.ID, "items": items})
	return nil
}

// metricsFederate answers GET …/{id}/metrics/federate: the instance's
// metrics in the Prometheus text format, for a Prometheus to scrape.
func (s *Handler) metricsFederate(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	_, fams, _, err := s.instanceMetrics(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	slices.SortFunc(fams, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	format := expfmt.NewFormat(expfmt.TypeTextPlain)
	w.Header().Set("Content-Type", string(format))
	enc := expfmt.NewEncoder(w, format)
	for _, f := range fams {
		if err := enc.Encode(f); err != nil {
			// The status line is out: all that is left is to stop.
			s.log.Warn("fleet: federate write failed", "err", err)
			return nil
		}
	}
	return nil
}

// jsonFloat sends NaN and infinities, which JSON cannot carry and the
// original's number schema does not allow, as 0.
func jsonFloat(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}
