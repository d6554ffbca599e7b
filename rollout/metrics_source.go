package rollout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// DefaultRequestsMetric is the balancer's counter of upstream requests by
// language, version, backend and status code.
const DefaultRequestsMetric = "fleetkit_balancer_requests_total"

// DefaultFailuresMetric is the balancer's counter of the failures its
// backends caused (5xx answers and connection failures, by language,
// version and reason): what its passive health counts, and nothing a
// client causes (timeouts, answers too large to pass, clients that leave).
const DefaultFailuresMetric = "fleetkit_balancer_backend_failures_total"

// CounterOptions configure a CounterErrorRates. The zero value reads the
// balancer's DefaultRequestsMetric and DefaultFailuresMetric.
type CounterOptions struct {
	// Metric is the counter of requests; "" means DefaultRequestsMetric.
	Metric string
	// FailuresMetric is the counter of failures the backends caused,
	// labelled by language and version; "" means DefaultFailuresMetric.
	// Unused when IsError is set.
	FailuresMetric string
	// LanguageLabel, VersionLabel and CodeLabel name the labels; "" means
	// "language", "version" and "code".
	LanguageLabel, VersionLabel, CodeLabel string
	// IsError, when set, counts failures from Metric's code label instead
	// of FailuresMetric (for a requests counter of another balancer). It
	// says whether a code is a failure. Beware that codes mix what the
	// backends did with what clients caused (a 504 for a slow input).
	IsError func(code string) bool
}

// CounterErrorRates is an ErrorRateSource over Prometheus counters of
// requests and of failures labelled by language and version, read from a
// prometheus.Gatherer: the in-process registry of a balancer, or a remote
// one through NewScrapeGatherer. With fleetkit's balancer the failures are
// those its backends caused, so a new version is judged by its own
// failures, never by what clients send it. Each ErrorRates call returns
// the rates over the requests counted since the previous call for the same
// language (since the start for the first). It is safe for concurrent use.
type CounterErrorRates struct {
	g    prometheus.Gatherer
	opts CounterOptions

	// mu guards last.
	mu   sync.Mutex
	last map[[2]string][2]float64 // {lang, version} → {requests, errors}
}

var _ ErrorRateSource = (*CounterErrorRates)(nil)

// NewCounterErrorRates returns an ErrorRateSource reading g.
func NewCounterErrorRates(g prometheus.Gatherer, opts CounterOptions) *CounterErrorRates {
	opts.Metric = cmp.Or(opts.Metric, DefaultRequestsMetric)
	opts.FailuresMetric = cmp.Or(opts.FailuresMetric, DefaultFailuresMetric)
	opts.LanguageLabel = cmp.Or(opts.LanguageLabel, "language")
	opts.VersionLabel = cmp.Or(opts.VersionLabel, "version")
	opts.CodeLabel = cmp.Or(opts.CodeLabel, "code")
	return &CounterErrorRates{g: g, opts: opts, last: map[[2]string][2]float64{}}
}

// ErrorRates implements ErrorRateSource.
func (c *CounterErrorRates) ErrorRates(ctx context.Context, lang, oldVersion, newVersion string) (float64, float64, error) {
	mfs, err := c.g.Gather()
	if err != nil && len(mfs) == 0 {
		return 0, 0, fmt.Errorf("gathering metrics: %w", err)
	}
	now := map[string][2]float64{} // version → {requests, failures}
	for _, mf := range mfs {
		requests := mf.GetName() == c.opts.Metric
		failures := c.opts.IsError == nil && mf.GetName() == c.opts.FailuresMetric
		if !requests && !failures {
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
			if l != lang {
				continue
			}
			n := counterValue(m)
			t := now[v]
			switch {
			case failures:
				t[1] += n
			case c.opts.IsError != nil && c.opts.IsError(code):
				t[0] += n
				t[1] += n
			default:
				t[0] += n
			}
			now[v] = t
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rate := func(v string) float64 {
		k := [2]string{lang, v}
		cur, prev := now[v], c.last[k]
		c.last[k] = cur
		req, errs := cur[0]-prev[0], cur[1]-prev[1]
		if req <= 0 {
			return math.NaN()
		}
		return errs / req
	}
	return rate(oldVersion), rate(newVersion), nil
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
