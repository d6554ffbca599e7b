//go:build linux

package h1

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
	"unsafe"
)

// loopUp is an upstream connection on the loop.
type loopUp struct {
	fd  int
	key any
	c   *loopConn // the client whose request it carries; nil when idle
	in  []byte
	// out is the request's head and body its body (in the client's
	// buffer); off bytes of the two are written.
	out, body []byte
	off       int
	hdr       headerSpace
	// connecting: the connect is under way; reused: it carried an answer
	// before; idleSince: when it went idle.
	connecting, reused bool
	idleSince          time.Time
	// A streamed answer (see startStream): left bytes of its body are
	// still to come, of status code; extra: bytes came after it;
	// readPending: bytes may wait in the socket until the client takes
	// what it was given.
	left               int64
	code               int
	extra, readPending bool
	// dec: the first dec bytes of a chunked answer's body in in are its
	// data so far, decoded in place (see readChunked).
	dec int
	// hup: the upstream closed its side; what is left is read to the end.
	hup bool
}

// send starts an attempt on rt, over an idle connection unless fresh.
func (l *evLoop) send(c *loopConn, rt Route, fresh bool) {
	if !rt.Addr.IsValid() {
		l.detach(c) // not an address the loop dials
		return
	}
	c.busy, c.rt = true, rt
	c.attDeadline = l.now.Add(l.timeout)
	var u *loopUp
	if !fresh {
		u = l.popIdle(rt.Key)
	}
	if u == nil {
		var err error
		if u, err = l.dial(rt); err != nil {
			l.connFailed(c, err)
			return
		}
		c.dialDeadline = l.now.Add(min(dialTimeout, l.timeout))
	}
	u.c, c.up = c, u
	req := Request{
		Path:   rt.Path,
		Query:  c.req.query,
		Host:   rt.Host,
		Header: c.req.header,
		Body:   c.in[c.reqLen-int(c.req.contentLength) : c.reqLen],
	}
	u.out, u.body, u.off = appendRequestHead(u.out[:0], &req), nil, 0
	if len(req.Body) <= copyBodyMax {
		u.out = append(u.out, req.Body...) // one write
	} else {
		u.body = req.Body // from the client's buffer, in one writev with the head
	}
	if !u.connecting {
		l.writeUp(u)
	}
}

func (l *evLoop) popIdle(key any) *loopUp {
	list := l.idle[key]
	if len(list) == 0 {
		return nil
	}
	u := list[len(list)-1]
	list[len(list)-1] = nil
	// An emptied list keeps its place (and array) for the connection's
	// return; scan deletes it if none comes back.
	l.idle[key] = list[:len(list)-1]
	return u
}

func (l *evLoop) dial(rt Route) (*loopUp, error) {
	var sa syscall.Sockaddr
	family := syscall.AF_INET
	ip := rt.Addr.Addr()
	if ip.Is4() || ip.Is4In6() {
		sa = &syscall.SockaddrInet4{Port: int(rt.Addr.Port()), Addr: ip.Unmap().As4()}
	} else {
		family = syscall.AF_INET6
		sa = &syscall.SockaddrInet6{Port: int(rt.Addr.Port()), Addr: ip.As16()}
	}
	fd, err := syscall.Socket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
	err = syscall.Connect(fd, sa)
	if err != nil && err != syscall.EINPROGRESS {
		_ = syscall.Close(fd)
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: net.TCPAddrFromAddrPort(rt.Addr), Err: os.NewSyscallError("connect", err)}
	}
	if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: connEvents, Fd: int32(fd)}); err != nil {
		_ = syscall.Close(fd)
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	u := &loopUp{fd: fd, key: rt.Key, connecting: err != nil}
	setAt(&l.ups, fd, u)
	return u, nil
}

// writeUp writes what is left of the request.
func (l *evLoop) writeUp(u *loopUp) {
	for !u.sent() {
		head, body := u.unsent()
		n, err := rawWritev(u.fd, head, body)
		switch {
		case n > 0:
			u.off += n
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			return // the rest when epoll says it is writable
		default:
			l.upFailed(u, os.NewSyscallError("writev", err))
			return
		}
	}
}

// sent reports whether the whole request is written.
func (u *loopUp) sent() bool { return u.off == len(u.out)+len(u.body) }

