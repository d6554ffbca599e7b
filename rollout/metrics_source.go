package rollout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// MetricsSource reports what a load balancer counted for each version of a
// language. The Manager samples it (Options.SampleInterval) to keep the
// last minutes of every version's request rate, error rate and latency —
// what Status and the page show, and what the automatic mode judges.
// Implementations are safe for concurrent use and may block on I/O.
type MetricsSource interface {
	// Sample returns lang's cumulative counters per version, as counted
	// since the balancer started. A balancer that restarts starts again
	// from zero; the Manager takes a drop as a reset.
	Sample(ctx context.Context, lang string) (map[string]VersionCounters, error)
}

// MetricsFunc adapts a function to MetricsSource.
type MetricsFunc func(ctx context.Context, lang string) (map[string]VersionCounters, error)

// Sample implements MetricsSource.
func (f MetricsFunc) Sample(ctx context.Context, lang string) (map[string]VersionCounters, error) {
	return f(ctx, lang)
}

// VersionCounters are the cumulative counts of one version.
type VersionCounters struct {
	// Requests counts the requests sent to the version's backends.
	Requests float64
	// Failures counts those that failed by the backends' doing.
	Failures float64
	// Latency is the cumulative histogram of request durations, bucket
	// upper bounds in seconds ascending, the last one +Inf; nil when the
	// balancer does not export one.
	Latency []Bucket
}

// Bucket is one bucket of a cumulative histogram.
type Bucket struct {
	UpperBound float64 // seconds; +Inf for the last
	Count      float64 // observations at or below UpperBound
}

// DefaultRequestsMetric is the balancer's counter of upstream requests by
// language, version, backend and status code.
const DefaultRequestsMetric = "fleetkit_balancer_requests_total"

// DefaultFailuresMetric is the balancer's counter of the failures its
// backends caused (5xx answers and connection failures, by language,
// version and reason): what its passive health counts, and nothing a
// client causes (timeouts, answers too large to pass, clients that leave).
const DefaultFailuresMetric = "fleetkit_balancer_backend_failures_total"

// DefaultDurationMetric is the balancer's histogram of request durations
// by language and version.
const DefaultDurationMetric = "fleetkit_balancer_request_duration_seconds"

// CounterOptions configure a BalancerMetrics. The zero value reads the
// balancer's DefaultRequestsMetric, DefaultFailuresMetric and
// DefaultDurationMetric.
type CounterOptions struct {
	// Metric is the counter of requests; "" means DefaultRequestsMetric.
	Metric string
	// FailuresMetric is the counter of failures the backends caused,
	// labelled by language and version; "" means DefaultFailuresMetric.
	// Unused when IsError is set.
	FailuresMetric string
	// DurationMetric is the histogram of request durations labelled by
	// language and version; "" means DefaultDurationMetric.
	DurationMetric string
	// LanguageLabel, VersionLabel and CodeLabel name the labels; "" means
	// "language", "version" and "code".
	LanguageLabel, VersionLabel, CodeLabel string
	// IsError, when set, counts failures from Metric's code label instead
	// of FailuresMetric (for a requests counter of another balancer). It
	// says whether a code is a failure. Beware that codes mix what the
	// backends did with what clients caused (a 504 for a slow input).
	IsError func(code string) bool
}

// BalancerMetrics is a MetricsSource over the Prometheus metrics of a
// balancer read from a prometheus.Gatherer: the in-process registry of a
// balancer, or a remote one through NewScrapeGatherer. With fleetkit's
// balancer the failures are those its backends caused, so a new version
// is judged by its own failures, never by what clients send it. It is safe
// for concurrent use.
type BalancerMetrics struct {
	g    prometheus.Gatherer
	opts CounterOptions
}

var _ MetricsSource = (*BalancerMetrics)(nil)

// NewBalancerMetrics returns a MetricsSource reading g.
func NewBalancerMetrics(g prometheus.Gatherer, opts CounterOptions) *BalancerMetrics {
	opts.Metric = cmp.Or(opts.Metric, DefaultRequestsMetric)
	opts.FailuresMetric = cmp.Or(opts.FailuresMetric, DefaultFailuresMetric)
	opts.DurationMetric = cmp.Or(opts.DurationMetric, DefaultDurationMetric)
	opts.LanguageLabel = cmp.Or(opts.LanguageLabel, "language")
	opts.VersionLabel = cmp.Or(opts.VersionLabel, "version")
	opts.CodeLabel = cmp.Or(opts.CodeLabel, "code")
	return &BalancerMetrics{g: g, opts: opts}
}

