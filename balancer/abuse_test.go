package balancer_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// What a client sends must never make a healthy backend look broken, grow
// the metrics, or panic a handler. These tests run in every setup.

// bigAnswer answers n bytes of JSON when the code asks for "big:<n>" (with a
// Content-Length, or chunked when chunked), and a small answer otherwise.
func bigAnswer(chunked bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		n := 0
		if _, after, ok := strings.Cut(string(body), "big:"); ok {
			n, _ = strconv.Atoi(strings.TrimRight(after, `"}`))
		}
		answer := `{"result":false,"details":"` + strings.Repeat("E225 ", n/5) + `"}`
		if !chunked {
			w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
			_, _ = io.WriteString(w, answer)
			return
		}
		for len(answer) > 0 { // several writes: chunked
			k := min(len(answer), 4096)
			_, _ = io.WriteString(w, answer[:k])
			http.NewResponseController(w).Flush()
			answer = answer[k:]
		}
	}
}

// requireInRotation checks that every backend of lang is in rotation with
// no failure counted against it.
func requireInRotation(t *testing.T, e *proxyEnv, lang string) {
	t.Helper()
	st, err := e.bal.Backends(context.Background())
	require.NoError(t, err)
	for _, vs := range st.Languages[lang].Versions {
		for _, be := range vs.Backends {
			assert.True(t, be.Healthy, "%s in rotation", be.URI)
			assert.Zero(t, be.ConsecutiveFailures, "%s has no failure counted", be.URI)
		}
	}
	assert.Zero(t, metricSum(t, e.reg, "fleetkit_balancer_backend_failures_total"))
	assert.Zero(t, metricSum(t, e.reg, "fleetkit_balancer_ejections_total"))
}

// bigEnv is a Proxy with a 4 KiB answer buffer over two bigAnswer
// backends, either of which one failure would eject; hits counts the
// requests they got.
func bigEnv(t *testing.T, su setup, chunked bool) (e *proxyEnv, hits func() int64) {
	t.Helper()
	e = newProxyEnv(t, su, balancer.Options{EjectAfter: 1}, balancer.ProxyOptions{MaxResponseBody: 4 << 10})
	var ls []*linter
	for range 2 {
		l := newLinter(t, "1.0", bigAnswer(chunked))
		e.add(t, "python", "1.0", l.URI())
		ls = append(ls, l)
	}
	return e, func() int64 { return ls[0].hits.Load() + ls[1].hits.Load() }
}

// TestProxyLargeAnswers: answers over the buffer with a Content-Length are
// streamed whole; none counts against the backend.
func TestProxyLargeAnswers(t *testing.T) {
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			e, hits := bigEnv(t, su, false)
			for _, n := range []int{1 << 10, 100 << 10, 3 << 20, 1 << 10} {
				code, got := e.lint(t, "python", fmt.Sprintf(`{"code":"big:%d"}`, n))
				require.Equal(t, http.StatusOK, code, "%d bytes: %.200s", n, got)
				assert.Equal(t, `{"result":false,"details":"`+strings.Repeat("E225 ", n/5)+`"}`, got, "%d bytes whole", n)
			}
			assert.Equal(t, int64(4), hits(), "each request sent upstream once")
			requireInRotation(t, e, "python")
		})
	}
}

// TestProxyLargeAnswersDoNotEject is the case: six answers over the
// default 8 MiB buffer, then twenty ordinary requests. All are answered 200
// and both linters stay in rotation.
func TestProxyLargeAnswersDoNotEject(t *testing.T) {
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{})
			for range 2 {
				e.add(t, "python", "1.0", newLinter(t, "1.0", bigAnswer(false)).URI())
			}
			var wg sync.WaitGroup
			for range 6 {
				wg.Go(func() {
					resp, err := e.client.Post(e.url+"/lint/python", "application/json", strings.NewReader(`{"code":"big:9000000"}`))
					if !assert.NoError(t, err) {
						return
					}
					defer resp.Body.Close()
					n, err := io.Copy(io.Discard, resp.Body)
					assert.NoError(t, err)
					assert.Equal(t, http.StatusOK, resp.StatusCode)
					assert.Greater(t, n, int64(balancer.DefaultMaxResponseBody))
				})
			}
			wg.Wait()
			for range 20 {
				code, got := e.lint(t, "python", `{"code":"x=1\n"}`)
				assert.Equal(t, http.StatusOK, code, got)
			}
			requireInRotation(t, e, "python")
		})
	}
}

