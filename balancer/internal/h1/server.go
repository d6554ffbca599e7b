package h1

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
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

	"github.com/fleetkit/fleetkit/internal/httpjson"
)

// Server defaults, used when neither ServerOptions nor its HTTP server set
// a timeout.
const (
	// DefaultIdleTimeout closes a keep-alive connection that sent nothing
	// for this long after an answer.
	DefaultIdleTimeout = 2 * time.Minute
	// DefaultReadHeaderTimeout bounds reading a request's head.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds reading one request, head and body.
	DefaultReadTimeout = 30 * time.Second
)

// fastStreamAbove is the size of an answer the fast path sends in one
// write; a larger one with a Content-Length is written as it comes.
const fastStreamAbove = 64 << 10

// clientWatchDelay is how long a request may be in flight before the
// Server starts watching its connection for a client that went away.
// Watching costs a goroutine and a read per request, which is most of what
// a lint request costs on a fast backend; a client that leaves is noticed
// at most this late.
const clientWatchDelay = 20 * time.Millisecond

// fastHeadMax bounds the request head the fast path parses; a larger head
// goes to net/http (which allows up to its MaxHeaderBytes).
const fastHeadMax = 8 << 10

// FastFunc answers a request the fast path parsed: r is POST
// {prefix}{name}[?query] with its headers, its body is body (r.Body is
// empty), and start is when its head began to arrive. It is called on the
// connection's goroutine, one request of a connection at a time.
type FastFunc func(w http.ResponseWriter, r *http.Request, name string, body []byte, start time.Time)

// ServerOptions configures a Server. Fast, Prefix, MaxBody and Fallback
// are required; the other fields are balancer.ServerOptions' and mean
// what it documents there (timeouts kept as net/http keeps them, a nil
// HTTP server or Logger replaced by a new one or slog.Default()).
type ServerOptions struct {
	// Fast serves the requests of the fast path's shape.
	Fast FastFunc
	// Prefix is the path the fast path takes, followed by a name of
	// letters, digits and "-._+": "/lint/".
	Prefix string
	// MaxBody is the largest body the fast path takes; a larger one goes
	// to Fallback (whose answer is then a 413).
	MaxBody int64
	// Fallback serves every request the fast path does not take.
	Fallback http.Handler

	// Router, when set, serves the fast path from event loops on Linux
	// (see loop.go); elsewhere, and for a listener other than TCP, it is
	// not used.
	Router Router

	HTTP                                        *http.Server
	ReadHeaderTimeout, IdleTimeout, ReadTimeout time.Duration
	Logger                                      *slog.Logger
	LameDuck                                    time.Duration
}

// Server serves HTTP/1.1 with a fast path for one shape of request (see
// balancer.Server, which documents the behaviour) and net/http for every
// other. Serve and Shutdown follow http.Server's contract.
type Server struct {
	fast              FastFunc
	prefix            string // "POST " + ServerOptions.Prefix
	maxBody           int64
	http              *http.Server
	logger            *slog.Logger
	idleTimeout       time.Duration
	readHeaderTimeout time.Duration
	readTimeout       time.Duration
	lameDuck          time.Duration
	router            Router

	handoff     *handoffListener
	serveHTTP   sync.Once
	inShutdown  atomic.Bool
	ctx         context.Context // parent of every connection's context
	cancelConns context.CancelFunc

	// mu guards listeners, conns and lameUntil's writes (a connection reads
	// lameUntil once it has seen inShutdown, which is set after it).
	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*fastConn]struct{}
	// lameUntil is when the lame-duck time after Shutdown ends.
	lameUntil time.Time
	// wakers make each event loop look at inShutdown and ctx;
	// loopClients count each one's client connections.
	wakers      []func()
	loopClients []func() int32
	connsWG     sync.WaitGroup
}

