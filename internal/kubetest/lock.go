package kubetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrLocked is returned by Down when a live process holds the node.
var ErrLocked = errors.New("kubetest: the node is in use")

// nodeLock is an exclusive flock on a file in the cache directory: one node
// per machine (fixed kubelet ports, one bridge, the kubepods cgroups). The
// kernel releases it when its holder dies, however it dies; the file says
// who holds it, for the messages of those waiting.
type nodeLock struct{ f *os.File }

// lockNode takes the lock, waiting while another process holds it (a test
// package of another test binary: `go test ./...` runs packages in
// parallel). wait false makes a held lock an ErrLocked error instead.
func lockNode(ctx context.Context, path string, wait bool, logf func(string, ...any)) (*nodeLock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	// os.OpenFile sets O_CLOEXEC: the node's children must not inherit the
	// lock, or a shim surviving a crash would hold it forever.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	delay := 50 * time.Millisecond
	logged := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("kubetest: locking %s: %w", path, err)
		}
		holder, _ := os.ReadFile(path)
		who := strings.TrimSpace(string(holder))
		if !wait {
			f.Close()
			return nil, fmt.Errorf("%w: %s holds %s", ErrLocked, who, path)
		}
		if !logged && logf != nil {
			logf("kubetest: waiting for the node, held by %s", who)
			logged = true
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("kubetest: waiting for the node held by %s: %w", who, ctx.Err())
		case <-t.C:
		}
		delay = min(delay*2, time.Second)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt(fmt.Appendf(nil, "pid %d (%s)\n", os.Getpid(), strings.Join(os.Args, " ")), 0)
	}
	return &nodeLock{f: f}, nil
}

// unlock releases the lock (closing the file does).
func (l *nodeLock) unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
