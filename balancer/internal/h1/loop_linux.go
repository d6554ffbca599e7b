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
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const (
	// loopScanEvery is how often a loop looks for passed deadlines: the
	// timeouts of the loop are this coarse.
	loopScanEvery = 100 * time.Millisecond
	// upIdleTimeout closes an upstream connection idle this long.
	upIdleTimeout = 90 * time.Second
	// loopReadChunk is the least free space a read is given.
	loopReadChunk = 16 << 10
	// answerHeadMax bounds an upstream answer's head in the loop; a larger
	// one goes to the goroutine path.
	answerHeadMax = 64 << 10
	// copyBodyMax: a request body up to this size is copied after its
	// head and written with it; a larger one is written from the client's
	// buffer with writev (a copy of 200 KB cost more than writev's iovecs).
	copyBodyMax = 16 << 10
	// keepBufAbove: a buffer grown past this for a rare large request or
	// answer is let go once it is done with.
	keepBufAbove = 256 << 10

	epollET        = 1 << 31
	epollExclusive = 1 << 28
	// connEvents: every connection is watched for both directions, edge
	// triggered, once for its life.
	connEvents = syscall.EPOLLIN | syscall.EPOLLOUT | syscall.EPOLLRDHUP | epollET
)

// serveLoops serves ln from event loops when the Server has a Router; ok
// is false when it does not (or ln is not TCP), and Serve then serves ln
// itself.
func (s *Server) serveLoops(ln net.Listener) (ok bool, err error) {
	tl, isTCP := ln.(*net.TCPListener)
	if s.router == nil || !isTCP {
		return false, nil
	}
	if !s.track(ln) {
		_ = ln.Close()
		return true, http.ErrServerClosed
	}
	defer s.untrack(ln)
	s.startHTTP()
	rc, err := tl.SyscallConn()
	if err != nil {
		return true, err
	}
	var loops []*evLoop
	for range runtime.GOMAXPROCS(0) {
		// Each loop accepts on a descriptor of its own, so that each closes
		// its own at Shutdown.
		lfd, derr := -1, error(nil)
		if cerr := rc.Control(func(fd uintptr) { lfd, derr = dupCloexec(int(fd)) }); cerr != nil {
			derr = cerr
		}
		var l *evLoop
		if derr == nil {
			if l, derr = newLoop(s, lfd); derr != nil {
				_ = syscall.Close(lfd)
			}
		}
		if derr != nil {
			for _, l := range loops {
				_ = syscall.Close(l.lfd)
				l.closeFDs()
			}
			return true, fmt.Errorf("h1: event loop: %w", derr)
		}
		loops = append(loops, l)
	}
	for _, l := range loops {
		for _, o := range loops {
			if o != l {
				l.peers = append(l.peers, o)
			}
		}
	}
	var listening sync.WaitGroup
	s.mu.Lock()
	for _, l := range loops {
		s.wakers = append(s.wakers, l.wakeUp)
		s.loopClients = append(s.loopClients, l.nclients.Load)
		s.connsWG.Add(1)
		listening.Add(1)
		go l.run(&listening)
	}
	s.mu.Unlock()
	// Serve returns once every loop stopped accepting; the loops go on
	// until their connections are done (Shutdown waits for them).
	listening.Wait()
	return true, http.ErrServerClosed
}

// The loop's descriptors are non-blocking, so its reads, writes and polls
// without a timeout return at once: they are made as raw system calls,
// without telling the scheduler (entersyscall, exitsyscall), which would
// otherwise take the P of a thread "in a system call" and make it find
// one again afterwards, on every call.

func rawRead(fd int, p []byte) (int, error) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	n, _, errno := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if errno != 0 {
		return -1, errno
	}
	return int(n), nil
}

// rawWritev writes head and then body in one system call (write when
// body is empty).
func rawWritev(fd int, head, body []byte) (int, error) {
	if len(body) == 0 {
		return rawWrite(fd, head)
	}
	var iov [2]syscall.Iovec
	n := 0
	for _, b := range [2][]byte{head, body} {
		if len(b) > 0 {
			iov[n].Base = &b[0]
			iov[n].SetLen(len(b))
			n++
		}
	}
	r, _, errno := syscall.RawSyscall(syscall.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(n))
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}

