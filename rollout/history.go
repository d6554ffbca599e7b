package rollout

import (
	"context"
	"maps"
	"math"
	"slices"
	"sync"
	"time"
)

// Defaults of the metrics history.
const (
	// DefaultSampleInterval is how often the MetricsSource is sampled.
	DefaultSampleInterval = 5 * time.Second
	// DefaultHistory is how many samples per language are kept (ten
	// minutes at the default interval).
	DefaultHistory = 120
)

// sample is one reading of a language's counters.
type sample struct {
	at       time.Time
	versions map[string]VersionCounters
}

// history keeps the last samples of every language.
type history struct {
	size int
	// mu guards byLang.
	mu     sync.Mutex
	byLang map[string][]sample // oldest first, at most size
}

func newHistory(size int) *history {
	return &history{size: size, byLang: map[string][]sample{}}
}

func (h *history) add(lang string, s sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ss := append(h.byLang[lang], s)
	if len(ss) > h.size {
		ss = slices.Delete(ss, 0, len(ss)-h.size)
	}
	h.byLang[lang] = ss
}

func (h *history) samples(lang string) []sample {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.byLang[lang])
}

// WindowStats is what one version did between two samples.
type WindowStats struct {
	// Requests and Failures are counts in the window.
	Requests float64 `json:"requests"`
	Failures float64 `json:"failures"`
	// Seconds is the window's length.
	Seconds float64 `json:"seconds"`
	// P50 and P99 are latency quantiles in seconds; NaN (null in JSON)
	// without observations.
	P50 float64 `json:"-"`
	P99 float64 `json:"-"`
}

// Rate is requests per second; NaN for an empty window.
func (w WindowStats) Rate() float64 {
	if w.Seconds <= 0 {
		return math.NaN()
	}
	return w.Requests / w.Seconds
}

// ErrorRate is failures per request; NaN without requests.
func (w WindowStats) ErrorRate() float64 {
	if w.Requests <= 0 {
		return math.NaN()
	}
	return w.Failures / w.Requests
}

// between returns what each version did from a to b. A counter lower in b
// than in a means the balancer restarted: b's counts are then the window's.
func between(a, b sample) map[string]WindowStats {
	out := map[string]WindowStats{}
	secs := b.at.Sub(a.at).Seconds()
	for v, cb := range b.versions {
		ca := a.versions[v]
		if cb.Requests < ca.Requests || cb.Failures < ca.Failures || histogramDropped(ca.Latency, cb.Latency) {
			ca = VersionCounters{}
		}
		w := WindowStats{Requests: cb.Requests - ca.Requests, Failures: cb.Failures - ca.Failures, Seconds: secs,
			P50: math.NaN(), P99: math.NaN()}
		if d := histogramDelta(ca.Latency, cb.Latency); d != nil {
			w.P50, w.P99 = quantile(0.5, d), quantile(0.99, d)
		}
		out[v] = w
	}
	return out
}

func histogramDropped(a, b []Bucket) bool {
	return len(a) > 0 && len(b) == len(a) && b[len(b)-1].Count < a[len(a)-1].Count
}

// histogramDelta returns b - a bucket by bucket (b when a is empty or of
// other bounds).
func histogramDelta(a, b []Bucket) []Bucket {
	if len(b) == 0 {
		return nil
	}
	d := slices.Clone(b)
	if len(a) != len(b) {
		return d
	}
	for i := range d {
		d[i].Count -= a[i].Count
	}
	return d
}

// window returns what each version of lang did since the step that began
// at since: from the last sample at or before since (the first after it
// when there is none) to the latest sample. ok is false with fewer than
// two samples to compare.
func (h *history) window(lang string, since time.Time) (map[string]WindowStats, bool) {
	ss := h.samples(lang)
	if len(ss) < 2 {
		return nil, false
	}
	start := 0
	for i, s := range ss {
		if s.at.After(since) {
			break
		}
		start = i
	}
	if start >= len(ss)-1 {
		return nil, false
	}
	return between(ss[start], ss[len(ss)-1]), true
}

// Point is one interval of a version's chart.
type Point struct {
	// At is the end of the interval.
	At time.Time `json:"t"`
	// Rate is requests per second.
	Rate float64 `json:"rate"`
	// ErrorRate, P50 and P99 (seconds) are nil without requests or
	// observations.
	ErrorRate *float64 `json:"error_rate"`
	P50       *float64 `json:"p50"`
	P99       *float64 `json:"p99"`
}

// Series is one version's chart: a point per sample interval, oldest first.
type Series struct {
	Version string  `json:"version"`
	Points  []Point `json:"points"`
}

// series returns every version's chart over lang's history.
func (h *history) series(lang string) []Series {
	ss := h.samples(lang)
	byVersion := map[string][]Point{}
	for i := 1; i < len(ss); i++ {
		for v, w := range between(ss[i-1], ss[i]) {
			byVersion[v] = append(byVersion[v], Point{At: ss[i].at, Rate: orZero(w.Rate()),
				ErrorRate: finite(w.ErrorRate()), P50: finite(w.P50), P99: finite(w.P99)})
		}
	}
	out := make([]Series, 0, len(byVersion))
	for _, v := range slices.Sorted(maps.Keys(byVersion)) {
		out = append(out, Series{Version: v, Points: byVersion[v]})
	}
	return out
}

func finite(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}

func orZero(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// sampleLoop samples every language every SampleInterval until ctx is
// done.
func (m *Manager) sampleLoop(ctx context.Context) {
	t := time.NewTicker(m.opts.SampleInterval)
	defer t.Stop()
	for {
		for _, name := range m.Languages() {
			m.sample(ctx, name)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sample reads lang's counters once into the history.
func (m *Manager) sample(ctx context.Context, lang string) {
	if m.opts.Metrics == nil {
		return
	}
	vs, err := m.opts.Metrics.Sample(ctx, lang)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Debug("sampling the balancer's metrics failed", "lang", lang, "err", err)
		}
		return
	}
	m.history.add(lang, sample{at: m.opts.Now(), versions: vs})
}
