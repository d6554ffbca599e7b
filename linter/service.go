package linter

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetkit/fleetkit/internal/httpjson"
)

// Faults is the fault injection of a service version. The zero value
// injects nothing.
type Faults struct {
	// Delay is added to every lint. The wait does not block other requests
	// and ends early when the client goes away.
	Delay time.Duration
	// CrashOnEmpty makes a lint of empty code crash the service for good:
	// that request is answered with 500, and every later call fails.
	CrashOnEmpty bool
	// CrashRate is the probability, in [0, 1], that any lint crashes the
	// service the same way.
	CrashRate float64
}

// The four versions of the reference service, per the wire contract.
// The baseline is the language's default configuration (Config{}: for
// Python, pycodestyle's default selection) without its
// newline-at-end-of-file rule.
const (
	Version10 = "1.0" // the baseline rule set
	Version11 = "1.1" // baseline rules, slow
	Version12 = "1.2" // baseline rules, crashes on empty code
	Version20 = "2.0" // baseline plus the newline-at-end-of-file rule
)

// DefaultDelay is the extra latency of version 1.1.
const DefaultDelay = time.Second

// VersionProfile returns the rule configuration and faults of one of the
// four standard versions for lang: the versions are configurations of the
// same code, not copies of it. The 1.x versions leave lang.NewlineAtEOF
// out through ExtendIgnore, which keeps the language's default ignore list
// and which no Select can undo (see Config).
func VersionProfile(lang Language, version string) (Config, Faults, error) {
	baseline := Config{}
	if lang.NewlineAtEOF != "" {
		baseline.ExtendIgnore = []string{lang.NewlineAtEOF}
	}
	switch version {
	case Version10:
		return baseline, Faults{}, nil
	case Version11:
		return baseline, Faults{Delay: DefaultDelay}, nil
	case Version12:
		return baseline, Faults{CrashOnEmpty: true}, nil
	case Version20:
		return Config{}, Faults{}, nil
	}
	return Config{}, Faults{}, fmt.Errorf("%w: %q (want %s, %s, %s or %s)",
		ErrUnknownVersion, version, Version10, Version11, Version12, Version20)
}

// ServiceOptions configures a Service.
type ServiceOptions struct {
	// Language and Version are reported by /health and in every answer.
	Language string
	Version  string
	// Linter does the work. Required.
	Linter Linter
	// Config is the configuration Linter was built from (the machine's,
	// the version's included): a request's own "config" applies over it.
	Config Config
	// New builds a linter for a configuration (Language.New). With it,
	// requests may carry their own "config" (RequestConfig); without it,
	// such requests are refused with 400.
	New func(Config) (Linter, error)
	// MaxConfigs bounds how many linters built for request configurations
	// are kept for reuse; 0 means 32.
	MaxConfigs int
	// Faults injects the behaviour of the test versions.
	Faults Faults
	// MaxBody limits request bodies; 0 means 1 MiB.
	MaxBody int64
	// OnCrash, if set, is called once, in its own goroutine, after the
	// request that crashed the service has been answered. A process uses it
	// to shut down and exit.
	OnCrash func()
	// Registerer receives the service's metrics; nil means none.
	Registerer prometheus.Registerer
	// Rand returns a number in [0, 1) for CrashRate; nil means math/rand/v2.
	Rand func() float64
}

// Service is the linter service of the wire contract, an http.Handler:
//
//	POST /lint    {"code": "...", "config": {...}} → {"result", "details", "diagnostics", "language", "version"}
//	GET  /health  → {"version", "language", "requestCount"}
//
// It is safe for concurrent use.
type Service struct {
	opts     ServiceOptions
	requests atomic.Int64 // /lint calls, answered or not
	crashed  atomic.Bool
	onCrash  sync.Once
	configs  *linterCache // nil without ServiceOptions.New

	lintTotal    *prometheus.CounterVec
	lintDuration prometheus.Histogram
}

