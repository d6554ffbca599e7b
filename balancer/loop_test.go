//go:build linux

package balancer_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// The event loop's own behaviour; every proxy and Server test also runs
// through it (the "loop/direct" setup and the "loop" front). The loop
// runs on real sockets and the real clock (its poller is the kernel's, which
// a synctest bubble cannot wait on), so these tests use short timeouts and
// wait for conditions with generous bounds.

// loopFront serves a Proxy with backends added by the caller behind a
// Server with the event loop and opts.
func loopFront(t *testing.T, popts balancer.ProxyOptions, opts balancer.ServerOptions) (*proxyEnv, *balancer.Server) {
	t.Helper()
	e := newProxyEnv(t, setup{name: "bare", transport: func() http.RoundTripper { return nil }}, balancer.Options{}, popts)
	opts.EventLoop = true
	var srv *balancer.Server
	e.url, srv = startFront(t, e.proxy, opts)
	return e, srv
}

// closedWithin reads c until the server closes it, failing after limit,
// and returns how long it took and what was read.
func closedWithin(t *testing.T, c *rawConn, limit time.Duration) (time.Duration, string) {
	t.Helper()
	start := time.Now()
	require.NoError(t, c.nc.SetReadDeadline(start.Add(limit)))
	got, err := io.ReadAll(c.br)
	var ne net.Error
	if err != nil && !(strings.Contains(err.Error(), "reset")) {
		require.False(t, assert.ErrorAs(t, err, &ne) && ne.Timeout(), "not closed within %s", limit)
	}
	return time.Since(start), string(got)
}

// TestLoopTimeouts: the loop closes a connection, unanswered, when the
// client keeps it waiting past the timeout that applies — never before.
func TestLoopTimeouts(t *testing.T) {
	const (
		head = 300 * time.Millisecond
		idle = 500 * time.Millisecond
		read = 700 * time.Millisecond
	)
	e, _ := loopFront(t, balancer.ProxyOptions{},
		balancer.ServerOptions{ReadHeaderTimeout: head, IdleTimeout: idle, ReadTimeout: read})
	e.add(t, "python", "1.0", newLinter(t, "1.0", nil).URI())
	tests := []struct {
		name  string
		send  string
		after time.Duration // the least time before the close
	}{
		{"silent", "", head},
		{"part of a head", "POST /lint/python HTTP/1.1\r\nHost: lb\r\nContent-", head},
		{"part of a body", "POST /lint/python HTTP/1.1\r\nHost: lb\r\nContent-Length: 100\r\n\r\n{\"code\":", read},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := dialRaw(t, e.url)
			if tt.send != "" {
				c.send(tt.send)
			}
			took, got := closedWithin(t, c, 10*time.Second)
			assert.Empty(t, got, "no answer")
			assert.GreaterOrEqual(t, took, tt.after-loopSlack)
		})
	}
	t.Run("idle after an answer", func(t *testing.T) {
		t.Parallel()
		c := dialRaw(t, e.url)
		c.send(lintRequest("/lint/python", `{}`))
		code, _, body := c.answer()
		require.Equal(t, http.StatusOK, code, body)
		took, got := closedWithin(t, c, 10*time.Second)
		assert.Empty(t, got)
		assert.GreaterOrEqual(t, took, idle-loopSlack)
	})
}

// loopSlack is what a connection's measured wait may fall short of its
// timeout: the test's clock starts after the server's.
const loopSlack = 50 * time.Millisecond

// TestLoopPipelinedBeyondItsBuffer: a client that sends many requests at
// once, more than the loop buffers, gets every answer, in order; the loop
// reads the rest as it answers.
func TestLoopPipelinedBeyondItsBuffer(t *testing.T) {
	e, _ := loopFront(t, balancer.ProxyOptions{MaxBody: 16 << 10}, balancer.ServerOptions{})
	l := newLinter(t, "1.0", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, `{"query":%q}`, r.URL.RawQuery)
	})
	e.add(t, "python", "1.0", l.URI())
	c := dialRaw(t, e.url)
	const n = 64 // 64 × 10 KiB: far over the 8 KiB + MaxBody the loop holds
	body := `{"code":"` + strings.Repeat("x", 10<<10) + `"}`
	go func() {
		var all strings.Builder
		for i := range n {
			all.WriteString(lintRequest(fmt.Sprintf("/lint/python?i=%d", i), body))
		}
		_, _ = io.WriteString(c.nc, all.String())
	}()
	for i := range n {
		code, _, got := c.answer()
		require.Equal(t, http.StatusOK, code, got)
		require.Contains(t, got, fmt.Sprintf(`"query":"i=%d"`, i))
	}
	assert.Equal(t, int64(n), l.hits.Load())
}