// NewServer returns a Server.
func NewServer(opts ServerOptions) (*Server, error) {
	if opts.Fast == nil || opts.Fallback == nil || !strings.HasPrefix(opts.Prefix, "/") || opts.MaxBody < 0 {
		return nil, errors.New("h1: NewServer needs Fast, Fallback, a Prefix and MaxBody")
	}
	if opts.IdleTimeout < 0 || opts.ReadTimeout < 0 || opts.ReadHeaderTimeout < 0 || opts.LameDuck < 0 {
		return nil, errors.New("h1: ServerOptions timeouts must not be negative")
	}
	s := &Server{
		fast:      opts.Fast,
		prefix:    "POST " + opts.Prefix,
		maxBody:   opts.MaxBody,
		http:      opts.HTTP,
		logger:    opts.Logger,
		lameDuck:  opts.LameDuck,
		router:    opts.Router,
		listeners: map[net.Listener]struct{}{},
		conns:     map[*fastConn]struct{}{},
	}
	if s.http == nil {
		s.http = &http.Server{}
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	h := s.http
	s.readTimeout = cmp.Or(opts.ReadTimeout, positive(h.ReadTimeout), DefaultReadTimeout)
	s.readHeaderTimeout = cmp.Or(opts.ReadHeaderTimeout, positive(h.ReadHeaderTimeout), positive(h.ReadTimeout), DefaultReadHeaderTimeout)
	s.idleTimeout = cmp.Or(opts.IdleTimeout, positive(h.IdleTimeout), positive(h.ReadTimeout), DefaultIdleTimeout)
	if h.ReadHeaderTimeout == 0 {
		h.ReadHeaderTimeout = s.readHeaderTimeout
	}
	if h.ReadTimeout == 0 {
		h.ReadTimeout = s.readTimeout
	}
	if h.IdleTimeout == 0 {
		h.IdleTimeout = s.idleTimeout
	}
	h.Handler = httpjson.Recover(opts.Fallback, s.logger)
	s.handoff = newHandoffListener()
	s.ctx, s.cancelConns = context.WithCancel(context.Background())
	return s, nil
}

// positive returns d, or 0 when it is negative (net/http's "no timeout").
func positive(d time.Duration) time.Duration { return max(d, 0) }

// Serve accepts connections on ln and serves them until ln fails or
// Shutdown is called; it then returns http.ErrServerClosed. ln is closed
// when Serve returns.
func (s *Server) Serve(ln net.Listener) error {
	if ok, err := s.serveLoops(ln); ok {
		return err
	}
	if !s.track(ln) {
		_ = ln.Close()
		return http.ErrServerClosed
	}
	defer s.untrack(ln)
	s.startHTTP()
	var backoff time.Duration
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.inShutdown.Load() {
				return http.ErrServerClosed
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			// Out of file descriptors and the like: wait, as net/http
			// does, instead of spinning or giving up.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		c := s.newConn(nc)
		if c == nil {
			continue
		}
		go c.serve()
	}
}

// LoopClients returns how many client connections the event loops hold
// (for tests).
func (s *Server) LoopClients() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, f := range s.loopClients {
		n += int(f())
	}
	return n
}

// startHTTP starts the net/http server of the connections handed off.
func (s *Server) startHTTP() {
	s.serveHTTP.Do(func() {
		// It returns when the handoff listener closes (Shutdown, Close).
		go func() { _ = s.http.Serve(s.handoff) }()
	})
}

// Shutdown stops accepting connections, closes idle ones (after the
// LameDuck time, in which each may bring one more request, answered with
// "Connection: close"), and waits until the requests in flight are
// answered or ctx ends (returning ctx's error), as http.Server.Shutdown
// does for both the fast path and the connections handed to net/http.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.lameUntil = time.Now().Add(s.lameDuck)
	s.inShutdown.Store(true)
	var err error
	for ln := range s.listeners {
		if cerr := ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
			err = cerr
		}
	}
	for c := range s.conns {
		c.closeIfIdle()
	}
	for _, wake := range s.wakers {
		wake()
	}
	s.mu.Unlock()
	s.handoff.Close()

	// The connections handed to net/http drain at the same time.
	herrc := make(chan error, 1)
	go func() { herrc <- s.http.Shutdown(ctx) }()
	done := make(chan struct{})
	go func() { s.connsWG.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if herr := <-herrc; herr != nil {
		return herr
	}
	return err
}

// Close closes every listener and connection at once, in flight or not.
func (s *Server) Close() error {
	s.inShutdown.Store(true)
	s.cancelConns()
	s.mu.Lock()
	for ln := range s.listeners {
		_ = ln.Close()
	}
	for c := range s.conns {
		_ = c.nc.Close()
	}
	for _, wake := range s.wakers {
		wake()
	}
	s.mu.Unlock()
	s.handoff.Close()
	return s.http.Close()
}

