package balancer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// linter is a real loopback backend that counts its /lint calls.
type linter struct {
	srv  *httptest.Server
	hits atomic.Int64
}

func (l *linter) URI() string { return l.srv.URL }

// newLinter starts a backend whose /lint runs h (nil: a healthy linter
// answering 200 with its version).
func newLinter(t *testing.T, version string, h http.HandlerFunc) *linter {
	t.Helper()
	l := &linter{}
	if h == nil {
		h = func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"result": true, "details": "ok", "version": version, "echo": string(body), "query": r.URL.RawQuery})
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/lint", func(w http.ResponseWriter, r *http.Request) {
		l.hits.Add(1)
		h(w, r)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"version":"`+version+`"}`)
	})
	l.srv = httptest.NewServer(mux)
	t.Cleanup(l.srv.Close)
	return l
}

// refusedURI returns the URI of a loopback port nobody listens on.
func refusedURI(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr
}

// hanging answers only when the client goes away (or after 10s). It reads
// the body first, so the server notices the client closing the connection.
func hanging(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	select {
	case <-r.Context().Done():
	case <-time.After(10 * time.Second):
	}
}

// failing answers 500 with a JSON body.
func failing(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	_, _ = io.WriteString(w, `{"detail":"linter crashed"}`)
}

// dyingMidStream promises a 200 with a 100-byte body, sends a few bytes and
// closes the connection.
func dyingMidStream(w http.ResponseWriter, r *http.Request) {
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"resu")
	_ = buf.Flush()
	_ = conn.Close()
}

// setup is one way of running a Proxy: behind net/http's server or
// behind balancer.Server (a goroutine per connection, or its event loop),
// reaching backends with its built-in forwarder (no Transport given) or an
// http.Transport. Every proxy test runs in each.
type setup struct {
	name      string
	transport func() http.RoundTripper
	server    bool // behind balancer.Server
	loop      bool // with ServerOptions.EventLoop
}

var setups = []setup{
	{"direct", func() http.RoundTripper { return nil }, false, false},
	{"transport", func() http.RoundTripper { return balancer.NewTransport() }, false, false},
	{"server/direct", func() http.RoundTripper { return nil }, true, false},
	{"server/transport", func() http.RoundTripper { return balancer.NewTransport() }, true, false},
	{"loop/direct", func() http.RoundTripper { return nil }, true, true},
}

type proxyEnv struct {
	bal    *balancer.Balancer
	proxy  *balancer.Proxy
	reg    *prometheus.Registry
	url    string // of the front server
	client *http.Client
}

func newProxyEnv(t *testing.T, su setup, bopts balancer.Options, popts balancer.ProxyOptions) *proxyEnv {
	t.Helper()
	e := &proxyEnv{reg: prometheus.NewRegistry()}
	bopts.Registerer = e.reg
	popts.Registerer = e.reg
	popts.Transport = su.transport()
	e.bal = newBalancer(t, bopts)
	var err error
	e.proxy, err = balancer.NewProxy(e.bal, popts)
	require.NoError(t, err)
	t.Cleanup(e.proxy.CloseIdleConnections)
	if !su.server {
		srv := httptest.NewServer(e.proxy)
		t.Cleanup(srv.Close)
		e.url, e.client = srv.URL, srv.Client()
		return e
	}
	e.url, _ = startFront(t, e.proxy, balancer.ServerOptions{EventLoop: su.loop})
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	e.client = &http.Client{Transport: tr}
	return e
}

func (e *proxyEnv) add(t *testing.T, lang, version, uri string) {
	t.Helper()
	require.NoError(t, e.bal.AddBackend(context.Background(), lang, version, uri))
}

// lint POSTs body to /lint/{lang} and returns status and body.
func (e *proxyEnv) lint(t *testing.T, lang, body string) (int, string) {
	t.Helper()
	resp, err := e.client.Post(e.url+"/lint/"+lang, "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(data)
}

func TestProxyRatioAccuracy(t *testing.T) {
	for _, su := range setups {
		for _, tt := range ratioCases {
			t.Run(su.name+"/"+tt.name, func(t *testing.T) {
				testRatioAccuracy(t, su, tt)
			})
		}
	}
}

func testRatioAccuracy(t *testing.T, su setup, tt ratioCase) {
	e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{})
	linters := map[string][]*linter{}
	for _, v := range sortedKeys(tt.backends) {
		for range tt.backends[v] {
			l := newLinter(t, v, nil)
			e.add(t, "python", v, l.URI())
			linters[v] = append(linters[v], l)
		}
	}
	require.NoError(t, e.bal.SetRatio(context.Background(), "python", tt.ratio))
	for range tt.n {
		code, _ := e.lint(t, "python", `{"code":"print('hello world')\n"}`)
		require.Equal(t, http.StatusOK, code)
	}
	for v, ls := range linters {
		for _, l := range ls {
			assert.Equal(t, int64(tt.perBackend[v]), l.hits.Load(), "a backend of %s", v)
		}
	}
}

func TestProxyPassesAnswerThrough(t *testing.T) {
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) { testProxyPassesAnswerThrough(t, su) })
	}
}

func testProxyPassesAnswerThrough(t *testing.T, su setup) {
	e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{})
	l := newLinter(t, "1.0", func(w http.ResponseWriter, r *http.Request) {
		assert.Empty(t, r.Header.Get("Idempotency-Key"), "the idempotency marker is not sent")
		assert.Empty(t, r.Header.Get("X-Hop"), "headers named in Connection are dropped")
		assert.Equal(t, "kept", r.Header.Get("X-End-To-End"))
		assert.Equal(t, "a=1", r.URL.RawQuery)
		assert.Equal(t, "/lint", r.URL.Path)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Linter", "yes")
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write(body)
	})
	e.add(t, "python", "1.0", l.URI())

	req, err := http.NewRequest(http.MethodPost, e.url+"/lint/python?a=1", strings.NewReader(`{"code":"x"}`))
	require.NoError(t, err)
	req.Header.Set("Connection", "X-Hop")
	req.Header.Set("X-Hop", "dropped")
	req.Header.Set("X-End-To-End", "kept")
	resp, err := e.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, http.StatusTeapot, resp.StatusCode)
	assert.Equal(t, "yes", resp.Header.Get("X-Linter"))
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	assert.JSONEq(t, `{"code":"x"}`, string(body))
}

func TestProxyErrors(t *testing.T) {
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) { testProxyErrors(t, su) })
	}
}

func testProxyErrors(t *testing.T, su setup) {
	e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{MaxBody: 64})
	e.add(t, "python", "1.0", newLinter(t, "1.0", nil).URI())
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		status int
		msg    string
	}{
		{"unknown language", http.MethodPost, "/lint/cobol", `{"code":""}`, http.StatusServiceUnavailable, `no linter can serve language \"cobol\"`},
		{"wrong method", http.MethodGet, "/lint/python", "", http.StatusMethodNotAllowed, "use POST"},
		{"no language", http.MethodPost, "/lint/", `{}`, http.StatusNotFound, "POST /lint/{language}"},
		{"nested path", http.MethodPost, "/lint/python/x", `{}`, http.StatusNotFound, "POST /lint/{language}"},
		{"other path", http.MethodPost, "/lintpython", `{}`, http.StatusNotFound, "POST /lint/{language}"},
		{"body too large", http.MethodPost, "/lint/python", `{"code":"` + strings.Repeat("x", 100) + `"}`, http.StatusRequestEntityTooLarge, "limit is 64 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, e.url+tt.path, strings.NewReader(tt.body))
			require.NoError(t, err)
			resp, err := e.client.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			assert.Equal(t, tt.status, resp.StatusCode)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			assert.Contains(t, string(body), `"status":"error"`)
			assert.Contains(t, string(body), tt.msg)
		})
	}
	t.Run("chunked body too large", func(t *testing.T) {
		pr, pw := io.Pipe()
		go func() {
			_, _ = io.WriteString(pw, `{"code":"`+strings.Repeat("y", 200)+`"}`)
			_ = pw.Close()
		}()
		resp, err := e.client.Post(e.url+"/lint/python", "application/json", pr)
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	})
}