// TestLoopLargeBodies: requests and answers larger than the socket buffers
// go through the loop whole, written and read over many events.
func TestLoopLargeBodies(t *testing.T) {
	e, _ := loopFront(t, balancer.ProxyOptions{}, balancer.ServerOptions{})
	l := newLinter(t, "1.0", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Length", fmt.Sprint(len(body)+2))
		_, _ = w.Write(append(append([]byte("<"), body...), '>'))
	})
	e.add(t, "python", "1.0", l.URI())
	c := dialRaw(t, e.url)
	body := strings.Repeat("0123456789abcdef", (1<<20)/16-64) // just under MaxBody
	go func() {
		for range 3 {
			_, _ = io.WriteString(c.nc, lintRequest("/lint/python", body))
		}
	}()
	for i := range 3 {
		code, _, got := c.answer()
		require.Equal(t, http.StatusOK, code, "answer %d", i)
		require.Equal(t, "<"+body+">", got, "answer %d", i)
	}
}

// serveRequests runs answer for each request read from a rawBackend
// connection until it reports false.
func serveRequests(nc net.Conn, br *bufio.Reader, answer func(req *http.Request) bool) {
	for {
		req, err := http.ReadRequest(br)
		if err != nil || !answer(req) {
			return
		}
	}
}

// TestLoopEarlyAnswer: an upstream that answers before it read the whole
// request gets no further request on that connection (its next bytes would
// be the rest of the first body), and the client gets each answer.
func TestLoopEarlyAnswer(t *testing.T) {
	var conns atomic.Int64
	addr := rawBackend(t, func(nc net.Conn, br *bufio.Reader) {
		conns.Add(1)
		serveRequests(nc, br, func(req *http.Request) bool {
			// The answer before the body, then the body read.
			_, _ = io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			_, err := io.Copy(io.Discard, req.Body)
			return err == nil
		})
	})
	e, _ := loopFront(t, balancer.ProxyOptions{MaxBody: 32 << 20}, balancer.ServerOptions{})
	e.add(t, "python", "1.0", addr)
	body := strings.Repeat("z", 24<<20) // more than the sockets between take at once
	for i := range 3 {
		code, got := e.lint(t, "python", body)
		require.Equal(t, http.StatusOK, code, "request %d: %s", i, got)
		require.Equal(t, "ok", got)
	}
	assert.Equal(t, int64(3), conns.Load(), "a connection whose request was not all sent is not reused")
}

