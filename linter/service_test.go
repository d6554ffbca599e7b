package linter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/linter"
)

// eofLanguage is a tiny but real rule set: "TAB" flags tab characters
// (or the character of the option "marker"), "LONG" lines longer than
// MaxLineLength (default 10), and "EOF" a missing final newline. It keeps
// these tests independent of the built-in rule sets.
func eofLanguage() linter.Language {
	return linter.Language{
		Name:         "tiny",
		Codes:        []string{"TAB", "LONG", "EOF"},
		NewlineAtEOF: "EOF",
		New: func(cfg linter.Config) (linter.Linter, error) {
			marker, maxLen := "\t", 10
			if cfg.MaxLineLength > 0 {
				maxLen = cfg.MaxLineLength
			}
			for k, v := range cfg.Options {
				if k != "marker" || len(v) != 1 {
					return nil, fmt.Errorf("tiny: unknown option %q or bad value %q", k, v)
				}
				marker = v
			}
			return linter.LinterFunc(func(_ context.Context, src linter.Source) ([]linter.Diagnostic, error) {
				var ds []linter.Diagnostic
				for i, line := range strings.Split(string(src.Code), "\n") {
					if c := strings.Index(line, marker); c >= 0 && cfg.Enabled("TAB") {
						ds = append(ds, linter.Diagnostic{Line: i + 1, Column: c + 1, Code: "TAB", Message: "tab"})
					}
					if len(line) > maxLen && cfg.Enabled("LONG") {
						ds = append(ds, linter.Diagnostic{Line: i + 1, Column: maxLen + 1, Code: "LONG", Message: "long"})
					}
				}
				if n := len(src.Code); n > 0 && src.Code[n-1] != '\n' && cfg.Enabled("EOF") {
					ds = append(ds, linter.Diagnostic{Line: bytes.Count(src.Code, []byte("\n")) + 1, Column: 1, Code: "EOF", Message: "no newline at end of file"})
				}
				return ds, nil
			}), nil
		},
	}
}

func newService(t *testing.T, version string, mod func(*linter.ServiceOptions)) *linter.Service {
	t.Helper()
	lang := eofLanguage()
	cfg, faults, err := linter.VersionProfile(lang, version)
	require.NoError(t, err)
	l, err := lang.New(cfg)
	require.NoError(t, err)
	opts := linter.ServiceOptions{Language: lang.Name, Version: version, Linter: l, Faults: faults, Config: cfg, New: lang.New}
	if mod != nil {
		mod(&opts)
	}
	s, err := linter.NewService(opts)
	require.NoError(t, err)
	return s
}

func do(t *testing.T, h http.Handler, method, path, body string) (int, map[string]any) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	var m map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &m), rec.Body.String())
	return rec.Code, m
}

func TestVersions(t *testing.T) {
	tests := []struct {
		version    string
		code       string
		wantResult bool
		wantCodes  []any
	}{
		{"1.0", "x=1", true, []any{}},
		{"2.0", "x=1", false, []any{"EOF"}},
		{"1.0", "x=1\n", true, []any{}},
		{"2.0", "x=1\n", true, []any{}},
		{"1.0", "\tx\n", false, []any{"TAB"}},
		{"1.2", "\tx", false, []any{"TAB"}},
	}
	for _, tt := range tests {
		t.Run(tt.version+"/"+tt.code, func(t *testing.T) {
			s := newService(t, tt.version, nil)
			body, _ := json.Marshal(map[string]string{"code": tt.code})
			status, m := do(t, s, http.MethodPost, "/lint", string(body))
			require.Equal(t, http.StatusOK, status)
			assert.Equal(t, tt.wantResult, m["result"])
			assert.Equal(t, tt.version, m["version"])
			assert.Equal(t, "tiny", m["language"])
			var codes []any = []any{}
			for _, d := range m["diagnostics"].([]any) {
				codes = append(codes, d.(map[string]any)["code"])
			}
			assert.Equal(t, tt.wantCodes, codes)
			if tt.wantResult {
				assert.Equal(t, "no problems found", m["details"])
			} else {
				assert.Contains(t, m["details"], "problem")
			}
		})
	}
	_, _, err := linter.VersionProfile(eofLanguage(), "3.0")
	require.ErrorIs(t, err, linter.ErrUnknownVersion)
}

func TestHealthCountsLintCallsOnly(t *testing.T) {
	s := newService(t, "1.0", nil)
	for range 3 {
		do(t, s, http.MethodPost, "/lint", `{"code":"a\n"}`)
		do(t, s, http.MethodGet, "/health", "")
	}
	status, m := do(t, s, http.MethodGet, "/health", "")
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, map[string]any{"version": "1.0", "language": "tiny", "requestCount": 3.0}, m)
}

