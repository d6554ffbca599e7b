package machinestest

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleetkit/fleetkit/internal/httpjson"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/internal/hub"
)

var (
	_ machines.Provider = (*Provider)(nil)
	_ machines.Watcher  = (*Provider)(nil)
)

// ErrKilled is the Err of the Event sent when a machine is killed by Kill
// or crashes (version 1.2 given empty code).
var ErrKilled = errors.New("machinestest: machine killed")

// crashExitCode is the linter's exit status when version 1.2 crashes, and
// the ExitCode of the Event a crash of the fake sends (Kill sends -1).
const crashExitCode = 3

// Options configure a Provider. The zero value is ready to use.
type Options struct {
	// Name is the provider label of the machines; "" means "machinestest".
	Name string
	// Handler builds the HTTP handler of a machine; nil means the fake
	// linter (see Provider).
	Handler func(m machines.Machine) http.Handler
	// CreateDelay is added to every Create, as if the machine took that
	// long to start.
	CreateDelay time.Duration
	// SlowDelay is the extra lint delay of version 1.1; 0 means none.
	SlowDelay time.Duration
}

// Provider is an in-memory machines.Provider whose machines are real HTTP
// servers on loopback ports. By default each machine is a fake linter that
// reads its language and version from the spec's Args, the linter's
// command line (linter.Args: -language, -version; a spec without both is
// invalid), and follows the wire contract closely enough for callers'
// tests:
//
//   - GET /health answers {"version","language","requestCount"};
//   - POST /lint {"code"} answers {"result","details","diagnostics",
//     "language","version"}; on version 2.0 (and any other not starting
//     with "1.") code without a trailing newline fails with W292;
//   - version 1.1 waits Options.SlowDelay before answering;
//   - version 1.2 given empty code answers 500 and then dies: its server
//     closes and an Event with ExitCode 3 is published, as the real linter
//     process exits with status 3.
//
// It is safe for concurrent use. Close stops every server.
type Provider struct {
	opts   Options
	events hub.Hub[machines.Event]
	wg     sync.WaitGroup // serving goroutines and crashes

	// mu guards machines, seq, closed, failCreates and failErr.
	mu          sync.Mutex
	machines    map[string]*machine
	seq         int
	closed      bool
	failCreates int
	failErr     error
}

type machine struct {
	m        machines.Machine
	language string // of the fake linter
	version  string
	srv      *http.Server
	lints    atomic.Int64
	sick     atomic.Bool
	broken   atomic.Bool // crashed: fails every request until it dies
	removing atomic.Bool
	dead     atomic.Bool
}

// New returns an empty Provider.
func New(opts Options) *Provider {
	opts.Name = cmp.Or(opts.Name, "machinestest")
	return &Provider{opts: opts, machines: make(map[string]*machine)}
}

// FailCreates makes the next n calls of Create fail with err (an error
// wrapping machines.ErrStartTimeout when err is nil).
func (p *Provider) FailCreates(n int, err error) {
	if err == nil {
		err = fmt.Errorf("machinestest: injected failure: %w", machines.ErrStartTimeout)
	}
	p.mu.Lock()
	p.failCreates, p.failErr = n, err
	p.mu.Unlock()
}

