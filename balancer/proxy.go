package balancer

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetkit/fleetkit/balancer/internal/h1"
	"github.com/fleetkit/fleetkit/internal/httpjson"
)

// Proxy defaults.
const (
	// DefaultProxyTimeout bounds one upstream attempt when
	// ProxyOptions.Timeout is zero.
	DefaultProxyTimeout = 30 * time.Second
	// DefaultMaxResponseBody bounds an upstream answer when
	// ProxyOptions.MaxResponseBody is zero.
	DefaultMaxResponseBody = 8 << 20
	// maxLimit bounds MaxBody and MaxResponseBody.
	maxLimit = 1 << 40
	// DefaultMaxRetries bounds the retries of one request when
	// ProxyOptions.MaxRetries is zero.
	DefaultMaxRetries = 16
)

// ProxyOptions configures a Proxy. The zero value is usable.
type ProxyOptions struct {
	// Transport sends requests upstream. nil means the Proxy's built-in
	// forwarder for http:// backends (a minimal keep-alive HTTP/1.1 client,
	// about 1.4x the throughput of http.Transport on loopback; see
	// internal/h1) and NewTransport() for https:// ones.
	Transport http.RoundTripper
	// MaxBody limits request bodies; a larger one is answered 413.
	// 0 means httpjson.DefaultMaxBody (1 MiB); at most 1 TiB.
	MaxBody int64
	// MaxResponseBody is the buffer of upstream answers. An answer up to
	// this size is read whole before the client sees a byte, so a backend
	// that dies mid-answer costs a retry on another backend (or a 502),
	// never a truncated 200. A larger answer with a Content-Length is
	// streamed to the client under that Content-Length: if the backend
	// dies mid-way the client's connection is cut, so the client sees an
	// incomplete answer, never a whole one. A larger answer without a
	// Content-Length (chunked, or ended by closing) is answered 502 naming
	// this limit. Neither counts against the backend. 0 means
	// DefaultMaxResponseBody; at most 1 TiB.
	MaxResponseBody int64
	// Timeout bounds one upstream attempt: connecting, sending, and reading
	// the whole answer (streamed ones included). When it expires the client
	// gets 504 (or, mid-stream, a cut connection); it does not count against
	// the backend, as the input may be what is slow to lint. 0 means
	// DefaultProxyTimeout.
	Timeout time.Duration
	// MaxRetries bounds how many times one request is retried after
	// connection failures, each time on a backend it has not tried yet
	// (see Balancer.PickRetry), and never once Timeout has passed since it
	// arrived. A failed connection costs little, so after many backends
	// die at once a request walks past the dead ones to one that answers.
	// 0 means DefaultMaxRetries; a negative value never retries.
	MaxRetries int
	// Registerer receives the proxy's metrics (requests, durations,
	// retries). nil means no metrics.
	Registerer prometheus.Registerer
	// Logger logs upstream failures. nil means no logging.
	Logger *slog.Logger
}

