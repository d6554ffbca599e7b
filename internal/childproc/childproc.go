package childproc

import (
	"os/exec"
	"runtime"
	"sync"
)

// Proc is a started child process.
type Proc struct {
	cmd     *exec.Cmd
	exited  chan struct{}
	release chan struct{}
	once    sync.Once
	err     error // cmd.Wait's error, set before exited is closed
}

// Start starts cmd with SIGKILL as its parent-death signal (keeping the
// SysProcAttr fields cmd already has) and waits for it in the background;
// after is called, if not nil, once it has exited (to close its log file,
// say).
func Start(cmd *exec.Cmd, after func()) (*Proc, error) {
	setParentDeath(cmd)
	p := &Proc{cmd: cmd, exited: make(chan struct{}), release: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		err := cmd.Start()
		started <- err
		if err != nil {
			return
		}
		p.err = cmd.Wait()
		if after != nil {
			after()
		}
		close(p.exited)
		<-p.release
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

// Exited is closed once the process has exited.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Err is the process's exit error; call it after Exited.
func (p *Proc) Err() error { return p.err }

// Release lets the thread that started the process end. Call it after
// the process has exited (earlier, its end would kill the process); later
// calls do nothing.
func (p *Proc) Release() { p.once.Do(func() { close(p.release) }) }
