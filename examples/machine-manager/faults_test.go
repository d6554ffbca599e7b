package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
	"github.com/fleetkit/fleetkit/internal/childproc"
	"github.com/fleetkit/fleetkit/internal/dockertest"
	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/fleetkit/fleetkit/machines"
)

// The fault suite of issue 14: a linter fleet — loadbalancer and
// machine-manager as real processes, linters as real processes or Docker
// containers, all on loopback — under a steady load of Python and Java
// lints, with the faults an operator meets injected one after another:
// restarts and crashes of the balancer and of the manager, machines killed
// in bulk, an update interrupted by a SIGKILL, drift made by hand, and bad
// versions (crashing, slow) rolled out. Every wait is on a condition,
// bounded by faultWait; the figures go to RELIABILITY.md.
//
//	CI=true go test -race -count=1 -run TestFaults -v ./examples/machine-manager/

// managerEnv makes this test binary the machine-manager binary.
const managerEnv = "FLEETKIT_TEST_MACHINE_MANAGER"

// faultWait bounds every wait of the suite.
const faultWait = 90 * time.Second

// The bounds the suite asserts (generous on a loaded 2-core machine; the
// figures measured are far below them).
const (
	// restoreBound: a killed machine replaced, an aborted update back at
	// full capacity, an interrupted surge converged.
	restoreBound = 60 * time.Second
	// resyncBound: a balancer that lost its state serves again (one
	// resync of the manager, resync_interval below).
	resyncBound = 10 * time.Second
)

// suiteBins are the binaries the suite runs, built once.
var suiteBins struct {
	once              sync.Once
	dir               string
	loadbalancer, lnt string
	err               error
}

func buildSuiteBins(t *testing.T) {
	t.Helper()
	goTool := testenv.LookPath(t, "go")
	suiteBins.once.Do(func() {
		suiteBins.dir, suiteBins.err = os.MkdirTemp("", "fleetkit-faults-")
		if suiteBins.err != nil {
			return
		}
		for _, b := range []struct {
			out *string
			pkg string
		}{{&suiteBins.loadbalancer, "../loadbalancer"}, {&suiteBins.lnt, "../linter"}} {
			*b.out = filepath.Join(suiteBins.dir, filepath.Base(b.pkg))
			out, err := exec.Command(goTool, "build", "-o", *b.out, b.pkg).CombinedOutput()
			if err != nil {
				suiteBins.err = fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
				return
			}
		}
	})
	require.NoError(t, suiteBins.err)
}

// proc is a child process of the suite (killed with the test binary).
type proc struct {
	cmd  *exec.Cmd
	p    *childproc.Proc
	logf string
}

func startProc(t *testing.T, name string, cmd *exec.Cmd) *proc {
	t.Helper()
	dir := os.Getenv("FLEETKIT_FAULTS_LOGS") // keep the processes' logs there
	if dir == "" {
		dir = t.TempDir()
	}
	logf, err := os.CreateTemp(dir, name+"-*.log")
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = logf, logf
	p, err := childproc.Start(cmd, func() { _ = logf.Close() }) // killed with the test binary
	require.NoError(t, err)
	return &proc{cmd: cmd, p: p, logf: logf.Name()}
}

// stop signals the process and waits until it exited.
func (p *proc) stop(sig syscall.Signal) {
	if p == nil {
		return
	}
	select {
	case <-p.p.Exited():
	default:
		_ = p.cmd.Process.Signal(sig)
		<-p.p.Exited()
	}
	p.p.Release()
}

func (p *proc) log() string {
	b, _ := os.ReadFile(p.logf)
	return string(b)
}

// fleet is the suite's running fleet.
type fleet struct {
	t        *testing.T
	provider string // process or docker
	name     string // the manager's -name (labels its machines)
	dir      string
	secret   string
	public   net.Listener // held across balancer restarts, as systemd does
	admin    net.Listener
	lbState  string
	lb       *proc
	config   string
	mmAddr   string
	mm       *proc
	docker   *client.Client
	lbClient *balancer.Client
	python   int // desired python machines
	java     int
	start    time.Time
}