// pollNow returns the events that are ready, without waiting.
func pollNow(ep int, evs []syscall.EpollEvent) (int, error) {
	n, _, errno := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(ep), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

func dupCloexec(fd int) (int, error) {
	nfd, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_DUPFD_CLOEXEC, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(nfd), nil
}

// evLoop is one event loop: its clients and their upstream connections.
type evLoop struct {
	s      *Server
	r      Router
	ep     int
	lfd    int // the listener; -1 once closed
	wakeR  int // the read end of the pipe wakeUp writes to
	wakeW  int
	lnDone func()
	// clients and ups are the loop's connections by descriptor.
	clients  []*loopConn
	ups      []*loopUp
	nclients atomic.Int32 // read by the other loops (leastBusy)
	// peers are the Server's other loops; inbox the connections they
	// accepted for this one (under inboxMu, with stopped: the loop is done).
	peers   []*evLoop
	inboxMu sync.Mutex
	inbox   []int
	stopped bool
	// idle holds the idle upstream connections by Route.Key, last used
	// last.
	idle map[any][]*loopUp
	// acceptPausedUntil: accept failed for want of descriptors; the
	// listener is left alone until then.
	acceptPausedUntil time.Time
	now               time.Time
	nextScan          time.Time
	maxIn             int
	timeout           time.Duration
	maxBuffered       int64
	shutdownSeen      bool
	w                 loopWriter
	// chunkBuf holds a chunked answer's data while it is passed on; lent
	// are large buffers kept for grow.
	chunkBuf  []byte
	lent      [][]byte
	lentBytes int
	// epf is the epoll descriptor on the runtime's poller, through epRC;
	// stopTick stops the goroutine that wakes the loop for scan.
	epf      *os.File
	epRC     syscall.RawConn
	stopTick chan struct{}
	// poll (made once: a closure per wait would be three allocations)
	// takes the ready events into evs: polled of them, or pollErr.
	poll    func(uintptr) bool
	evs     []syscall.EpollEvent
	polled  int
	pollErr error
}

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
	// busy: an upstream attempt is in flight on up (to rt, since attStart
	// with its deadline; dialDeadline while connecting).
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
	// hup: the upstream closed its side; what is left is read to the end.
	hup bool
}

func newLoop(s *Server, lfd int) (*evLoop, error) {
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		_ = syscall.Close(ep)
		return nil, err
	}
	l := &evLoop{
		s: s, r: s.router, ep: ep, lfd: lfd, wakeR: p[0], wakeW: p[1],
		idle:        map[any][]*loopUp{},
		maxIn:       fastHeadMax + int(s.maxBody),
		timeout:     s.router.Timeout(),
		maxBuffered: s.router.MaxBuffered(),
	}
	err = errors.Join(
		syscall.SetNonblock(lfd, true),
		syscall.SetNonblock(ep, true),
		syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, lfd, &syscall.EpollEvent{Events: syscall.EPOLLIN | epollExclusive, Fd: int32(lfd)}),
		syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, p[0], &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(p[0])}))
	if err != nil {
		l.closeFDs()
		return nil, err
	}
	// Non-blocking, the descriptor goes on the runtime's poller.
	l.epf = os.NewFile(uintptr(ep), "epoll")
	if l.epRC, err = l.epf.SyscallConn(); err != nil {
		l.closeFDs()
		return nil, err
	}
	l.evs = make([]syscall.EpollEvent, 128)
	l.poll = func(uintptr) bool {
		l.polled, l.pollErr = pollNow(l.ep, l.evs)
		return l.polled != 0 || l.pollErr != nil
	}
	l.stopTick = make(chan struct{})
	go l.tick()
	return l, nil
}

// tick wakes the loop every loopScanEvery, for its deadlines.
func (l *evLoop) tick() {
	t := time.NewTicker(loopScanEvery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			l.wakeUp()
		case <-l.stopTick:
			return
		}
	}
}

// wakeUp makes the loop look at the Server's state (Shutdown, Close).
func (l *evLoop) wakeUp() { _, _ = syscall.Write(l.wakeW, []byte{1}) }

func (l *evLoop) closeFDs() {
	if l.stopTick != nil {
		close(l.stopTick)
	}
	if l.epf != nil {
		_ = l.epf.Close()
	} else {
		_ = syscall.Close(l.ep)
	}
	_ = syscall.Close(l.wakeR)
	_ = syscall.Close(l.wakeW)
}