// TestProxyLargeChunkedAnswer: an answer over the buffer without a
// Content-Length is a 502 naming the limit, not a fault of the backend.
func TestProxyLargeChunkedAnswer(t *testing.T) {
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			e, hits := bigEnv(t, su, true)
			for range 4 {
				code, got := e.lint(t, "python", `{"code":"big:100000"}`)
				assert.Equal(t, http.StatusBadGateway, code)
				assert.Contains(t, got, "is over 4096 bytes and has no Content-Length")
				assert.Contains(t, got, "MaxResponseBody")
			}
			code, got := e.lint(t, "python", `{"code":"big:1000"}`)
			assert.Equal(t, http.StatusOK, code, "chunked answers within the buffer pass: %s", got)
			assert.Equal(t, int64(5), hits(), "each request sent upstream once")
			requireInRotation(t, e, "python")
		})
	}
}

// TestProxyLargeAnswerCutShort: a backend that dies in the middle of a
// streamed answer never becomes a whole 200 for the client (the answer is
// cut, the client's read fails), and counts against the backend.
func TestProxyLargeAnswerCutShort(t *testing.T) {
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{MaxResponseBody: 4 << 10})
			l := newLinter(t, "1.0", func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				conn, buf, err := http.NewResponseController(w).Hijack()
				if err != nil {
					panic(err)
				}
				_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{\"result\":true,\"details\":\"")
				_, _ = buf.WriteString(strings.Repeat("x", 200<<10))
				_ = buf.Flush()
				_ = conn.Close()
			})
			e.add(t, "python", "1.0", l.URI())
			resp, err := e.client.Post(e.url+"/lint/python", "application/json", strings.NewReader(`{"code":"x"}`))
			if err == nil {
				// The head is out before the backend fails: the body
				// must then fail to read, never end as if whole.
				defer resp.Body.Close()
				n, rerr := io.Copy(io.Discard, resp.Body)
				require.Error(t, rerr, "read %d bytes of a 1000000-byte answer without an error", n)
				assert.Less(t, n, int64(1000000))
			}
			st, err := e.bal.Backends(context.Background())
			require.NoError(t, err)
			assert.Equal(t, 1, st.Languages["python"].Versions["1.0"].Backends[0].ConsecutiveFailures, "a backend dying mid-answer is its failure")
			assert.Equal(t, 1.0, metricValue(t, e.reg, "fleetkit_balancer_backend_failures_total", "python", "connection", "1.0"))
		})
	}
}

// TestProxyMetricLabelsBounded: thousands of requests for distinct (and
// invalid) languages add no metric series and no bytes to /metrics.
func TestProxyMetricLabelsBounded(t *testing.T) {
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{})
			e.add(t, "python", "1.0", newLinter(t, "1.0", nil).URI())
			metrics := httptest.NewServer(promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{}))
			t.Cleanup(metrics.Close)
			scrape := func() (series int, size int) {
				mfs, err := e.reg.Gather()
				require.NoError(t, err)
				for _, mf := range mfs {
					series += len(mf.GetMetric())
				}
				resp, err := http.Get(metrics.URL)
				require.NoError(t, err)
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				require.NoError(t, err)
				return series, len(b)
			}
			send := func(i int) {
				code, _ := e.lint(t, fmt.Sprintf("lang%05d", i), `{"code":"x"}`)
				require.Equal(t, http.StatusServiceUnavailable, code)
			}
			code, _ := e.lint(t, "python", `{"code":"x"}`)
			require.Equal(t, http.StatusOK, code)
			send(0)
			series, size := scrape()
			for i := 1; i <= 3000; i++ {
				send(i)
			}
			for _, p := range []string{"%ff", "%c3%28", "a%00b", "%e2%80%8b%ff"} {
				code, got := e.lint(t, p, `{}`)
				assert.Equal(t, http.StatusNotFound, code, "%s: %s", p, got)
			}
			gotSeries, gotSize := scrape()
			assert.Equal(t, series, gotSeries, "series after 3000 distinct languages")
			assert.InDelta(t, size, gotSize, 64, "/metrics bytes after 3000 distinct languages (counts may gain digits)")
			assert.Equal(t, 3001.0, metricValue(t, e.reg, "fleetkit_balancer_requests_total", "", "503", "other", ""))
		})
	}
}