// Proxy is the public API of the load balancer: an http.Handler for
// POST /lint/{language} that forwards the body to the /lint of a backend
// picked by the Balancer and passes the answer back, status and body.
//
// Semantics, in order:
//   - a path other than /lint/{language} (or a language name that is not
//     valid UTF-8, or has a control character) is 404, a method other than
//     POST 405, a body over MaxBody 413;
//   - no backend for the language: 503;
//   - the request body is buffered, so when an attempt fails without a
//     whole answer (connection refused, reset or timed out while
//     connecting, the backend died before or in the middle of its answer)
//     the failure counts against that backend and the request is retried
//     on another backend it has not tried, preferring those not already
//     failing, up to MaxRetries times within Timeout; when none is left or
//     the last one fails too: 502. A lint is idempotent, so a request the
//     dead backend may have seen is retried as well;
//   - an attempt that exceeds Timeout is 504 and is not retried (the time
//     budget is spent; a slow backend is not a dead one). It does not count
//     against the backend: a slow lint may be the input's doing;
//   - an upstream answer up to MaxResponseBody is read whole, then passed
//     through: status, headers (minus hop-by-hop ones and names that are
//     not valid tokens) and body. So a backend that dies mid-answer is
//     never a truncated 200. A larger answer is streamed when it has a
//     Content-Length, else answered 502 (see MaxResponseBody). A 5xx answer
//     also counts as a failure of the backend for passive health but is not
//     retried: the backend did answer, and a request that makes one linter
//     fail (the broken 1.2 crashes on empty code) would only take a second
//     one down;
//   - a client that goes away ends the attempt at once; that does not count
//     against the backend.
//
// Only 5xx answers and connection failures count against a backend (see
// Balancer.ReportFailure): nothing a client sends can make a healthy
// backend look broken. Metric labels come from a closed set: the language
// label of a request for a language the Balancer does not hold is "other".
//
// A keep-alive connection the backend closed while idle is replaced by a
// fresh one transparently (no failure, no retry elsewhere).
//
// A Proxy is safe for concurrent use.
type Proxy struct {
	bal          *Balancer
	transport    http.RoundTripper
	maxBody      int64
	maxResponse  int64
	maxRetries   int
	timeout      time.Duration
	metrics      *proxyMetrics
	logger       *slog.Logger
	bufs         sync.Pool // *bytes.Buffer
	obsCache     sync.Map  // *Backend → *backendObs
	ownTransport *http.Transport
	// direct: no Transport was given, so plain-http backends go through
	// the built-in forwarder (an h1.Pool per backend, in pools) and https
	// ones through ownTransport.
	direct bool
	pools  sync.Map // *Backend → *h1.Pool
	// copyBufs are the buffers streamed answers pass through.
	copyBufs sync.Pool // *[]byte
}

// otherLanguage is the metric label of every language the Balancer does
// not hold: labels come from a closed set, whatever clients send.
const otherLanguage = "other"

// NewTransport returns the http.Transport a Proxy uses for https backends
// (and that callers may pass as ProxyOptions.Transport): tuned
// for keep-alive to a few hundred backends (1024 idle connections per host,
// not the default 2), no proxy from the environment, no transparent
// compression (bodies pass through untouched), HTTP/1.1.
//
// A plain-TCP connection that received bytes no request asked for is not
// used for another request (the request goes on a new connection):
// net/http notices such bytes only if its read loop sees them first, and
// may otherwise take them for the next request's answer (golang/go#31259).
// TLS connections keep net/http's own check only (their records cannot be
// looked at without being read).
func NewTransport() *http.Transport {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	t := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return newGuardedConn(nc), nil
		},
		MaxIdleConns:          0, // no global limit
		MaxIdleConnsPerHost:   1024,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ExpectContinueTimeout: 0,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
		WriteBufferSize:       16 << 10,
		ReadBufferSize:        16 << 10,
	}
	// TLS is done here, over an unguarded connection: DialContext then
	// only ever dials plain-HTTP connections.
	t.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		cfg := &tls.Config{}
		if t.TLSClientConfig != nil {
			cfg = t.TLSClientConfig.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(nc, cfg)
		hctx, cancel := context.WithTimeout(ctx, t.TLSHandshakeTimeout)
		defer cancel()
		if err := tc.HandshakeContext(hctx); err != nil {
			_ = nc.Close()
			return nil, err
		}
		return tc, nil
	}
	return t
}

// guardedConn is a plain connection of NewTransport's that refuses to
// send a new request when the backend sent bytes after the last answer.
type guardedConn struct {
	net.Conn
	idle h1.IdlePeek
	// answered: a read returned bytes since the last write, so the next
	// write starts a new request on a connection that should be idle.
	answered atomic.Bool
}

// errUnsolicited fails a request before any byte of it is written, which
// net/http retries on a new connection.
var errUnsolicited = errors.New("balancer: the backend sent bytes no request asked for; connection not reused")

func newGuardedConn(nc net.Conn) net.Conn {
	c := &guardedConn{Conn: nc}
	c.idle.Init(nc)
	return c
}

func (c *guardedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.answered.Store(true)
	}
	return n, err
}

func (c *guardedConn) Write(p []byte) (int, error) {
	if c.answered.Swap(false) && c.idle.Unsolicited() {
		_ = c.Conn.Close()
		return 0, errUnsolicited
	}
	return c.Conn.Write(p)
}