// Sample implements MetricsSource.
func (c *BalancerMetrics) Sample(_ context.Context, lang string) (map[string]VersionCounters, error) {
	mfs, err := c.g.Gather()
	if err != nil && len(mfs) == 0 {
		return nil, fmt.Errorf("gathering metrics: %w", err)
	}
	out := map[string]VersionCounters{}
	for _, mf := range mfs {
		name := mf.GetName()
		requests := name == c.opts.Metric
		failures := c.opts.IsError == nil && name == c.opts.FailuresMetric
		duration := name == c.opts.DurationMetric
		if !requests && !failures && !duration {
			continue
		}
		for _, m := range mf.GetMetric() {
			var l, v, code string
			for _, lp := range m.GetLabel() {
				switch lp.GetName() {
				case c.opts.LanguageLabel:
					l = lp.GetValue()
				case c.opts.VersionLabel:
					v = lp.GetValue()
				case c.opts.CodeLabel:
					code = lp.GetValue()
				}
			}
			if l != lang || v == "" {
				continue
			}
			vc := out[v]
			switch {
			case duration:
				vc.Latency = addHistogram(vc.Latency, m.GetHistogram())
			case failures:
				vc.Failures += counterValue(m)
			case c.opts.IsError != nil && c.opts.IsError(code):
				vc.Requests += counterValue(m)
				vc.Failures += counterValue(m)
			default:
				vc.Requests += counterValue(m)
			}
			out[v] = vc
		}
	}
	return out, nil
}

// addHistogram adds h's cumulative buckets to acc (same bounds, or acc
// empty).
func addHistogram(acc []Bucket, h *dto.Histogram) []Bucket {
	if h == nil {
		return acc
	}
	var bs []Bucket
	for _, b := range h.GetBucket() {
		bs = append(bs, Bucket{UpperBound: b.GetUpperBound(), Count: float64(b.GetCumulativeCount())})
	}
	if len(bs) == 0 || !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
		bs = append(bs, Bucket{UpperBound: math.Inf(1), Count: float64(h.GetSampleCount())})
	}
	if acc == nil {
		return bs
	}
	if len(acc) != len(bs) {
		return acc // bounds differ: keep the first
	}
	for i := range acc {
		acc[i].Count += bs[i].Count
	}
	return acc
}

func counterValue(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	}
	return 0
}

// quantile estimates the q-quantile of a cumulative histogram, as
// Prometheus' histogram_quantile does (linear within a bucket; the highest
// finite bound for ranks in the +Inf bucket). NaN without observations.
func quantile(q float64, b []Bucket) float64 {
	if len(b) == 0 || b[len(b)-1].Count <= 0 {
		return math.NaN()
	}
	rank := q * b[len(b)-1].Count
	i, _ := slices.BinarySearchFunc(b, rank, func(x Bucket, r float64) int { return cmp.Compare(x.Count, r) })
	if i >= len(b) {
		i = len(b) - 1
	}
	if math.IsInf(b[i].UpperBound, 1) {
		if i == 0 {
			return math.NaN()
		}
		return b[i-1].UpperBound
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = b[i-1].UpperBound, b[i-1].Count
	}
	if b[i].Count == below {
		return b[i].UpperBound
	}
	return lower + (b[i].UpperBound-lower)*(rank-below)/(b[i].Count-below)
}

// NewScrapeGatherer returns a prometheus.Gatherer that scrapes url (a
// /metrics endpoint, any exposition format) on every Gather. client nil
// means a client with a 10 s timeout.
func NewScrapeGatherer(url string, client *http.Client) prometheus.Gatherer {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		resp, err := client.Get(url)
		if err != nil {
			return nil, fmt.Errorf("scraping %s: %w", url, err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("scraping %s: status %d", url, resp.StatusCode)
		}
		dec := expfmt.NewDecoder(io.LimitReader(resp.Body, 64<<20), expfmt.ResponseFormat(resp.Header))
		var out []*dto.MetricFamily
		for {
			mf := &dto.MetricFamily{}
			if err := dec.Decode(mf); err != nil {
				if errors.Is(err, io.EOF) {
					return out, nil
				}
				return out, fmt.Errorf("scraping %s: %w", url, err)
			}
			out = append(out, mf)
		}
	})
}
