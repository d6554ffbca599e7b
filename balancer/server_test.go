package balancer_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// startFront serves p through a balancer.Server with opts on a loopback
// port and returns its base URL and the Server.
func startFront(t *testing.T, p *balancer.Proxy, opts balancer.ServerOptions) (string, *balancer.Server) {
	t.Helper()
	srv, err := balancer.NewServer(p, opts)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = srv.Close()
		assert.ErrorIs(t, <-done, http.ErrServerClosed)
	})
	return "http://" + ln.Addr().String(), srv
}

// rawConn is a client that writes bytes as given and reads answers with
// http.ReadResponse, to send what net/http's client would not.
type rawConn struct {
	t  *testing.T
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, baseURL string) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", strings.TrimPrefix(baseURL, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (c *rawConn) send(s string) {
	c.t.Helper()
	_, err := io.WriteString(c.nc, s)
	require.NoError(c.t, err)
}

// answer reads one answer: status, headers and body.
func (c *rawConn) answer() (int, http.Header, string) {
	c.t.Helper()
	resp, body := c.response()
	return resp.StatusCode, resp.Header, body
}

// response reads one answer.
func (c *rawConn) response() (*http.Response, string) {
	c.t.Helper()
	require.NoError(c.t, c.nc.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(c.br, nil)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	return resp, string(body)
}

func lintRequest(path, body string, extra ...string) string {
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: lb\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s",
		path, strings.Join(extra, ""), len(body), body)
}

// fronts are the two ways a Server serves its fast path: a goroutine per
// connection, and event loops. Every Server test runs in both.
var fronts = []struct {
	name string
	loop bool
	su   setup // a proxy setup behind it
}{{"goroutines", false, setups[2]}, {"loop", true, setups[4]}}

// frontEnv is a Proxy with one echoing python backend behind a Server
// (with event loops when loop) whose fallback also serves GET /health.
func frontEnv(t *testing.T, loop bool, popts balancer.ProxyOptions) (*proxyEnv, *linter) {
	t.Helper()
	e := newProxyEnv(t, setup{name: "net/http", transport: func() http.RoundTripper { return nil }}, balancer.Options{}, popts)
	l := newLinter(t, "1.0", nil)
	e.add(t, "python", "1.0", l.URI())
	mux := http.NewServeMux()
	mux.Handle("/lint/", e.proxy)
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, `{"healthy":true}`)
	})
	e.url, _ = startFront(t, e.proxy, balancer.ServerOptions{Fallback: mux, EventLoop: loop})
	return e, l
}

// TestServerPipelinedAndHandedOff: on one connection, pipelined lint
// requests are answered in order by the fast path; the first request it
// does not take (a GET, a chunked body) moves the connection, unread bytes
// included, to net/http, which answers it and the rest.
func TestServerPipelinedAndHandedOff(t *testing.T) {
	for _, fr := range fronts {
		t.Run(fr.name, func(t *testing.T) {
			e, l := frontEnv(t, fr.loop, balancer.ProxyOptions{})
			c := dialRaw(t, e.url)
			c.send(lintRequest("/lint/python?n=1", `{"code":"a"}`) + lintRequest("/lint/python?n=2", `{"code":"b"}`) +
				"GET /health HTTP/1.1\r\nHost: lb\r\n\r\n" +
				"POST /lint/python?n=3 HTTP/1.1\r\nHost: lb\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"cod\r\n7\r\ne\":\"c\"}\r\n0\r\n\r\n" +
				lintRequest("/lint/python?n=4", `{"code":"d"}`))
			for i, want := range []string{`"query":"n=1"`, `"query":"n=2"`, `{"healthy":true}`, `"query":"n=3"`, `"query":"n=4"`} {
				code, h, body := c.answer()
				assert.Equal(t, http.StatusOK, code, "answer %d: %s", i+1, body)
				assert.Contains(t, body, want, "answer %d", i+1)
				assert.NotEmpty(t, h.Get("Date"), "answer %d", i+1)
			}
			assert.Equal(t, int64(4), l.hits.Load())
		})
	}
}