func (s *Server) track(ln net.Listener) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inShutdown.Load() {
		return false
	}
	s.listeners[ln] = struct{}{}
	return true
}

func (s *Server) untrack(ln net.Listener) {
	s.mu.Lock()
	delete(s.listeners, ln)
	s.mu.Unlock()
	_ = ln.Close()
}

// newConn registers nc, or closes it and returns nil after Shutdown.
func (s *Server) newConn(nc net.Conn) *fastConn {
	ctx, cancel := context.WithCancel(s.ctx)
	c := &fastConn{srv: s, nc: nc, ctx: ctx, cancel: cancel, remote: nc.RemoteAddr().String()}
	c.cr.Conn = nc
	c.br = bufio.NewReaderSize(&c.cr, fastHeadMax)
	c.bw = bufio.NewWriterSize(nc, 8<<10)
	c.watchDone = make(chan struct{}, 1)
	c.watchTimer = time.AfterFunc(time.Hour, c.watch)
	c.watchTimer.Stop()
	c.w.c = c
	// One Request serves every request of the connection, its fields set
	// for each (the Proxy keeps none of it past its answer).
	c.req = (&http.Request{
		Method:     http.MethodPost,
		URL:        &c.url,
		Proto:      "HTTP/1.1",
		ProtoMajor: 1,
		ProtoMinor: 1,
		Body:       http.NoBody,
		RemoteAddr: c.remote,
	}).WithContext(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inShutdown.Load() {
		_ = nc.Close()
		cancel()
		return nil
	}
	s.conns[c] = struct{}{}
	s.connsWG.Add(1)
	return c
}

// fastConn is one client connection on the fast path.
type fastConn struct {
	srv *Server
	nc  net.Conn
	// cr is what br reads: the connection, after any byte the client
	// watcher read ahead.
	cr     prefixConn
	br     *bufio.Reader
	bw     *bufio.Writer
	remote string
	// ctx is every request's context: it ends when the client is seen to
	// go away, which ends the connection too, so one per connection
	// serves all its requests.
	ctx    context.Context
	cancel context.CancelFunc
	w      fastWriter
	// req (with url) is the Request of each request in turn, and header
	// the storage of its Header.
	req    *http.Request
	url    url.URL
	header headerSpace

	// watchTimer starts watch once a request has been in flight for
	// clientWatchDelay; watch signals watchDone when it returns.
	watchTimer *time.Timer
	watchDone  chan struct{}

	// watchMu orders the watcher's clearing of the read deadline before
	// serveRequest's stopping deadline; watchStopping says the stop came.
	watchMu       sync.Mutex
	watchStopping bool

	// mu guards active, lame and lameUsed. It is the connection's own, not
	// the Server's, so requests on different connections share no lock.
	mu sync.Mutex
	// active: a request is being read or served.
	active bool
	// lame and lameUsed: the connection is idle after Shutdown and may
	// bring one more request before the lame-duck time ends; it has
	// brought it.
	lame, lameUsed bool
}

func (c *fastConn) serve() {
	handedOff := false
	defer func() {
		c.cancel()
		s := c.srv
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		if !handedOff {
			_ = c.nc.Close()
		}
		s.connsWG.Done()
	}()
	for first := true; ; first = false {
		// As net/http: a new connection's first head must be in within
		// ReadHeaderTimeout of the accept; a kept-alive one waits up to
		// IdleTimeout for the next request, whose head then has
		// ReadHeaderTimeout. The deadline is set before setActive, so that
		// a Shutdown marking the connection lame after it is not undone.
		start := time.Now()
		if first {
			_ = c.nc.SetReadDeadline(start.Add(c.srv.readHeaderTimeout))
		} else {
			_ = c.nc.SetReadDeadline(start.Add(c.srv.idleTimeout))
		}
		lame, ok := c.setActive(false)
		if !ok {
			return // shutting down
		}
		if lame {
			_ = c.nc.SetReadDeadline(c.srv.lameUntil)
		}
		if _, err := c.br.Peek(1); err != nil {
			return
		}
		if _, ok := c.setActive(true); !ok {
			return
		}
		if !first {
			start = time.Now()
		}
		// Each deadline below is set only before a read that may block: a
		// request that came whole in one segment, as a lint request usually
		// does, is read with none (each costs a runtime timer update).
		headDeadline := start.Add(c.srv.readHeaderTimeout)
		req, verdict := c.readHead(headDeadline)
		switch verdict {
		case headClose:
			return // the head's time is up: closed unanswered, as net/http does
		case headHandOff:
			handedOff = c.handOff(headDeadline)
			return
		}
		if int64(c.br.Buffered()) < req.contentLength {
			_ = c.nc.SetReadDeadline(start.Add(c.srv.readTimeout))
		}
		body := make([]byte, req.contentLength)
		if _, err := io.ReadFull(c.br, body); err != nil {
			return // a client that stops mid-body gets no answer, as from net/http
		}
		// An answer without "Connection: close" told the client it may
		// send again: after Shutdown, setActive then closes the connection
		// or grants its lame-duck request, as for any idle one.
		if !c.serveRequest(req, body) || req.close {
			return
		}
	}
}

// setActive records whether a request is under way; ok is false when the
// connection should close instead (Shutdown has begun: an idle connection
// closes — once its lame-duck request is in, if it has one — and a busy
// one closes after its answer). lame reports that the idle connection
// waits only until the lame-duck time ends.
func (c *fastConn) setActive(active bool) (lame, ok bool) {
	s := c.srv
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.inShutdown.Load() {
		switch {
		case !active && s.lameDuck > 0 && !c.lameUsed:
			c.lame = true // waits for one more request, until lameUntil
		case active && c.lame:
			c.lame, c.lameUsed = false, true // one request, then the connection closes
		default:
			return false, false
		}
	}
	c.active = active
	return c.lame, true
}

// closeIfIdle closes c unless a request is under way; with a lame-duck
// time it only cuts its idle wait short at the end of that time. srv.mu
// is held (Shutdown).
func (c *fastConn) closeIfIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active {
		return
	}
	if c.srv.lameDuck > 0 {
		c.lame = true
		_ = c.nc.SetReadDeadline(c.srv.lameUntil)
		return
	}
	_ = c.nc.Close()
}