// outcome is what a client sees.
type outcome struct {
	status  int
	bodyHas string
}

// faultCase is one backend fault of TestProxyFaults.
type faultCase struct {
	name string
	// bad builds the failing backend; it is added first, so the first
	// request goes to it.
	bad func(t *testing.T) (uri string, hits func() int64)
	// withGood adds a healthy backend after the bad one.
	withGood bool
	// first is what the client sees for the first request.
	first outcome
	// retried says whether the first request was retried on the good one.
	retried bool
	// ejectedAfter is how many requests to the bad backend eject it; 0
	// when none does (its failures are not its fault, or it is the last
	// backend of the language).
	ejectedAfter int
}

func TestProxyFaults(t *testing.T) {
	tests := []faultCase{
		{
			name:     "refused connection is retried on another backend",
			bad:      func(t *testing.T) (string, func() int64) { return refusedURI(t), func() int64 { return 0 } },
			withGood: true, first: outcome{200, `"result":true`}, retried: true, ejectedAfter: 3,
		},
		{
			name:  "refused connection with no other backend is 502, and the last backend is never ejected",
			bad:   func(t *testing.T) (string, func() int64) { return refusedURI(t), func() int64 { return 0 } },
			first: outcome{502, "failed and no other could answer"},
		},
		{
			name: "hanging backend is 504, not retried, and not ejected (the input may be slow to lint)",
			bad: func(t *testing.T) (string, func() int64) {
				l := newLinter(t, "1.0", hanging)
				return l.URI(), l.hits.Load
			},
			withGood: true, first: outcome{504, "did not answer within"},
		},
		{
			name: "500 is passed through, not retried, and counts as a failure",
			bad: func(t *testing.T) (string, func() int64) {
				l := newLinter(t, "1.0", failing)
				return l.URI(), l.hits.Load
			},
			withGood: true, first: outcome{500, "linter crashed"}, ejectedAfter: 3,
		},
		{
			name: "dying mid-stream is retried on another backend",
			bad: func(t *testing.T) (string, func() int64) {
				l := newLinter(t, "1.0", dyingMidStream)
				return l.URI(), l.hits.Load
			},
			withGood: true, first: outcome{200, `"result":true`}, retried: true, ejectedAfter: 3,
		},
		{
			name: "dying mid-stream with no other backend is 502, never 200",
			bad: func(t *testing.T) (string, func() int64) {
				l := newLinter(t, "1.0", dyingMidStream)
				return l.URI(), l.hits.Load
			},
			first: outcome{502, "failed and no other could answer"},
		},
	}
	for _, su := range setups {
		for _, tt := range tests {
			t.Run(su.name+"/"+tt.name, func(t *testing.T) {
				testProxyFault(t, su, tt)
			})
		}
	}
}

