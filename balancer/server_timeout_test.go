package balancer_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// pipeListener is an in-memory listener (net.Pipe connections), so that a
// Server runs inside a synctest bubble, where its deadlines run on the
// bubble's clock.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

// dial returns the client's end of a new connection.
func (l *pipeListener) dial() net.Conn {
	client, server := net.Pipe()
	l.conns <- server
	return client
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe" }

// inBubble runs a Server with opts (and a Proxy holding no backend) on a
// pipe listener inside a synctest bubble, and calls f with it.
func inBubble(t *testing.T, opts balancer.ServerOptions, f func(t *testing.T, ln *pipeListener)) {
	synctest.Test(t, func(t *testing.T) {
		p, err := balancer.NewProxy(newBalancer(t, balancer.Options{}), balancer.ProxyOptions{})
		require.NoError(t, err)
		srv, err := balancer.NewServer(p, opts)
		require.NoError(t, err)
		ln := newPipeListener()
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		f(t, ln)
		require.NoError(t, srv.Close())
		<-served
	})
}

// closedAfter reads c until the server closes it and returns how long
// that took on the bubble's clock.
func closedAfter(c net.Conn) time.Duration {
	start := time.Now()
	_, _ = io.Copy(io.Discard, c)
	return time.Since(start)
}

// dribble writes s one byte every interval until a write fails.
func dribble(c net.Conn, s string, interval time.Duration) {
	for i := 0; ; i++ {
		if _, err := c.Write([]byte{s[i%len(s)]}); err != nil {
			return
		}
		time.Sleep(interval)
	}
}

// TestServerSlowloris: whatever a client sends, slowly or not at all, the
// fast path closes its connection when the head's time is up, as net/http
// does — including after handing it to net/http, which gets no fresh
// allowance.
func TestServerSlowloris(t *testing.T) {
	head := "POST /lint/python HTTP/1.1\r\nHost: lb\r\nX-Padding: " + strings.Repeat("a", 4096)
	tests := []struct {
		name string
		opts balancer.ServerOptions
		send func(c net.Conn, wg *sync.WaitGroup)
		want time.Duration
	}{
		{"silent new connection: the head timeout, not the idle one",
			balancer.ServerOptions{}, func(net.Conn, *sync.WaitGroup) {}, balancer.DefaultReadHeaderTimeout},
		{"one byte of the head every 2 s",
			balancer.ServerOptions{}, func(c net.Conn, wg *sync.WaitGroup) { wg.Go(func() { dribble(c, head, 2*time.Second) }) }, balancer.DefaultReadHeaderTimeout},
		{"another method, one byte every 2 s (net/http's)",
			balancer.ServerOptions{}, func(c net.Conn, wg *sync.WaitGroup) {
				wg.Go(func() { dribble(c, "GET /health HTTP/1.1\r\nX-A: "+strings.Repeat("b", 4096), 2*time.Second) })
			}, balancer.DefaultReadHeaderTimeout},
		{"8 KiB of head at once, then a byte every 2 s (handed off)",
			balancer.ServerOptions{}, func(c net.Conn, wg *sync.WaitGroup) {
				wg.Go(func() {
					_, _ = io.WriteString(c, head+strings.Repeat("a", 8<<10))
					dribble(c, "a", 2*time.Second)
				})
			}, balancer.DefaultReadHeaderTimeout},
		{"the HTTP server's ReadHeaderTimeout applies",
			balancer.ServerOptions{HTTP: &http.Server{ReadHeaderTimeout: 3 * time.Second}}, func(c net.Conn, wg *sync.WaitGroup) { wg.Go(func() { dribble(c, head, time.Second) }) }, 3 * time.Second},
		{"the HTTP server's ReadTimeout stands in for a missing ReadHeaderTimeout",
			balancer.ServerOptions{HTTP: &http.Server{ReadTimeout: 4 * time.Second}}, func(net.Conn, *sync.WaitGroup) {}, 4 * time.Second},
		{"ServerOptions win over the HTTP server",
			balancer.ServerOptions{ReadHeaderTimeout: time.Second, HTTP: &http.Server{ReadHeaderTimeout: 3 * time.Second}}, func(net.Conn, *sync.WaitGroup) {}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inBubble(t, tt.opts, func(t *testing.T, ln *pipeListener) {
				c := ln.dial()
				defer c.Close()
				var wg sync.WaitGroup
				tt.send(c, &wg)
				assert.Equal(t, tt.want, closedAfter(c))
				wg.Wait() // the client's next write fails
			})
		})
	}
}

// TestServerKeepAliveTimeouts: after an answer a connection has
// IdleTimeout to start its next request, whose head then has
// ReadHeaderTimeout from its first byte.
func TestServerKeepAliveTimeouts(t *testing.T) {
	opts := balancer.ServerOptions{IdleTimeout: 30 * time.Second, ReadHeaderTimeout: 5 * time.Second}
	answerOne := func(t *testing.T, c net.Conn, br *bufio.Reader) {
		t.Helper()
		go func() { _, _ = io.WriteString(c, lintRequest("/lint/python", `{}`)) }()
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	}
	// Each case answers one request, waits, then does next; the
	// connection must close want after next starts.
	tests := []struct {
		name string
		wait time.Duration
		next func(t *testing.T, c net.Conn, br *bufio.Reader, wg *sync.WaitGroup)
		want time.Duration
	}{
		{"idle", 29 * time.Second, func(t *testing.T, c net.Conn, br *bufio.Reader, _ *sync.WaitGroup) {
			answerOne(t, c, br) // still open within IdleTimeout
		}, 30 * time.Second},
		{"next head dribbled", 20 * time.Second, func(t *testing.T, c net.Conn, _ *bufio.Reader, wg *sync.WaitGroup) {
			wg.Go(func() {
				dribble(c, "POST /lint/python HTTP/1.1\r\nHost: lb\r\nX-A: "+strings.Repeat("a", 100), time.Second)
			})
		}, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inBubble(t, opts, func(t *testing.T, ln *pipeListener) {
				c := ln.dial()
				defer c.Close()
				br := bufio.NewReader(c)
				answerOne(t, c, br)
				time.Sleep(tt.wait)
				var wg sync.WaitGroup
				tt.next(t, c, br, &wg)
				start := time.Now()
				_, _ = io.Copy(io.Discard, br)
				assert.Equal(t, tt.want, time.Since(start))
				wg.Wait()
			})
		})
	}
}

// TestServerBareLF: a request whose lines end in a bare LF is handed to
// net/http at once (which answers it), not after the head's timeout.
func TestServerBareLF(t *testing.T) {
	for _, request := range []string{
		"POST /lint/python HTTP/1.1\nHost: lb\nContent-Length: 2\n\n{}",
		"POST /lint/python HTTP/1.1\r\nHost: lb\nContent-Length: 2\r\n\r\n{}",
	} {
		inBubble(t, balancer.ServerOptions{}, func(t *testing.T, ln *pipeListener) {
			c := ln.dial()
			defer c.Close()
			start := time.Now()
			go func() { _, _ = io.WriteString(c, request) }()
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			require.NoError(t, err, "%q", request)
			_ = resp.Body.Close()
			assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%q answered", request)
			assert.Zero(t, time.Since(start), "%q answered at once", request)
		})
	}
}
