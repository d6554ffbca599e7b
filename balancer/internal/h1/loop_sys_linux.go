//go:build linux

package h1

import (
	"syscall"
	"unsafe"
)

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