func (l *evLoop) run(listening *sync.WaitGroup) {
	l.lnDone = sync.OnceFunc(listening.Done)
	defer func() {
		l.inboxMu.Lock()
		l.stopped = true
		for _, fd := range l.inbox {
			_ = syscall.Close(fd)
		}
		l.inbox = nil
		l.inboxMu.Unlock()
		l.closeListener()
		l.closeFDs()
		l.s.connsWG.Done()
	}()
	for {
		if l.s.inShutdown.Load() && l.shutdown() {
			return
		}
		// The loop never blocks in a system call: with every P's thread
		// in epoll_wait, the runtime's monitor would take the Ps back and
		// poll every 20 µs (15 % of the CPU, measured). When no event is
		// ready the goroutine waits on the runtime's poller instead, for
		// the loop's epoll descriptor to become readable.
		if rerr := l.epRC.Read(l.poll); rerr != nil {
			l.pollErr = rerr
		}
		n, err := l.polled, l.pollErr
		if err != nil && err != syscall.EINTR {
			l.s.logger.Error("h1: event loop: epoll_wait failed; closing its connections", "err", err)
			l.closeAll()
			return
		}
		l.now = time.Now()
		for _, ev := range l.evs[:max(n, 0)] {
			l.dispatch(int(ev.Fd), ev.Events)
		}
		if !l.now.Before(l.nextScan) {
			l.scan()
			l.nextScan = l.now.Add(loopScanEvery)
		}
	}
}

// dispatch handles one event. The events only say what to try: what the
// reads and writes find decides (a descriptor closed and reused within one
// batch may get another's event).
func (l *evLoop) dispatch(fd int, ev uint32) {
	defer func() {
		if v := recover(); v != nil {
			l.s.logger.Error("h1: event loop: panic; connection closed", "panic", v)
			if c := l.client(fd); c != nil {
				l.abort(c, ClientGone, fmt.Errorf("panic: %v", v))
			} else if u := l.up(fd); u != nil {
				if u.c != nil {
					l.abort(u.c, ClientGone, fmt.Errorf("panic: %v", v))
				} else {
					l.closeUp(u)
				}
			}
		}
	}()
	switch {
	case fd == l.lfd:
		l.accept()
	case fd == l.wakeR:
		var b [64]byte
		for {
			if n, _ := syscall.Read(l.wakeR, b[:]); n < len(b) {
				break
			}
		}
		l.takeInbox()
	default:
		if c := l.client(fd); c != nil {
			l.onClient(c, ev)
		} else if u := l.up(fd); u != nil {
			c := u.c
			l.onUp(u, ev)
			if c != nil {
				l.next(c) // the answer is out: the next request, if any
			}
		}
	}
}

func (l *evLoop) client(fd int) *loopConn {
	if fd < len(l.clients) {
		return l.clients[fd]
	}
	return nil
}

func (l *evLoop) up(fd int) *loopUp {
	if fd < len(l.ups) {
		return l.ups[fd]
	}
	return nil
}

func setAt[T any](s *[]*T, fd int, v *T) {
	if fd >= len(*s) {
		*s = append(*s, make([]*T, fd+1-len(*s)+len(*s)/2)...)
	}
	(*s)[fd] = v
}

func (l *evLoop) accept() {
	if l.lfd < 0 || l.now.Before(l.acceptPausedUntil) {
		return
	}
	for range 64 {
		fd, _, err := syscall.Accept4(l.lfd, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
		switch err {
		case nil:
		case syscall.EAGAIN, syscall.ECONNABORTED, syscall.EINTR:
			return
		default:
			// Out of descriptors and the like: leave the listener alone for
			// a while, as net/http does, instead of spinning on it.
			_ = syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, l.lfd, nil)
			l.acceptPausedUntil = l.now.Add(loopScanEvery)
			return
		}
		_ = syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
		// The loop that woke is not always the least busy: the new
		// connection goes to the loop with the fewest, so that no loop
		// holds more than its share (a loop with a third more clients
		// than the other showed in the tail latency).
		if to := l.leastBusy(); to != l {
			to.give(fd)
			continue
		}
		l.adopt(fd)
	}
}

