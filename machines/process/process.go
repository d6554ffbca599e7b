package process

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fleetkit/fleetkit/internal/atomicfile"
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

// adoptedPoll is how often an adopted machine (not a child of this
// process, so not waited for) is looked at to notice its exit.
const adoptedPoll = 100 * time.Millisecond

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
	// Go runtime may end other threads at any time. New refuses it with
	// KeepOnClose.
	ParentDeathSignal syscall.Signal
	// StateFile, when set, records every machine — its ID, address,
	// labels, process ID and the process's start time — in this JSON file,
	// written atomically as soon as a machine's process starts and again
	// whenever one goes. A new Provider with the same StateFile adopts the
	// recorded machines that still run (same PID and start time, so a
	// reused PID is never taken for a machine): List returns them, Remove
	// stops them, Watch reports their exits (noticed within 100 ms). Only
	// one Provider at a time may use a StateFile (New fails while another
	// holds StateFile+".lock"). Machines then run in a session of their
	// own, apart from the manager's terminal, and their output goes to
	// files in StateFile+".logs" (Output is not used): a pipe to the
	// manager would break when it exits, and a service writing to a
	// broken pipe dies. "" (the default) keeps machines in memory only.
	StateFile string
	// KeepOnClose leaves the machines running when Close is called, so
	// that stopping the manager is not stopping the fleet; with StateFile
	// the next Provider adopts them. false (the default) stops every
	// machine on Close.
	KeepOnClose bool
}

// Provider runs machines as local processes listening on loopback ports.
// It is safe for concurrent use; Close stops every machine it started.
type Provider struct {
	opts   Options
	events hub.Hub[machines.Event]
	wg     sync.WaitGroup // one waiter goroutine per process
	// lock holds StateFile+".lock" while the Provider is open.
	lock *os.File
	// abandon is closed by Close with KeepOnClose: the watchers of
	// adopted machines stop.
	abandon chan struct{}
	// saveMu serializes writes of the state file.
	saveMu sync.Mutex

	// mu guards machines, starting, seq and closed.
	mu       sync.Mutex
	machines map[string]*proc
	// starting are the machines whose process is being started: recorded
	// (without a PID) before the fork, so that a manager killed before it
	// records the PID leaves no process its successor cannot find.
	starting map[string]record
	seq      int
	closed   bool
}

// proc is one machine's process. For a child, its waiter goroutine owns
// cmd.Wait; an adopted one (started by an earlier Provider) has no cmd and
// is watched by polling.
type proc struct {
	m        machines.Machine // immutable after start
	pid      int
	start    uint64    // the process's start time, 0 when unknown
	cmd      *exec.Cmd // nil when adopted
	tail     *tail     // the output's end; nil when it goes to logPath
	logPath  string
	removing atomic.Bool
	done     chan struct{} // closed when the process has exited
	exitErr  error         // set before done is closed
	exitCode int           // set before done is closed; -1 when unknown
}

