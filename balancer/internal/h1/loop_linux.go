//go:build linux

package h1

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
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
			if s.inShutdown.Load() {
				// A Close or Shutdown closed ln under us.
				return true, http.ErrServerClosed
			}
			return true, fmt.Errorf("h1: event loop: %w", derr)
		}
		loops = append(loops, l)
	}
	set := &loopSet{nudge: make(chan struct{}, 1)}
	set.live.Store(int32(len(loops)))
	for _, l := range loops {
		l.set = set
		for _, o := range loops {
			if o != l {
				l.peers = append(l.peers, o)
			}
		}
	}
	var listening sync.WaitGroup
	s.mu.Lock()
	if s.inShutdown.Load() {
		// Shutdown came while the loops were made: none starts (Shutdown
		// may be waiting on connsWG already).
		s.mu.Unlock()
		for _, l := range loops {
			_ = syscall.Close(l.lfd)
			l.closeFDs()
		}
		return true, http.ErrServerClosed
	}
	go set.nudged()
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

// loopSet is what a Server's loops share: see nudge.
type loopSet struct {
	nudge chan struct{}
	live  atomic.Int32 // loops not done; the last closes nudge
}

// nudged receives the loops' nudges: each one readies this goroutine, and
// the runtime then wakes an idle thread, which polls the network.
func (s *loopSet) nudged() {
	for range s.nudge {
	}
}

// evLoop is one event loop: its clients and their upstream connections.
type evLoop struct {
	s     *Server
	r     Router
	ep    int
	lfd   int // the listener; -1 once closed
	wakeR int // the read end of the pipe wakeUp writes to
	// wakeW is its write end, -1 once closed (under wakeMu: the Server
	// and the ticker wake a loop from other goroutines).
	wakeMu sync.Mutex
	wakeW  int
	lnDone func()
	// clients and ups are the loop's connections by descriptor.
	clients  []*loopConn
	ups      []*loopUp
	nclients atomic.Int32 // read by the other loops (leastBusy)
	// peers are the Server's other loops; inbox the connections they
	// accepted for this one (under inboxMu, with stopped: the loop is done).
	peers []*evLoop
	set   *loopSet
	// parked: the loop waits on the runtime's poller (read by its peers);
	// waited: it did since run last looked.
	parked  atomic.Bool
	waited  bool
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
	// answerMax bounds what is read of an answer kept whole: its head,
	// MaxBuffered of body and a chunk's size line.
	answerMax    int
	shutdownSeen bool
	w            loopWriter
	// lent are large buffers kept for grow.
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
	l.answerMax = int(l.maxBuffered) + answerHeadMax + maxChunkLine
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
		if l.polled != 0 || l.pollErr != nil {
			return true
		}
		l.parked.Store(true)
		l.waited = true
		return false
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
func (l *evLoop) wakeUp() {
	l.wakeMu.Lock()
	defer l.wakeMu.Unlock()
	if l.wakeW >= 0 {
		_, _ = syscall.Write(l.wakeW, []byte{1})
	}
}

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
	l.wakeMu.Lock()
	_ = syscall.Close(l.wakeW)
	l.wakeW = -1
	l.wakeMu.Unlock()
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
		if l.set != nil && l.set.live.Add(-1) == 0 {
			close(l.set.nudge)
		}
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
		if l.waited {
			l.waited = false
			l.parked.Store(false)
			l.nudge()
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

// nudge makes sure a thread polls the network for the loops that wait,
// after this one came back from a wait. The thread that polled took this
// loop and, the loops not parking while they have work, no other may poll
// for a long time: the runtime's monitor polls after 10 ms without. A peer
// whose events came then waited that long (the p99 of issue 23: 0.73× with
// a poll every 200 µs, same rounds). Readying a goroutine wakes an idle
// thread, which polls before it sleeps.
func (l *evLoop) nudge() {
	for _, p := range l.peers {
		if p.parked.Load() {
			select {
			case l.set.nudge <- struct{}{}:
			default: // one is pending
			}
			return
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

// scan acts on passed deadlines: attempts that took too long, clients that
// kept the loop waiting, upstream connections idle too long or to an
// upstream the Router no longer holds.
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
		held := l.r.Held(key)
		kept := list[:0]
		for _, u := range list {
			if !held || now.Sub(u.idleSince) > upIdleTimeout {
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
		// Out of the set first: the other loops' descriptors of the same
		// listener keep it open, and with it this loop's registration.
		_ = syscall.EpollCtl(l.ep, syscall.EPOLL_CTL_DEL, l.lfd, nil)
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