func testProxyFault(t *testing.T, su setup, tt faultCase) {
	const body = `{"code":"print('hello world')\n"}`
	e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{Timeout: 300 * time.Millisecond})
	badURI, badHits := tt.bad(t)
	e.add(t, "python", "1.0", badURI)
	var good *linter
	if tt.withGood {
		good = newLinter(t, "1.0", nil)
		e.add(t, "python", "1.0", good.URI())
	}

	code, got := e.lint(t, "python", body)
	assert.Equal(t, tt.first.status, code, got)
	assert.Contains(t, got, tt.first.bodyHas)
	if good != nil {
		want := int64(0)
		if tt.retried {
			want = 1
		}
		assert.Equal(t, want, good.hits.Load(), "the good backend's hits after the first request")
	}
	retries := 0.0
	if tt.retried {
		retries = 1
	}
	assert.Equal(t, retries, metricValue(t, e.reg, "fleetkit_balancer_retries_total", "python"))

	// Send requests until the bad backend has been picked ejectedAfter
	// times in all (twice what would eject it when it must stay: every
	// request to it still fails the same way, never with a 200); then an
	// ejected one gets no more traffic, and every request is served by the
	// good one (or 503 without one).
	picks := tt.ejectedAfter
	if picks == 0 {
		picks = 2 * balancer.DefaultEjectAfter
	}
	for badPicks := 1; badPicks < picks; {
		code, got := e.lint(t, "python", body)
		if good != nil && code == http.StatusOK && !tt.retried {
			continue // the good backend's turn
		}
		badPicks++
		assert.Equal(t, tt.first.status, code, got)
	}
	st, err := e.bal.Backends(context.Background())
	require.NoError(t, err)
	bad := st.Languages["python"].Versions["1.0"].Backends[0]
	require.Equal(t, badURI, bad.URI)
	if tt.ejectedAfter == 0 {
		assert.True(t, bad.Healthy, "not ejected")
		assert.Zero(t, metricValue(t, e.reg, "fleetkit_balancer_ejections_total", "python", "1.0"))
		return
	}
	assert.False(t, bad.Healthy, "ejected after %d failures", tt.ejectedAfter)
	assert.Equal(t, 1.0, metricValue(t, e.reg, "fleetkit_balancer_ejections_total", "python", "1.0"))

	before := badHits()
	for range 4 {
		code, got := e.lint(t, "python", body)
		if good != nil {
			assert.Equal(t, http.StatusOK, code, got)
		} else {
			assert.Equal(t, http.StatusServiceUnavailable, code, got)
		}
	}
	assert.Equal(t, before, badHits(), "an ejected backend gets no traffic")
}