// versionsYAML returns the versions every language may run: the four of
// the design, plus 1.2 with a random crash on every 20th lint on average
// ("1.2-crashy") and 1.1 slowed by 300 ms.
func versionsYAML(provider, linter string) string {
	var b strings.Builder
	spec := func(v, image string, extra ...string) {
		args := append([]string{"-language", "{language}", "-version", image, "-addr", "{addr}"}, extra...)
		aj, _ := json.Marshal(args)
		if provider == "docker" {
			fmt.Fprintf(&b, "      %q: {image: \"fleetkit/linter:%s\", args: %s}\n", v, image, aj)
		} else {
			fmt.Fprintf(&b, "      %q: {command: %q, args: %s}\n", v, linter, aj)
		}
	}
	spec("1.0", "1.0")
	spec("2.0", "2.0")
	spec("1.2", "1.2")
	spec("1.2-crashy", "1.2", "-crash-rate", "0.05")
	spec("1.1", "1.1", "-delay", "300ms")
	return b.String()
}

func newFleet(t *testing.T, provider string, python, java int) *fleet {
	t.Helper()
	testenv.Short(t)
	if runtime.GOOS != "linux" {
		t.Skip("the suite counts linter processes through /proc")
	}
	buildSuiteBins(t)
	f := &fleet{t: t, provider: provider, name: fmt.Sprintf("faults-%s-%d", provider, os.Getpid()), dir: t.TempDir(),
		secret: "faults-secret", python: python, java: java, start: time.Now()}
	if provider == "docker" {
		f.docker = dockertest.Engine(t)
		for _, v := range []string{"1.0", "1.1", "1.2", "2.0"} {
			if _, err := f.docker.ImageInspect(context.Background(), "fleetkit/linter:"+v); err != nil {
				testenv.Missing(t, "image fleetkit/linter:%s (build it with scripts/build-images.sh)", v)
			}
		}
	}
	var err error
	f.public, err = net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f.admin, err = net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	// One cleanup, run after every later one (the load's): the fleet is
	// torn down while the balancer still runs, then the processes stop.
	t.Cleanup(func() {
		f.teardown()
		f.lb.stop(syscall.SIGTERM)
		_ = f.public.Close()
		_ = f.admin.Close()
	})
	f.lbState = filepath.Join(f.dir, "lb-state.json")
	f.lbClient, err = balancer.NewClient("http://"+f.admin.Addr().String(), f.secret, balancer.ClientOptions{})
	require.NoError(t, err)
	f.startBalancer()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f.mmAddr = ln.Addr().String()
	require.NoError(t, ln.Close())
	require.NoError(t, os.WriteFile(filepath.Join(f.dir, "lb-secret"), []byte(f.secret), 0o600))
	f.config = filepath.Join(f.dir, "mm.yaml")
	require.NoError(t, os.WriteFile(f.config, fmt.Appendf(nil, `
start_timeout: 60s
remove_timeout: 5s
update_steps: [10, 50, 100]
health: {interval: 250ms, timeout: 2s, threshold: 2}
replace_unhealthy: true
state_file: %s
balancer:
  address: http://%s
  secret_file: lb-secret
  metrics_url: http://%s/metrics
  sample_interval: 500ms
auto:
  enabled: true
  step_after: 3s
  min_requests: 5
  latency_slack: 250ms
  max_error_rate: 0.01
languages:
  python:
    version: "1.0"
    versions:
%s  java:
    version: "1.0"
    versions:
%s`, filepath.Join(f.dir, "mm-state.json"), f.admin.Addr(), f.admin.Addr(),
		versionsYAML(provider, suiteBins.lnt), versionsYAML(provider, suiteBins.lnt)), 0o600))
	f.startManager()
	for lang, n := range map[string]int{"python": python, "java": java} {
		for range n {
			f.mmPost("/create", `{"lang":"`+lang+`"}`)
		}
	}
	return f
}

