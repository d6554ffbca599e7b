package process

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/internal/hub"
)

var (
	_ machines.Provider = (*Provider)(nil)
	_ machines.Watcher  = (*Provider)(nil)
	_ io.Closer         = (*Provider)(nil)
)

// LabelPID is the label holding a machine's process ID, which is also its
// process group ID.
const LabelPID = machines.LabelPrefix + "pid"

// DefaultPortAttempts is how many free ports Create tries when the chosen
// one is taken between choosing it and the service binding it.
const DefaultPortAttempts = 3

// tailSize is how much of a machine's output is kept for error messages.
const tailSize = 4 << 10

// Options configure a Provider. The zero value is ready to use.
type Options struct {
	// Name is the provider label of the machines; "" means "process".
	Name string
	// StopTimeout is how long Remove waits after SIGTERM before SIGKILL;
	// 0 means machines.DefaultStopTimeout.
	StopTimeout time.Duration
	// Output receives the machines' stdout and stderr; nil discards them.
	// The last 4 KiB of each machine's output is kept either way and quoted
	// in start and exit errors.
	Output io.Writer
	// Dir is the machines' working directory; "" means the caller's.
	Dir string
	// Env is the machines' base environment; nil means os.Environ().
	// Spec.Env is added to it.
	Env []string
	// PortAttempts bounds the retries on a port taken by someone else
	// between the choice and the bind; 0 means DefaultPortAttempts.
	PortAttempts int
	// ParentDeathSignal, when set, is sent by the kernel to every
	// machine's process the moment the process that runs this Provider
	// dies, even by SIGKILL (Linux's PR_SET_PDEATHSIG, set before exec; New
	// fails elsewhere). 0, the default, lets machines outlive a manager
	// that is killed without Close. Each machine is then started from an OS
	// thread of its own that lives as long as the machine: the kernel
	// sends the signal when the thread that forked the child ends, and the
	// Go runtime may end other threads at any time.
	ParentDeathSignal syscall.Signal
}

// Provider runs machines as local processes listening on loopback ports.
// It is safe for concurrent use; Close stops every machine it started.
type Provider struct {
	opts   Options
	events hub.Hub[machines.Event]
	wg     sync.WaitGroup // one waiter goroutine per process

	// mu guards machines, seq and closed.
	mu       sync.Mutex
	machines map[string]*proc
	seq      int
	closed   bool
}

// proc is one started process; its waiter goroutine owns cmd.Wait.
type proc struct {
	m        machines.Machine // immutable after start
	cmd      *exec.Cmd
	tail     *tail
	removing atomic.Bool
	done     chan struct{} // closed when cmd.Wait has returned
	exitErr  error         // set before done is closed
}

// New returns a Provider, or an error for invalid options.
func New(opts Options) (*Provider, error) {
	if opts.StopTimeout < 0 || opts.PortAttempts < 0 {
		return nil, errors.New("process: negative StopTimeout or PortAttempts")
	}
	if opts.ParentDeathSignal != 0 && !parentDeathSupported {
		return nil, errors.New("process: ParentDeathSignal is not supported on this system")
	}
	opts.Name = cmp.Or(opts.Name, "process")
	opts.StopTimeout = cmp.Or(opts.StopTimeout, machines.DefaultStopTimeout)
	opts.PortAttempts = cmp.Or(opts.PortAttempts, DefaultPortAttempts)
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	return &Provider{opts: opts, machines: make(map[string]*proc)}, nil
}

// Create starts spec.Command with spec's arguments on a free loopback port
// (or spec.Port when set) in a process group of its own, and returns once
// it answers spec.HealthPath (or, without one, accepts TCP connections).
func (p *Provider) Create(ctx context.Context, spec machines.Spec) (machines.Machine, error) {
	if err := spec.Validate(); err != nil {
		return machines.Machine{}, err
	}
	if spec.Command == "" {
		return machines.Machine{}, fmt.Errorf("%w: command is empty", machines.ErrInvalidSpec)
	}
	path, err := exec.LookPath(spec.Command)
	if err != nil {
		return machines.Machine{}, fmt.Errorf("%w: %v", machines.ErrInvalidSpec, err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, spec.Timeout(), machines.ErrStartTimeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		m, retry, err := p.start(ctx, path, spec)
		if err == nil || !retry || attempt >= p.opts.PortAttempts {
			return m, err
		}
	}
}

// start makes one attempt; retry says the port was taken.
func (p *Provider) start(ctx context.Context, path string, spec machines.Spec) (_ machines.Machine, retry bool, _ error) {
	port := spec.Port
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return machines.Machine{}, false, err
		}
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	args, env := spec.Expand(addr)

	t := &tail{}
	cmd := exec.Command(path, args...)
	cmd.Dir = p.opts.Dir
	cmd.Env = slices.Clone(p.opts.Env)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	var out io.Writer = t
	if p.opts.Output != nil {
		out = io.MultiWriter(t, p.opts.Output)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Second // a grandchild holding the pipes must not hang Wait
	setGroup(cmd)

	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return machines.Machine{}, false, machines.ErrClosed
	}
	waiter, err := p.launch(cmd)
	if err != nil {
		p.mu.Unlock()
		return machines.Machine{}, false, fmt.Errorf("process: starting %s: %w", spec.Command, err)
	}
	p.seq++
	pr := &proc{
		m: machines.Machine{
			ID:        fmt.Sprintf("%s-%d", p.opts.Name, p.seq),
			Address:   addr,
			Language:  spec.Language,
			Version:   spec.Version,
			Labels:    spec.MachineLabels(p.opts.Name, port),
			CreatedAt: time.Now(),
			State:     machines.StateRunning,
		},
		cmd:  cmd,
		tail: t,
		done: make(chan struct{}),
	}
	pr.m.Labels[LabelPID] = strconv.Itoa(cmd.Process.Pid)
	p.machines[pr.m.ID] = pr
	p.wg.Add(1)
	p.mu.Unlock()
	waiter <- pr

	err = machines.WaitReady(ctx, addr, machines.WaitOptions{
		Path: spec.HealthPath,
		Alive: func(context.Context) error {
			select {
			case <-pr.done:
				return fmt.Errorf("%w: %v", machines.ErrExited, pr.exitErr)
			default:
				return nil
			}
		},
	})
	if err == nil {
		return clone(pr.m), false, nil
	}
	exited := errors.Is(err, machines.ErrExited)
	p.forget(pr.m.ID)
	p.stop(pr) // bounded by StopTimeout, on purpose not by the expired ctx
	retry = exited && spec.Port == 0 && strings.Contains(t.String(), "address already in use")
	return machines.Machine{}, retry, fmt.Errorf("process: %s %s on %s: %w%s", spec.Language, spec.Version, addr, err, t.quote())
}