// TestProxyInvalidPathIs404: a language that is not valid UTF-8, or has a
// control character, is 404 — the handler never panics on it.
func TestProxyInvalidPathIs404(t *testing.T) {
	reg := prometheus.NewRegistry()
	b := newBalancer(t, balancer.Options{Registerer: reg})
	p, err := balancer.NewProxy(b, balancer.ProxyOptions{Registerer: reg})
	require.NoError(t, err)
	for _, path := range []string{"/lint/\xff", "/lint/a\x00", "/lint/a\x7f", "/lint/\u0085x", "/lint/a b", "/lint/"} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/lint/x", strings.NewReader(`{}`))
		req.URL.Path = path
		require.NotPanics(t, func() { p.ServeHTTP(rec, req) }, "%q", path)
		assert.Equal(t, http.StatusNotFound, rec.Code, "%q", path)
		assert.Contains(t, rec.Body.String(), `"status":"error"`)
	}
	for _, lang := range []string{"\xff", "a\tb", "c/d", ""} {
		assert.ErrorIs(t, b.AddBackend(context.Background(), lang, "1.0", "http://127.0.0.1:1"), balancer.ErrInvalidBackend, "%q", lang)
	}
	require.NoError(t, b.AddBackend(context.Background(), "c++", "1.0", "http://127.0.0.1:1"), "any other name works")
	require.NoError(t, b.AddBackend(context.Background(), "café", "1.0", "http://127.0.0.1:2"), "any other name works")
}

// panickingPolicy builds pickers that panic for the language "boom".
var panickingPolicy = balancer.PolicyFunc(func(s balancer.State) balancer.Picker {
	if s.Language == "boom" {
		return balancer.PickerFunc(func() (*balancer.Backend, error) { panic("picker exploded") })
	}
	return balancer.SmoothWeighted{}.Build(s)
})

// TestServerRecoversPanics: a panic behind balancer.Server, on the fast
// path or in its net/http fallback, is a 500 with the JSON error body and a
// log line; the connection closes and the server goes on.
func TestServerRecoversPanics(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	b := newBalancer(t, balancer.Options{Policy: panickingPolicy})
	require.NoError(t, b.AddBackend(context.Background(), "boom", "1.0", newLinter(t, "1.0", nil).URI()))
	l := newLinter(t, "1.0", nil)
	require.NoError(t, b.AddBackend(context.Background(), "python", "1.0", l.URI()))
	p, err := balancer.NewProxy(b, balancer.ProxyOptions{})
	require.NoError(t, err)
	t.Cleanup(p.CloseIdleConnections)
	srv, err := balancer.NewServer(p, balancer.ServerOptions{Logger: logger})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	url := "http://" + ln.Addr().String()

	for name, request := range map[string]string{
		"fast path":     lintRequest("/lint/boom", `{}`),
		"net/http path": "POST /lint/boom HTTP/1.1\r\nHost: lb\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			c := dialRaw(t, url)
			c.send(request)
			resp, body := c.response()
			assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
			assert.JSONEq(t, `{"status":"error","message":"internal error"}`, body)
			assert.True(t, resp.Close, "the connection closes after a panic")
			assert.Contains(t, logs.String(), "picker exploded")

			c = dialRaw(t, url)
			c.send(lintRequest("/lint/python", `{}`))
			code, _, got := c.answer()
			assert.Equal(t, http.StatusOK, code, "the server goes on: %s", got)
		})
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer // guarded by mu
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// rawBackend is a misbehaving backend on a real TCP listener: serve runs
// for each connection it accepts.
func rawBackend(t *testing.T, serve func(nc net.Conn, br *bufio.Reader)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	t.Cleanup(func() {
		_ = ln.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer nc.Close()
				go func() { // the test's end closes every connection
					<-t.Context().Done()
					_ = nc.Close()
				}()
				serve(nc, bufio.NewReader(nc))
			})
		}
	})
	return "http://" + ln.Addr().String()
}