// A request is retried after connection failures on each backend at most
// once; with MaxRetries 1 it is retried exactly once.
func TestProxyRetriesEachBackendOnce(t *testing.T) {
	tests := []struct {
		name string
		bad  func(t *testing.T) (string, func() int64)
	}{
		{"refused", func(t *testing.T) (string, func() int64) { return refusedURI(t), func() int64 { return 0 } }},
		{"dying", func(t *testing.T) (string, func() int64) {
			l := newLinter(t, "1.0", dyingMidStream)
			return l.URI(), l.hits.Load
		}},
	}
	for _, su := range setups {
		for _, tt := range tests {
			for _, max := range []int{0, 1} {
				t.Run(fmt.Sprintf("%s/%s/max-retries-%d", su.name, tt.name, max), func(t *testing.T) {
					e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{MaxRetries: max})
					var hits []func() int64
					for range 3 {
						u, h := tt.bad(t)
						e.add(t, "python", "1.0", u)
						hits = append(hits, h)
					}
					code, got := e.lint(t, "python", `{"code":""}`)
					assert.Equal(t, http.StatusBadGateway, code, got)
					attempts := 3 // the default: every backend once
					if max == 1 {
						attempts = 2
					}
					assert.Equal(t, float64(attempts-1), metricValue(t, e.reg, "fleetkit_balancer_retries_total", "python"))
					assert.Equal(t, float64(attempts), metricSum(t, e.reg, "fleetkit_balancer_requests_total"))
					if tt.name == "dying" {
						var sum int64
						for _, h := range hits {
							assert.LessOrEqual(t, h(), int64(1), "no backend tried twice")
							sum += h()
						}
						assert.EqualValues(t, attempts, sum)
					}
				})
			}
		}
	}
}

func TestProxyCountsAttempts(t *testing.T) {
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) { testProxyCountsAttempts(t, su) })
	}
}

func testProxyCountsAttempts(t *testing.T, su setup) {
	e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{})
	l := newLinter(t, "1.0", nil)
	e.add(t, "python", "1.0", l.URI())
	for range 3 {
		code, _ := e.lint(t, "python", `{"code":"x"}`)
		require.Equal(t, http.StatusOK, code)
	}
	e.lint(t, "cobol", `{"code":"x"}`)
	assert.Equal(t, 3.0, metricValue(t, e.reg, "fleetkit_balancer_requests_total", l.URI(), "200", "python", "1.0"))
	// A language the balancer does not hold is counted as "other" (labels
	// come from a closed set).
	assert.Equal(t, 1.0, metricValue(t, e.reg, "fleetkit_balancer_requests_total", "", "503", "other", ""))
	assert.Equal(t, 3.0, metricValue(t, e.reg, "fleetkit_balancer_request_duration_seconds", "python", "1.0"))
	st, err := e.bal.Backends(context.Background())
	require.NoError(t, err)
	assert.Equal(t, uint64(3), st.Languages["python"].Versions["1.0"].Backends[0].Requests)
}

func TestNewProxyValidation(t *testing.T) {
	_, err := balancer.NewProxy(nil, balancer.ProxyOptions{})
	assert.Error(t, err)
	b := newBalancer(t, balancer.Options{})
	_, err = balancer.NewProxy(b, balancer.ProxyOptions{Timeout: -1})
	assert.Error(t, err)
	_, err = balancer.NewProxy(b, balancer.ProxyOptions{MaxResponseBody: math.MaxInt64})
	assert.ErrorContains(t, err, "MaxResponseBody")
}

func TestCheckerReadmits(t *testing.T) {
	ctx := context.Background()
	// A third backend stays in rotation: the last one never leaves.
	b := newBalancer(t, balancer.Options{EjectAfter: 1, MaxEjectionPercent: 100})
	up := newLinter(t, "1.0", nil)
	down := refusedURI(t)
	spare := newLinter(t, "1.0", nil)
	require.NoError(t, b.AddBackend(ctx, "python", "1.0", up.URI()))
	require.NoError(t, b.AddBackend(ctx, "python", "1.0", down))
	require.NoError(t, b.AddBackend(ctx, "python", "1.0", spare.URI()))
	for {
		be, err := b.Pick("python")
		require.NoError(t, err)
		if be.URI != spare.URI() {
			b.ReportFailure(be)
		}
		if len(b.Ejected()) == 2 {
			break
		}
	}
	c, err := balancer.NewChecker(b, balancer.CheckerOptions{Interval: 10 * time.Millisecond, Timeout: time.Second})
	require.NoError(t, err)
	assert.Equal(t, 1, c.CheckOnce(ctx), "only the backend that answers /health comes back")
	ej := b.Ejected()
	require.Len(t, ej, 1)
	assert.Equal(t, down, ej[0].URI)

	runCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	assert.NoError(t, c.Run(runCtx))
}