// startBalancer starts loadbalancer on the held sockets, as a supervisor
// with socket activation does (LISTEN_FDS), and waits until it answers.
func (f *fleet) startBalancer() {
	t := f.t
	t.Helper()
	pf, err := f.public.(*net.TCPListener).File()
	require.NoError(t, err)
	af, err := f.admin.(*net.TCPListener).File()
	require.NoError(t, err)
	defer pf.Close()
	defer af.Close()
	// LISTEN_PID must be the balancer's own PID: the shell sets it to its
	// own and execs.
	cmd := exec.Command("/bin/sh", "-c", `LISTEN_PID=$$ exec "$0" "$@"`, suiteBins.loadbalancer,
		"-addr", f.public.Addr().String(), "-admin-addr", f.admin.Addr().String(), "-state-file", f.lbState,
		"-timeout", "10s", "-drain-timeout", "10s", "-lame-duck", "1s")
	cmd.Env = append(os.Environ(), "LISTEN_FDS=2", "LISTEN_FDNAMES=public:admin", "FLEETKIT_SECRET_KEY="+f.secret)
	cmd.ExtraFiles = []*os.File{pf, af}
	f.lb = startProc(t, "loadbalancer", cmd)
	f.waitFor(faultWait, "the balancer answers", func() bool {
		_, err := f.lbClient.Generation(context.Background())
		return err == nil
	})
}

// startManager starts the machine manager (this test binary as the
// binary) and waits until its API answers.
func (f *fleet) startManager() {
	t := f.t
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-provider", f.provider, "-name", f.name, "-config", f.config, "-addr", f.mmAddr)
	cmd.Env = append(os.Environ(), managerEnv+"=1")
	f.mm = startProc(t, "machine-manager", cmd)
	f.waitFor(faultWait, "the manager answers", func() bool {
		resp, err := http.Get("http://" + f.mmAddr + "/status")
		if err != nil {
			return false
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// teardown removes whatever the fleet left: the manager stops, then the
// manager's teardown subcommand runs.
func (f *fleet) teardown() {
	if f.mm == nil {
		return
	}
	f.mm.stop(syscall.SIGTERM)
	err := run(context.Background(), []string{"teardown", "-provider", f.provider, "-name", f.name, "-config", f.config},
		io.Discard, nil)
	assert.NoError(f.t, err, "teardown")
	assert.Empty(f.t, f.orphans(nil), "teardown leaves no machine")
}

func (f *fleet) waitFor(within time.Duration, what string, cond func() bool) time.Duration {
	f.t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > within {
			st, _ := f.status()
			f.t.Fatalf("timed out after %s waiting: %s\nrollouts: %+v\nmanager log:\n%s", within, what, st.Rollouts, tail(f.mm))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

func tail(p *proc) string {
	if p == nil {
		return ""
	}
	l := p.log()
	if len(l) > 6000 {
		l = l[len(l)-6000:]
	}
	return l
}

func (f *fleet) mmPost(path, body string) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+f.mmAddr+path, strings.NewReader(body))
	require.NoError(f.t, err)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 5 * time.Minute}).Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "%s %s: %s", path, body, b)
}

// mmStatus is the manager's /status.
type mmStatus struct {
	Linters []map[string]struct {
		Version    string `json:"version"`
		Lang       string `json:"lang"`
		IsHealthy  bool   `json:"is_healthy"`
		InRotation bool   `json:"in_rotation"`
	} `json:"linters"`
	Rollouts map[string]struct {
		Current  string `json:"current"`
		Target   string `json:"target"`
		Step     int    `json:"step"`
		Machines int    `json:"machines"`
	} `json:"rollouts"`
}

// status returns the manager's /status, ok false when it does not answer.
func (f *fleet) status() (mmStatus, bool) {
	var st mmStatus
	resp, err := http.Get("http://" + f.mmAddr + "/status")
	if err != nil {
		return st, false
	}
	defer resp.Body.Close()
	return st, resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&st) == nil
}

// machines returns lang's machines per the manager: address → version,
// and how many of them are unhealthy.
func (f *fleet) machines(lang string) (map[string]string, int) {
	st, ok := f.status()
	if !ok {
		return nil, -1
	}
	out, sick := map[string]string{}, 0
	for _, l := range st.Linters {
		for addr, s := range l {
			if s.Lang != lang {
				continue
			}
			out[addr] = s.Version
			if !s.IsHealthy {
				sick++
			}
		}
	}
	return out, sick
}