// TestProxyNeverReusesDesynchronisedConnection: a backend that writes more
// than its answer — at once, or after it (a whole second answer) — never
// gets an answer to the wrong client: the connection is not used again.
// This holds for the Proxy's own forwarder (every http:// backend unless a
// Transport is given); an http.Transport, even NewTransport's guarded one,
// may still race with its read loop (see NewTransport).
func TestProxyNeverReusesDesynchronisedConnection(t *testing.T) {
	for _, later := range []bool{false, true} {
		for _, su := range setups {
			if su.transport() != nil {
				// net/http's read loop can take bytes buffered with the
				// last answer for the next one (golang/go#31259): the
				// guarantee is the built-in forwarder's, as the README
				// says. Asserting it for http.Transport failed about one
				// run in three under load.
				continue
			}
			t.Run(fmt.Sprintf("%s/extra bytes later=%v", su.name, later), func(t *testing.T) {
				extraOut := make(chan struct{}, 1)
				answered := make(chan struct{}, 1)
				uri := rawBackend(t, func(nc net.Conn, br *bufio.Reader) {
					for {
						req, err := http.ReadRequest(br)
						if err != nil {
							return
						}
						body, _ := io.ReadAll(req.Body)
						answer := fmt.Sprintf(`{"result":true,"for":%q}`, body)
						// The answer, then a whole second answer that
						// would be the next client's if the connection
						// were reused.
						stray := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s", len(`{"stray":true}`), `{"stray":true}`)
						first := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(answer), answer)
						if !later {
							_, _ = io.WriteString(nc, first+stray)
						} else {
							_, _ = io.WriteString(nc, first)
							// Written once the client has its answer (the
							// connection is idle in the pool by then), and
							// before the next request comes.
							select {
							case <-answered:
							case <-t.Context().Done():
								return
							}
							_, _ = io.WriteString(nc, stray)
						}
						extraOut <- struct{}{}
					}
				})
				e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{})
				e.add(t, "python", "1.0", uri)
				for i := range 20 {
					want := fmt.Sprintf(`{"code":"client %d"}`, i)
					code, got := e.lint(t, "python", want)
					require.Equal(t, http.StatusOK, code, got)
					require.Contains(t, got, fmt.Sprintf("%q", want), "client %d got its own answer", i)
					answered <- struct{}{}
					<-extraOut // the stray bytes are out before the next request
					if !later {
						<-answered
					}
				}
			})
		}
	}
}

// TestProxyDropsInvalidHeaderNames: header names from a backend that are
// not tokens never reach a client.
func TestProxyDropsInvalidHeaderNames(t *testing.T) {
	uri := rawBackend(t, func(nc net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			_, _ = io.WriteString(nc, "HTTP/1.1 200 OK\r\nX Bad Name: 1\r\nX-Good: 2\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{\"result\":true}")
		}
	})
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{})
			e.add(t, "python", "1.0", uri)
			c := dialRaw(t, e.url)
			c.send(lintRequest("/lint/python", `{}`))
			require.NoError(t, c.nc.SetReadDeadline(time.Now().Add(10*time.Second)))
			resp, err := http.ReadResponse(c.br, nil)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, "2", resp.Header.Get("X-Good"))
			for k := range resp.Header {
				assert.NotContains(t, k, " ", "header %q reached the client", k)
			}
		})
	}
}