// NewProxy returns a Proxy over b.
func NewProxy(b *Balancer, opts ProxyOptions) (*Proxy, error) {
	if b == nil {
		return nil, errors.New("balancer: NewProxy needs a Balancer")
	}
	p := &Proxy{
		bal:         b,
		transport:   opts.Transport,
		maxBody:     opts.MaxBody,
		maxResponse: opts.MaxResponseBody,
		maxRetries:  cmp.Or(opts.MaxRetries, DefaultMaxRetries),
		timeout:     opts.Timeout,
		logger:      opts.Logger,
	}
	if p.transport == nil {
		p.ownTransport = NewTransport()
		p.transport = p.ownTransport
		p.direct = true
	}
	if p.maxBody < 0 || p.maxResponse < 0 || p.timeout < 0 {
		return nil, errors.New("balancer: ProxyOptions limits must not be negative")
	}
	if p.maxBody > maxLimit || p.maxResponse > maxLimit {
		// Past this, the sums of a limit and a head's size could wrap.
		return nil, fmt.Errorf("balancer: ProxyOptions.MaxBody %d and MaxResponseBody %d must be at most %d (1 TiB)", p.maxBody, p.maxResponse, maxLimit)
	}
	if p.maxBody == 0 {
		p.maxBody = httpjson.DefaultMaxBody
	}
	if p.maxResponse == 0 {
		p.maxResponse = DefaultMaxResponseBody
	}
	if p.timeout == 0 {
		p.timeout = DefaultProxyTimeout
	}
	if opts.Registerer != nil {
		m, err := newProxyMetrics(opts.Registerer)
		if err != nil {
			return nil, err
		}
		p.metrics = m
	}
	if p.direct {
		b.onRemove(p.dropPool)
	}
	p.bufs.New = func() any { return new(bytes.Buffer) }
	p.copyBufs.New = func() any { b := make([]byte, 32<<10); return &b }
	return p, nil
}

// CloseIdleConnections closes the idle upstream connections the Proxy
// keeps (not those of a Transport passed in ProxyOptions).
func (p *Proxy) CloseIdleConnections() {
	p.pools.Range(func(_, v any) bool {
		v.(*h1.Pool).CloseIdle()
		return true
	})
	if p.ownTransport != nil {
		p.ownTransport.CloseIdleConnections()
	}
}

// attemptResult says how one upstream attempt ended: the built-in
// forwarder's outcomes, which the Transport's are sorted into too.
type attemptResult = h1.Outcome

const (
	answered   = h1.Answered   // a whole answer was read
	streaming  = h1.Streaming  // the head was read; the body streams from up.Body
	connFailed = h1.ConnFailed // no (whole) answer: may be retried
	timedOut   = h1.TimedOut   // the attempt's deadline passed
	clientGone = h1.ClientGone // the client cancelled
	tooLarge   = h1.TooLarge   // no Content-Length and over MaxResponseBody
)

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	lang, ok := strings.CutPrefix(r.URL.Path, "/lint/")
	if !ok || !ValidLanguage(lang) {
		httpjson.WriteError(w, httpjson.Errorf(http.StatusNotFound, "no such endpoint %s: use POST /lint/{language}", r.URL.Path))
		return
	}
	if !httpjson.RequireMethod(w, r, http.MethodPost) {
		return
	}
	start := time.Now()

	body, err := p.readBody(r)
	if err != nil {
		p.count(lang, nil, statusOfError(err))
		httpjson.WriteError(w, err)
		return
	}
	p.serve(w, r, lang, body, start)
}

// serve forwards the lint request r for lang, whose body has been read
// into body, and writes the answer to w. Server's fast path enters here.
func (p *Proxy) serve(w http.ResponseWriter, r *http.Request, lang string, body []byte, start time.Time) {
	be, err := p.bal.Pick(lang)
	if err != nil {
		p.noBackend(w, lang)
		return
	}

	resp := p.getBuf()
	defer p.putBuf(resp)
	var triedBuf [4]*Backend
	tried := triedBuf[:0]
	for attempt := 0; ; attempt++ {
		res, up, err := p.attempt(r, be, body, resp)
		switch res {
		case answered:
			p.reportAnswer(be, up.StatusCode, start)
			writeAnswer(w, up, int64(resp.Len()))
			_, _ = w.Write(resp.Bytes())
			return
		case streaming:
			p.stream(w, r, be, up, start)
			return
		case connFailed:
			p.reportFailure(be, failConnection, err)
			tried = append(tried, be)
			if next, ok := p.retry(lang, tried, attempt, start); ok {
				be = next
				continue
			}
		case clientGone:
			p.bal.reportNeutral(be) // not the backend's fault, and not logged
		default:
			p.neutral(be, err)
		}
		p.fail(w, lang, be, res, start)
		return
	}
}