// unsent returns the request's head and body from off on.
func (u *loopUp) unsent() (head, body []byte) {
	if u.off < len(u.out) {
		return u.out[u.off:], u.body
	}
	return nil, u.body[u.off-len(u.out):]
}

func (l *evLoop) onUp(u *loopUp, ev uint32) {
	if u.c == nil {
		// Idle: bytes no request asked for, or a close, end it.
		if ev&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
			var b [1]byte
			if n, err := syscall.Read(u.fd, b[:]); n != 0 || err != syscall.EAGAIN {
				l.dropIdle(u)
			}
		}
		return
	}
	if u.connecting {
		if ev&(syscall.EPOLLOUT|syscall.EPOLLERR|syscall.EPOLLHUP) == 0 {
			return
		}
		errno, err := syscall.GetsockoptInt(u.fd, syscall.SOL_SOCKET, syscall.SO_ERROR)
		if err == nil && errno != 0 {
			err = syscall.Errno(errno)
		}
		if err != nil {
			l.connFailed(u.c, &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)})
			return
		}
		if _, err := syscall.Getpeername(u.fd); err != nil {
			// Still connecting: the event was for a descriptor of the same
			// number closed earlier in this batch.
			return
		}
		u.connecting = false
		l.writeUp(u)
		if u.c == nil {
			return
		}
	} else if ev&syscall.EPOLLOUT != 0 && !u.sent() {
		l.writeUp(u)
		if u.c == nil {
			return
		}
	}
	if ev&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
		u.hup = u.hup || ev&hangup != 0
		l.readUp(u, u.hup)
	}
}

// readUp reads the answer (until a short read unless drain, see hangup)
// and passes it on once it is whole.
func (l *evLoop) readUp(u *loopUp, drain bool) {
	if u.left > 0 {
		l.streamUp(u, drain)
		return
	}
	for l.readAnswer(u, drain) {
	}
}

// readAnswer reads what came of the answer and acts on it; again: room was
// made in u.in (see readChunked) and the read goes on.
func (l *evLoop) readAnswer(u *loopUp, drain bool) (again bool) {
	// more: the read stopped at its limit with bytes maybe left, which may
	// follow a whole answer: such a connection is not kept.
	rerr, more := l.readInto(u.fd, &u.in, drain, l.answerMax)
	end := bytes.Index(u.in, []byte("\r\n\r\n"))
	switch {
	case end < 0 && rerr != nil:
		l.upFailed(u, rerr)
		return false
	case end < 0 && len(u.in) <= answerHeadMax:
		return false
	case end < 0 || end+4 > answerHeadMax:
		l.fallback(u.c) // too long a head for the loop
		return false
	}
	// The head's text is read in place: the headers are copied into the
	// client's answer before u.in changes (and u.hdr is not read again
	// until the next answer's head replaces it).
	a, ok := parseAnswerHead(&u.hdr, unsafe.String(&u.in[0], end+2))
	if !ok {
		// An answer of another shape (a 1xx first, no framing): the
		// goroutine path does it all again.
		l.fallback(u.c)
		return false
	}
	body := u.in[end+4:]
	open := rerr == nil && !more && !a.close // nothing may follow
	switch {
	case a.chunked:
		return l.readChunked(u, a, body, rerr, open, more)
	case a.length > l.maxBuffered:
		l.startStream(u, a, body, rerr, more)
	case int64(len(body)) < a.length:
		if rerr != nil {
			l.upFailed(u, fmt.Errorf("reading the answer: %w", rerr))
		}
	default:
		l.answer(u, a.code, a.header, body[:a.length], open && int64(len(body)) == a.length)
	}
	return false
}

// readChunked acts on a chunked answer's body so far. Its first u.dec
// bytes are the data of the chunks before (decoded in place when u.in
// filled up), the chunked text follows; again: it decoded the whole chunks
// there to make room, and the read goes on.
func (l *evLoop) readChunked(u *loopUp, a answerHead, body []byte, rerr error, open, more bool) (again bool) {
	raw := body[u.dec:]
	taken, _, done, ok := scanChunked(raw, l.maxBuffered-int64(u.dec))
	switch {
	case !ok:
		if _, _, _, framed := scanChunked(raw, math.MaxInt64); framed {
			l.tooLarge(u) // well framed, but over MaxBuffered
		} else {
			l.fallback(u.c) // malformed: the goroutine path does it again, and tells
		}
	case done:
		// The data follows what was decoded before, in place; answer
		// copies it out before u.in is reused.
		n := decodeChunks(raw[:taken])
		l.answer(u, a.code, a.header, body[:u.dec+n], open && len(raw) == taken)
	case rerr != nil:
		l.upFailed(u, fmt.Errorf("reading the answer: %w", rerr))
	case more && taken == 0:
		// Full, and no whole chunk to decode: a trailer section without
		// end fills it.
		l.tooLarge(u)
	case more:
		n := decodeChunks(raw[:taken])
		rest := copy(raw[n:], raw[taken:])
		u.dec += n
		u.in = u.in[:len(u.in)-len(raw)+n+rest]
		return true
	}
	return false
}