// launch starts cmd and returns where to hand its proc for waiting: a
// goroutine that runs p.wait. With a parent-death signal, that goroutine
// also started cmd, from an OS thread locked to it until the process has
// exited (the goroutine ends without unlocking, so the thread ends after
// the process, never before).
func (p *Provider) launch(cmd *exec.Cmd) (chan<- *proc, error) {
	waiter := make(chan *proc, 1)
	if p.opts.ParentDeathSignal == 0 {
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		go func() { p.wait(<-waiter) }()
		return waiter, nil
	}
	setParentDeath(cmd, p.opts.ParentDeathSignal)
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: see above
		err := cmd.Start()
		started <- err
		if err == nil {
			p.wait(<-waiter)
		}
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return waiter, nil
}

// wait owns cmd.Wait; it reports an exit that Remove did not cause.
func (p *Provider) wait(pr *proc) {
	defer p.wg.Done()
	err := pr.cmd.Wait()
	killGroup(pr.cmd) // stragglers of the group die with their leader
	if err == nil {
		err = errors.New("exited with status 0")
	}
	pr.exitErr = err
	close(pr.done)
	if pr.removing.Load() {
		return
	}
	m := clone(pr.m)
	m.State = machines.StateExited
	p.events.Publish(machines.Event{
		Machine:  m,
		ExitCode: pr.cmd.ProcessState.ExitCode(),
		Err:      fmt.Errorf("process %d: %w%s", pr.cmd.Process.Pid, err, pr.tail.quote()),
		Time:     time.Now(),
	})
}

// Remove sends SIGTERM to the machine's process group, SIGKILL after the
// stop timeout (or at once when ctx is done), and returns once the process
// has been reaped.
func (p *Provider) Remove(ctx context.Context, id string) error {
	pr := p.forget(id)
	if pr == nil {
		return fmt.Errorf("%w: %s", machines.ErrNotFound, id)
	}
	pr.removing.Store(true)
	terminate(pr.cmd)
	t := time.NewTimer(p.opts.StopTimeout)
	defer t.Stop()
	select {
	case <-pr.done:
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	killGroup(pr.cmd)
	<-pr.done
	return nil
}

// stop removes pr without a ctx, for failed starts and Close.
func (p *Provider) stop(pr *proc) {
	pr.removing.Store(true)
	terminate(pr.cmd)
	t := time.NewTimer(p.opts.StopTimeout)
	defer t.Stop()
	select {
	case <-pr.done:
		return
	case <-t.C:
	}
	killGroup(pr.cmd)
	<-pr.done
}

func (p *Provider) forget(id string) *proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.machines[id]
	delete(p.machines, id)
	return pr
}

// List returns the machines started by this value, running or exited,
// oldest first. A process provider keeps them in memory only: a new
// Provider does not see the processes of an old one.
func (p *Provider) List(ctx context.Context) ([]machines.Machine, error) {
	p.mu.Lock()
	out := make([]machines.Machine, 0, len(p.machines))
	for _, pr := range p.machines {
		m := clone(pr.m)
		select {
		case <-pr.done:
			m.State = machines.StateExited
		default:
		}
		out = append(out, m)
	}
	p.mu.Unlock()
	slices.SortFunc(out, func(a, b machines.Machine) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// Watch reports machines whose process exits without Remove.
func (p *Provider) Watch(ctx context.Context, fn func(machines.Event)) error {
	return p.events.Watch(ctx, fn)
}

// Close stops every machine (SIGTERM, SIGKILL after the stop timeout) and
// waits for them. Later calls of Create fail with machines.ErrClosed. It is
// idempotent.
func (p *Provider) Close() error {
	p.mu.Lock()
	p.closed = true
	all := slices.Collect(maps.Values(p.machines))
	clear(p.machines)
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, pr := range all {
		wg.Go(func() { p.stop(pr) })
	}
	wg.Wait()
	p.wg.Wait()
	return nil
}

// freePort asks the kernel for a free loopback port. Someone else may take
// it before the service binds it; Create retries then.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("process: choosing a port: %w", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	return port, ln.Close()
}

func clone(m machines.Machine) machines.Machine {
	m.Labels = maps.Clone(m.Labels)
	return m
}

// tail keeps the last tailSize bytes written to it.
type tail struct {
	// mu guards buf.
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, b...)
	if over := len(t.buf) - tailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// quote formats the tail for an error message; "" when there is no output.
func (t *tail) quote() string {
	s := strings.TrimSpace(t.String())
	if s == "" {
		return ""
	}
	var b bytes.Buffer
	b.WriteString("; output:\n")
	b.WriteString(s)
	return b.String()
}