// retry picks the backend for another attempt after attempt number
// attempt, on tried's last, failed without an answer: one not tried,
// within MaxRetries and Timeout. The failed attempt is counted.
func (p *Proxy) retry(lang string, tried []*Backend, attempt int, start time.Time) (*Backend, bool) {
	if attempt >= p.maxRetries || time.Since(start) >= p.timeout {
		return nil, false
	}
	next, err := p.bal.PickRetry(lang, tried)
	if err != nil {
		return nil, false
	}
	p.count(lang, tried[len(tried)-1], http.StatusBadGateway)
	if p.metrics != nil {
		p.metrics.retries.WithLabelValues(lang).Inc()
	}
	return next, true
}

// noBackend counts and answers a request for lang that no backend can take.
func (p *Proxy) noBackend(w http.ResponseWriter, lang string) {
	p.count(lang, nil, http.StatusServiceUnavailable)
	httpjson.WriteError(w, httpjson.Errorf(http.StatusServiceUnavailable, "no linter can serve language %q", lang))
}

// fail counts a request that ended without an answer from be (res says
// how) and answers it with the error. Nobody reads the answer to a client
// that went away, and its time is not observed.
func (p *Proxy) fail(w http.ResponseWriter, lang string, be *Backend, res attemptResult, start time.Time) {
	status := statusOf(res)
	p.count(lang, be, status)
	var err *httpjson.Error
	switch res {
	case clientGone:
		httpjson.WriteError(w, httpjson.Errorf(http.StatusBadGateway, "request cancelled"))
		return
	case timedOut:
		err = httpjson.Errorf(status, "linter for %q (version %s) did not answer within %s", lang, be.Version, p.timeout)
	case tooLarge:
		err = httpjson.Errorf(status,
			"the answer of the linter for %q is over %d bytes and has no Content-Length: the balancer passes such answers up to %d bytes (ProxyOptions.MaxResponseBody); larger ones only with a Content-Length",
			lang, p.maxResponse, p.maxResponse)
	default:
		err = httpjson.Errorf(status, "linter for %q failed and no other could answer", lang)
	}
	p.observe(lang, be.Version, start)
	httpjson.WriteError(w, err)
}

// statusOf is the status counted for an attempt that ended as res without
// an answer: 499 (nginx's) for a client that went away.
func statusOf(res attemptResult) int {
	switch res {
	case timedOut:
		return http.StatusGatewayTimeout
	case clientGone:
		return 499
	}
	return http.StatusBadGateway
}

// reportAnswer records be's answer of status for passive health (a 5xx is
// a failure) and in the metrics.
func (p *Proxy) reportAnswer(be *Backend, status int, start time.Time) {
	if status >= 500 {
		p.reportFailure(be, failStatus, fmt.Errorf("answered %d", status))
	} else {
		p.bal.ReportSuccess(be)
	}
	if p.metrics != nil {
		o := p.backendObs(be)
		if status == http.StatusOK {
			o.ok.Inc()
		} else {
			p.count(be.Language, be, status)
		}
		o.duration.Observe(time.Since(start).Seconds())
	}
}