// handOff passes the connection, with every byte read and not consumed,
// to the net/http server. The request's head must still be in by
// headDeadline. It reports whether the handoff happened.
func (c *fastConn) handOff(headDeadline time.Time) bool {
	_ = c.nc.SetReadDeadline(time.Time{})
	buffered, _ := c.br.Peek(c.br.Buffered())
	prefix := append(bytes.Clone(buffered), c.cr.prefix...)
	return c.srv.handoff.hand(&prefixConn{Conn: c.nc, prefix: prefix, capDeadline: headDeadline})
}

// serveRequest answers one request through the FastFunc and writes the
// answer. It reports whether the connection may serve another.
func (c *fastConn) serveRequest(h fastRequest, body []byte) bool {
	c.url.Path, c.url.RawQuery = h.path, h.query
	r := c.req
	r.Header, r.ContentLength, r.Host, r.RequestURI, r.Close = h.header, h.contentLength, h.host, h.target, h.close
	c.w.reset(h.close)
	start := time.Now()
	c.watchTimer.Reset(clientWatchDelay)
	aborted := c.callFast(r, h.name, body, start)
	if !c.watchTimer.Stop() {
		// The watcher is reading the connection: stop it and take back
		// what it read. The next request's wait sets its own deadline.
		c.watchMu.Lock()
		c.watchStopping = true
		_ = c.nc.SetReadDeadline(aLongTimeAgo)
		c.watchMu.Unlock()
		<-c.watchDone
		c.watchStopping = false
	}
	if aborted || c.ctx.Err() != nil {
		return false // cut mid-answer, or the client went away
	}
	if c.w.streamed {
		// The head and part of the body are out: the rest, then done. An
		// answer shorter than its Content-Length closes the connection.
		return c.bw.Flush() == nil && c.w.werr == nil && c.w.sent == c.w.declared && !c.w.closing
	}
	if c.srv.inShutdown.Load() {
		c.w.closing = true
	}
	c.w.writeTo(c.bw)
	if len(c.w.body) > 64<<10 {
		// A big answer to a client that does not read would block here
		// for ever; small ones fit in the socket buffer.
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.srv.readTimeout))
		defer c.nc.SetWriteDeadline(time.Time{})
	}
	return c.bw.Flush() == nil && !c.w.closing
}