// quote returns the end of the machine's output for an error message.
func (pr *proc) quote() string {
	if pr.tail != nil {
		return pr.tail.quote()
	}
	f, err := os.Open(pr.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > tailSize {
		_, _ = f.Seek(-tailSize, io.SeekEnd)
	}
	t := &tail{}
	_, _ = io.Copy(t, f)
	return t.quote()
}

// New returns a Provider, or an error for invalid options.
func New(opts Options) (*Provider, error) {
	if opts.StopTimeout < 0 || opts.PortAttempts < 0 {
		return nil, errors.New("process: negative StopTimeout or PortAttempts")
	}
	if opts.ParentDeathSignal != 0 && !parentDeathSupported {
		return nil, errors.New("process: ParentDeathSignal is not supported on this system")
	}
	if opts.ParentDeathSignal != 0 && opts.KeepOnClose {
		return nil, errors.New("process: ParentDeathSignal and KeepOnClose exclude each other (machines would die with the manager)")
	}
	opts.Name = cmp.Or(opts.Name, "process")
	opts.StopTimeout = cmp.Or(opts.StopTimeout, machines.DefaultStopTimeout)
	opts.PortAttempts = cmp.Or(opts.PortAttempts, DefaultPortAttempts)
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	p := &Provider{opts: opts, machines: make(map[string]*proc), starting: map[string]record{}, abandon: make(chan struct{})}
	if opts.StateFile != "" {
		lock, err := lockFile(opts.StateFile + ".lock")
		if err != nil {
			return nil, fmt.Errorf("process: state file: %w", err)
		}
		p.lock = lock
		if err := p.adopt(); err != nil {
			_ = lock.Close()
			return nil, err
		}
	}
	return p, nil
}

// stateVersion is the format version of the state file.
const stateVersion = 1

// stateDoc is the JSON document of Options.StateFile.
type stateDoc struct {
	Version  int      `json:"version"`
	Seq      int      `json:"seq"`
	Machines []record `json:"machines"`
}

// record is one machine in the state file.
type record struct {
	ID        string            `json:"id"`
	PID       int               `json:"pid"`
	Start     uint64            `json:"start"`
	Address   string            `json:"address"`
	Labels    map[string]string `json:"labels"`
	CreatedAt time.Time         `json:"created_at"`
	Log       string            `json:"log,omitempty"`
}

// adopt reads the state file and takes over the recorded machines that
// still run.
func (p *Provider) adopt() error {
	b, err := os.ReadFile(p.opts.StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return p.save()
	}
	if err != nil {
		return fmt.Errorf("process: reading state file: %w", err)
	}
	var doc stateDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("process: state file %s: %w", p.opts.StateFile, err)
	}
	if doc.Version != stateVersion {
		return fmt.Errorf("process: state file %s has format version %d, want %d", p.opts.StateFile, doc.Version, stateVersion)
	}
	p.seq = doc.Seq
	for _, r := range doc.Machines {
		if r.PID == 0 {
			// Recorded before its fork: find the process, if it started,
			// by the marker in its environment.
			r.PID = findMarked(markerEnv + "=" + p.marker(r.ID))
			if r.PID == 0 {
				continue
			}
			r.Start, _ = startTime(r.PID)
		}
		st, alive := startTime(r.PID)
		if !alive || r.PID <= 0 || (r.Start != 0 && st != r.Start) {
			continue // gone (its PID may be another process's now)
		}
		pr := &proc{
			m: machines.Machine{ID: r.ID, Address: r.Address,
				Labels: maps.Clone(r.Labels), CreatedAt: r.CreatedAt, State: machines.StateRunning},
			pid: r.PID, start: r.Start, logPath: r.Log, done: make(chan struct{}),
		}
		p.machines[r.ID] = pr
		p.wg.Add(1)
		go p.watchAdopted(pr)
	}
	return p.save()
}

// markerEnv is the environment variable that marks a machine's process
// with its state file and ID.
const markerEnv = "FLEETKIT_MACHINE"

// marker is the value of markerEnv for machine id.
func (p *Provider) marker(id string) string { return p.opts.StateFile + "#" + id }

// watchAdopted notices the exit of a machine that is not this process's
// child.
func (p *Provider) watchAdopted(pr *proc) {
	defer p.wg.Done()
	t := time.NewTicker(adoptedPoll)
	defer t.Stop()
	for {
		select {
		case <-p.abandon:
			return
		case <-t.C:
		}
		if st, alive := startTime(pr.pid); alive && (pr.start == 0 || st == pr.start) {
			continue
		}
		pr.exitErr, pr.exitCode = errors.New("exited (a machine adopted from an earlier provider: no exit status)"), -1
		close(pr.done)
		p.reportExit(pr)
		return
	}
}