func TestProxyUpstreamFraming(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"chunked", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"result":`)
			http.NewResponseController(w).Flush() // no Content-Length: chunked
			_, _ = io.WriteString(w, `true}`)
		}, `{"result":true}`},
		{"close-delimited", func(w http.ResponseWriter, r *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"result\":false}")
			_ = buf.Flush()
			_ = conn.Close()
		}, `{"result":false}`},
	}
	for _, su := range setups {
		for _, tt := range tests {
			t.Run(su.name+"/"+tt.name, func(t *testing.T) {
				e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{})
				e.add(t, "python", "1.0", newLinter(t, "1.0", tt.handler).URI())
				for range 3 {
					code, got := e.lint(t, "python", `{"code":"x"}`)
					assert.Equal(t, http.StatusOK, code)
					assert.Equal(t, tt.want, got)
				}
			})
		}
	}
}

// TestProxyStaleKeepAlive: a backend that closed an idle keep-alive
// connection costs neither a failure nor a retry on another backend.
func TestProxyStaleKeepAlive(t *testing.T) {
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			e := newProxyEnv(t, su, balancer.Options{EjectAfter: 1}, balancer.ProxyOptions{})
			l := newLinter(t, "1.0", nil)
			e.add(t, "python", "1.0", l.URI())
			for range 5 {
				code, got := e.lint(t, "python", `{"code":"x"}`)
				require.Equal(t, http.StatusOK, code, got)
				l.srv.CloseClientConnections() // closes the idle upstream connections
				time.Sleep(10 * time.Millisecond)
			}
			assert.Equal(t, int64(5), l.hits.Load())
			assert.Zero(t, metricValue(t, e.reg, "fleetkit_balancer_retries_total", "python"))
			st, err := e.bal.Backends(context.Background())
			require.NoError(t, err)
			assert.True(t, st.Languages["python"].Versions["1.0"].Backends[0].Healthy)
		})
	}
}

// TestProxyClientGone: a client that leaves ends the upstream attempt at
// once and does not count against the backend.
func TestProxyClientGone(t *testing.T) {
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			e := newProxyEnv(t, su, balancer.Options{EjectAfter: 1}, balancer.ProxyOptions{Timeout: time.Minute})
			upstreamDone := make(chan struct{}, 1)
			l := newLinter(t, "1.0", func(w http.ResponseWriter, r *http.Request) {
				hanging(w, r)
				upstreamDone <- struct{}{}
			})
			e.add(t, "python", "1.0", l.URI())
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/lint/python", strings.NewReader(`{"code":"x"}`))
			require.NoError(t, err)
			_, err = e.client.Do(req)
			require.Error(t, err)
			select {
			case <-upstreamDone:
			case <-time.After(5 * time.Second):
				t.Fatal("the upstream request was not cancelled")
			}
			// The handler records the outcome as the client's (nginx's 499).
			require.Eventually(t, func() bool {
				return metricValue(t, e.reg, "fleetkit_balancer_requests_total", l.URI(), "499", "python", "1.0") == 1
			}, 5*time.Second, time.Millisecond)
			st, err := e.bal.Backends(context.Background())
			require.NoError(t, err)
			be := st.Languages["python"].Versions["1.0"].Backends[0]
			assert.True(t, be.Healthy)
			assert.Zero(t, be.ConsecutiveFailures)
		})
	}
}

// TestProxySkipsInformationalAnswers: a backend that sends an unasked-for
// 100 Continue before its answer is still a plain 200 for the client.
func TestProxySkipsInformationalAnswers(t *testing.T) {
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{})
			e.add(t, "python", "1.0", newLinter(t, "1.0", func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				conn, buf, err := http.NewResponseController(w).Hijack()
				if err != nil {
					panic(err)
				}
				defer conn.Close()
				_, _ = buf.WriteString("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"result\":true}")
				_ = buf.Flush()
			}).URI())
			code, got := e.lint(t, "python", `{"code":"x"}`)
			assert.Equal(t, http.StatusOK, code)
			assert.Equal(t, `{"result":true}`, got)
		})
	}
}