func TestBadInput(t *testing.T) {
	s := newService(t, "1.0", func(o *linter.ServiceOptions) { o.MaxBody = 64 })
	tests := []struct {
		name, method, path, body string
		status                   int
		msg                      string
	}{
		{"bad json", "POST", "/lint", `{"code":`, 400, "invalid JSON"},
		{"not an object", "POST", "/lint", `[1]`, 400, "invalid JSON"},
		{"wrong type", "POST", "/lint", `{"code": 5}`, 400, `field "code"`},
		{"missing code", "POST", "/lint", `{}`, 400, `missing field "code"`},
		{"empty body", "POST", "/lint", ``, 400, "empty body"},
		{"two values", "POST", "/lint", `{"code":""} {}`, 400, "more than one value"},
		{"too large", "POST", "/lint", `{"code":"` + strings.Repeat("x", 100) + `"}`, 413, "too large"},
		{"wrong method lint", "GET", "/lint", ``, 405, "use POST"},
		{"wrong method health", "POST", "/health", ``, 405, "use GET"},
		{"unknown path", "GET", "/nope", ``, 404, "no such endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, m := do(t, s, tt.method, tt.path, tt.body)
			assert.Equal(t, tt.status, status)
			assert.Equal(t, "error", m["status"])
			assert.Contains(t, m["message"], tt.msg)
		})
	}
	// Bad input loses nothing: the service still answers.
	status, m := do(t, s, http.MethodPost, "/lint", `{"code":"ok\n"}`)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, true, m["result"])
}

func TestCrashOnEmpty(t *testing.T) {
	crashed := make(chan struct{}, 2)
	s := newService(t, "1.2", func(o *linter.ServiceOptions) { o.OnCrash = func() { crashed <- struct{}{} } })
	status, _ := do(t, s, http.MethodPost, "/lint", `{"code":"fine\n"}`)
	require.Equal(t, http.StatusOK, status)
	require.False(t, s.Crashed())

	status, m := do(t, s, http.MethodPost, "/lint", `{"code":""}`)
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.Contains(t, m["message"], "crashed")
	select {
	case <-crashed:
	case <-time.After(5 * time.Second):
		t.Fatal("OnCrash was not called")
	}
	// Broken for good, and OnCrash fires once only.
	status, _ = do(t, s, http.MethodPost, "/lint", `{"code":"fine\n"}`)
	assert.Equal(t, http.StatusInternalServerError, status)
	status, _ = do(t, s, http.MethodGet, "/health", "")
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.True(t, s.Crashed())
	assert.Empty(t, crashed)
}

func TestEmptyCodeIsFineOnOtherVersions(t *testing.T) {
	for _, v := range []string{"1.0", "2.0"} {
		s := newService(t, v, nil)
		status, m := do(t, s, http.MethodPost, "/lint", `{"code":""}`)
		assert.Equal(t, http.StatusOK, status)
		assert.Equal(t, true, m["result"])
	}
}

func TestCrashRate(t *testing.T) {
	s := newService(t, "1.0", func(o *linter.ServiceOptions) {
		o.Faults.CrashRate = 0.5
		o.Rand = func() float64 { return 0.49 }
	})
	status, _ := do(t, s, http.MethodPost, "/lint", `{"code":"x\n"}`)
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.True(t, s.Crashed())

	s = newService(t, "1.0", func(o *linter.ServiceOptions) {
		o.Faults.CrashRate = 0.5
		o.Rand = func() float64 { return 0.5 }
	})
	status, _ = do(t, s, http.MethodPost, "/lint", `{"code":"x\n"}`)
	assert.Equal(t, http.StatusOK, status)

	_, err := linter.NewService(linter.ServiceOptions{Linter: linter.LinterFunc(nil), Faults: linter.Faults{CrashRate: 2}})
	assert.Error(t, err)
}