// Create starts a machine on a free loopback port and, when
// spec.HealthPath is set, waits until it answers there (the fake linter
// does at once; a custom Handler may not).
func (p *Provider) Create(ctx context.Context, spec machines.Spec) (machines.Machine, error) {
	if err := spec.Validate(); err != nil {
		return machines.Machine{}, err
	}
	var language, version string
	if p.opts.Handler == nil {
		var err error
		if language, version, err = linterFlags(spec.Args); err != nil {
			return machines.Machine{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return machines.Machine{}, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return machines.Machine{}, machines.ErrClosed
	}
	if p.failCreates > 0 {
		p.failCreates--
		err := p.failErr
		p.mu.Unlock()
		return machines.Machine{}, err
	}
	p.seq++
	id := fmt.Sprintf("m%d", p.seq)
	p.mu.Unlock()

	if p.opts.CreateDelay > 0 {
		t := time.NewTimer(p.opts.CreateDelay)
		select {
		case <-ctx.Done():
			t.Stop()
			return machines.Machine{}, ctx.Err()
		case <-t.C:
		}
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return machines.Machine{}, fmt.Errorf("machinestest: listening: %w", err)
	}
	addr := ln.Addr().String()
	port := ln.Addr().(*net.TCPAddr).Port
	mc := &machine{m: machines.Machine{
		ID:        id,
		Address:   addr,
		Labels:    spec.MachineLabels(p.opts.Name, port),
		CreatedAt: time.Now(),
		State:     machines.StateRunning,
	}, language: language, version: version}
	h := http.Handler(nil)
	if p.opts.Handler != nil {
		h = p.opts.Handler(mc.m)
	} else {
		h = p.linter(mc)
	}
	mc.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}

	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		_ = ln.Close()
		return machines.Machine{}, machines.ErrClosed
	}
	p.machines[id] = mc
	p.wg.Add(1)
	p.mu.Unlock()
	go func() {
		defer p.wg.Done()
		_ = mc.srv.Serve(ln)
	}()
	if spec.HealthPath != "" {
		wctx, cancel := context.WithTimeoutCause(ctx, spec.Timeout(), machines.ErrStartTimeout)
		defer cancel()
		if err := machines.WaitReady(wctx, addr, machines.WaitOptions{Path: spec.HealthPath}); err != nil {
			_ = p.Remove(context.Background(), id)
			return machines.Machine{}, fmt.Errorf("machinestest: %s on %s: %w", cmp.Or(spec.Name, id), addr, err)
		}
	}
	return clone(mc.m), nil
}

// Remove closes the machine's server and forgets it.
func (p *Provider) Remove(ctx context.Context, id string) error {
	p.mu.Lock()
	mc, ok := p.machines[id]
	delete(p.machines, id)
	p.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %s", machines.ErrNotFound, id)
	}
	mc.removing.Store(true)
	_ = mc.srv.Close()
	return nil
}

// linterFlags reads the fake linter's language and version from its
// command line, as the linter does; both are required.
func linterFlags(args []string) (language, version string, err error) {
	fs := flag.NewFlagSet("linter", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&language, "language", "", "")
	fs.StringVar(&version, "version", "", "")
	fs.String("addr", "", "")
	if err := fs.Parse(args); err != nil {
		return "", "", fmt.Errorf("%w: the fake linter's command line %q: %v", machines.ErrInvalidSpec, args, err)
	}
	if language == "" || version == "" {
		return "", "", fmt.Errorf("%w: the fake linter needs -language and -version in Args (linter.Args), got %q", machines.ErrInvalidSpec, args)
	}
	return language, version, nil
}

// List returns the machines sel matches, oldest first.
func (p *Provider) List(ctx context.Context, sel machines.Selector) ([]machines.Machine, error) {
	p.mu.Lock()
	out := make([]machines.Machine, 0, len(p.machines))
	for _, mc := range p.machines {
		if sel.Matches(mc.m.Labels) {
			out = append(out, mc.machine())
		}
	}
	p.mu.Unlock()
	slices.SortFunc(out, func(a, b machines.Machine) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(idNum(a.ID), idNum(b.ID)))
	})
	return out, nil
}

// Get returns machine id as List would.
func (p *Provider) Get(ctx context.Context, id string) (machines.Machine, error) {
	mc, err := p.get(id)
	if err != nil {
		return machines.Machine{}, err
	}
	return mc.machine(), nil
}

// machine returns a copy of mc's machine with its current state.
func (mc *machine) machine() machines.Machine {
	m := clone(mc.m)
	if mc.dead.Load() {
		m.State = machines.StateExited
	}
	return m
}

func idNum(id string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(id, "m"))
	return n
}

// Watch reports machines that die (Kill, or a crash of version 1.2).
func (p *Provider) Watch(ctx context.Context, fn func(machines.Event)) error {
	return p.events.Watch(ctx, fn)
}

// Watchers returns how many Watch calls are subscribed, so that a test can
// wait for its watcher before it kills a machine.
func (p *Provider) Watchers() int { return p.events.Watchers() }

// Kill makes the machine die as if its process crashed: its server closes,
// it stays in List as exited, and Watch reports it.
func (p *Provider) Kill(id string) error {
	mc, err := p.get(id)
	if err != nil {
		return err
	}
	p.die(mc, -1)
	return nil
}