var errEOF = errors.New("EOF")

// readInto reads from fd into *buf (grown as needed) until a short read
// (unless drain: see hangup), until nothing is left, or until *buf holds
// limit bytes (more: bytes may be left). rerr is what ended the
// connection (errEOF for its end).
func (l *evLoop) readInto(fd int, buf *[]byte, drain bool, limit int) (rerr error, more bool) {
	for {
		b := *buf
		if len(b) >= limit {
			return nil, true
		}
		if cap(b)-len(b) < loopReadChunk {
			b = l.grow(b, len(b)+loopReadChunk)
			*buf = b
		}
		space := b[len(b):min(cap(b), limit)] // never past limit: see more
		n, err := rawRead(fd, space)
		switch {
		case n > 0:
			*buf = b[:len(b)+n]
			if n < len(space) && !drain && len(*buf) < limit {
				return nil, false
			}
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			return nil, false
		case err == nil:
			return errEOF, false
		default:
			return err, false
		}
	}
}

// streamChunk bounds what a streamed answer holds in the loop at a time.
const streamChunk = 256 << 10

// startStream passes on an answer over MaxBuffered as it comes, under its
// Content-Length cl, as the goroutine path streams one: the client gets
// the head and the body so far, then each part as it arrives, read only
// once the client took the last. A backend that fails mid-way counts
// against it and cuts the client's connection; the answer counts by its
// status once whole.
func (l *evLoop) startStream(u *loopUp, a answerHead, body []byte, rerr error, more bool) {
	c := u.c
	take := min(int64(len(body)), a.length)
	c.out = appendHead(c.out[:0], a.code, a.header, a.length, body[:min(len(body), 512)], c.closing)
	c.out = append(c.out, body[:take]...)
	c.off = 0
	// extra: the connection is not kept (bytes follow, or it closes).
	u.left, u.code, u.extra = a.length-take, a.code, int64(len(body)) > take || a.close
	u.in = u.in[:0]
	if u.left == 0 {
		l.streamDone(u, rerr == nil && !more)
		l.flush(c)
		return
	}
	if rerr != nil {
		l.streamCut(u, ConnFailed, rerr)
		return
	}
	if l.flush(c) {
		u.readPending = true // readUp may have stopped at its limit
		l.streamUp(u, false)
	}
}

// streamUp passes on what the upstream sent of a streamed answer, while
// the client takes it.
func (l *evLoop) streamUp(u *loopUp, drain bool) {
	c := u.c
	for {
		if c.off < len(c.out) {
			u.readPending = true // the rest once the client took this
			return
		}
		rerr, more := l.readInto(u.fd, &u.in, drain || u.hup, streamChunk)
		if len(u.in) > 0 {
			take := min(int64(len(u.in)), u.left)
			c.out, c.off = append(c.out[:0], u.in[:take]...), 0
			u.left -= take
			u.extra = u.extra || int64(len(u.in)) > take
			u.in = u.in[:0]
		}
		switch {
		case u.left == 0:
			l.streamDone(u, rerr == nil && !more)
			l.flush(c)
			return
		case rerr != nil:
			l.streamCut(u, ConnFailed, rerr)
			return
		}
		if !l.flush(c) {
			return
		}
		if !more && c.off == len(c.out) {
			u.readPending = false // all read: the next part comes with an event
			return
		}
	}
}

// streamDone ends a streamed answer whose body is all in c.out; open
// says the connection may be kept (nothing ended it, nothing may wait).
func (l *evLoop) streamDone(u *loopUp, open bool) {
	c := u.c
	l.r.Answered(c.rt, u.code, c.started)
	keep := open && !u.extra
	u.left, u.extra, u.readPending = 0, false, false
	l.release(u, keep)
	l.done(c)
}

