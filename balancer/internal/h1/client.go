package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The client: a minimal HTTP/1.1 client that writes the request and reads
// the whole answer in the caller's goroutine over a pooled keep-alive
// connection. Compared with http.Transport it saves, per request, the
// hand-offs to the connection's read and write goroutines, a context and
// timer (a connection deadline bounds the attempt instead), and it writes
// the request in one syscall. Answers it does not parse itself go through
// http.ReadResponse, so chunked and close-delimited bodies work.

// maxIdlePerPool bounds the idle connections kept per upstream.
const maxIdlePerPool = 1024

// dialTimeout bounds connecting, within the attempt's deadline.
const dialTimeout = 5 * time.Second

// Outcome says how one exchange ended.
type Outcome int

const (
	Answered   Outcome = iota // a whole answer was read
	Streaming                 // the head was read; the body streams from the answer's Body
	ConnFailed                // no (whole) answer: may be retried elsewhere
	TimedOut                  // the deadline passed
	ClientGone                // the request's context ended
	TooLarge                  // no Content-Length and over the buffer limit
)

// Request is one request a Pool sends: POST Path?Query with Header (minus
// Host, Content-Length and the hop-by-hop headers) and Body.
type Request struct {
	Path   string // escaped, as on the request line
	Query  string // raw, without '?'
	Host   string
	Header http.Header
	Body   []byte
	// Deadline bounds the whole exchange: connecting, sending, and reading
	// the answer (a streamed one included).
	Deadline time.Time
	// MaxBuffered is the largest answer read whole; a larger one with a
	// Content-Length streams (Streaming), one without is TooLarge.
	MaxBuffered int64
}

// Pool holds the idle keep-alive connections to one upstream address and
// sends requests over them. It is safe for concurrent use.
type Pool struct {
	addr string
	// mu guards idle and closed.
	mu     sync.Mutex
	idle   []*conn
	closed bool
}

// NewPool returns a Pool for the TCP address addr (host:port).
func NewPool(addr string) *Pool { return &Pool{addr: addr} }

// conn is one connection to the upstream, used by one request at a time.
type conn struct {
	nc net.Conn
	br *bufio.Reader
	bw *bufio.Writer
	// lr bounds the answer being read; reused so that reading one costs
	// no allocation.
	lr io.LimitedReader
	// idle looks at the connection while it is idle (see
	// IdlePeek.Unsolicited).
	idle IdlePeek
	// cut breaks the connection's deadline (a client went away); made
	// once, not per request.
	cut func()
}

func newConn(nc net.Conn) *conn {
	c := &conn{nc: nc, br: bufio.NewReaderSize(nc, 16<<10), bw: bufio.NewWriterSize(nc, 16<<10)}
	c.idle.Init(nc)
	c.cut = func() { _ = nc.SetDeadline(aLongTimeAgo) }
	return c
}

func (p *Pool) get() *conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.idle)
	if n == 0 {
		return nil
	}
	c := p.idle[n-1]
	p.idle[n-1] = nil
	p.idle = p.idle[:n-1]
	return c
}

