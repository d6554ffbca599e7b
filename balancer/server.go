package balancer

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/fleetkit/fleetkit/balancer/internal/h1"
)

// Server defaults, used when neither ServerOptions nor its HTTP server set
// a timeout.
const (
	// DefaultIdleTimeout closes a keep-alive connection that sent nothing
	// for this long after an answer.
	DefaultIdleTimeout = h1.DefaultIdleTimeout
	// DefaultReadHeaderTimeout bounds reading a request's head.
	DefaultReadHeaderTimeout = h1.DefaultReadHeaderTimeout
	// DefaultReadTimeout bounds reading one request, head and body.
	DefaultReadTimeout = h1.DefaultReadTimeout
)

// ServerOptions configures a Server. The zero value is usable.
//
// The fast path keeps the timeouts as net/http does: a new connection has
// ReadHeaderTimeout to send its first request's head; after an answer a
// kept-alive connection has IdleTimeout to start the next request, whose
// head then has ReadHeaderTimeout; ReadTimeout bounds head and body from
// the request's start. A connection handed to net/http keeps its head's
// deadline: a slow head gets no second allowance there.
type ServerOptions struct {
	// Fallback serves every request the fast path does not take (see
	// Server). nil means the Proxy itself, which answers 404 for a path
	// other than /lint/{language}.
	Fallback http.Handler
	// HTTP is the net/http server for those requests; its Handler is
	// replaced by Fallback (behind httpjson's panic recovery). A timeout
	// it sets applies to the fast path too unless set here (with net/http's
	// fallbacks: ReadTimeout for a missing ReadHeaderTimeout or
	// IdleTimeout); one it leaves zero is set to the fast path's. nil means
	// a new http.Server.
	HTTP *http.Server
	// ReadHeaderTimeout bounds reading a request's head. 0 means HTTP's,
	// else DefaultReadHeaderTimeout.
	ReadHeaderTimeout time.Duration
	// IdleTimeout closes a kept-alive connection idle this long. 0 means
	// HTTP's, else DefaultIdleTimeout.
	IdleTimeout time.Duration
	// ReadTimeout bounds reading a request's head and body. 0 means
	// HTTP's, else DefaultReadTimeout.
	ReadTimeout time.Duration
	// Logger logs handler panics (answered 500, with the connection
	// closed). nil means slog.Default().
	Logger *slog.Logger
	// LameDuck is how long, after Shutdown, a fast-path connection that
	// is idle between requests may still bring one more request, answered
	// with "Connection: close", before it is closed. A client that sends
	// on a kept-alive connection just as the server closes it gets an
	// error instead of an answer (HTTP/1.1 cannot tell it the request was
	// not seen, so a POST is not retried): a restart under load would
	// fail requests. With a lame-duck time each client is told to go
	// instead, on an answer. 0 closes idle connections at once, as
	// http.Server.Shutdown does.
	LameDuck time.Duration
	// EventLoop serves the fast path from one epoll event loop per
	// GOMAXPROCS on Linux, client and upstream connections of a request
	// on the same loop, instead of a goroutine per connection: two thirds
	// of the CPU per request, below NGINX's (BENCHMARKS.md, issue 23).
	// The loop takes the common exchange only — a fast-path request, an
	// http:// backend named by IP address, an HTTP/1.1 answer framed by
	// one Content-Length or chunked, or a 204 or 304 (one over
	// MaxResponseBody streams, or is the 502 when chunked, as through
	// ServeHTTP). At anything else the connection leaves the loop for the
	// goroutine path with its request unanswered, which serves it —
	// sending it to the backend a second time when the answer was the
	// unusual part (a 1xx first, no framing, HTTP/1.0, a Trailer header):
	// a lint is idempotent. Its timeouts are checked every
	// 100 ms. It needs the Proxy's built-in forwarder (no
	// ProxyOptions.Transport); elsewhere than Linux, and for a listener
	// other than TCP, it is not used. The loops accept on descriptors of
	// their own: Serve returns at Shutdown or Close, not when the listener
	// is closed by other means.
	EventLoop bool
}