// stream passes on an answer over MaxResponseBody under its
// Content-Length. The answer counts for passive health by its status as
// soon as the head is in; then only a backend that fails mid-way counts
// against it (not a client that stops reading, nor the deadline). An
// answer cut short is aborted, never completed: the client sees fewer bytes
// than the Content-Length and a closed connection.
func (p *Proxy) stream(w http.ResponseWriter, r *http.Request, be *Backend, up *http.Response, start time.Time) {
	defer up.Body.Close()
	writeAnswer(w, up, up.ContentLength)
	bp := p.copyBufs.Get().(*[]byte)
	defer p.copyBufs.Put(bp)
	buf := *bp
	var n int64
	res, err := answered, error(nil)
	for n < up.ContentLength && res == answered {
		k, rerr := up.Body.Read(buf[:min(int64(len(buf)), up.ContentLength-n)])
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				res, err = clientGone, werr
				break
			}
			n += int64(k)
		}
		switch {
		case rerr == io.EOF && n < up.ContentLength:
			res, err = connFailed, io.ErrUnexpectedEOF
		case rerr != nil && rerr != io.EOF:
			res, err = h1.Classify(r.Context(), rerr), rerr
		}
	}
	if res == answered {
		p.reportAnswer(be, up.StatusCode, start)
		return
	}
	err = fmt.Errorf("streaming an answer of %d bytes, cut after %d: %w", up.ContentLength, n, err)
	if res == connFailed {
		p.reportFailure(be, failConnection, err)
	} else {
		p.neutral(be, err)
	}
	p.count(be.Language, be, statusOf(res))
	p.observe(be.Language, be.Version, start)
	abortAnswer(w)
}

// abortAnswer cuts the answer being written to w, so that the client
// cannot take a partial answer for a whole one: http.ErrAbortHandler is
// how net/http (and Server's fast path) close the connection at once.
func abortAnswer(http.ResponseWriter) { panic(http.ErrAbortHandler) }

// statusOfError returns the HTTP status an error of this package (or an
// *httpjson.Error) is answered with: 503 for ErrNoBackend, 404 for
// ErrUnknownBackend, 400 for ErrInvalidBackend and ErrInvalidRatio, 403 for
// ErrForbidden, the carried status for an *httpjson.Error or *StatusError,
// 500 otherwise.
func statusOfError(err error) int {
	var se *StatusError
	switch {
	case errors.As(err, &se):
		return se.StatusCode
	case errors.Is(err, ErrNoBackend):
		return http.StatusServiceUnavailable
	case errors.Is(err, ErrUnknownBackend):
		return http.StatusNotFound
	case errors.Is(err, ErrInvalidBackend), errors.Is(err, ErrInvalidRatio):
		return http.StatusBadRequest
	case errors.Is(err, ErrForbidden):
		return http.StatusForbidden
	}
	return httpjson.StatusOf(err)
}

// readBody reads the whole request body into a slice of its own: the
// Transport may still read a request body after RoundTrip returns (until it
// closes it), so the body cannot live in a pooled buffer; and a body the
// Transport knows to be in memory (a *bytes.Reader) goes out in the same
// write as the headers, one syscall instead of two.
func (p *Proxy) readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > p.maxBody {
		return nil, httpjson.Errorf(http.StatusRequestEntityTooLarge, "request body too large: limit is %d bytes", p.maxBody)
	}
	if r.ContentLength >= 0 {
		body := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, httpjson.Errorf(http.StatusBadRequest, "reading request body: %v", err)
		}
		return body, nil
	}
	buf := p.getBuf()
	defer p.putBuf(buf)
	n, err := buf.ReadFrom(io.LimitReader(r.Body, p.maxBody+1))
	if err != nil {
		return nil, httpjson.Errorf(http.StatusBadRequest, "reading request body: %v", err)
	}
	if n > p.maxBody {
		return nil, httpjson.Errorf(http.StatusRequestEntityTooLarge, "request body too large: limit is %d bytes", p.maxBody)
	}
	return bytes.Clone(buf.Bytes()), nil
}

// forward sends one request to be through the built-in forwarder.
func (p *Proxy) forward(r *http.Request, be *Backend, body []byte, resp *bytes.Buffer) (attemptResult, *http.Response, error) {
	header := r.Header
	if _, ok := header["Connection"]; ok {
		header = outboundHeader(header) // drops the headers it names too
	}
	return p.pool(be).Do(r.Context(), &h1.Request{
		Path:        be.requestPath,
		Query:       r.URL.RawQuery,
		Host:        be.lintURL.Host,
		Header:      header,
		Body:        body,
		Deadline:    time.Now().Add(p.timeout),
		MaxBuffered: p.maxResponse,
	}, resp)
}

// pool returns be's connection pool. A pool made for a backend that is
// no longer held is closed: its connections are closed after use (the
// Balancer's removal closed the pool it found, so none outlives it).
func (p *Proxy) pool(be *Backend) *h1.Pool {
	if v, ok := p.pools.Load(be); ok {
		return v.(*h1.Pool)
	}
	v, loaded := p.pools.LoadOrStore(be, h1.NewPool(be.dialAddr))
	pool := v.(*h1.Pool)
	if !loaded && !p.bal.held(be) {
		p.dropPool(be)
	}
	return pool
}