// save writes the state file, when there is one.
func (p *Provider) save() error {
	if p.opts.StateFile == "" {
		return nil
	}
	p.saveMu.Lock()
	defer p.saveMu.Unlock()
	p.mu.Lock()
	doc := stateDoc{Version: stateVersion, Seq: p.seq, Machines: slices.Collect(maps.Values(p.starting))}
	for _, pr := range p.machines {
		doc.Machines = append(doc.Machines, record{ID: pr.m.ID, PID: pr.pid, Start: pr.start, Address: pr.m.Address,
			Labels: pr.m.Labels, CreatedAt: pr.m.CreatedAt, Log: pr.logPath})
	}
	p.mu.Unlock()
	slices.SortFunc(doc.Machines, func(a, b record) int { return cmp.Compare(a.ID, b.ID) })
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("process: encoding state: %w", err)
	}
	if err := atomicfile.Write(p.opts.StateFile, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("process: writing state file: %w", err)
	}
	return nil
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
	cmd := exec.Command(path, args...)
	cmd.Dir = p.opts.Dir
	cmd.Env = slices.Clone(p.opts.Env)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	persist := p.opts.StateFile != ""
	setGroup(cmd, persist)

	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return machines.Machine{}, false, machines.ErrClosed
	}
	p.seq++
	pr := &proc{
		m: machines.Machine{
			ID:        fmt.Sprintf("%s-%d", p.opts.Name, p.seq),
			Address:   addr,
			Labels:    spec.MachineLabels(p.opts.Name, port),
			CreatedAt: time.Now(),
			State:     machines.StateRunning,
		},
		cmd:  cmd,
		done: make(chan struct{}),
	}
	var logFile *os.File
	if persist {
		cmd.Env = append(cmd.Env, markerEnv+"="+p.marker(pr.m.ID))
		// A file, not a pipe: the machine outlives this process.
		dir := p.opts.StateFile + ".logs"
		pr.logPath = filepath.Join(dir, pr.m.ID+".log")
		err := os.MkdirAll(dir, 0o755)
		if err == nil {
			logFile, err = os.OpenFile(pr.logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		}
		if err != nil {
			p.mu.Unlock()
			return machines.Machine{}, false, fmt.Errorf("process: machine log: %w", err)
		}
		cmd.Stdout, cmd.Stderr = logFile, logFile
		p.starting[pr.m.ID] = record{ID: pr.m.ID, Address: addr,
			Labels: maps.Clone(pr.m.Labels), CreatedAt: pr.m.CreatedAt, Log: pr.logPath}
		p.mu.Unlock()
		err = p.save()
		p.mu.Lock()
		if err == nil && p.closed {
			err = machines.ErrClosed
		}
		if err != nil {
			delete(p.starting, pr.m.ID)
			p.mu.Unlock()
			_ = logFile.Close()
			_ = os.Remove(pr.logPath)
			return machines.Machine{}, false, err
		}
	} else {
		pr.tail = &tail{}
		var out io.Writer = pr.tail
		if p.opts.Output != nil {
			out = io.MultiWriter(pr.tail, p.opts.Output)
		}
		cmd.Stdout, cmd.Stderr = out, out
		cmd.WaitDelay = time.Second // a grandchild holding the pipes must not hang Wait
	}
	waiter, err := p.launch(cmd)
	delete(p.starting, pr.m.ID)
	if logFile != nil {
		_ = logFile.Close() // the child has its own
	}
	if err != nil {
		p.mu.Unlock()
		_ = p.save()
		return machines.Machine{}, false, fmt.Errorf("process: starting %s: %w", spec.Command, err)
	}
	pr.pid = cmd.Process.Pid
	pr.start, _ = startTime(pr.pid)
	pr.m.Labels[LabelPID] = strconv.Itoa(pr.pid)
	p.machines[pr.m.ID] = pr
	p.wg.Add(1)
	p.mu.Unlock()
	waiter <- pr
	// Recorded before it is ready: a manager that dies now leaves no
	// machine its successor does not know.
	err = p.save()
	if err == nil {
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
	}
	if err == nil {
		return clone(pr.m), false, nil
	}
	exited := errors.Is(err, machines.ErrExited)
	p.forget(pr.m.ID)
	p.stop(pr) // bounded by StopTimeout, on purpose not by the expired ctx
	out := pr.quote()
	_ = p.save()
	if pr.logPath != "" {
		_ = os.Remove(pr.logPath)
	}
	retry = exited && spec.Port == 0 && strings.Contains(out, "address already in use")
	return machines.Machine{}, retry, fmt.Errorf("process: %s on %s: %w%s", cmp.Or(spec.Name, spec.Command), addr, err, out)
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
	killGroup(pr.pid) // stragglers of the group die with their leader
	if err == nil {
		err = errors.New("exited with status 0")
	}
	pr.exitErr, pr.exitCode = err, pr.cmd.ProcessState.ExitCode()
	close(pr.done)
	p.reportExit(pr)
}