// TestServerAnswers: what the fast path and the handoff answer, request by
// request, each on a new connection.
func TestServerAnswers(t *testing.T) {
	for _, fr := range fronts {
		t.Run(fr.name, func(t *testing.T) {
			e, _ := frontEnv(t, fr.loop, balancer.ProxyOptions{MaxBody: 64})
			tests := []struct {
				name    string
				request string
				status  int
				bodyHas string
				header  map[string]string
				closes  bool
			}{
				{"fast path", lintRequest("/lint/python", `{"code":"x"}`), 200, `"echo":"{\"code\":\"x\"}"`,
					map[string]string{"Content-Type": "application/json"}, false},
				{"no body", "POST /lint/python HTTP/1.1\r\nHost: lb\r\n\r\n", 200, `"echo":""`, nil, false},
				{"connection close", lintRequest("/lint/python", `{}`, "Connection: close\r\n"), 200, `"result":true`, nil, true},
				{"unknown language", lintRequest("/lint/cobol", `{}`), 503, `no linter can serve language \"cobol\"`,
					map[string]string{"Content-Type": "application/json"}, false},
				{"body over the limit (handed off)", lintRequest("/lint/python", strings.Repeat("x", 65)), 413, "limit is 64 bytes", nil, false},
				{"escaped path (handed off)", lintRequest("/lint/py%74hon", `{}`), 200, `"result":true`, nil, false},
				{"wrong method (handed off)", "GET /lint/python HTTP/1.1\r\nHost: lb\r\n\r\n", 405, "use POST", nil, false},
				{"lower-case header names (handed off)", "POST /lint/python HTTP/1.1\r\nhost: lb\r\ncontent-length: 2\r\n\r\n{}", 200, `"result":true`, nil, false},
				{"expect 100-continue (handed off)", lintRequest("/lint/python", `{}`, "Expect: 100-continue\r\n"), 100, "", nil, false},
				{"two lengths (handed off)", "POST /lint/python HTTP/1.1\r\nHost: lb\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", 400, "", nil, true},
				{"no host (handed off)", "POST /lint/python HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}", 400, "Host", nil, true},
				{"HTTP/1.0 (handed off)", "POST /lint/python HTTP/1.0\r\nContent-Length: 2\r\n\r\n{}", 200, `"result":true`, nil, true},
				{"garbage (handed off)", "BLAH\r\n\r\n", 400, "", nil, true},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					c := dialRaw(t, e.url)
					c.send(tt.request)
					resp, body := c.response()
					assert.Equal(t, tt.status, resp.StatusCode, body)
					assert.Contains(t, body, tt.bodyHas)
					for k, v := range tt.header {
						assert.Equal(t, v, resp.Header.Get(k), k)
					}
					assert.Equal(t, tt.closes, resp.Close, "Connection: close")
				})
			}
		})
	}
}

// TestServerHeadTooLarge: a head over the fast path's 8 KiB goes to
// net/http, which still serves it.
func TestServerHeadTooLarge(t *testing.T) {
	for _, fr := range fronts {
		t.Run(fr.name, func(t *testing.T) {
			e, l := frontEnv(t, fr.loop, balancer.ProxyOptions{})
			c := dialRaw(t, e.url)
			c.send(lintRequest("/lint/python", `{}`, "X-Big: "+strings.Repeat("b", 10<<10)+"\r\n"))
			code, _, body := c.answer()
			assert.Equal(t, http.StatusOK, code, body)
			assert.Equal(t, int64(1), l.hits.Load())
		})
	}
}

