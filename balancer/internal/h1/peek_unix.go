//go:build unix

package h1

import (
	"errors"
	"net"
	"syscall"
)

// IdlePeek looks, without blocking and without consuming anything, at what
// is waiting on an idle connection to an upstream. Init sets it up. It is set up once per
// connection, so that a look costs one system call and no allocation.
type IdlePeek struct {
	rc  syscall.RawConn
	fn  func(fd uintptr) // peek, as a method value made once
	buf [1]byte
	n   int
	err error
}

func (p *IdlePeek) Init(nc net.Conn) {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return
	}
	p.rc, p.fn = rc, p.peek
}

func (p *IdlePeek) peek(fd uintptr) {
	p.n, _, p.err = syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
}

// Unsolicited reports whether the idle connection must not carry another
// request: the upstream sent bytes no request asked for (what follows an
// answer would be taken for the next request's answer), or closed it.
// http.Transport's idle read loop finds the same.
func (p *IdlePeek) Unsolicited() bool {
	if p.rc == nil {
		return false
	}
	// Control, not Read: it neither waits for the connection to be
	// readable nor for a read in progress (net/http's read loop has one
	// pending on every idle connection).
	if err := p.rc.Control(p.fn); err != nil {
		return true
	}
	switch {
	case p.n > 0:
		return true // bytes waiting
	case p.err == nil:
		return true // end of stream: the backend closed it
	case errors.Is(p.err, syscall.EAGAIN), errors.Is(p.err, syscall.EWOULDBLOCK), errors.Is(p.err, syscall.EINTR):
		return false // nothing waiting: in step
	}
	return true
}