// NewService returns a Service for opts.
func NewService(opts ServiceOptions) (*Service, error) {
	if opts.Linter == nil {
		return nil, fmt.Errorf("linter: ServiceOptions.Linter is required")
	}
	if opts.Faults.CrashRate < 0 || opts.Faults.CrashRate > 1 {
		return nil, fmt.Errorf("linter: crash rate %v is not in [0, 1]", opts.Faults.CrashRate)
	}
	if opts.Faults.Delay < 0 {
		return nil, fmt.Errorf("linter: negative delay %v", opts.Faults.Delay)
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = httpjson.DefaultMaxBody
	}
	if opts.Rand == nil {
		opts.Rand = rand.Float64
	}
	if opts.MaxConfigs < 0 {
		return nil, fmt.Errorf("linter: negative MaxConfigs %d", opts.MaxConfigs)
	}
	if opts.MaxConfigs == 0 {
		opts.MaxConfigs = defaultConfigs
	}
	s := &Service{opts: opts}
	if opts.New != nil {
		s.configs = newLinterCache(opts.MaxConfigs, opts.New)
	}
	labels := prometheus.Labels{"language": opts.Language, "version": opts.Version}
	s.lintTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "fleetkit", Subsystem: "linter", Name: "lint_requests_total",
		Help:        "Lint requests by outcome: clean, problems or error.",
		ConstLabels: labels,
	}, []string{"outcome"})
	s.lintDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "fleetkit", Subsystem: "linter", Name: "lint_duration_seconds",
		Help:        "Time to answer a lint request, injected delay included.",
		ConstLabels: labels,
		Buckets:     []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	})
	if opts.Registerer != nil {
		for _, c := range []prometheus.Collector{s.lintTotal, s.lintDuration} {
			if err := opts.Registerer.Register(c); err != nil {
				return nil, fmt.Errorf("linter: registering metrics: %w", err)
			}
		}
	}
	return s, nil
}

// RequestCount returns the number of /lint calls received.
func (s *Service) RequestCount() int64 { return s.requests.Load() }

// Crashed reports whether fault injection has broken the service.
func (s *Service) Crashed() bool { return s.crashed.Load() }

// LintRequest is the body of POST /lint.
type LintRequest struct {
	Code *string `json:"code"`
	// Config, optional, is the request's own rule configuration.
	Config *RequestConfig `json:"config,omitempty"`
}

// lintBody is LintRequest as read: the config is decoded on its own, so
// that its unknown fields are refused while the body's are ignored.
type lintBody struct {
	Code   *string         `json:"code"`
	Config json.RawMessage `json:"config"`
}

// LintResponse is the answer to POST /lint.
type LintResponse struct {
	Result      bool         `json:"result"`
	Details     string       `json:"details"`
	Diagnostics []Diagnostic `json:"diagnostics"`
	Language    string       `json:"language"`
	Version     string       `json:"version"`
	// Unsupported lists what the configuration names that the language
	// does not implement (a checkstyle module, say), so that a missing
	// finding is never a silent one. Omitted when empty.
	Unsupported []string `json:"unsupported,omitempty"`
}

// HealthResponse is the answer to GET /health.
type HealthResponse struct {
	Version      string `json:"version"`
	Language     string `json:"language"`
	RequestCount int64  `json:"requestCount"`
}

func (s *Service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/lint":
		s.requests.Add(1)
		if httpjson.RequireMethod(w, r, http.MethodPost) {
			s.serveLint(w, r)
		}
	case "/health":
		if !httpjson.RequireMethod(w, r, http.MethodGet) {
			return
		}
		if s.crashed.Load() {
			httpjson.WriteError(w, errCrashed())
			return
		}
		httpjson.Write(w, http.StatusOK, HealthResponse{
			Version: s.opts.Version, Language: s.opts.Language, RequestCount: s.requests.Load(),
		})
	default:
		httpjson.WriteError(w, httpjson.Errorf(http.StatusNotFound, "no such endpoint %q: use POST /lint or GET /health", r.URL.Path))
	}
}