// SetUnhealthy makes the machine's /health answer 503 (or 200 again when
// sick is false) while it keeps running.
func (p *Provider) SetUnhealthy(id string, sick bool) error {
	mc, err := p.get(id)
	if err != nil {
		return err
	}
	mc.sick.Store(sick)
	return nil
}

// Lints returns how many /lint requests the machine has answered.
func (p *Provider) Lints(id string) (int64, error) {
	mc, err := p.get(id)
	if err != nil {
		return 0, err
	}
	return mc.lints.Load(), nil
}

// Close stops every machine. It is idempotent.
func (p *Provider) Close() error {
	p.mu.Lock()
	p.closed = true
	all := slices.Collect(maps.Values(p.machines))
	clear(p.machines)
	p.mu.Unlock()
	for _, mc := range all {
		mc.removing.Store(true)
		_ = mc.srv.Close()
	}
	p.wg.Wait()
	return nil
}

func (p *Provider) get(id string) (*machine, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	mc, ok := p.machines[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", machines.ErrNotFound, id)
	}
	return mc, nil
}

// die ends mc as a process that exited with code would.
func (p *Provider) die(mc *machine, code int) {
	if mc.dead.Swap(true) {
		return
	}
	_ = mc.srv.Close()
	if mc.removing.Load() {
		return
	}
	m := clone(mc.m)
	m.State = machines.StateExited
	p.events.Publish(machines.Event{Machine: m, ExitCode: code, Err: ErrKilled, Time: time.Now()})
}

type lintRequest struct {
	Code string `json:"code"`
}

type diagnostic struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

type lintAnswer struct {
	Result      bool         `json:"result"`
	Details     string       `json:"details"`
	Diagnostics []diagnostic `json:"diagnostics"`
	Language    string       `json:"language"`
	Version     string       `json:"version"`
}

// linter is the fake linter handler of mc.
func (p *Provider) linter(mc *machine) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		if mc.sick.Load() || mc.broken.Load() || mc.dead.Load() {
			httpjson.Write(w, http.StatusServiceUnavailable, map[string]string{"status": "error", "message": "unhealthy"})
			return
		}
		httpjson.Write(w, http.StatusOK, map[string]any{
			"version": mc.version, "language": mc.language, "requestCount": mc.lints.Load(),
		})
	})
	mux.HandleFunc("POST /lint", func(w http.ResponseWriter, r *http.Request) {
		if mc.broken.Load() || mc.dead.Load() {
			httpjson.Write(w, http.StatusInternalServerError, map[string]string{"status": "error", "message": "crashed"})
			return
		}
		mc.lints.Add(1)
		var req lintRequest
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
			httpjson.Write(w, http.StatusBadRequest, map[string]string{"status": "error", "message": "invalid JSON: " + err.Error()})
			return
		}
		switch mc.version {
		case "1.1":
			if d := p.opts.SlowDelay; d > 0 {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(d):
				}
			}
		case "1.2":
			if req.Code == "" {
				httpjson.Write(w, http.StatusInternalServerError, map[string]string{"status": "error", "message": "crashed"})
				mc.broken.Store(true)
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
				p.mu.Lock()
				defer p.mu.Unlock()
				if !p.closed { // Close stops every server anyway
					p.wg.Add(1)
					go func() { // the answer is out: now the "process" exits
						defer p.wg.Done()
						p.die(mc, crashExitCode)
					}()
				}
				return
			}
		}
		ans := lintAnswer{Result: true, Details: "no problems found", Diagnostics: []diagnostic{},
			Language: mc.language, Version: mc.version}
		if !strings.HasPrefix(mc.version, "1.") && !strings.HasSuffix(req.Code, "\n") {
			line := strings.Count(req.Code, "\n") + 1
			col := len(req.Code[strings.LastIndexByte(req.Code, '\n')+1:]) + 1
			ans.Result = false
			ans.Details = fmt.Sprintf("%d:%d: W292 no newline at end of file", line, col)
			ans.Diagnostics = append(ans.Diagnostics, diagnostic{Line: line, Column: col, Code: "W292", Message: "no newline at end of file"})
		}
		httpjson.Write(w, http.StatusOK, ans)
	})
	return mux
}

func clone(m machines.Machine) machines.Machine {
	m.Labels = maps.Clone(m.Labels)
	return m
}
