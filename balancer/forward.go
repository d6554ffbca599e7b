package balancer

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

// The Proxy's default forwarder for plain-http backends: a minimal
// HTTP/1.1 client that writes the request and reads the whole answer in the
// handler's goroutine over a pooled keep-alive connection. Compared with
// http.Transport it saves, per request, the hand-offs to the connection's
// read and write goroutines, a context and timer (a connection deadline
// bounds the attempt instead), and it writes the request in one syscall.
// Answers are parsed by http.ReadResponse, so chunked and close-delimited
// bodies work. Backends reached over https go through an http.Transport.

// maxIdlePerBackend bounds the idle connections kept per backend.
const maxIdlePerBackend = 1024

// dialTimeout bounds connecting, within the attempt's timeout.
const dialTimeout = 5 * time.Second

// connPool holds the idle keep-alive connections to one backend. The zero
// value is ready to use.
type connPool struct {
	// mu guards idle and closed.
	mu     sync.Mutex
	idle   []*upConn
	closed bool
}

// upConn is one connection to a backend, used by one request at a time.
type upConn struct {
	nc net.Conn
	br *bufio.Reader
	bw *bufio.Writer
	// lr bounds the answer being read; reused so that reading one costs
	// no allocation.
	lr io.LimitedReader
	// idle is what peekIdle found on the connection while it was idle
	// (see unsolicited).
	idle idlePeek
}