// The slow version must not serialize requests: N concurrent slow lints
// take about one delay, not N. The bound is generous; it checks
// concurrency, not speed.
func TestSlowDoesNotBlockOthers(t *testing.T) {
	s := newService(t, "1.1", func(o *linter.ServiceOptions) { o.Faults.Delay = 200 * time.Millisecond })
	srv := httptest.NewServer(s)
	defer srv.Close()

	health, err := http.Get(srv.URL + "/health")
	require.NoError(t, err)
	health.Body.Close()

	const n = 8
	var wg sync.WaitGroup
	done := make(chan struct{})
	for range n {
		wg.Go(func() {
			resp, err := http.Post(srv.URL+"/lint", "application/json", strings.NewReader(`{"code":"x\n"}`))
			if assert.NoError(t, err) {
				assert.Equal(t, http.StatusOK, resp.StatusCode)
				resp.Body.Close()
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	// While the lints sleep, health answers at once.
	require.Eventually(t, func() bool { return s.RequestCount() == n }, 5*time.Second, time.Millisecond)
	resp, err := http.Get(srv.URL + "/health")
	require.NoError(t, err)
	resp.Body.Close()
	select {
	case <-done:
		t.Fatal("health was answered only after the slow lints finished")
	default:
	}
	<-done
	assert.EqualValues(t, n, s.RequestCount())
}

func TestSlowStopsWhenClientLeaves(t *testing.T) {
	s := newService(t, "1.1", func(o *linter.ServiceOptions) { o.Faults.Delay = time.Hour })
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/lint", strings.NewReader(`{"code":"x"}`))
	done := make(chan struct{})
	go func() { s.ServeHTTP(httptest.NewRecorder(), req); close(done) }()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("slow lint did not end when the client left")
	}
}

// TestLintStopsWhenClientLeaves: the lint runs under the request's
// context, and a lint cut short by a client that left is not answered.
func TestLintStopsWhenClientLeaves(t *testing.T) {
	started := make(chan struct{})
	s := newService(t, "1.0", func(o *linter.ServiceOptions) {
		o.Linter = linter.LinterFunc(func(ctx context.Context, _ linter.Source) ([]linter.Diagnostic, error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		})
	})
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/lint", strings.NewReader(`{"code":"x"}`))
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() { s.ServeHTTP(rec, req); close(done) }()
	<-started
	cancel()
	<-done
	assert.Empty(t, rec.Body.String(), "nobody reads an answer")
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	s := newService(t, "2.0", func(o *linter.ServiceOptions) { o.Registerer = reg })
	do(t, s, http.MethodPost, "/lint", `{"code":"x\n"}`)
	do(t, s, http.MethodPost, "/lint", `{"code":"x"}`)
	do(t, s, http.MethodPost, "/lint", `{`)
	want := `
# HELP fleetkit_linter_lint_requests_total Lint requests by outcome: clean, problems or error.
# TYPE fleetkit_linter_lint_requests_total counter
fleetkit_linter_lint_requests_total{language="tiny",outcome="clean",version="2.0"} 1
fleetkit_linter_lint_requests_total{language="tiny",outcome="error",version="2.0"} 1
fleetkit_linter_lint_requests_total{language="tiny",outcome="problems",version="2.0"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want), "fleetkit_linter_lint_requests_total"))
	assert.Equal(t, 1, testutil.CollectAndCount(reg, "fleetkit_linter_lint_duration_seconds"))
}

// codes returns the codes of an answer's diagnostics.
func codes(m map[string]any) []string {
	out := []string{}
	for _, d := range m["diagnostics"].([]any) {
		out = append(out, d.(map[string]any)["code"].(string))
	}
	return out
}

func TestRequestConfig(t *testing.T) {
	const code = "\tx = 'a long line'"
	tests := []struct {
		name, version, config string
		want                  []string
	}{
		{"none", "2.0", ``, []string{"TAB", "LONG", "EOF"}},
		{"null", "2.0", `null`, []string{"TAB", "LONG", "EOF"}},
		{"select", "2.0", `{"select": ["EOF", "T"]}`, []string{"TAB", "EOF"}},
		{"ignore", "2.0", `{"ignore": ["TAB"]}`, []string{"LONG", "EOF"}},
		{"extend_ignore", "2.0", `{"extend_ignore": ["LONG"]}`, []string{"TAB", "EOF"}},
		{"max_line_length", "2.0", `{"max_line_length": 40}`, []string{"TAB", "EOF"}},
		{"options", "2.0", `{"options": {"marker": "x"}}`, []string{"TAB", "LONG", "EOF"}},
		{"empty select selects nothing more", "2.0", `{"select": []}`, []string{"TAB", "LONG", "EOF"}},
		// Version 1.x leaves the newline rule out whatever the request.
		{"1.0 baseline", "1.0", `{}`, []string{"TAB", "LONG"}},
		{"1.0 keeps its rule", "1.0", `{"select": ["EOF", "TAB"]}`, []string{"TAB"}},
		{"1.0 keeps its rule on ignore", "1.0", `{"ignore": ["LONG"]}`, []string{"TAB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newService(t, tt.version, nil)
			body := `{"code": ` + strconvQuote(code)
			if tt.config != "" {
				body += `, "config": ` + tt.config
			}
			status, m := do(t, s, http.MethodPost, "/lint", body+"}")
			require.Equal(t, http.StatusOK, status, m)
			assert.Equal(t, tt.want, codes(m))
		})
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestRequestConfigOverMachine: the machine's configuration is the base
// a request's applies over, field by field.
func TestRequestConfigOverMachine(t *testing.T) {
	s := newService(t, "2.0", func(o *linter.ServiceOptions) {
		o.Config.Ignore = []string{"TAB"}
		o.Config.MaxLineLength = 40
		l, err := o.New(o.Config)
		require.NoError(t, err)
		o.Linter = l
	})
	body := `{"code": "\tx = 'a long line'"`
	_, m := do(t, s, http.MethodPost, "/lint", body+`}`)
	assert.Equal(t, []string{"EOF"}, codes(m), "the machine's configuration")
	_, m = do(t, s, http.MethodPost, "/lint", body+`, "config": {"extend_ignore": ["EOF"]}}`)
	assert.Equal(t, []string{}, codes(m), "extend_ignore adds to the machine's")
	_, m = do(t, s, http.MethodPost, "/lint", body+`, "config": {"ignore": []}}`)
	assert.Equal(t, []string{"TAB", "EOF"}, codes(m), "ignore replaces the machine's; max_line_length stays")
}

func TestRequestConfigRefused(t *testing.T) {
	s := newService(t, "2.0", nil)
	many := `["` + strings.Repeat(`E", "`, 300) + `E"]`
	tests := []struct {
		name, config, msg string
	}{
		{"not an object", `[1]`, "invalid config"},
		{"unknown field", `{"ignroe": ["E"]}`, `unknown field "ignroe"`},
		{"wrong type", `{"select": "E501"}`, "invalid config"},
		{"too many codes", `{"select": ` + many + `}`, "more than 256"},
		{"bad code", `{"ignore": ["E 5"]}`, "not a code"},
		{"empty code", `{"ignore": [""]}`, "not a code"},
		{"long code", `{"ignore": ["` + strings.Repeat("E", 65) + `"]}`, "not a code"},
		{"negative max_line_length", `{"max_line_length": -1}`, "max_line_length"},
		{"huge max_line_length", `{"max_line_length": 99999999}`, "max_line_length"},
		{"bad option name", `{"options": {"a b": "1"}}`, "not an option name"},
		{"unknown option", `{"options": {"colour": "blue"}}`, `tiny: unknown option "colour"`},
		{"bad option value", `{"options": {"marker": "long"}}`, `bad value "long"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, m := do(t, s, http.MethodPost, "/lint", `{"code": "x\n", "config": `+tt.config+`}`)
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, "error", m["status"])
			assert.Contains(t, m["message"], tt.msg)
		})
	}
	// A service built without New takes no configuration.
	fixed := newService(t, "2.0", func(o *linter.ServiceOptions) { o.New = nil })
	status, m := do(t, fixed, http.MethodPost, "/lint", `{"code": "x\n", "config": {}}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, m["message"], "no per-request configuration")
	// Bad configurations lose nothing.
	status, m = do(t, s, http.MethodPost, "/lint", `{"code": "x\n"}`)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, true, m["result"])
}

// TestRequestConfigCache: linters built for request configurations are
// reused, and no more than MaxConfigs of them are kept, whatever the
// clients send.
func TestRequestConfigCache(t *testing.T) {
	var builds atomic.Int32
	s := newService(t, "2.0", func(o *linter.ServiceOptions) {
		build := o.New
		o.New = func(cfg linter.Config) (linter.Linter, error) { builds.Add(1); return build(cfg) }
		o.MaxConfigs = 2
	})
	lint := func(maxLen int) {
		status, _ := do(t, s, http.MethodPost, "/lint", fmt.Sprintf(`{"code": "x\n", "config": {"max_line_length": %d}}`, maxLen))
		require.Equal(t, http.StatusOK, status)
	}
	lint(20)
	lint(30)
	lint(20)
	assert.EqualValues(t, 2, builds.Load(), "a configuration seen before is reused")
	lint(40) // evicts 30, the least recently used
	lint(20)
	assert.EqualValues(t, 3, builds.Load())
	lint(30)
	assert.EqualValues(t, 4, builds.Load(), "an evicted configuration is built again")
	for i := range 100 {
		lint(100 + i)
	}
	assert.EqualValues(t, 104, builds.Load())
	lint(20)
	assert.EqualValues(t, 105, builds.Load(), "100 other configurations pushed it out")
	_, err := linter.NewService(linter.ServiceOptions{Linter: linter.LinterFunc(nil), MaxConfigs: -1})
	assert.Error(t, err)
}