// callFast serves r through the Server's FastFunc. A panic is answered as
// httpjson.Recover answers it (500 with the error body, a log line, the
// connection closed) while nothing of the answer is out; after that, and
// for http.ErrAbortHandler (a streamed answer that failed mid-way), the
// answer is cut: callFast reports true and the connection closes.
func (c *fastConn) callFast(r *http.Request, name string, body []byte, start time.Time) (aborted bool) {
	defer func() {
		v := recover()
		if v == nil {
			return
		}
		if v != http.ErrAbortHandler {
			httpjson.LogPanic(c.srv.logger, r, v)
		}
		if v == http.ErrAbortHandler || c.w.streamed {
			aborted = true
			return
		}
		c.w.reset(true)
		httpjson.WriteError(&c.w, httpjson.Errorf(http.StatusInternalServerError, "internal error"))
	}()
	c.srv.fast(&c.w, r, name, body, start)
	return false
}

// watch runs when a request has been in flight for clientWatchDelay: it
// reads the connection until the client sends more (kept for the next
// request), closes it (the request's context is cancelled), or
// serveRequest stops it with a past deadline.
func (c *fastConn) watch() {
	defer func() { c.watchDone <- struct{}{} }()
	// The request's read deadlines may still be set: the watch has none,
	// unless serveRequest has already stopped it.
	c.watchMu.Lock()
	if c.watchStopping {
		c.watchMu.Unlock()
		return
	}
	_ = c.nc.SetReadDeadline(time.Time{})
	c.watchMu.Unlock()
	var b [1]byte
	n, err := c.nc.Read(b[:])
	if n > 0 {
		c.cr.prefix = append(c.cr.prefix, b[0])
		return
	}
	var ne net.Error
	if err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
		c.cancel()
	}
}

// fastWriter is the http.ResponseWriter of the fast path: it keeps an
// answer up to fastStreamAbove bytes whole, which writeTo sends in one
// write; a larger one with a Content-Length header goes out as it comes.
type fastWriter struct {
	c       *fastConn
	header  http.Header
	code    int
	body    []byte
	closing bool // the answer ends the connection
	// streamed: the head is out and Write goes to the connection; sent of
	// declared bytes of the body are out, and werr is the first error.
	streamed       bool
	sent, declared int64
	werr           error
}

var _ http.ResponseWriter = (*fastWriter)(nil)

func (w *fastWriter) reset(closing bool) {
	if w.header == nil {
		w.header = make(http.Header, 8)
	} else {
		clear(w.header)
	}
	w.code = 0
	w.body = w.body[:0]
	if cap(w.body) > 256<<10 {
		w.body = nil // let a rare huge answer's buffer go
	}
	w.closing = closing
	w.streamed, w.sent, w.declared, w.werr = false, 0, 0, nil
}

func (w *fastWriter) Header() http.Header { return w.header }

func (w *fastWriter) WriteHeader(code int) {
	if w.code == 0 && code >= 200 {
		w.code = code
	}
}

func (w *fastWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	if w.streamed {
		return w.writeConn(b)
	}
	if len(w.body)+len(b) <= fastStreamAbove {
		w.body = append(w.body, b...)
		return len(b), nil
	}
	cl, ok := int64(0), false
	if v := w.header["Content-Length"]; len(v) == 1 {
		cl, ok = parseLength(v[0])
	}
	if !ok || cl < int64(len(w.body)+len(b)) {
		w.body = append(w.body, b...) // no usable length: kept whole
		return len(b), nil
	}
	w.streamed, w.declared = true, cl
	sniff := w.body
	if len(sniff) == 0 {
		sniff = b
	}
	w.writeHead(w.c.bw, cl, sniff)
	if _, err := w.writeConn(w.body); err != nil {
		return 0, err
	}
	w.body = w.body[:0]
	return w.writeConn(b)
}