func (p *connPool) get() *upConn {
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

func (p *connPool) put(c *upConn) {
	p.mu.Lock()
	if !p.closed && len(p.idle) < maxIdlePerBackend {
		p.idle = append(p.idle, c)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	_ = c.nc.Close()
}

// closeIdle closes the idle connections; with forever, connections
// returned later are closed too (the backend is gone).
func (p *connPool) closeIdle(forever bool) {
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
var errStale = errors.New("balancer: connection closed before an answer")

// forward sends one request to be over a pooled or new connection and
// reads the whole answer into resp.
func (p *Proxy) forward(r *http.Request, be *Backend, body []byte, resp *bytes.Buffer) (attemptResult, *http.Response, error) {
	deadline := time.Now().Add(p.timeout)
	header := r.Header
	if _, ok := header["Connection"]; ok {
		header = outboundHeader(header) // drops the headers it names too
	}
	for {
		c, reused := be.conns.get(), true
		if c != nil && c.unsolicited() {
			// Bytes the backend sent while no request was out, or a close:
			// the connection is out of step or gone. Never reuse it.
			_ = c.nc.Close()
			continue
		}
		if c == nil {
			var err error
			if c, err = dial(r.Context(), be, deadline); err != nil {
				// Not connecting is retried elsewhere, even after the dial
				// timeout, unless the whole attempt's time is spent.
				switch {
				case r.Context().Err() != nil:
					return clientGone, nil, err
				case !time.Now().Before(deadline):
					return timedOut, nil, err
				}
				return connFailed, nil, err
			}
			reused = false
		}
		res, up, err := p.exchange(r, be, c, deadline, header, body, resp)
		if errors.Is(err, errStale) && reused {
			continue // the Transport does the same: a fresh connection
		}
		return res, up, err
	}
}

func dial(ctx context.Context, be *Backend, deadline time.Time) (*upConn, error) {
	d := net.Dialer{Timeout: dialTimeout, Deadline: deadline, KeepAlive: 30 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", be.dialAddr)
	if err != nil {
		return nil, err
	}
	c := &upConn{nc: nc, br: bufio.NewReaderSize(nc, 16<<10), bw: bufio.NewWriterSize(nc, 16<<10)}
	c.idle.init(nc)
	return c, nil
}

// aLongTimeAgo is a deadline in the past: it unblocks any I/O at once.
var aLongTimeAgo = time.Unix(1, 0)

// exchange writes the request on c and reads the answer. c goes back to
// the pool only when the answer was read whole, keep-alive holds and
// nothing follows the answer. For an answer to stream (see Proxy.stream)
// the returned body owns c and releases it when closed.
func (p *Proxy) exchange(r *http.Request, be *Backend, c *upConn, deadline time.Time, header http.Header, body []byte, resp *bytes.Buffer) (res attemptResult, up *http.Response, err error) {
	resp.Reset()
	keep, owned := false, true
	defer func() {
		switch {
		case !owned:
		case keep:
			be.conns.put(c)
		default:
			_ = c.nc.Close()
		}
	}()
	if err := c.nc.SetDeadline(deadline); err != nil {
		return connFailed, nil, err
	}
	// A client that goes away cuts the attempt short.
	stop := context.AfterFunc(r.Context(), func() { _ = c.nc.SetDeadline(aLongTimeAgo) })
	defer func() {
		if owned {
			stop()
		}
	}()

	writeRequest(c.bw, r, be, header, body)
	if err := c.bw.Flush(); err != nil {
		if isStale(err) {
			return connFailed, nil, fmt.Errorf("%w: %v", errStale, err)
		}
		return p.classifyDirect(r, err), nil, err
	}
	if _, err := c.br.Peek(1); err != nil {
		if errors.Is(err, io.EOF) || isStale(err) {
			// Nothing came back: the backend closed an idle connection
			// (stale when reused) or died before answering.
			return connFailed, nil, fmt.Errorf("%w: %v", errStale, err)
		}
		return p.classifyDirect(r, err), nil, err
	}
	if up, ok := readAnswerFast(c.br); ok {
		if up.ContentLength > p.maxResponse {
			c.lr = io.LimitedReader{R: c.br, N: up.ContentLength}
			up.Body, owned = &streamBody{c: c, be: be, src: &c.lr, left: up.ContentLength, stop: stop}, false
			return streaming, up, nil
		}
		resp.Grow(int(up.ContentLength))
		b := resp.AvailableBuffer()[:up.ContentLength]
		if _, err := io.ReadFull(c.br, b); err != nil {
			return p.classifyDirect(r, err), nil, fmt.Errorf("reading the answer: %w", err)
		}
		_, _ = resp.Write(b) // in place: b is resp's own free space
		keep = c.br.Buffered() == 0 && stop()
		return answered, up, nil
	}
	for {
		up, err = http.ReadResponse(c.br, nil)
		if err != nil {
			return p.classifyDirect(r, err), nil, err
		}
		// Skip informational answers (an unasked-for 100 Continue); a 1xx
		// is never the final answer passed to the client.
		if up.StatusCode >= 200 || up.StatusCode == http.StatusSwitchingProtocols {
			break
		}
	}
	if up.StatusCode == http.StatusSwitchingProtocols {
		return connFailed, nil, errors.New("backend switched protocols")
	}
	if up.ContentLength > p.maxResponse {
		up.Body, owned = &streamBody{c: c, be: be, src: up.Body, left: up.ContentLength, close: up.Close, stop: stop}, false
		return streaming, up, nil
	}
	if up.ContentLength > 0 {
		resp.Grow(int(up.ContentLength))
	}
	c.lr = io.LimitedReader{R: up.Body, N: p.maxResponse + 1}
	n, err := resp.ReadFrom(&c.lr)
	c.lr.R = nil
	if err != nil {
		return p.classifyDirect(r, err), nil, fmt.Errorf("reading the answer: %w", err)
	}
	if n > p.maxResponse {
		return tooLarge, nil, fmt.Errorf("answer over %d bytes without a Content-Length", p.maxResponse)
	}
	_ = up.Body.Close()
	// Reuse the connection only if the answer was framed (not closed
	// by the backend), nothing follows it, and the client did not leave
	// (stop() false: the deadline was broken).
	keep = !up.Close && c.br.Buffered() == 0 && stop()
	return answered, up, nil
}

// streamBody is the body of an answer the Proxy streams: left bytes of src
// on connection c, which goes back to be's pool when the body was read to
// its end with nothing after it, and is closed otherwise.
type streamBody struct {
	c     *upConn
	be    *Backend
	src   io.Reader
	left  int64
	close bool        // the backend asked to close after the answer
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
		b.be.conns.put(b.c)
		return nil
	}
	return b.c.nc.Close()
}

// readAnswerFast parses the head of the common answer: HTTP/1.1, a final
// status, a body framed by one Content-Length, no Connection or
// Transfer-Encoding header, and the whole head already in br's buffer. It
// then consumes the head and returns the answer (its body left in br); the
// header text is copied in one allocation, and the keys and values are
// substrings of it. For anything else it consumes nothing and returns false,
// and http.ReadResponse parses the answer (and reports malformed ones).
func readAnswerFast(br *bufio.Reader) (*http.Response, bool) {
	buf, _ := br.Peek(br.Buffered())
	end := bytes.Index(buf, []byte("\r\n\r\n"))
	if end < 0 {
		return nil, false
	}
	head := string(buf[:end+2]) // every line ends in CRLF
	line, rest, _ := strings.Cut(head, "\r\n")
	// "HTTP/1.1 200 OK" (the reason may be empty or missing).
	if len(line) < 12 || line[:9] != "HTTP/1.1 " || (len(line) > 12 && line[12] != ' ') {
		return nil, false
	}
	for i := 12; i < len(line); i++ {
		if c := line[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return nil, false // a bare CR or LF ends a line for net/http
		}
	}
	code := 0
	for _, d := range []byte(line[9:12]) {
		if d < '0' || d > '9' {
			return nil, false
		}
		code = code*10 + int(d-'0')
	}
	if code < 200 || code == http.StatusNoContent || code == http.StatusNotModified {
		return nil, false
	}
	cl := int64(-1)
	h, ok := parseHeaderLines(rest, func(k, v string) bool {
		switch k {
		case "Connection", "Transfer-Encoding", "Trailer":
			return false
		case "Content-Length":
			n, ok := parseLength(v)
			if cl >= 0 || !ok {
				return false
			}
			cl = n
		}
		return true
	})
	if !ok || cl < 0 {
		return nil, false
	}
	_, _ = br.Discard(end + 4)
	return &http.Response{
		Status:        line9(head),
		StatusCode:    code,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          http.NoBody,
		ContentLength: cl,
	}, true
}

// parseHeaderLines parses CRLF-separated header lines (a final CRLF is
// optional) into a Header, calling field for each name and value (false gives up).
// It accepts only what http.ReadResponse and http.ReadRequest parse alike:
// canonical token names (other spellings are left to them, which
// canonicalize) and values without control characters, trimmed of spaces
// and tabs. The values of single-valued keys share one backing array.
func parseHeaderLines(lines string, field func(k, v string) bool) (http.Header, bool) {
	n := strings.Count(lines, "\r\n") + 1
	h := make(http.Header, n)
	vals := make([]string, n)
	for i := 0; lines != ""; i++ {
		var line string
		line, lines, _ = strings.Cut(lines, "\r\n")
		k, v, ok := strings.Cut(line, ":")
		if !ok || !canonicalToken(k) {
			return nil, false
		}
		v = strings.Trim(v, " \t")
		for j := 0; j < len(v); j++ {
			if b := v[j]; (b < ' ' && b != '\t') || b == 0x7f {
				return nil, false
			}
		}
		if !field(k, v) {
			return nil, false
		}
		if vv, dup := h[k]; dup {
			h[k] = append(vv, v)
			continue
		}
		vals[i] = v
		h[k] = vals[i : i+1 : i+1]
	}
	return h, true
}

// line9 returns the status of the status line at the start of head:
// "200 OK" of "HTTP/1.1 200 OK\r\n...".
func line9(head string) string {
	line, _, _ := strings.Cut(head, "\r\n")
	return strings.TrimLeft(line[9:], " ") // as http.ReadResponse does
}

// canonicalToken reports whether k is a non-empty header name made of
// token characters, in canonical form ("Content-Type"). Other names go
// through http.ReadResponse, which canonicalizes them.
func canonicalToken(k string) bool {
	if k == "" {
		return false
	}
	upper := true
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'A' && c <= 'Z':
			if !upper {
				return false
			}
		case c >= 'a' && c <= 'z':
			if upper {
				return false
			}
		case c >= '0' && c <= '9':
		case c == '-':
			upper = true
			continue
		case strings.IndexByte("!#$%&'*+.^_`|~", c) >= 0:
		default:
			return false
		}
		upper = false
	}
	return true
}

// writeRequest writes POST {lint path} with header (minus the hop-by-hop
// ones) and body to w.
func writeRequest(w *bufio.Writer, r *http.Request, be *Backend, header http.Header, body []byte) {
	w.WriteString("POST ")
	w.WriteString(be.requestPath)
	if r.URL.RawQuery != "" {
		w.WriteByte('?')
		w.WriteString(r.URL.RawQuery)
	}
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(be.lintURL.Host)
	w.WriteString("\r\n")
	for k, vv := range header {
		if k == "Host" || k == "Content-Length" || isHopHeader(k) {
			continue
		}
		for _, v := range vv { // none for the nil Idempotency-Key marker
			// Header values parsed by net/http hold no CR or LF.
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	w.WriteString("Content-Length: ")
	var num [20]byte
	w.Write(strconv.AppendInt(num[:0], int64(len(body)), 10))
	w.WriteString("\r\n\r\n")
	w.Write(body)
}

func isStale(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// classifyDirect sorts a failure of the direct forwarder.
func (p *Proxy) classifyDirect(r *http.Request, err error) attemptResult {
	if r.Context().Err() != nil {
		return clientGone
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return timedOut
	}
	return connFailed
}