// dropPool closes be's pool for good: be has left the Balancer.
func (p *Proxy) dropPool(be *Backend) {
	if v, ok := p.pools.LoadAndDelete(be); ok {
		v.(*h1.Pool).Close()
	}
}

// attempt sends one request to be and reads the whole answer into resp.
func (p *Proxy) attempt(r *http.Request, be *Backend, body []byte, resp *bytes.Buffer) (attemptResult, *http.Response, error) {
	if p.direct && be.lintURL.Scheme == "http" {
		return p.forward(r, be, body, resp)
	}
	resp.Reset()
	ctx, cancel := context.WithTimeout(r.Context(), p.timeout)
	defer func() { cancel() }()

	u := be.lintURL
	if r.URL.RawQuery != "" {
		uc := *u
		uc.RawQuery = r.URL.RawQuery
		u = &uc
	}
	out := (&http.Request{
		Method:        http.MethodPost,
		URL:           u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        outboundHeader(r.Header),
		Body:          io.NopCloser(bytes.NewReader(body)),
		GetBody:       func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil },
		ContentLength: int64(len(body)),
		Host:          u.Host,
	}).WithContext(ctx)

	up, err := p.transport.RoundTrip(out)
	if err != nil {
		return p.classify(ctx, r, err), nil, err
	}
	if up.ContentLength > p.maxResponse {
		// The stream owns the attempt's deadline now.
		up.Body = &cancelBody{ReadCloser: up.Body, cancel: cancel}
		cancel = func() {}
		return streaming, up, nil
	}
	defer up.Body.Close()
	if up.ContentLength > 0 {
		resp.Grow(int(up.ContentLength))
	}
	n, err := resp.ReadFrom(io.LimitReader(up.Body, p.maxResponse+1))
	if err != nil {
		return p.classify(ctx, r, err), nil, fmt.Errorf("reading the answer: %w", err)
	}
	if n > p.maxResponse {
		return tooLarge, nil, fmt.Errorf("answer over %d bytes without a Content-Length", p.maxResponse)
	}
	return answered, up, nil
}

// cancelBody ends an attempt's context when its streamed body is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

func (p *Proxy) classify(ctx context.Context, r *http.Request, err error) attemptResult {
	if r.Context().Err() != nil {
		return clientGone
	}
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return timedOut
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return connFailed // not connecting is retried elsewhere, even a dial timeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return timedOut
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return timedOut
	}
	return connFailed
}

// Reasons a backend failed, the reason label of backend_failures_total.
const (
	failStatus     = "status"     // it answered 5xx
	failConnection = "connection" // refused, reset, or closed before its answer was whole
)

// reportFailure reports a failure the backend caused.
func (p *Proxy) reportFailure(be *Backend, reason string, err error) {
	ejected := p.bal.ReportFailure(be)
	if p.metrics != nil {
		p.metrics.failures.WithLabelValues(be.Language, be.Version, reason).Inc()
	}
	if p.logger != nil {
		p.logger.Warn("balancer: upstream failed", "language", be.Language, "version", be.Version,
			"backend", be.URI, "err", err, "ejected", ejected)
	}
}

// neutral reports an attempt whose failure the request caused, not the
// backend (a timeout, an answer too large to pass): logged, not counted.
func (p *Proxy) neutral(be *Backend, err error) {
	p.bal.reportNeutral(be)
	if p.logger != nil {
		p.logger.Info("balancer: request failed upstream (not counted against the backend)", "language", be.Language,
			"version", be.Version, "backend", be.URI, "err", err)
	}
}

// count counts an attempt (or a request that reached no backend) under a
// bounded language label.
func (p *Proxy) count(lang string, be *Backend, code int) {
	if p.metrics == nil {
		return
	}
	version, uri := "", ""
	if be != nil {
		lang, version, uri = be.Language, be.Version, be.URI
	} else if !p.bal.holds(lang) {
		lang = otherLanguage
	}
	p.metrics.requests.WithLabelValues(lang, version, uri, codeString(code)).Inc()
}