// TestLoopClosesRemovedBackendsConnections: once a backend leaves the
// Balancer, the loop closes its idle connections to it.
func TestLoopClosesRemovedBackendsConnections(t *testing.T) {
	var open atomic.Int64
	backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		_, _ = io.WriteString(w, `{"result":true}`)
	}))
	backend.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Add(-1)
		}
	}
	backend.Start()
	t.Cleanup(backend.Close)
	e, _ := loopFront(t, balancer.ProxyOptions{}, balancer.ServerOptions{})
	e.add(t, "python", "1.0", backend.URL)
	code, body := e.lint(t, "python", `{}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Equal(t, int64(1), open.Load(), "kept alive")
	require.NoError(t, e.bal.RemoveBackend(context.Background(), backend.URL))
	require.Eventually(t, func() bool { return open.Load() == 0 }, 10*time.Second, 10*time.Millisecond)
}

// TestLoopBytesAfterAnAnswer: an upstream that sends more after an answer
// never has its connection reused (the rest would be taken for the next
// answer): an answer streamed (over MaxResponseBody) that ends exactly
// where the loop's first read stops, and a chunked one whose framing alone
// is over what the loop reads at once (its whole chunks are decoded in
// place to make room).
func TestLoopBytesAfterAnAnswer(t *testing.T) {
	const maxAnswer = 4 << 10
	// What the loop reads of an answer at once: MaxResponseBody, 64 KiB
	// of head and 4 KiB of a chunk's size line.
	const readLimit = maxAnswer + 64<<10 + 4<<10
	streamed := readLimit - len(fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", readLimit))
	for _, tt := range []struct {
		name   string
		size   int // of the answer's body
		answer func(n int64) string
	}{
		{"streamed, ending at the read's limit", streamed, func(n int64) string {
			head := "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n"
			body := fmt.Sprintf("conn%02d", n) + strings.Repeat(".", streamed-6)
			return fmt.Sprintf(head, streamed) + body
		}},
		{"chunked, its framing over the read's limit", maxAnswer, func(n int64) string {
			var b strings.Builder
			b.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
			body := fmt.Sprintf("conn%02d", n) + strings.Repeat(".", maxAnswer-6)
			for _, c := range []byte(body) { // 4 KiB in 1-byte chunks of 25 bytes
				fmt.Fprintf(&b, "1;pad=%s\r\n%c\r\n", strings.Repeat("p", 14), c)
			}
			b.WriteString("0\r\n\r\n")
			return b.String()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var conns, requests atomic.Int64
			addr := rawBackend(t, func(nc net.Conn, br *bufio.Reader) {
				n := conns.Add(1)
				serveRequests(nc, br, func(req *http.Request) bool {
					requests.Add(1)
					_, _ = io.Copy(io.Discard, req.Body)
					_, _ = io.WriteString(nc, tt.answer(n)+"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstray")
					return true
				})
			})
			e, _ := loopFront(t, balancer.ProxyOptions{MaxResponseBody: maxAnswer}, balancer.ServerOptions{})
			e.add(t, "python", "1.0", addr)
			for i := range 3 {
				code, got := e.lint(t, "python", `{}`)
				require.Equal(t, http.StatusOK, code, "request %d: %.100s", i, got)
				require.True(t, strings.HasPrefix(got, fmt.Sprintf("conn%02d.", i+1)), "request %d answered on a connection of its own: %.20s", i, got)
				require.Equal(t, tt.size, len(got), "request %d", i)
			}
			assert.Equal(t, int64(3), requests.Load(), "each request sent once (none on a connection out of step)")
		})
	}
}

// TestLoopAnswerShapes: answers with a Connection header, and 204s, are
// passed on by the loop: each request goes upstream once (not again on the
// goroutine path), the hop-by-hop headers stay behind, and the upstream
// connection is kept unless the answer said "close".
func TestLoopAnswerShapes(t *testing.T) {
	for _, tt := range []struct {
		name, answer string
		code         int
		body         string
		conns        int64
	}{
		{"keep-alive, as Node sends it", "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\ncontent-type: application/json\r\nContent-Length: 2\r\n\r\n{}", 200, "{}", 1},
		{"close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", 200, "{}", 3},
		{"a header for this hop only", "HTTP/1.1 200 OK\r\nConnection: X-Hop\r\nX-Hop: 1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 200, "{}", 1},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", 204, "", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var conns, requests atomic.Int64
			addr := rawBackend(t, func(nc net.Conn, br *bufio.Reader) {
				conns.Add(1)
				serveRequests(nc, br, func(req *http.Request) bool {
					requests.Add(1)
					_, _ = io.Copy(io.Discard, req.Body)
					_, _ = io.WriteString(nc, tt.answer)
					return !strings.Contains(tt.answer, "close")
				})
			})
			e, _ := loopFront(t, balancer.ProxyOptions{}, balancer.ServerOptions{})
			e.add(t, "python", "1.0", addr)
			c := dialRaw(t, e.url)
			for i := range 3 {
				c.send(lintRequest("/lint/python", "{}"))
				resp, body := c.response()
				require.Equal(t, tt.code, resp.StatusCode, "request %d", i)
				assert.Equal(t, tt.body, body)
				assert.Empty(t, resp.Header.Values("Connection"), "hop-by-hop")
				assert.Empty(t, resp.Header.Values("Keep-Alive"), "hop-by-hop")
				assert.Empty(t, resp.Header.Values("X-Hop"), "named by Connection")
				if tt.code == http.StatusNoContent {
					assert.Empty(t, resp.Header.Values("Content-Length"), "none on a 204")
				}
			}
			assert.Equal(t, int64(3), requests.Load(), "each request sent once")
			assert.Equal(t, tt.conns, conns.Load(), "upstream connections")
		})
	}
}

// TestLoopUpstreamResetMidBody: an upstream that resets its connection
// while the loop writes a large body fails that attempt once. With no
// other upstream the client gets one 502, and its next request on the
// same connection its own answer; with another, the request goes there
// and is answered once.
func TestLoopUpstreamResetMidBody(t *testing.T) {
	var good atomic.Int64
	goodAddr := rawBackend(t, func(nc net.Conn, br *bufio.Reader) {
		serveRequests(nc, br, func(req *http.Request) bool {
			n := good.Add(1)
			_, _ = io.Copy(io.Discard, req.Body)
			_, _ = fmt.Fprintf(nc, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\ngood%d", n%10)
			return true
		})
	})
	resetAddr := rawBackend(t, func(nc net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err == nil {
			_ = nc.(*net.TCPConn).SetLinger(0) // close with a reset, the body unread
		}
	})
	// A body over what the sockets between hold, so that the loop is
	// still writing it when the reset comes.
	e, _ := loopFront(t, balancer.ProxyOptions{MaxBody: 32 << 20}, balancer.ServerOptions{})
	body := `{"code":"` + strings.Repeat("x", 16<<20) + `"}`
	c := dialRaw(t, e.url)

	e.add(t, "python", "1.0", resetAddr)
	c.send(lintRequest("/lint/python", body))
	code, _, got := c.answer()
	require.Equal(t, http.StatusBadGateway, code, got)
	require.NoError(t, e.bal.RemoveBackend(context.Background(), resetAddr))
	e.add(t, "python", "1.0", goodAddr)
	c.send(lintRequest("/lint/python", `{}`))
	code, _, got = c.answer()
	require.Equal(t, http.StatusOK, code, "the next request's own answer: %s", got)
	require.Equal(t, "good1", got)

	e.add(t, "python", "1.0", resetAddr)
	for i := range 6 {
		c.send(lintRequest("/lint/python", body))
		code, _, got := c.answer()
		require.Equal(t, http.StatusOK, code, "request %d: %s", i, got)
		require.Equal(t, fmt.Sprintf("good%d", good.Load()%10), got, "request %d: its own answer", i)
	}
	assert.Equal(t, int64(7), good.Load(), "each request answered once")
}

// TestLoopClientNotReading: a client that sends requests and never reads
// the answers holds at most one answer in the loop, and its connection is
// closed after ReadTimeout: an answer kept whole (chunked, as net/http
// frames a large one, within MaxResponseBody) or one streamed (a
// Content-Length over MaxResponseBody).
func TestLoopClientNotReading(t *testing.T) {
	// Over what the sockets between hold for a client that does not read
	// (the sender's buffer grows to tcp_wmem's 4 MiB): a 4 MiB answer
	// sometimes fit.
	big := strings.Repeat("y", 24<<20)
	for _, tt := range []struct {
		name      string
		maxAnswer int64
		length    bool
	}{
		{"kept whole", 32 << 20, false},
		{"streamed", 64 << 10, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, srv := loopFront(t, balancer.ProxyOptions{MaxResponseBody: tt.maxAnswer}, balancer.ServerOptions{ReadTimeout: 300 * time.Millisecond})
			l := newLinter(t, "1.0", func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				if tt.length {
					w.Header().Set("Content-Length", fmt.Sprint(len(big)))
				}
				_, _ = io.WriteString(w, big)
			})
			e.add(t, "python", "1.0", l.URI())
			c := dialRaw(t, e.url)
			for range 3 {
				c.send(lintRequest("/lint/python", `{}`))
			}
			require.Eventually(t, func() bool { return l.hits.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
			start := time.Now()
			// The connection's close cannot reach a client that does not
			// read (it waits behind the unsent bytes): the loop is what
			// lets it go.
			require.Eventually(t, func() bool { return srv.LoopClients() == 0 }, 10*time.Second, 5*time.Millisecond)
			assert.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond-loopSlack)
			assert.Equal(t, int64(1), l.hits.Load(), "no further request went upstream")
			_, got := closedWithin(t, c, 10*time.Second)
			assert.Less(t, len(got), len(big), "the answer was cut, not completed")
		})
	}
}

// TestLoopBackendByName: a backend named by host name rather than IP
// address is served through the goroutine path.
func TestLoopBackendByName(t *testing.T) {
	e, _ := loopFront(t, balancer.ProxyOptions{}, balancer.ServerOptions{})
	l := newLinter(t, "1.0", nil)
	e.add(t, "python", "1.0", strings.Replace(l.URI(), "127.0.0.1", "localhost", 1))
	for range 3 {
		code, body := e.lint(t, "python", `{"code":"x"}`)
		assert.Equal(t, http.StatusOK, code, body)
	}
	assert.Equal(t, int64(3), l.hits.Load())
}

// TestLoopLameDuck: after Shutdown, a kept-alive connection may bring one
// more request within the lame-duck time, answered with "Connection:
// close"; an idle one is closed when that time ends.
func TestLoopLameDuck(t *testing.T) {
	const lameDuck = 400 * time.Millisecond
	e, srv := loopFront(t, balancer.ProxyOptions{}, balancer.ServerOptions{LameDuck: lameDuck})
	e.add(t, "python", "1.0", newLinter(t, "1.0", nil).URI())
	conns := []*rawConn{dialRaw(t, e.url), dialRaw(t, e.url)}
	for _, c := range conns {
		c.send(lintRequest("/lint/python", `{}`))
		resp, body := c.response()
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		require.False(t, resp.Close)
	}
	start := time.Now()
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(context.Background()) }()
	var wg sync.WaitGroup
	wg.Go(func() {
		conns[0].send(lintRequest("/lint/python", `{}`))
		resp, body := conns[0].response()
		assert.Equal(t, http.StatusOK, resp.StatusCode, body)
		assert.True(t, resp.Close, "the lame-duck answer says Connection: close")
		_, rest := closedWithin(t, conns[0], 10*time.Second)
		assert.Empty(t, rest)
	})
	wg.Go(func() {
		_, got := closedWithin(t, conns[1], 10*time.Second)
		assert.Empty(t, got)
		assert.GreaterOrEqual(t, time.Since(start), lameDuck-loopSlack, "an idle connection waits out the lame-duck time")
	})
	wg.Wait()
	require.NoError(t, <-shut)
}