// streamCut ends a streamed answer that failed mid-way (res says how):
// the client's connection is cut, so that it sees fewer bytes than the
// Content-Length, never a whole answer.
func (l *evLoop) streamCut(u *loopUp, res Outcome, err error) {
	c := u.c
	err = fmt.Errorf("streaming an answer, %d bytes short: %w", u.left, err)
	u.left = 0
	l.closeUp(u)
	c.up, c.busy = nil, false
	l.r.Failed(c.rt, res, err)
	l.w.reset()
	l.r.Failure(&l.w, c.req.name, c.rt, res, c.started)
	l.closeClient(c)
}

// answer passes on u's whole answer to its client, and keeps u for the
// next request when keep says nothing follows the answer.
func (l *evLoop) answer(u *loopUp, code int, hdr http.Header, body []byte, keep bool) {
	c := u.c
	l.r.Answered(c.rt, code, c.started)
	c.out = appendHead(c.out[:0], code, hdr, int64(len(body)), body, c.closing)
	c.out = append(c.out, body...)
	c.off = 0
	l.release(u, keep)
	l.done(c)
	l.flush(c)
}

// release ends u's part in a request: it goes idle when keep, else it
// closes. A connection whose request is not all written (the upstream
// answered early) is not kept: its next bytes would end that request.
func (l *evLoop) release(u *loopUp, keep bool) {
	keep = keep && u.sent()
	u.c = nil
	u.in, u.out, u.body, u.off, u.dec = u.in[:0], u.out[:0], nil, 0, 0
	if cap(u.in) > keepBufAbove {
		l.giveBack(u.in)
		u.in = nil
	}
	if cap(u.out) > keepBufAbove {
		u.out = nil
	}
	if !keep || l.s.inShutdown.Load() {
		l.closeUp(u)
		return
	}
	u.reused, u.idleSince = true, l.now
	l.idle[u.key] = append(l.idle[u.key], u)
}

// upFailed handles an upstream connection that failed with err before a
// whole answer: on a reused connection that sent nothing back, the
// upstream most likely closed it while idle, and the request goes again on
// a fresh one; otherwise the attempt failed.
func (l *evLoop) upFailed(u *loopUp, err error) {
	c := u.c
	if u.reused && len(u.in) == 0 && (err == errEOF || isStale(err)) {
		l.closeUp(u)
		c.up, c.busy = nil, false
		l.send(c, c.rt, true)
		return
	}
	l.connFailed(c, err)
}

// connFailed ends an attempt that failed to connect or to answer: it
// counts against the upstream, and the request is retried on another
// when the Router allows.
func (l *evLoop) connFailed(c *loopConn, err error) {
	rt := c.rt
	if c.up != nil {
		l.closeUp(c.up)
	}
	c.up, c.busy = nil, false
	l.r.Failed(rt, ConnFailed, err)
	c.tried = append(c.tried, rt.Key)
	if next, ok := l.r.Retry(c.req.name, c.tried, c.attempt, c.started); ok {
		c.attempt++
		l.send(c, next, false)
		return
	}
	l.fail(c, rt, ConnFailed)
}

// tooLarge answers c's request, whose upstream answer has no
// Content-Length and is over MaxBuffered, with the Router's 502; the
// upstream is not at fault.
func (l *evLoop) tooLarge(u *loopUp) {
	c := u.c
	l.closeUp(u)
	c.up, c.busy = nil, false
	l.r.Failed(c.rt, TooLarge, fmt.Errorf("answer over %d bytes without a Content-Length", l.maxBuffered))
	l.fail(c, c.rt, TooLarge)
}

func (l *evLoop) closeUp(u *loopUp) {
	l.ups[u.fd] = nil
	_ = syscall.Close(u.fd) // also takes it out of the epoll set
	// Gone for the code that held it: onUp stops after a write that failed
	// (the descriptor may be another's by then, a retry's dial included).
	u.c = nil
}

// dropIdle closes the idle connection u.
func (l *evLoop) dropIdle(u *loopUp) {
	list := l.idle[u.key]
	for i, v := range list {
		if v == u {
			copy(list[i:], list[i+1:])
			list[len(list)-1] = nil
			list = list[:len(list)-1]
			break
		}
	}
	l.idle[u.key] = list
	l.closeUp(u)
}