// reportExit publishes the exit of pr unless Remove caused it.
func (p *Provider) reportExit(pr *proc) {
	if pr.removing.Load() {
		return
	}
	m := clone(pr.m)
	m.State = machines.StateExited
	p.events.Publish(machines.Event{
		Machine:  m,
		ExitCode: pr.exitCode,
		Err:      fmt.Errorf("process %d: %w%s", pr.pid, pr.exitErr, pr.quote()),
		Time:     time.Now(),
	})
}

// Remove sends SIGTERM to the machine's process group, SIGKILL after the
// stop timeout (or at once when ctx is done), and returns once the process
// has exited.
func (p *Provider) Remove(ctx context.Context, id string) error {
	pr := p.forget(id)
	if pr == nil {
		return fmt.Errorf("%w: %s", machines.ErrNotFound, id)
	}
	p.halt(ctx, pr)
	if pr.logPath != "" {
		_ = os.Remove(pr.logPath)
	}
	return p.save()
}

// stop removes pr without a ctx, for failed starts and Close.
func (p *Provider) stop(pr *proc) { p.halt(context.Background(), pr) }

// halt stops pr: SIGTERM to its group, SIGKILL after the stop timeout or
// when ctx is done; it returns once the process has exited.
func (p *Provider) halt(ctx context.Context, pr *proc) {
	pr.removing.Store(true)
	terminate(pr.pid)
	t := time.NewTimer(p.opts.StopTimeout)
	defer t.Stop()
	select {
	case <-pr.done:
		return
	case <-t.C:
	case <-ctx.Done():
	}
	killGroup(pr.pid)
	<-pr.done
}

func (p *Provider) forget(id string) *proc {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.machines[id]
	delete(p.machines, id)
	return pr
}

// List returns the machines started by this value (or adopted from the
// state file) that sel matches, running or exited, oldest first. Without a
// state file a new Provider does not see the processes of an old one.
func (p *Provider) List(ctx context.Context, sel machines.Selector) ([]machines.Machine, error) {
	p.mu.Lock()
	out := make([]machines.Machine, 0, len(p.machines))
	for _, pr := range p.machines {
		if sel.Matches(pr.m.Labels) {
			out = append(out, pr.machine())
		}
	}
	p.mu.Unlock()
	slices.SortFunc(out, func(a, b machines.Machine) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// Get returns machine id as List would; ErrNotFound when this value did
// not start it (nor adopt it) or has removed it.
func (p *Provider) Get(ctx context.Context, id string) (machines.Machine, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr, ok := p.machines[id]
	if !ok {
		return machines.Machine{}, fmt.Errorf("%w: %s", machines.ErrNotFound, id)
	}
	return pr.machine(), nil
}

// machine returns a copy of pr's machine with its current state.
func (pr *proc) machine() machines.Machine {
	m := clone(pr.m)
	select {
	case <-pr.done:
		m.State = machines.StateExited
		m.Reason = fmt.Sprintf("process %d: %v", pr.pid, pr.exitErr)
	default:
	}
	return m
}

// Watch reports machines whose process exits without Remove.
func (p *Provider) Watch(ctx context.Context, fn func(machines.Event)) error {
	return p.events.Watch(ctx, fn)
}

// Watchers returns how many Watch calls are running (tests wait for one).
func (p *Provider) Watchers() int { return p.events.Watchers() }

// Close stops every machine (SIGTERM, SIGKILL after the stop timeout) and
// waits for them; with KeepOnClose it leaves them running (recorded in the
// state file, when there is one). Later calls of Create fail with
// machines.ErrClosed. It is idempotent.
func (p *Provider) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	all := slices.Collect(maps.Values(p.machines))
	if !p.opts.KeepOnClose {
		clear(p.machines)
	}
	p.mu.Unlock()
	defer func() {
		if p.lock != nil {
			_ = p.lock.Close()
		}
	}()
	if p.opts.KeepOnClose {
		// The children's waiters end when their processes do.
		close(p.abandon)
		return nil
	}
	var wg sync.WaitGroup
	for _, pr := range all {
		wg.Go(func() { p.stop(pr) })
	}
	wg.Wait()
	p.wg.Wait()
	for _, pr := range all {
		if pr.logPath != "" {
			_ = os.Remove(pr.logPath)
		}
	}
	return p.save()
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