// TestServerClientGone: a client that leaves while its request is in
// flight ends the upstream attempt, through the fast path too.
func TestServerClientGone(t *testing.T) {
	for _, fr := range fronts {
		t.Run(fr.name, func(t *testing.T) {
			e := newProxyEnv(t, fr.su, balancer.Options{EjectAfter: 1}, balancer.ProxyOptions{Timeout: time.Minute})
			upstreamDone := make(chan struct{}, 1)
			l := newLinter(t, "1.0", func(w http.ResponseWriter, r *http.Request) {
				hanging(w, r)
				upstreamDone <- struct{}{}
			})
			e.add(t, "python", "1.0", l.URI())
			c := dialRaw(t, e.url)
			c.send(lintRequest("/lint/python", `{"code":"x"}`))
			require.Eventually(t, func() bool { return l.hits.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
			require.NoError(t, c.nc.Close())
			select {
			case <-upstreamDone:
			case <-time.After(10 * time.Second):
				t.Fatal("the upstream request was not cancelled")
			}
		})
	}
}

// TestServerShutdown: Shutdown lets the request in flight finish, closes
// idle connections, refuses new ones, and Serve returns ErrServerClosed.
func TestServerShutdown(t *testing.T) {
	for _, fr := range fronts {
		t.Run(fr.name, func(t *testing.T) {
			e := newProxyEnv(t, fr.su, balancer.Options{}, balancer.ProxyOptions{})
			release := make(chan struct{})
			entered := make(chan struct{}, 1)
			l := newLinter(t, "1.0", func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				entered <- struct{}{}
				<-release
				_, _ = io.WriteString(w, `{"result":true}`)
			})
			e.add(t, "python", "1.0", l.URI())
			srv, err := balancer.NewServer(e.proxy, balancer.ServerOptions{EventLoop: fr.loop})
			require.NoError(t, err)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ln) }()
			url := "http://" + ln.Addr().String()

			idle := dialRaw(t, url)
			busy := dialRaw(t, url)
			handed := dialRaw(t, url) // idle on the net/http side
			handed.send("GET /lint/python HTTP/1.1\r\nHost: lb\r\n\r\n")
			code, _, _ := handed.answer()
			require.Equal(t, http.StatusMethodNotAllowed, code)
			busy.send(lintRequest("/lint/python", `{}`))
			<-entered

			shut := make(chan error, 1)
			go func() { shut <- srv.Shutdown(context.Background()) }()
			assert.ErrorIs(t, <-served, http.ErrServerClosed)
			// The idle connections are closed without an answer.
			for _, c := range []*rawConn{idle, handed} {
				require.NoError(t, c.nc.SetReadDeadline(time.Now().Add(10*time.Second)))
				_, err := c.br.ReadByte()
				assert.ErrorIs(t, err, io.EOF)
			}
			_, err = net.Dial("tcp", ln.Addr().String())
			assert.Error(t, err, "the listener is closed")
			select {
			case err := <-shut:
				t.Fatalf("Shutdown returned %v with a request in flight", err)
			default:
			}
			close(release)
			resp, body := busy.response()
			assert.Equal(t, http.StatusOK, resp.StatusCode, body)
			assert.True(t, resp.Close, "the last answer says Connection: close")
			assert.NoError(t, <-shut)
		})
	}
}

// TestServerShutdownDeadline: Shutdown gives up when its context ends.
func TestServerShutdownDeadline(t *testing.T) {
	for _, fr := range fronts {
		t.Run(fr.name, func(t *testing.T) {
			e := newProxyEnv(t, fr.su, balancer.Options{}, balancer.ProxyOptions{})
			entered := make(chan struct{}, 1)
			l := newLinter(t, "1.0", func(w http.ResponseWriter, r *http.Request) {
				entered <- struct{}{}
				hanging(w, r)
			})
			e.add(t, "python", "1.0", l.URI())
			url, srv := startFront(t, e.proxy, balancer.ServerOptions{EventLoop: fr.loop})
			c := dialRaw(t, url)
			c.send(lintRequest("/lint/python", `{}`))
			<-entered
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			assert.ErrorIs(t, srv.Shutdown(ctx), context.DeadlineExceeded)
		})
	}
}

// TestServerConcurrent: many clients over keep-alive connections through
// the fast path get their own answers (run with -race).
func TestServerConcurrent(t *testing.T) {
	for _, fr := range fronts {
		t.Run(fr.name, func(t *testing.T) {
			e, l := frontEnv(t, fr.loop, balancer.ProxyOptions{})
			const clients, each = 16, 50
			var wg sync.WaitGroup
			errs := make(chan error, clients)
			for i := range clients {
				wg.Go(func() {
					c := dialRaw(t, e.url)
					for j := range each {
						want := fmt.Sprintf("c%d-%d", i, j)
						if _, err := io.WriteString(c.nc, lintRequest("/lint/python?"+want, `{}`)); err != nil {
							errs <- err
							return
						}
						resp, err := http.ReadResponse(c.br, nil)
						if err != nil {
							errs <- err
							return
						}
						body, err := io.ReadAll(resp.Body)
						if err == nil && !strings.Contains(string(body), `"query":"`+want+`"`) {
							err = errors.New("answer for another request: " + string(body))
						}
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			assert.Equal(t, int64(clients*each), l.hits.Load())
		})
	}
}

func TestNewServerValidation(t *testing.T) {
	_, err := balancer.NewServer(nil, balancer.ServerOptions{})
	assert.Error(t, err)
	p, err := balancer.NewProxy(newBalancer(t, balancer.Options{}), balancer.ProxyOptions{})
	require.NoError(t, err)
	_, err = balancer.NewServer(p, balancer.ServerOptions{IdleTimeout: -time.Second})
	assert.Error(t, err)
}
