//go:build linux

package h1

import (
	"bytes"
	"errors"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// loopConn is a client connection on the loop.
type loopConn struct {
	fd  int
	in  []byte // read and not yet consumed
	out []byte // the answer being written, from off
	off int
	hdr headerSpace
	// first: no request came yet; started: when the head of the request
	// under way began (zero while waiting for one); deadline: when the wait
	// for the client ends (zero while an attempt is in flight).
	first    bool
	started  time.Time
	deadline time.Time
	// req is the request under way, taking reqLen bytes of in.
	req    fastRequest
	reqLen int
	// busy: an upstream attempt is in flight on up, to rt, until
	// attDeadline (dialDeadline while connecting); tried are the upstreams
	// that failed it, attempt how many did.
	busy         bool
	up           *loopUp
	rt           Route
	tried        []any
	attempt      int
	attDeadline  time.Time
	dialDeadline time.Time
	// closing: close once out is written; eof: the client closed its
	// side; readPending: bytes may be left unread (in was full); lameUsed:
	// it brought its one request after Shutdown (see LameDuck).
	closing, eof, readPending, lameUsed bool
}

func (l *evLoop) onClient(c *loopConn, ev uint32) {
	if ev&syscall.EPOLLOUT != 0 && c.off < len(c.out) && !l.flush(c) {
		return
	}
	if u := c.up; u != nil && u.readPending && c.off == len(c.out) {
		l.streamUp(u, false)
		if l.clients[c.fd] != c {
			return
		}
	}
	if ev&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 && !l.readClient(c, ev&hangup != 0) {
		return
	}
	l.next(c)
}

// hangup: the peer closed its side (or the connection failed). The close
// comes once, with the event of the last bytes if they came together: then
// a short read does not mean all was read.
const hangup = syscall.EPOLLRDHUP | syscall.EPOLLHUP | syscall.EPOLLERR

// readClient reads what the client sent, up to maxIn bytes buffered,
// until a short read unless drain (then until EAGAIN or the end). It
// reports false when the connection was closed.
func (l *evLoop) readClient(c *loopConn, drain bool) bool {
	rerr, more := l.readInto(c.fd, &c.in, drain, l.maxIn)
	c.readPending = more
	if rerr == nil {
		return true
	}
	// The client closed its side (or the connection failed): a request in
	// flight is cut short; a whole one still buffered is answered.
	c.eof = true
	if c.busy {
		l.abort(c, ClientGone, errors.New("the client closed the connection"))
		return false
	}
	return true
}

// next serves what the client sent, request by request, while no attempt
// is in flight and no answer is being written.
func (l *evLoop) next(c *loopConn) {
	for l.clients[c.fd] == c && !c.busy && c.off == len(c.out) {
		if c.closing {
			l.closeClient(c)
			return
		}
		if c.readPending && !l.readClient(c, true) {
			return
		}
		if len(c.in) == 0 {
			l.waitRequest(c)
			return
		}
		if c.started.IsZero() {
			// A new request: after Shutdown only a lame-duck connection may
			// bring one, answered with "Connection: close".
			if l.s.inShutdown.Load() {
				if l.s.lameDuck <= 0 || c.lameUsed {
					l.closeClient(c)
					return
				}
				c.lameUsed = true
			}
			c.started = l.now
		}
		i := bytes.Index(c.in, []byte("\r\n\r\n"))
		if i < 0 {
			if c.eof || !plausibleHead(c.in, l.s.prefix) || len(c.in) >= fastHeadMax {
				l.detach(c)
				return
			}
			c.deadline = c.started.Add(l.s.readHeaderTimeout)
			return
		}
		if i+4 > fastHeadMax {
			l.detach(c)
			return
		}
		req, ok := parseHead(&c.hdr, c.in[:i+4], l.s.prefix, l.s.maxBody)
		if !ok {
			l.detach(c)
			return
		}
		total := i + 4 + int(req.contentLength)
		if len(c.in) < total {
			// Room for the whole body at once, and a read's worth after.
			c.in = l.grow(c.in, total+loopReadChunk)
			if c.eof {
				l.closeClient(c) // a client that stops mid-body gets no answer
				return
			}
			c.deadline = c.started.Add(l.s.readTimeout)
			return
		}
		c.req, c.reqLen, c.first = req, total, false
		c.closing = req.close || c.eof || l.s.inShutdown.Load()
		c.deadline = time.Time{}
		l.begin(c)
	}
}

// waitRequest sets the deadline for the next request, or closes an idle
// connection after Shutdown.
func (l *evLoop) waitRequest(c *loopConn) {
	c.started = time.Time{}
	switch {
	case c.eof:
		l.closeClient(c)
	case l.s.inShutdown.Load():
		if l.s.lameDuck <= 0 || c.lameUsed {
			l.closeClient(c)
			return
		}
		l.s.mu.Lock()
		c.deadline = l.s.lameUntil
		l.s.mu.Unlock()
	case c.first:
		// as set at accept: ReadHeaderTimeout from then
	default:
		c.deadline = l.now.Add(l.s.idleTimeout)
	}
}

// begin starts the request parsed on c.
func (l *evLoop) begin(c *loopConn) {
	c.tried, c.attempt = c.tried[:0], 0
	rt, ok := l.r.Pick(c.req.name)
	if !ok {
		l.fail(c, Route{}, ConnFailed)
		return
	}
	l.send(c, rt, false)
}

// done ends c's request: its bytes are consumed and no attempt is in flight.
func (l *evLoop) done(c *loopConn) {
	c.busy, c.up = false, nil
	rest := c.in[c.reqLen:]
	c.reqLen = 0
	c.started = time.Time{}
	if cap(c.in) > keepBufAbove && len(rest) == 0 {
		l.giveBack(c.in) // a large request's buffer, for the next one
		c.in = nil
		return
	}
	c.in = c.in[:copy(c.in, rest)]
}

// abort ends c's attempt (if any) as res, and c.
func (l *evLoop) abort(c *loopConn, res Outcome, err error) {
	if c.busy {
		if c.up != nil {
			l.closeUp(c.up)
		}
		c.up, c.busy = nil, false
		l.r.Failed(c.rt, res, err)
		l.w.reset()
		l.r.Failure(&l.w, c.req.name, c.rt, res, c.started)
	}
	l.closeClient(c)
}

// fail answers c's request with the Router's failure answer.
func (l *evLoop) fail(c *loopConn, rt Route, res Outcome) {
	l.w.reset()
	l.r.Failure(&l.w, c.req.name, rt, res, c.started)
	code := l.w.code
	if code == 0 {
		code = http.StatusOK
	}
	c.out = appendHead(c.out[:0], code, l.w.header, int64(len(l.w.body)), l.w.body, c.closing)
	c.out = append(c.out, l.w.body...)
	c.off = 0
	l.done(c)
	l.flush(c) // next runs in the caller's loop
}

// flush writes what is left of c's answer; false when c was closed.
func (l *evLoop) flush(c *loopConn) bool {
	for c.off < len(c.out) {
		n, err := rawWrite(c.fd, c.out[c.off:])
		switch {
		case n > 0:
			c.off += n
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			// A client that does not read has ReadTimeout to take the rest.
			c.deadline = l.now.Add(l.s.readTimeout)
			return true
		default:
			if c.busy { // a streamed answer: its attempt ends as the client's
				l.abort(c, ClientGone, os.NewSyscallError("write", err))
			} else {
				l.closeClient(c)
			}
			return false
		}
	}
	c.out, c.off = c.out[:0], 0
	if cap(c.out) > keepBufAbove {
		c.out = nil
	}
	c.deadline = time.Time{}
	if c.closing && !c.busy { // busy: a streamed answer has more to come
		l.closeClient(c)
		return false
	}
	return true
}

// fallback sends c, whose attempt met an answer the loop does not pass on,
// to the goroutine path: the attempt is dropped uncounted and the request
// is served again there.
func (l *evLoop) fallback(c *loopConn) {
	if c.up != nil {
		l.closeUp(c.up)
	}
	c.up, c.busy = nil, false
	l.detach(c)
}

// detach moves c off the loop to the goroutine path (which hands it to
// net/http when its request is of another shape), with every byte it sent
// and the loop did not answer.
func (l *evLoop) detach(c *loopConn) {
	if !l.forget(c) {
		return
	}
	f := os.NewFile(uintptr(c.fd), "")
	nc, err := net.FileConn(f) // a descriptor of its own, on the runtime's poller
	_ = f.Close()
	if err != nil {
		return
	}
	fc := l.s.newConn(nc)
	if fc == nil {
		return
	}
	fc.cr.prefix = append([]byte(nil), c.in...)
	go fc.serve()
}

// forget takes c off the loop without closing its descriptor. It reports
// false when c was off already: its descriptor number may be another
// connection's by now, and must not be closed again.
func (l *evLoop) forget(c *loopConn) bool {
	if l.clients[c.fd] != c {
		return false
	}
	_ = syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, c.fd, nil)
	l.clients[c.fd] = nil
	l.nclients.Add(-1)
	return true
}

func (l *evLoop) closeClient(c *loopConn) {
	if c.up != nil {
		l.closeUp(c.up)
		c.up = nil
	}
	if l.forget(c) {
		_ = syscall.Close(c.fd)
	}
}

// loopWriter is the http.ResponseWriter of the Router's failure answers.
type loopWriter struct {
	header http.Header
	code   int
	body   []byte
}

func (w *loopWriter) reset() {
	if w.header == nil {
		w.header = make(http.Header, 4)
	}
	clear(w.header)
	w.code, w.body = 0, w.body[:0]
}

func (w *loopWriter) Header() http.Header { return w.header }

func (w *loopWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *loopWriter) Write(b []byte) (int, error) {
	w.body = append(w.body, b...)
	return len(b), nil
}