// writeConn writes b to the connection of a streamed answer, each write
// bounded in time so that a client that stops reading cannot hold it.
func (w *fastWriter) writeConn(b []byte) (int, error) {
	if w.werr != nil {
		return 0, w.werr
	}
	_ = w.c.nc.SetWriteDeadline(time.Now().Add(w.c.srv.readTimeout))
	n, err := w.c.bw.Write(b)
	w.sent += int64(n)
	if err == nil && w.sent > w.declared {
		err = errors.New("h1: answer longer than its Content-Length")
	}
	w.werr = err
	return n, err
}

// writeTo writes the whole kept answer.
func (w *fastWriter) writeTo(bw *bufio.Writer) {
	w.writeHead(bw, int64(len(w.body)), w.body)
	bw.Write(w.body)
}

// writeHead writes the answer's head (see appendHead) with a
// Content-Length of length.
func (w *fastWriter) writeHead(bw *bufio.Writer, length int64, sniff []byte) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	bw.Write(appendHead(bw.AvailableBuffer(), w.code, w.header, length, sniff, w.closing))
}

// appendHead appends an answer's status line and headers to dst: header
// minus Content-Length and the hop-by-hop ones, Date and Content-Type
// (sniffed from sniff) added when missing, as net/http does, "Connection:
// close" when closing, and a Content-Length of length (none for a 204 or
// 304, which have no body).
func appendHead(dst []byte, code int, header http.Header, length int64, sniff []byte, closing bool) []byte {
	dst = append(dst, "HTTP/1.1 "...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, ' ')
	dst = append(dst, http.StatusText(code)...)
	dst = append(dst, "\r\n"...)
	for k, vv := range header {
		if k == "Content-Length" || IsHopHeader(k) {
			continue
		}
		for _, v := range vv {
			dst = append(dst, k...)
			dst = append(dst, ": "...)
			dst = append(dst, v...)
			dst = append(dst, "\r\n"...)
		}
	}
	if _, ok := header["Date"]; !ok {
		dst = append(dst, "Date: "...)
		dst = append(dst, httpDate()...)
		dst = append(dst, "\r\n"...)
	}
	if _, ok := header["Content-Type"]; !ok && len(sniff) > 0 {
		dst = append(dst, "Content-Type: "...)
		dst = append(dst, http.DetectContentType(sniff)...)
		dst = append(dst, "\r\n"...)
	}
	if closing {
		dst = append(dst, "Connection: close\r\n"...)
	}
	if code == http.StatusNoContent || code == http.StatusNotModified {
		return append(dst, "\r\n"...) // no body, and none announced (RFC 9110 8.6)
	}
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, length, 10)
	return append(dst, "\r\n\r\n"...)
}

// dateCache holds the Date header value of the current second.
var dateCache atomic.Pointer[cachedDate]

type cachedDate struct {
	sec  int64
	text string
}

func httpDate() string {
	now := time.Now()
	if d := dateCache.Load(); d != nil && d.sec == now.Unix() {
		return d.text
	}
	d := &cachedDate{sec: now.Unix(), text: now.UTC().Format(http.TimeFormat)}
	dateCache.Store(d)
	return d.text
}

// fastRequest is a request head the fast path accepted.
type fastRequest struct {
	target, path, query, name string
	host                      string
	header                    http.Header
	contentLength             int64
	close                     bool
}

// headVerdict is what readHead decided.
type headVerdict int

const (
	headFast    headVerdict = iota // the fast path serves the request
	headHandOff                    // net/http serves the connection from here
	headClose                      // the head's time is up: close
)