func (p *Pool) put(c *conn) {
	p.mu.Lock()
	if !p.closed && len(p.idle) < maxIdlePerPool {
		p.idle = append(p.idle, c)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	_ = c.nc.Close()
}

// CloseIdle closes the idle connections.
func (p *Pool) CloseIdle() { p.closeIdle(false) }

// Close closes the idle connections, and those in use as they come back:
// the upstream is gone. Requests may still be sent, each on a connection
// of its own.
func (p *Pool) Close() { p.closeIdle(true) }

func (p *Pool) closeIdle(forever bool) {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	if forever {
		p.closed = true
	}
	p.mu.Unlock()
	for _, c := range idle {
		_ = c.nc.Close()
	}
}

// errStale marks a connection that closed before any byte of an answer: on
// a reused connection it was most likely closed while idle, and the request
// goes again on a fresh one.
var errStale = errors.New("h1: connection closed before an answer")

// Do sends req over a pooled or new connection and reads the answer: a
// whole one (Answered) into resp, whose Body is then empty; for Streaming,
// the returned answer's Body holds the connection until it is closed. ctx
// ending cuts the exchange short (ClientGone). A keep-alive connection the
// upstream closed while idle is replaced by a fresh one transparently.
func (p *Pool) Do(ctx context.Context, req *Request, resp *bytes.Buffer) (Outcome, *http.Response, error) {
	for {
		c, reused := p.get(), true
		if c != nil && c.idle.Unsolicited() {
			// Bytes the upstream sent while no request was out, or a close:
			// the connection is out of step or gone. Never reuse it.
			_ = c.nc.Close()
			continue
		}
		if c == nil {
			var err error
			if c, err = p.dial(ctx, req.Deadline); err != nil {
				// Not connecting may be retried elsewhere, even after the
				// dial timeout, unless the whole attempt's time is spent.
				switch {
				case ctx.Err() != nil:
					return ClientGone, nil, err
				case !time.Now().Before(req.Deadline):
					return TimedOut, nil, err
				}
				return ConnFailed, nil, err
			}
			reused = false
		}
		res, up, err := p.exchange(ctx, req, c, resp)
		if errors.Is(err, errStale) && reused {
			continue // the Transport does the same: a fresh connection
		}
		return res, up, err
	}
}

func (p *Pool) dial(ctx context.Context, deadline time.Time) (*conn, error) {
	d := net.Dialer{Timeout: dialTimeout, Deadline: deadline, KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, err
	}
	return newConn(nc), nil
}

// aLongTimeAgo is a deadline in the past: it unblocks any I/O at once.
var aLongTimeAgo = time.Unix(1, 0)

// exchange writes the request on c and reads the answer. c goes back to
// the pool only when the answer was read whole, keep-alive holds and
// nothing follows the answer. For an answer to stream the returned body
// owns c and releases it when closed.
func (p *Pool) exchange(ctx context.Context, req *Request, c *conn, resp *bytes.Buffer) (res Outcome, up *http.Response, err error) {
	resp.Reset()
	keep, owned := false, true
	defer func() {
		switch {
		case !owned:
		case keep:
			p.put(c)
		default:
			_ = c.nc.Close()
		}
	}()
	if err := c.nc.SetDeadline(req.Deadline); err != nil {
		return ConnFailed, nil, err
	}
	// A client that goes away cuts the attempt short.
	stop := context.AfterFunc(ctx, c.cut)
	defer func() {
		if owned {
			stop()
		}
	}()

	writeRequest(c.bw, req)
	if err := c.bw.Flush(); err != nil {
		if isStale(err) {
			return ConnFailed, nil, fmt.Errorf("%w: %v", errStale, err)
		}
		return Classify(ctx, err), nil, err
	}
	if _, err := c.br.Peek(1); err != nil {
		if errors.Is(err, io.EOF) || isStale(err) {
			// Nothing came back: the upstream closed an idle connection
			// (stale when reused) or died before answering.
			return ConnFailed, nil, fmt.Errorf("%w: %v", errStale, err)
		}
		return Classify(ctx, err), nil, err
	}
	if up, ok := readAnswerFast(c.br); ok {
		if up.ContentLength > req.MaxBuffered {
			c.lr = io.LimitedReader{R: c.br, N: up.ContentLength}
			up.Body, owned = &streamBody{c: c, pool: p, src: &c.lr, left: up.ContentLength, stop: stop}, false
			return Streaming, up, nil
		}
		resp.Grow(int(up.ContentLength))
		b := resp.AvailableBuffer()[:up.ContentLength]
		if _, err := io.ReadFull(c.br, b); err != nil {
			return Classify(ctx, err), nil, fmt.Errorf("reading the answer: %w", err)
		}
		_, _ = resp.Write(b) // in place: b is resp's own free space
		keep = c.br.Buffered() == 0 && stop()
		return Answered, up, nil
	}
	for {
		up, err = http.ReadResponse(c.br, nil)
		if err != nil {
			return Classify(ctx, err), nil, err
		}
		// Skip informational answers (an unasked-for 100 Continue); a 1xx
		// is never the final answer passed on.
		if up.StatusCode >= 200 || up.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	if up.StatusCode == http.StatusSwitchingProtocols {
		return ConnFailed, nil, errors.New("upstream switched protocols")
	}
	if up.ContentLength > req.MaxBuffered {
		up.Body, owned = &streamBody{c: c, pool: p, src: up.Body, left: up.ContentLength, close: up.Close, stop: stop}, false
		return Streaming, up, nil
	}
	if up.ContentLength > 0 {
		resp.Grow(int(up.ContentLength))
	}
	c.lr = io.LimitedReader{R: up.Body, N: req.MaxBuffered + 1}
	n, err := resp.ReadFrom(&c.lr)
	c.lr.R = nil
	if err != nil {
		return Classify(ctx, err), nil, fmt.Errorf("reading the answer: %w", err)
	}
	if n > req.MaxBuffered {
		return TooLarge, nil, fmt.Errorf("answer over %d bytes without a Content-Length", req.MaxBuffered)
	}
	_ = up.Body.Close()
	// Reuse the connection only if the answer was framed (not closed
	// by the upstream), nothing follows it, and the client did not leave
	// (stop() false: the deadline was broken).
	keep = !up.Close && c.br.Buffered() == 0 && stop()
	return Answered, up, nil
}

// streamBody is the body of a streamed answer: left bytes of src on
// connection c, which goes back to pool when the body was read to its end
// with nothing after it, and is closed otherwise.
type streamBody struct {
	c     *conn
	pool  *Pool
	src   io.Reader
	left  int64
	close bool        // the upstream asked to close after the answer
	stop  func() bool // stops watching the client; false if it left
}

func (b *streamBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, io.EOF
	}
	n, err := b.src.Read(p[:min(int64(len(p)), b.left)])
	b.left -= int64(n)
	if err == io.EOF && b.left > 0 {
		err = io.ErrUnexpectedEOF
	} else if b.left == 0 {
		err = io.EOF
	}
	return n, err
}

func (b *streamBody) Close() error {
	stopped := b.stop()
	if b.left == 0 && !b.close && stopped && b.c.br.Buffered() == 0 {
		b.c.lr.R = nil
		b.pool.put(b.c)
		return nil
	}
	return b.c.nc.Close()
}

// readAnswerFast parses the head of the common answer: HTTP/1.1, a final
// status with a body, framed by one Content-Length, no Connection, Trailer
// or Transfer-Encoding header, and the whole head already in br's
// buffer. It then consumes the head and returns the answer (its body left
// in br); the header text is copied in one allocation, and the keys and
// values are substrings of it. For anything else it consumes nothing and
// returns false, and http.ReadResponse parses the answer (and reports
// malformed ones).
func readAnswerFast(br *bufio.Reader) (*http.Response, bool) {
	buf, _ := br.Peek(br.Buffered())
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		return nil, false
	}
	head := string(buf[:end+2]) // every line ends in CRLF
	a, ok := parseAnswerHead(nil, head)
	if !ok || a.chunked || a.hop {
		return nil, false
	}
	_, _ = br.Discard(end + 4)
	return &http.Response{
		Status:        line9(head),
		StatusCode:    a.code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        a.header,
		Body:          http.NoBody,
		ContentLength: a.length,
	}, true
}