// settled reports whether lang has exactly n healthy machines, all of
// version, and the balancer holds exactly those.
func (f *fleet) settled(lang, version string, n int) bool {
	ms, sick := f.machines(lang)
	if sick != 0 || len(ms) != n {
		return false
	}
	backends, ratio, err := f.lbClient.Routes(context.Background(), lang)
	if err != nil || len(backends) != n || !maps(ratio, map[string]int{version: 100}) {
		return false
	}
	for addr, v := range ms {
		if v != version || backends["http://"+addr] != version {
			return false
		}
	}
	return true
}

func maps(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// linterProcs returns the PIDs of the live linter processes the fleet's
// provider runs (Docker: the running containers of its name).
func (f *fleet) linterProcs() []string {
	if f.provider == "docker" {
		cs, err := f.docker.ContainerList(context.Background(), container.ListOptions{
			Filters: filters.NewArgs(filters.Arg("label", machines.LabelProvider+"="+f.name)),
		})
		require.NoError(f.t, err)
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	var out []string
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		pid := filepath.Base(filepath.Dir(s))
		exe, err := os.Readlink("/proc/" + pid + "/exe")
		if err != nil || exe != suiteBins.lnt {
			continue
		}
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(b, ')'); i > 0 && len(b) > i+2 && (b[i+2] == 'Z' || b[i+2] == 'X') {
			continue // a zombie no one reaps here is no machine
		}
		out = append(out, pid)
	}
	return out
}

// orphans returns the linter processes or containers beyond the machines
// the manager lists (st nil: every one is an orphan).
func (f *fleet) orphans(st *mmStatus) []string {
	procs := f.linterProcs()
	n := 0
	if st != nil {
		n = len(st.Linters)
	}
	if len(procs) <= n {
		return nil
	}
	return procs
}

// killMachines kills n machines of lang at once (SIGKILL, docker kill).
func (f *fleet) killMachines(lang string, n int) []string {
	ms, _ := f.machines(lang)
	addrs := slicesSorted(ms)[:n]
	var wg sync.WaitGroup
	for _, addr := range addrs {
		port := addr[strings.LastIndexByte(addr, ':')+1:]
		wg.Go(func() {
			if f.provider == "docker" {
				cs, err := f.docker.ContainerList(context.Background(), container.ListOptions{
					Filters: filters.NewArgs(filters.Arg("label", machines.LabelProvider+"="+f.name)),
				})
				require.NoError(f.t, err)
				for _, c := range cs {
					for _, p := range c.Ports {
						if fmt.Sprint(p.PublicPort) == port {
							require.NoError(f.t, f.docker.ContainerKill(context.Background(), c.ID, "KILL"))
						}
					}
				}
				return
			}
			for _, pid := range f.linterProcs() {
				cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
				if strings.Contains(string(cmdline), "127.0.0.1:"+port+"\x00") {
					var p int
					_, _ = fmt.Sscan(pid, &p)
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
			}
		})
	}
	wg.Wait()
	return addrs
}

func slicesSorted(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// load is the steady load: workers linting real Python and Java code
// through the balancer, each paced to an equal share of rate.
type load struct {
	url    string
	poison atomic.Bool // every 20th Python lint is empty code (which version 1.2 crashes on)
	stop   context.CancelFunc
	wg     sync.WaitGroup
	// mu guards results.
	mu      sync.Mutex
	results []result
}

type result struct {
	at   time.Time
	lang string
	code int // 0: no answer
	err  string
}

var lintBodies = map[string][]string{
	"python": {"import os\nx = 1\n", "def f(a, b):\n    return a + b\n", "print('hello world')\n", "y=2\n"},
	"java":   {"class A {\n}\n", "public class B {\n    int x = 1;\n}\n"},
}

func startLoad(t *testing.T, lbURL string, workers, rate int) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{url: lbURL, stop: cancel}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	interval := time.Duration(workers) * time.Second / time.Duration(rate)
	for w := range workers {
		l.wg.Go(func() {
			next := time.Now()
			for i := 0; ctx.Err() == nil; i++ {
				lang := []string{"python", "java"}[(w+i)%2]
				code := lintBodies[lang][i%len(lintBodies[lang])]
				if lang == "python" && l.poison.Load() && i%20 == 0 {
					code = ""
				}
				body, _ := json.Marshal(map[string]string{"code": code})
				r := result{at: time.Now(), lang: lang}
				resp, err := client.Post(l.url+"/lint/"+lang, "application/json", bytes.NewReader(body))
				if err != nil {
					r.err = err.Error()
				} else {
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					r.code = resp.StatusCode
				}
				l.mu.Lock()
				l.results = append(l.results, r)
				l.mu.Unlock()
				next = next.Add(interval)
				if d := time.Until(next); d > 0 {
					select {
					case <-ctx.Done():
					case <-time.After(d):
					}
				} else {
					next = time.Now()
				}
			}
		})
	}
	t.Cleanup(l.end)
	return l
}

func (l *load) end() { l.stop(); l.wg.Wait() }

// since returns the requests sent at or after t, and the failed ones.
func (l *load) since(t time.Time) (total int, failed []result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.results {
		if r.at.Before(t) {
			continue
		}
		total++
		if r.code != http.StatusOK {
			failed = append(failed, r)
		}
	}
	return total, failed
}

func describe(failed []result) string {
	byKind := map[string]int{}
	for _, r := range failed {
		k := fmt.Sprint(r.code)
		if r.err != "" {
			k = r.err
			if i := strings.LastIndex(k, ": "); i > 0 {
				k = k[i+2:]
			}
		}
		byKind[k]++
	}
	return fmt.Sprint(byKind)
}

// figure logs one measured figure in a form RELIABILITY.md quotes.
func figure(t *testing.T, scenario, format string, args ...any) {
	t.Helper()
	t.Logf("FIGURE %s | %s", scenario, fmt.Sprintf(format, args...))
}

func TestFaultsProcess(t *testing.T) { faultSuite(t, "process", 10, 2) }

func TestFaultsDocker(t *testing.T) { faultSuite(t, "docker", 6, 2) }

func faultSuite(t *testing.T, provider string, pythonN, javaN int) {
	f := newFleet(t, provider, pythonN, javaN)
	f.waitFor(faultWait, "the fleet is up", func() bool {
		return f.settled("python", "1.0", pythonN) && f.settled("java", "1.0", javaN)
	})
	lbURL := "http://" + f.public.Addr().String()
	ld := startLoad(t, lbURL, 8, 200)
	f.waitFor(faultWait, "load flows", func() bool { n, _ := ld.since(time.Time{}); return n > 100 })

	// steady waits until the fleet is whole again — every machine healthy
	// and in the balancer, one process or container per machine (a
	// removed machine may take a moment to drain), no orphan — and then
	// until 400 more requests went through it, so that a scenario's count
	// of failures covers the fleet after the fault too.
	steady := func(name string, version string) {
		t.Helper()
		f.waitFor(restoreBound, name+": settled", func() bool {
			return f.settled("python", version, pythonN) && f.settled("java", "1.0", javaN) &&
				len(f.linterProcs()) == pythonN+javaN
		})
		st, _ := f.status()
		assert.Empty(t, f.orphans(&st), "%s: no orphan machines", name)
		settledAt := time.Now()
		f.waitFor(faultWait, name+": load after", func() bool { n, _ := ld.since(settledAt); return n >= 400 })
	}

	// scenario runs a scenario as a subtest; the fleet's waits fail that subtest.
	scenario := func(name string, fn func(t *testing.T)) {
		t.Run(name, func(st *testing.T) {
			f.t = st
			defer func() { f.t = t }()
			fn(st)
		})
	}

	scenario("balancer restart", func(t *testing.T) {
		before, _, _ := f.lbClient.Routes(context.Background(), "python")
		start := time.Now()
		f.lb.stop(syscall.SIGTERM)
		stopped := time.Since(start)
		f.startBalancer()
		gap := time.Since(start)
		steady("balancer restart", "1.0")
		total, failed := ld.since(start)
		assert.Empty(t, failed, "no request fails across a balancer restart: %s", describe(failed))
		after, _, _ := f.lbClient.Routes(context.Background(), "python")
		assert.Equal(t, before, after, "the restarted balancer has its backends from its state file")
		figure(t, "balancer restart (SIGTERM, state file, held sockets)", "%d requests, %d failed; old process drained in %s, new one serving %s after the signal",
			total, len(failed), stopped.Round(time.Millisecond), gap.Round(time.Millisecond))
	})

	scenario("balancer replaced empty", func(t *testing.T) {
		start := time.Now()
		f.lb.stop(syscall.SIGTERM)
		require.NoError(t, os.Remove(f.lbState))
		f.startBalancer()
		restored := f.waitFor(resyncBound, "the manager re-asserts backends and ratios", func() bool {
			return f.settled("python", "1.0", pythonN) && f.settled("java", "1.0", javaN)
		})
		steady("balancer replaced", "1.0")
		total, failed := ld.since(start)
		figure(t, "balancer replaced by one without state", "backends and ratios back %s after the new balancer answered (bound %s); %d requests, %d failed meanwhile (%s)",
			restored.Round(time.Millisecond), resyncBound, total, len(failed), describe(failed))
	})

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		scenario("manager restart "+sig.String(), func(t *testing.T) {
			before, _ := f.machines("python")
			procs := f.linterProcs()
			start := time.Now()
			f.mm.stop(sig)
			assert.ElementsMatch(t, procs, f.linterProcs(), "stopping the manager is not stopping the fleet")
			f.startManager()
			up := time.Since(start)
			steady("manager restart", "1.0")
			after, _ := f.machines("python")
			assert.Equal(t, before, after, "the restarted manager adopts the same machines")
			assert.ElementsMatch(t, procs, f.linterProcs(), "none replaced, none orphaned")
			total, failed := ld.since(start)
			assert.Empty(t, failed, "no request fails across a manager restart: %s", describe(failed))
			figure(t, "manager restart ("+sig.String()+")", "%d requests, %d failed; %d of %d machines adopted, 0 orphans; API back after %s",
				total, len(failed), len(after), len(before), up.Round(time.Millisecond))
		})
	}

	scenario("most machines killed at once", func(t *testing.T) {
		start := time.Now()
		killed := f.killMachines("python", pythonN-1)
		restored := f.waitFor(restoreBound, "killed machines replaced", func() bool {
			ms, _ := f.machines("python")
			for _, k := range killed {
				if _, ok := ms[k]; ok {
					return false
				}
			}
			return f.settled("python", "1.0", pythonN)
		})
		steady("kill", "1.0")
		total, failed := ld.since(start)
		assert.Empty(t, failed, "requests walk past the dead backends: %s", describe(failed))
		figure(t, fmt.Sprintf("%d of %d machines killed at once", len(killed), pythonN), "%d requests, %d failed; all %d replaced %s after the kill (bound %s)",
			total, len(failed), len(killed), restored.Round(time.Millisecond), restoreBound)
	})

	scenario("drift made by hand", func(t *testing.T) {
		ctx := context.Background()
		err := f.lbClient.SetRatio(ctx, "python", map[string]int{"3.0": 100})
		assert.ErrorIs(t, err, balancer.ErrInvalidRatio, "a ratio no backend can serve is refused")
		start := time.Now()
		require.NoError(t, f.lbClient.SetRatio(ctx, "python", map[string]int{"1.0": 50, "2.0": 50}))
		backends, _, _ := f.lbClient.Routes(ctx, "python")
		for u := range backends {
			require.NoError(t, f.lbClient.RemoveBackend(ctx, u))
			break
		}
		corrected := f.waitFor(resyncBound, "the manager corrects the drift", func() bool { return f.settled("python", "1.0", pythonN) })
		steady("drift", "1.0")
		total, failed := ld.since(start)
		assert.Empty(t, failed, "%s", describe(failed))
		figure(t, "ratio and backend changed by hand", "put right %s after (bound %s); %d requests, %d failed", corrected.Round(time.Millisecond),
			resyncBound, total, len(failed))
	})

	scenario("update interrupted by SIGKILL", func(t *testing.T) {
		start := time.Now()
		f.mmPost("/init-update", `{"lang":"python","version":"2.0"}`)
		// The 50% step's surge, or at least the step: a surge of process
		// machines can come and go between two looks on a quiet machine.
		stepped := time.Time{}
		surging := f.waitFor(faultWait, "the 50% step surges", func() bool {
			st, ok := f.status()
			if !ok || st.Rollouts["python"].Step < 2 {
				return false
			}
			if stepped.IsZero() {
				stepped = time.Now()
			}
			ms, _ := f.machines("python")
			return len(ms) > pythonN || time.Since(stepped) > time.Second
		})
		ms, _ := f.machines("python")
		f.mm.stop(syscall.SIGKILL)
		extra := len(f.linterProcs()) - pythonN - javaN
		f.startManager()
		converged := f.waitFor(restoreBound, "back to the desired count", func() bool {
			got, sick := f.machines("python")
			return sick == 0 && len(got) == pythonN
		})
		f.waitFor(faultWait, "the update completes", func() bool {
			st, _ := f.status()
			return st.Rollouts["python"].Current == "2.0" && st.Rollouts["python"].Target == ""
		})
		steady("interrupted surge", "2.0")
		total, failed := ld.since(start)
		assert.Empty(t, failed, "%s", describe(failed))
		figure(t, "update killed (SIGKILL) during the 50% step's surge", "%d machines listed, %d beyond the desired %d at the kill (%s into the update); converged to %d %s after the restart (bound %s), update completed; %d requests, %d failed; whole update %s",
			len(ms), extra, pythonN, surging.Round(time.Millisecond), pythonN, converged.Round(time.Millisecond), restoreBound, total,
			len(failed), time.Since(start).Round(time.Second))
	})

	badVersion := func(name, version, reason string, poisonAtStep int) {
		scenario(name, func(t *testing.T) {
			start := time.Now()
			f.mmPost("/init-update", `{"lang":"python","version":"`+version+`"}`)
			if poisonAtStep > 0 {
				f.waitFor(faultWait, "the step to break", func() bool {
					st, _ := f.status()
					return st.Rollouts["python"].Step == poisonAtStep
				})
				ld.poison.Store(true)
				defer ld.poison.Store(false)
			}
			var aborted time.Time
			f.waitFor(faultWait, "the update is rolled back automatically", func() bool {
				st, _ := f.status()
				r := st.Rollouts["python"]
				if r.Target != "" {
					return false
				}
				aborted = time.Now()
				return r.Current == "2.0"
			})
			ld.poison.Store(false)
			restored := f.waitFor(restoreBound, "the stable version's full capacity", func() bool { return f.settled("python", "2.0", pythonN) })
			steady(name, "2.0")
			total, failed := ld.since(start)
			var verdicts struct {
				Languages map[string]struct {
					Verdicts []struct {
						Step   int    `json:"step"`
						Result string `json:"result"`
						Reason string `json:"reason"`
					} `json:"verdicts"`
				} `json:"languages"`
			}
			resp, err := http.Get("http://" + f.mmAddr + "/history")
			require.NoError(t, err)
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&verdicts))
			_ = resp.Body.Close()
			vs := verdicts.Languages["python"].Verdicts
			require.NotEmpty(t, vs)
			last := vs[len(vs)-1]
			assert.Equal(t, "fail", last.Result)
			assert.Contains(t, last.Reason, reason)
			if poisonAtStep > 0 {
				assert.Equal(t, poisonAtStep, last.Step, "failed at the step it broke at")
			}
			figure(t, name, "aborted at step %d (%s) %s after init; %d machines of 2.0 back %s after the abort (bound %s); %d requests, %d failed (%s); verdict: %s",
				last.Step, map[int]string{1: "10%", 2: "50%", 3: "100%"}[last.Step], aborted.Sub(start).Round(time.Millisecond), pythonN,
				restored.Round(time.Millisecond), restoreBound, total, len(failed), describe(failed), last.Reason)
		})
	}
	badVersion("crashing version (1 lint in 20) at the first step", "1.2-crashy", "", 0)
	badVersion("slow version (+300 ms) at the first step", "1.1", "latency", 0)
	badVersion("version crashing at the last step (100%)", "1.2", "", 3)

	ld.end()
	total, failed := ld.since(time.Time{})
	figure(t, "whole run", "%d requests, %d failed in all, %s with the fleet's start (%d + %d machines)", total, len(failed),
		time.Since(f.start).Round(time.Second), pythonN, javaN)
}