// readHead reads and consumes the request head if it has the fast path's
// shape, leaving the body in c.br. A head that cannot have it is handed to
// net/http as soon as that shows (another method or path, a line ended by
// a bare LF, too long), without waiting for the rest; one whose deadline
// passes closes the connection. The deadline is set only if the head is not
// all in the buffer already.
func (c *fastConn) readHead(deadline time.Time) (fastRequest, headVerdict) {
	var buf []byte
	for waited := false; ; waited = true {
		buf, _ = c.br.Peek(c.br.Buffered())
		if i := bytes.Index(buf, []byte("\r\n\r\n")); i >= 0 {
			buf = buf[:i+4]
			break
		}
		if !plausibleHead(buf, c.srv.prefix) || c.br.Buffered() >= fastHeadMax {
			return fastRequest{}, headHandOff
		}
		if !waited {
			_ = c.nc.SetReadDeadline(deadline)
		}
		if _, err := c.br.Peek(c.br.Buffered() + 1); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return fastRequest{}, headClose
			}
			// net/http answers what it would have (a 400 for a head cut
			// short).
			return fastRequest{}, headHandOff
		}
	}
	req, ok := parseHead(&c.header, buf, c.srv.prefix, c.srv.maxBody)
	if !ok {
		return req, headHandOff
	}
	_, _ = c.br.Discard(len(buf))
	return req, headFast
}

// plausibleHead reports whether the start of a head may still be one the
// fast path takes: it begins with prefix ("POST /lint/") and has no line
// ended by a bare LF.
func plausibleHead(b []byte, prefix string) bool {
	n := min(len(b), len(prefix))
	if string(b[:n]) != prefix[:n] {
		return false
	}
	for i := bytes.IndexByte(b, '\n'); i >= 0; {
		if i == 0 || b[i-1] != '\r' {
			return false
		}
		j := bytes.IndexByte(b[i+1:], '\n')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return true
}

// parseHead parses head (ending in the blank line) if it has the fast
// path's shape (see Server): prefix ("POST /lint/") and a name, a body
// of at most maxBody bytes.
func parseHead(space *headerSpace, head []byte, prefix string, maxBody int64) (fastRequest, bool) {
	var req fastRequest
	text := string(head[:len(head)-2]) // every line ends in CRLF
	line, rest, _ := strings.Cut(text, "\r\n")
	target, ok := strings.CutPrefix(line, "POST ")
	if !ok {
		return req, false
	}
	if target, ok = strings.CutSuffix(target, " HTTP/1.1"); !ok {
		return req, false
	}
	req.target = target
	req.path, req.query, _ = strings.Cut(target, "?")
	name, ok := strings.CutPrefix(req.path, prefix[len("POST "):])
	if !ok || !validName(name) || !validQuery(req.query) {
		return req, false
	}
	req.name = name

	if strings.Count(rest, "\r\n") > 100 {
		return req, false
	}
	hosts, lengths := 0, 0
	req.header, ok = parseHeaderLines(space, rest, func(k, v string) bool {
		switch k {
		case "Host":
			req.host = v
			hosts++
			return hosts == 1 && validHost(v)
		case "Content-Length":
			cl, ok := parseLength(v)
			req.contentLength = cl
			lengths++
			return ok && lengths == 1 && cl <= maxBody
		case "Connection":
			switch {
			case strings.EqualFold(v, "close"):
				req.close = true
			case strings.EqualFold(v, "keep-alive"):
			default:
				return false
			}
		case "Transfer-Encoding", "Expect", "Upgrade", "Te", "Trailer":
			return false
		}
		return true
	})
	if !ok || hosts != 1 {
		return req, false
	}
	// net/http moves Host out of the header map into Request.Host.
	delete(req.header, "Host")
	return req, true
}

// prefixConn is a connection whose first bytes were already read.
type prefixConn struct {
	net.Conn
	prefix []byte
	// capDeadline, when set, caps the first read deadline set on the
	// connection (net/http's for the head it reads first), then is
	// cleared: a head handed over keeps the deadline it had.
	capDeadline time.Time
}

func (c *prefixConn) SetReadDeadline(t time.Time) error {
	if limit := c.capDeadline; !limit.IsZero() {
		c.capDeadline = time.Time{}
		if t.IsZero() || t.After(limit) {
			t = limit
		}
	}
	return c.Conn.SetReadDeadline(t)
}

func (c *prefixConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// handoffListener is the listener of the net/http server: it "accepts" the
// connections the fast path hands over.
type handoffListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newHandoffListener() *handoffListener {
	return &handoffListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// hand gives c to the net/http server; after Close it closes c and reports
// false.
func (l *handoffListener) hand(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.closed:
		_ = c.Close()
		return false
	}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return handoffAddr{} }

type handoffAddr struct{}

func (handoffAddr) Network() string { return "handoff" }
func (handoffAddr) String() string  { return "handoff" }