// answerHead is an upstream answer's head, as parseAnswerHead reads it.
type answerHead struct {
	code   int
	header http.Header
	// length is the Content-Length, -1 when chunked; 0 for a 204 or 304,
	// which have no body whatever their header says.
	length  int64
	chunked bool
	// close: "Connection: close", the upstream ends the connection after
	// the answer. hop: the head has a Connection header (the headers it
	// names are taken out of header), or it is a 204 or 304.
	close, hop bool
}

// parseAnswerHead parses head, an answer's head up to its last CRLF, if it
// has the common shape: HTTP/1.1, a final status, a body framed by one
// Content-Length or by "Transfer-Encoding: chunked" alone (or no body: 204
// and 304). The headers are in space's storage (new with nil).
func parseAnswerHead(space *headerSpace, head string) (a answerHead, ok bool) {
	line, rest, _ := strings.Cut(head, "\r\n")
	// "HTTP/1.1 200 OK" (the reason may be empty or missing).
	if len(line) < 12 || line[:9] != "HTTP/1.1 " || (len(line) > 12 && line[12] != ' ') {
		return a, false
	}
	for i := 12; i < len(line); i++ {
		if c := line[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return a, false // a bare CR or LF ends a line for net/http
		}
	}
	for _, d := range []byte(line[9:12]) {
		if d < '0' || d > '9' {
			return a, false
		}
		a.code = a.code*10 + int(d-'0')
	}
	if a.code < 200 {
		return a, false // 1xx: a final answer follows
	}
	a.length = -1
	named := false // Connection names another header
	a.header, ok = parseHeaderLines(space, rest, func(k, v string) bool {
		switch k {
		case "Connection":
			a.hop = true
			for f := range strings.SplitSeq(v, ",") {
				switch f = strings.TrimSpace(f); {
				case strings.EqualFold(f, "close"):
					a.close = true
				case f != "" && !strings.EqualFold(f, "keep-alive"):
					named = true
				}
			}
		case "Trailer":
			return false // net/http checks the trailers it announces
		case "Transfer-Encoding":
			if a.chunked || v != "chunked" {
				return false
			}
			a.chunked = true
		case "Content-Length":
			n, ok := parseLength(v)
			if a.length >= 0 || !ok {
				return false
			}
			a.length = n
		}
		return true
	})
	if !ok {
		return a, false
	}
	if a.code == http.StatusNoContent || a.code == http.StatusNotModified {
		a.length, a.chunked, a.hop = 0, false, true
	} else if (a.length < 0) == !a.chunked {
		return a, false // neither framing, or both
	}
	if named {
		// Connection names headers for this hop only.
		for _, v := range a.header["Connection"] {
			for f := range strings.SplitSeq(v, ",") {
				if k := http.CanonicalHeaderKey(strings.TrimSpace(f)); k != "Connection" {
					delete(a.header, k)
				}
			}
		}
	}
	return a, true
}