// Server serves a Proxy's public API over HTTP/1.1, without net/http's
// server on the common path. net/http spends, per request, more than the
// proxying itself: a Request with a parsed URL and a context, header
// parsing through textproto, sorted header writing, and a goroutine that
// reads the connection to notice a client that went away. NGINX spends
// none of that, and the balancer is measured against it.
//
// A connection is served by the fast path while its requests are the
// plain shape of the public API: POST /lint/{language} in HTTP/1.1, one
// Host, a body framed by one Content-Length within the Proxy's MaxBody, a
// head under 8 KiB of well-formed lines, and no Transfer-Encoding, Expect,
// Upgrade or Connection header other than close or keep-alive. At the
// first request of any other shape, the connection — that request's bytes
// included, unread — is handed to a net/http server running Fallback for
// the rest of its life. So anything unusual (the admin API, chunked
// bodies, 100-continue, malformed requests, the 413 for a too-large body)
// is answered by net/http exactly as without a Server, and the fast path
// only ever parses what it fully understands.
//
// Answers are the Proxy's, as through ServeHTTP. One difference: a client
// that goes away is noticed only once its request has been in flight for
// 20 ms, not at once (the upstream attempt is then cut short as usual). A
// panic in the Proxy is answered 500 with the JSON error body, logged, and
// the connection closed, as httpjson.Recover does for the handed-off ones.
//
// Server speaks plain HTTP/1.1 on TCP; for TLS or HTTP/2 mount the Proxy in
// an http.Server instead. Serve and Shutdown follow http.Server's contract.
type Server struct {
	h *h1.Server
}

// NewServer returns a Server for p.
func NewServer(p *Proxy, opts ServerOptions) (*Server, error) {
	if p == nil {
		return nil, errors.New("balancer: NewServer needs a Proxy")
	}
	if opts.IdleTimeout < 0 || opts.ReadTimeout < 0 || opts.ReadHeaderTimeout < 0 || opts.LameDuck < 0 {
		return nil, errors.New("balancer: ServerOptions timeouts must not be negative")
	}
	fallback := opts.Fallback
	if fallback == nil {
		fallback = p
	}
	var router h1.Router
	if opts.EventLoop {
		if !p.direct {
			return nil, errors.New("balancer: ServerOptions.EventLoop needs the Proxy's built-in forwarder (no ProxyOptions.Transport)")
		}
		router = loopRouter{p}
	}
	h, err := h1.NewServer(h1.ServerOptions{
		Fast:              p.serve,
		Prefix:            "/lint/",
		MaxBody:           p.maxBody,
		Fallback:          fallback,
		HTTP:              opts.HTTP,
		ReadHeaderTimeout: opts.ReadHeaderTimeout,
		IdleTimeout:       opts.IdleTimeout,
		ReadTimeout:       opts.ReadTimeout,
		Logger:            opts.Logger,
		LameDuck:          opts.LameDuck,
		Router:            router,
	})
	if err != nil {
		return nil, err
	}
	return &Server{h: h}, nil
}

// Serve accepts connections on ln and serves them until ln fails or
// Shutdown is called; it then returns http.ErrServerClosed. ln is closed
// when Serve returns.
func (s *Server) Serve(ln net.Listener) error { return s.h.Serve(ln) }

// Shutdown stops accepting connections, closes idle ones (after the
// LameDuck time, in which each may bring one more request, answered with
// "Connection: close"), and waits until the requests in flight are
// answered or ctx ends (returning ctx's error), as http.Server.Shutdown
// does for both the fast path and the connections handed to net/http.
func (s *Server) Shutdown(ctx context.Context) error { return s.h.Shutdown(ctx) }

// Close closes every listener and connection at once, in flight or not.
func (s *Server) Close() error { return s.h.Close() }