// backendObs returns be's cached metric handles, saving the label hashing
// and lookups on the hot path. The cache holds an entry per backend the
// Proxy ever answered from (as the registry holds their series anyway).
func (p *Proxy) backendObs(be *Backend) *backendObs {
	if v, ok := p.obsCache.Load(be); ok {
		return v.(*backendObs)
	}
	v, _ := p.obsCache.LoadOrStore(be, &backendObs{
		ok:       p.metrics.requests.WithLabelValues(be.Language, be.Version, be.URI, "200"),
		duration: p.metrics.duration.WithLabelValues(be.Language, be.Version),
	})
	return v.(*backendObs)
}

// backendObs are the metric handles of one backend.
type backendObs struct {
	ok       prometheus.Counter  // requests_total{..., code="200"}
	duration prometheus.Observer // request_duration_seconds{language, version}
}

func (p *Proxy) observe(lang, version string, start time.Time) {
	if p.metrics != nil {
		p.metrics.duration.WithLabelValues(lang, version).Observe(time.Since(start).Seconds())
	}
}

func (p *Proxy) getBuf() *bytes.Buffer { return p.bufs.Get().(*bytes.Buffer) }

func (p *Proxy) putBuf(b *bytes.Buffer) {
	if b.Cap() > 256<<10 {
		return // let a rare huge buffer go
	}
	b.Reset()
	p.bufs.Put(b)
}

// hopHeaders are the hop-by-hop headers (RFC 9110 7.6.1) a proxy drops,
// plus Expect: the body is already read.
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Expect",
}

// outboundHeader returns the headers sent upstream: in's, minus hop-by-hop
// ones, marked idempotent so the Transport may replay a request that met a
// keep-alive connection the backend had just closed (the nil value is not
// sent on the wire).
func outboundHeader(in http.Header) http.Header {
	h := make(http.Header, len(in)+1)
	for k, vv := range in {
		h[k] = vv // read-only: neither we nor the Transport modify it
	}
	if c := in["Connection"]; len(c) > 0 {
		for _, v := range c {
			for f := range strings.SplitSeq(v, ",") {
				if f = http.CanonicalHeaderKey(strings.TrimSpace(f)); f != "" {
					delete(h, f)
				}
			}
		}
	}
	for _, k := range hopHeaders {
		delete(h, k)
	}
	if _, ok := h["Idempotency-Key"]; !ok {
		h["Idempotency-Key"] = nil
	}
	return h
}

// writeAnswer writes up's status and headers, minus hop-by-hop ones and
// names that are not valid tokens, with a Content-Length of length.
func writeAnswer(w http.ResponseWriter, up *http.Response, length int64) {
	h := w.Header()
	for k, vv := range up.Header {
		if !h1.IsHopHeader(k) && validHeaderName(k) {
			h[k] = vv
		}
	}
	if c := up.Header["Connection"]; len(c) > 0 {
		for _, v := range c {
			for f := range strings.SplitSeq(v, ",") {
				if f = http.CanonicalHeaderKey(strings.TrimSpace(f)); f != "" {
					delete(h, f)
				}
			}
		}
	}
	// The upstream's own Content-Length, already copied, is kept when it
	// is the length passed on (the usual case), saving two allocations.
	var num [20]byte
	if cl := strconv.AppendInt(num[:0], length, 10); !sameValue(h["Content-Length"], cl) {
		h["Content-Length"] = []string{string(cl)}
	}
	w.WriteHeader(up.StatusCode)
}

// tokenChars marks the bytes of an HTTP token (RFC 9110 5.6.2).
var tokenChars = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// validHeaderName reports whether k is a valid header name (a token).
// net/http parses names with spaces from backends, which no client may be
// handed.
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		if !tokenChars[k[i]] {
			return false
		}
	}
	return true
}

// sameValue reports whether vv is the single value v.
func sameValue(vv []string, v []byte) bool {
	return len(vv) == 1 && vv[0] == string(v)
}

func codeString(code int) string {
	switch code {
	case 200:
		return "200"
	case 400:
		return "400"
	case 404:
		return "404"
	case 413:
		return "413"
	case 499:
		return "499"
	case 500:
		return "500"
	case 502:
		return "502"
	case 503:
		return "503"
	case 504:
		return "504"
	}
	return strconv.Itoa(code)
}