// line9 returns the status of the status line at the start of head:
// "200 OK" of "HTTP/1.1 200 OK\r\n...".
func line9(head string) string {
	line, _, _ := strings.Cut(head, "\r\n")
	return strings.TrimLeft(line[9:], " ") // as http.ReadResponse does
}

// writeRequest writes req to w: its head, then its body.
func writeRequest(w *bufio.Writer, req *Request) {
	w.Write(appendRequestHead(w.AvailableBuffer(), req))
	w.Write(req.Body)
}

// appendRequestHead appends req's head to dst: the request line, Host,
// req's headers minus Host, Content-Length, the hop-by-hop ones and those
// a Connection header names, and the body's Content-Length.
func appendRequestHead(dst []byte, req *Request) []byte {
	dst = append(dst, "POST "...)
	dst = append(dst, req.Path...)
	if req.Query != "" {
		dst = append(dst, '?')
		dst = append(dst, req.Query...)
	}
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, req.Host...)
	dst = append(dst, "\r\n"...)
	connection := req.Header["Connection"]
	for k, vv := range req.Header {
		if k == "Host" || k == "Content-Length" || IsHopHeader(k) || (connection != nil && namedIn(connection, k)) {
			continue
		}
		for _, v := range vv { // none for a nil marker such as Idempotency-Key
			// Header values parsed by net/http hold no CR or LF.
			dst = append(dst, k...)
			dst = append(dst, ": "...)
			dst = append(dst, v...)
			dst = append(dst, "\r\n"...)
		}
	}
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(req.Body)), 10)
	return append(dst, "\r\n\r\n"...)
}

// namedIn reports whether the Connection header values name header k.
func namedIn(connection []string, k string) bool {
	for _, v := range connection {
		for f := range strings.SplitSeq(v, ",") {
			if http.CanonicalHeaderKey(strings.TrimSpace(f)) == k {
				return true
			}
		}
	}
	return false
}

func isStale(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// Classify sorts a failure of an exchange whose context is ctx: the
// context ended (ClientGone), a deadline passed (TimedOut), or the
// connection failed (ConnFailed).
func Classify(ctx context.Context, err error) Outcome {
	if ctx.Err() != nil {
		return ClientGone
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return TimedOut
	}
	return ConnFailed
}