// adopt serves the new client connection fd.
func (l *evLoop) adopt(fd int) {
	c := &loopConn{fd: fd, first: true, deadline: l.now.Add(l.s.readHeaderTimeout)}
	if err := syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: connEvents, Fd: int32(fd)}); err != nil {
		_ = syscall.Close(fd)
		return
	}
	setAt(&l.clients, fd, c)
	l.nclients.Add(1)
}

// leastBusy returns the loop with the fewest clients, l unless another has
// at least two fewer.
func (l *evLoop) leastBusy() *evLoop {
	best, fewest := l, l.nclients.Load()-1
	for _, o := range l.peers {
		if n := o.nclients.Load(); n < fewest {
			best, fewest = o, n
		}
	}
	return best
}

// give hands the accepted connection fd to l, from another loop.
func (l *evLoop) give(fd int) {
	l.inboxMu.Lock()
	if l.stopped {
		l.inboxMu.Unlock()
		_ = syscall.Close(fd)
		return
	}
	l.inbox = append(l.inbox, fd)
	l.nclients.Add(1) // counted now, so that the next accept sees it
	l.inboxMu.Unlock()
	l.wakeUp()
}

// takeInbox adopts the connections other loops gave l.
func (l *evLoop) takeInbox() {
	l.inboxMu.Lock()
	fds := l.inbox
	l.inbox = nil
	l.inboxMu.Unlock()
	for _, fd := range fds {
		l.nclients.Add(-1)
		if l.s.inShutdown.Load() {
			_ = syscall.Close(fd)
			continue
		}
		l.adopt(fd)
	}
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
	for {
		if len(c.in) >= l.maxIn {
			c.readPending = true
			return true
		}
		c.readPending = false
		if cap(c.in)-len(c.in) < loopReadChunk {
			c.in = l.grow(c.in, len(c.in)+loopReadChunk)
		}
		space := c.in[len(c.in):cap(c.in)]
		n, err := rawRead(c.fd, space)
		switch {
		case n > 0:
			c.in = c.in[:len(c.in)+n]
			if n < len(space) && !drain {
				return true // a short read: nothing more is there now
			}
			continue
		case err == syscall.EAGAIN:
			return true
		case err == syscall.EINTR:
			continue
		}
		// The client closed its side (or the connection failed): a request
		// in flight is cut short; a whole one still buffered is answered.
		c.eof = true
		if c.busy {
			l.abort(c, ClientGone, errors.New("the client closed the connection"))
			return false
		}
		return true
	}
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
		// Room for the whole body at once, and a read's worth after it.
		c.in = l.grow(c.in, total+loopReadChunk)
		if len(c.in) < total {
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
	rerr, _ := l.readMore(u, drain, l.maxBuffered+answerHeadMax)
	end := bytes.Index(u.in, []byte("\r\n\r\n"))
	if end < 0 {
		switch {
		case rerr != nil:
			l.upFailed(u, rerr)
		case len(u.in) > answerHeadMax:
			l.fallback(u.c)
		}
		return
	}
	// The head's text is read in place: the headers are copied into the
	// client's answer before u.in changes (and u.hdr is not read again
	// until the next answer's head replaces it).
	code, hdr, cl, chunked, ok := parseAnswerHead(&u.hdr, unsafe.String(&u.in[0], end+2))
	if !ok {
		// An answer of another shape (a 1xx first, no framing): the
		// goroutine path does it all again.
		l.fallback(u.c)
		return
	}
	body := u.in[end+4:]
	if cl > l.maxBuffered {
		l.startStream(u, code, hdr, cl, body, rerr)
		return
	}
	if chunked {
		taken, _, done, ok := scanChunked(body, l.maxBuffered)
		over := int64(len(u.in)) > l.maxBuffered+answerHeadMax
		if !ok {
			// Over MaxBuffered if well framed, else malformed.
			_, _, _, framed := scanChunked(body, math.MaxInt64)
			over, ok = framed, framed
		}
		switch {
		case !ok:
			// Malformed: the goroutine path does it again, and tells.
			l.fallback(u.c)
		case over && !done:
			l.tooLarge(u)
		case !done && rerr != nil:
			l.upFailed(u, fmt.Errorf("reading the answer: %w", rerr))
		case done:
			l.chunkBuf = appendChunked(l.chunkBuf[:0], body[:taken])
			l.answer(u, code, hdr, l.chunkBuf, len(body) == taken && rerr == nil)
			if cap(l.chunkBuf) > keepBufAbove {
				l.chunkBuf = nil
			}
		}
		return
	}
	if int64(len(body)) < cl {
		if rerr != nil {
			l.upFailed(u, fmt.Errorf("reading the answer: %w", rerr))
		}
		return
	}
	l.answer(u, code, hdr, body[:cl], int64(len(body)) == cl && rerr == nil)
}

var errEOF = errors.New("EOF")

// readMore reads from u into u.in until a short read (unless drain: see
// hangup), until nothing is left, or until u.in holds limit bytes (more:
// bytes may be left). rerr is the error that ended the connection (errEOF
// for its end).
func (l *evLoop) readMore(u *loopUp, drain bool, limit int64) (rerr error, more bool) {
	for {
		if cap(u.in)-len(u.in) < loopReadChunk {
			u.in = l.grow(u.in, len(u.in)+loopReadChunk)
		}
		space := u.in[len(u.in):cap(u.in)]
		n, err := rawRead(u.fd, space)
		switch {
		case n > 0:
			u.in = u.in[:len(u.in)+n]
			if int64(len(u.in)) >= limit {
				return nil, true
			}
			if n < len(space) && !drain {
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
func (l *evLoop) startStream(u *loopUp, code int, hdr http.Header, cl int64, body []byte, rerr error) {
	c := u.c
	take := min(int64(len(body)), cl)
	c.out = appendHead(c.out[:0], code, hdr, cl, body[:min(len(body), 512)], c.closing)
	c.out = append(c.out, body[:take]...)
	c.off = 0
	u.left, u.code, u.extra = cl-take, code, int64(len(body)) > take
	u.in = u.in[:0]
	if u.left == 0 {
		l.streamDone(u, rerr == nil)
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
		rerr, more := l.readMore(u, drain || u.hup, streamChunk)
		if len(u.in) > 0 {
			take := min(int64(len(u.in)), u.left)
			c.out, c.off = append(c.out[:0], u.in[:take]...), 0
			u.left -= take
			u.extra = u.extra || int64(len(u.in)) > take
			u.in = u.in[:0]
		}
		switch {
		case u.left == 0:
			l.streamDone(u, rerr == nil)
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

// streamDone ends a streamed answer whose body is all in c.out.
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

// maxLent bounds the bytes of large buffers a loop keeps to lend again:
// enough for every request in flight on a loaded loop to have one (eight
// were too few: 32 requests of 200 KB in flight allocated the rest, and the
// collector's work showed in the tail latency).
const maxLent = 16 << 20

// grow returns b with room for need bytes (its contents kept). A large
// buffer comes from those the loop keeps: allocating one (and the runtime
// zeroing it) for each 200 KB request was half the loop's CPU.
func (l *evLoop) grow(b []byte, need int) []byte {
	if cap(b) >= need {
		return b
	}
	need = max(need, 2*cap(b))
	var nb []byte
	if need > keepBufAbove {
		for i, lb := range l.lent {
			if cap(lb) >= need {
				nb = lb[:0]
				l.lent[i] = l.lent[len(l.lent)-1]
				l.lent[len(l.lent)-1] = nil
				l.lent = l.lent[:len(l.lent)-1]
				l.lentBytes -= cap(lb)
				break
			}
		}
	}
	if nb == nil {
		nb = make([]byte, 0, need)
	}
	// b is not given back: a request being written upstream may still
	// point into it. done and release give back what nothing points to.
	return append(nb, b...)
}

// giveBack keeps the large buffer b for grow, within maxLent bytes.
func (l *evLoop) giveBack(b []byte) {
	if cap(b) > keepBufAbove && l.lentBytes+cap(b) <= maxLent {
		l.lent = append(l.lent, b[:0])
		l.lentBytes += cap(b)
	}
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

// release ends u's part in a request: it goes idle when keep, else it
// closes. A connection whose request is not all written (the upstream
// answered early) is not kept: its next bytes would end that request.
func (l *evLoop) release(u *loopUp, keep bool) {
	keep = keep && u.sent()
	u.c = nil
	u.in, u.out, u.body, u.off = u.in[:0], u.out[:0], nil, 0
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
			l.closeClient(c)
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
	l.forget(c)
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

// forget takes c off the loop without closing its descriptor.
func (l *evLoop) forget(c *loopConn) {
	_ = syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, c.fd, nil)
	l.clients[c.fd] = nil
	l.nclients.Add(-1)
}

func (l *evLoop) closeClient(c *loopConn) {
	if c.up != nil {
		l.closeUp(c.up)
		c.up = nil
	}
	l.forget(c)
	_ = syscall.Close(c.fd)
}

func (l *evLoop) closeUp(u *loopUp) {
	l.ups[u.fd] = nil
	_ = syscall.Close(u.fd) // also takes it out of the epoll set
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

// scan acts on passed deadlines: attempts that took too long, clients that
// kept the loop waiting, upstream connections idle too long.
func (l *evLoop) scan() {
	now := l.now
	if !l.acceptPausedUntil.IsZero() && !now.Before(l.acceptPausedUntil) && l.lfd >= 0 {
		l.acceptPausedUntil = time.Time{}
		_ = syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_ADD, l.lfd, &syscall.EpollEvent{Events: syscall.EPOLLIN | epollExclusive, Fd: int32(l.lfd)})
	}
	for _, c := range l.clients {
		switch {
		case c == nil:
		case c.busy && c.up != nil && c.up.connecting && now.After(c.dialDeadline) && now.Before(c.attDeadline):
			l.connFailed(c, &net.OpError{Op: "dial", Net: "tcp", Err: errDialTimeout})
			l.next(c)
		case c.busy && c.up != nil && c.up.left > 0 && (now.After(c.attDeadline) || !c.deadline.IsZero() && now.After(c.deadline)):
			// A streamed answer past the attempt's time, or to a client
			// that stopped taking it for ReadTimeout: cut.
			res := TimedOut
			if now.Before(c.attDeadline) {
				res = ClientGone
			}
			l.streamCut(c.up, res, errors.New("deadline passed"))
		case c.busy && now.After(c.attDeadline):
			if c.up != nil {
				l.closeUp(c.up)
			}
			c.up, c.busy = nil, false
			err := errors.New("the attempt's deadline passed")
			l.r.Failed(c.rt, TimedOut, err)
			l.fail(c, c.rt, TimedOut)
			l.next(c)
		case !c.busy && !c.deadline.IsZero() && now.After(c.deadline):
			l.closeClient(c) // unanswered, as net/http closes a slow client
		}
	}
	for key, list := range l.idle {
		kept := list[:0]
		for _, u := range list {
			if now.Sub(u.idleSince) > upIdleTimeout {
				l.closeUp(u)
			} else {
				kept = append(kept, u)
			}
		}
		clear(list[len(kept):])
		if len(kept) == 0 {
			delete(l.idle, key)
		} else {
			l.idle[key] = kept
		}
	}
}

var errDialTimeout = errors.New("connect timed out")

// shutdown acts on Shutdown or Close: the listener closes; after Close
// every connection closes at once, after Shutdown idle ones close (or wait
// for their lame-duck request) and busy ones after their answer. It
// reports whether the loop is done.
func (l *evLoop) shutdown() bool {
	if !l.shutdownSeen {
		l.shutdownSeen = true
		l.closeListener()
		for _, c := range l.clients {
			switch {
			case c == nil:
			case c.busy:
				c.closing = true // its answer says "Connection: close"
			case c.off == len(c.out) && len(c.in) == 0:
				l.waitRequest(c)
			}
		}
	}
	if l.s.ctx.Err() != nil {
		l.closeAll()
	}
	if l.nclients.Load() > 0 {
		return false
	}
	for _, list := range l.idle {
		for _, u := range list {
			l.closeUp(u)
		}
	}
	clear(l.idle)
	return true
}

func (l *evLoop) closeListener() {
	if l.lfd >= 0 {
		_ = syscall.Close(l.lfd)
		l.lfd = -1
		l.lnDone()
	}
}

// closeAll closes every client connection, ending attempts in flight.
func (l *evLoop) closeAll() {
	for _, c := range l.clients {
		if c != nil {
			l.abort(c, ClientGone, errors.New("server closed"))
		}
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