func errCrashed() error {
	return httpjson.Errorf(http.StatusInternalServerError, "%v: this instance is broken for good", ErrCrashed)
}

func (s *Service) serveLint(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	outcome := "error"
	defer func() {
		s.lintTotal.WithLabelValues(outcome).Inc()
		s.lintDuration.Observe(time.Since(start).Seconds())
	}()
	if s.crashed.Load() {
		httpjson.WriteError(w, errCrashed())
		return
	}
	var req lintBody
	if err := httpjson.Decode(w, r, &req, httpjson.DecodeOptions{MaxBody: s.opts.MaxBody}); err != nil {
		httpjson.WriteError(w, err)
		return
	}
	if req.Code == nil {
		httpjson.WriteError(w, httpjson.Errorf(http.StatusBadRequest, `missing field "code": send {"code": "<source text>"}`))
		return
	}
	l, err := s.linterFor(req.Config)
	if err != nil {
		httpjson.WriteError(w, err)
		return
	}
	f := s.opts.Faults
	if (f.CrashOnEmpty && *req.Code == "") || (f.CrashRate > 0 && s.opts.Rand() < f.CrashRate) {
		s.crash(w)
		return
	}
	if f.Delay > 0 && !sleep(r.Context(), f.Delay) {
		// The client is gone; nobody reads an answer.
		return
	}
	diags, err := l.Lint(r.Context(), Source{Code: []byte(*req.Code)})
	if err != nil {
		if r.Context().Err() != nil {
			return // the client is gone, and the lint stopped with it
		}
		httpjson.WriteError(w, httpjson.Errorf(http.StatusInternalServerError, "lint failed: %v", err))
		return
	}
	if diags == nil {
		diags = []Diagnostic{}
	}
	outcome = "problems"
	if len(diags) == 0 {
		outcome = "clean"
	}
	resp := LintResponse{
		Result:      len(diags) == 0,
		Details:     Details(diags),
		Diagnostics: diags,
		Language:    s.opts.Language,
		Version:     s.opts.Version,
	}
	if u, ok := l.(interface{ Unsupported() []string }); ok {
		resp.Unsupported = u.Unsupported()
	}
	httpjson.Write(w, http.StatusOK, resp)
}

// linterFor returns the linter for a request's raw "config": the
// service's own when there is none.
func (s *Service) linterFor(raw json.RawMessage) (Linter, error) {
	rc, err := decodeRequestConfig(raw)
	if err != nil || rc == nil {
		return s.opts.Linter, err
	}
	if s.configs == nil {
		return nil, httpjson.Errorf(http.StatusBadRequest, "invalid config: this service takes no per-request configuration")
	}
	l, err := s.configs.get(rc.over(s.opts.Config))
	if err != nil {
		return nil, httpjson.Errorf(http.StatusBadRequest, "invalid config: %v", err)
	}
	return l, nil
}

func (s *Service) crash(w http.ResponseWriter) {
	s.crashed.Store(true)
	httpjson.WriteError(w, httpjson.Errorf(http.StatusInternalServerError, "%v: fault injection of version %s fired", ErrCrashed, s.opts.Version))
	if s.opts.OnCrash != nil {
		// In a goroutine: OnCrash may shut the server down, which waits for
		// this handler to return.
		s.onCrash.Do(func() { go s.opts.OnCrash() })
	}
}

// sleep waits for d and reports false if ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Details renders diagnostics as the human text of the wire contract.
func Details(diags []Diagnostic) string {
	if len(diags) == 0 {
		return "no problems found"
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(diags)))
	if len(diags) == 1 {
		b.WriteString(" problem found:")
	} else {
		b.WriteString(" problems found:")
	}
	for _, d := range diags {
		b.WriteString("\n")
		b.WriteString(d.String())
	}
	return b.String()
}
