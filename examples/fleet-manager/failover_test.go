package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/auth"
	"github.com/fleetkit/fleetkit/fleet/fleettest"
	"github.com/fleetkit/fleetkit/internal/childproc"
	"github.com/fleetkit/fleetkit/internal/pgtest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

// The failover suite: fleet-manager replicas as real processes (this test
// binary re-executed as the fleet manager), each instance a real process,
// on a real PostgreSQL, all on loopback. Every wait is on a condition with
// a bound; the figures each test logs go to RELIABILITY.md.

// replicaEnv makes this test binary run main(): a fleet-manager replica.
const replicaEnv = "FLEETKIT_TEST_FLEET_MANAGER"

// failoverWait bounds every wait of the suite.
const failoverWait = 60 * time.Second

// replica is a fleet manager running as a child process.
type replica struct {
	name   string
	cmd    *exec.Cmd
	proc   *childproc.Proc
	client *fleettest.Client
	exited <-chan struct{}
}

// replicaSet is the suite's setup: one database, one cache (the development
// key) and a config with fast intervals, shared by the replicas.
type replicaSet struct {
	t      *testing.T
	db     string
	cache  string
	config string
	secret []byte

	mu       sync.Mutex
	replicas map[string]*replica // guarded by mu
}

func newReplicaSet(t *testing.T, db string) *replicaSet {
	testenv.Short(t)
	if runtime.GOOS != "linux" {
		t.Skip("the suite counts instance processes through /proc")
	}
	cache := t.TempDir()
	t.Setenv("FLEETKIT_CACHE", cache)
	secret, err := devSecret()
	require.NoError(t, err)
	config := filepath.Join(t.TempDir(), "fleet.yaml")
	require.NoError(t, os.WriteFile(config, []byte("interval: 200ms\nlease_ttl: 2s\n"), 0o600))
	return &replicaSet{t: t, db: db, cache: cache, config: config, secret: secret, replicas: map[string]*replica{}}
}

// start starts a replica named name and returns once it serves.
func (c *replicaSet) start(name string) *replica {
	t := c.t
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-addr", "127.0.0.1:0", "-database-url", c.db, "-config", c.config, "-replica", name)
	cmd.Env = append(os.Environ(), replicaEnv+"=1", "FLEETKIT_CACHE="+c.cache)
	logf, err := os.Create(filepath.Join(t.TempDir(), name+".log"))
	require.NoError(t, err)
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	proc, err := childproc.Start(cmd, func() { logf.Close() }) // killed with the test binary
	require.NoError(t, err)
	r := &replica{name: name, cmd: cmd, proc: proc, exited: proc.Exited()}
	banner := make(chan string, 1)
	go func() {
		br := bufio.NewReader(out)
		line, _ := br.ReadString('\n')
		banner <- line
		_, _ = io.Copy(io.Discard, br)
	}()
	var line string
	select {
	case line = <-banner:
	case <-time.After(failoverWait):
		t.Fatalf("replica %s: no banner", name)
	}
	m := regexp.MustCompile(`http://(\S+?)/api`).FindStringSubmatch(line)
	if len(m) != 2 {
		<-r.exited
		log, _ := os.ReadFile(logf.Name())
		t.Fatalf("replica %s did not start: %q\n%s", name, line, log)
	}
	r.client = &fleettest.Client{BaseURL: "http://" + m[1], Kind: fleet.Dinosaur, Secret: c.secret}
	c.mu.Lock()
	c.replicas[name] = r
	c.mu.Unlock()
	t.Cleanup(func() {
		r.terminate(t)
		if t.Failed() {
			log, _ := os.ReadFile(logf.Name())
			t.Logf("replica %s's log:\n%s", name, log)
		}
	})
	return r
}

// terminate stops the replica gracefully (SIGTERM) and waits.
func (r *replica) terminate(t *testing.T) {
	select {
	case <-r.exited:
		r.proc.Release()
		return
	default:
	}
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.exited:
	case <-time.After(failoverWait):
		_ = r.cmd.Process.Kill()
		<-r.exited
		t.Errorf("replica %s did not stop on SIGTERM", r.name)
	}
	r.proc.Release()
}

// kill SIGKILLs the replica and waits for it.
func (r *replica) kill() {
	_ = r.cmd.Process.Kill()
	<-r.exited
	r.proc.Release()
}

func (r *replica) alive() bool {
	select {
	case <-r.exited:
		return false
	default:
		return true
	}
}

// leader returns the replica holding the lease of worker (e.g.
// "provisioning") according to the database.
func (c *replicaSet) leader(ctx context.Context, worker string) string {
	st, closeStore, err := openStore(ctx, c.db, fleet.Dinosaur)
	require.NoError(c.t, err)
	defer closeStore()
	_ = st
	var holder string
	require.Eventually(c.t, func() bool {
		l, err := st.AcquireLease(ctx, "dinosaur/"+worker, "probe", time.Nanosecond)
		if err == nil {
			_ = st.ReleaseLease(ctx, l) // nobody held it
			return false
		}
		m := regexp.MustCompile(`held by (\S+) until`).FindStringSubmatch(err.Error())
		if len(m) == 2 {
			holder = m[1]
		}
		return holder != ""
	}, failoverWait, 10*time.Millisecond)
	return holder
}

// any returns a live replica's client.
func (c *replicaSet) any() *fleettest.Client {
	live := c.live()
	if len(live) == 0 {
		c.t.Fatal("no live replica")
	}
	return live[0].client
}

// call sends one API request as alice without failing the test on a
// transport error (a replica may be dying): status 0 then.
func call(c *fleettest.Client, method, path string, body any) (int, map[string]any) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.BaseURL+fleet.Dinosaur.BasePath()+"/"+path, rd)
	if err != nil {
		return 0, nil
	}
	tok, _ := auth.NewHS256Token(c.Secret, "alice", "", time.Hour)
	req.Header.Set("Authorization", "Bearer "+tok)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// instances lists alice's instances (through any live replica).
func (c *replicaSet) instances() map[string]map[string]any {
	out := map[string]map[string]any{}
	for page := 1; ; page++ {
		status, body := call(c.any(), http.MethodGet, fmt.Sprintf("dinosaurs?size=100&page=%d", page), nil)
		if status != http.StatusOK {
			return nil
		}
		items, _ := body["items"].([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			out[m["id"].(string)] = m
		}
		if len(items) < 100 {
			return out
		}
	}
}

// answers reports whether host answers as instance id.
func answers(host, id string) bool {
	resp, err := (&http.Client{Timeout: time.Second}).Get("http://" + host + "/health/" + id)
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// instanceProcs returns the live instance processes of this test binary by
// instance id (from /proc).
func instanceProcs(t *testing.T) map[string][]int {
	exe, err := os.Executable()
	require.NoError(t, err)
	out := map[string][]int{}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) < 2 || args[0] != exe || args[1] != "instance" {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join(d, "stat")); err == nil {
			if i := bytes.LastIndexByte(stat, ')'); i > 0 && len(stat) > i+2 && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
				continue
			}
		}
		var pid int
		_, _ = fmt.Sscan(filepath.Base(d), &pid)
		if i := slices.Index(args, "-id"); i >= 0 && i+1 < len(args) {
			out[args[i+1]] = append(out[args[i+1]], pid)
		}
	}
	return out
}

// create creates n instances named prefix-i, round-robin over the live
// replicas, and returns their ids.
func (c *replicaSet) create(prefix string, n int) []string {
	var ids []string
	live := c.live()
	for i := range n {
		status, body := call(live[i%len(live)].client, http.MethodPost, "dinosaurs?async=true", map[string]any{"name": fmt.Sprintf("%s-%d", prefix, i)})
		require.Equal(c.t, http.StatusAccepted, status, "%v", body)
		ids = append(ids, body["id"].(string))
	}
	return ids
}

func (c *replicaSet) live() []*replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*replica
	for _, name := range slices.Sorted(maps.Keys(c.replicas)) {
		if r := c.replicas[name]; r.alive() {
			out = append(out, r)
		}
	}
	return out
}

// get returns the replica named name.
func (c *replicaSet) get(name string) *replica {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replicas[name]
}

// settled waits until every id is ready, answers as itself on its host,
// and runs as exactly one process, and no other instance process runs.
func (c *replicaSet) settled(ids []string) {
	t := c.t
	t.Helper()
	var last string
	ok := assert.Eventually(t, func() bool {
		insts := c.instances()
		procs := instanceProcs(t)
		for _, id := range ids {
			inst := insts[id]
			switch {
			case inst == nil:
				last = id + " is missing"
				return false
			case inst["status"] != "ready" || inst["failed_reason"] != nil:
				last = fmt.Sprintf("%s is %v (%v)", id, inst["status"], inst["failed_reason"])
				return false
			case !answers(inst["host"].(string), id):
				last = fmt.Sprintf("%s does not answer on %v", id, inst["host"])
				return false
			case len(procs[id]) != 1:
				last = fmt.Sprintf("%s runs as %d processes", id, len(procs[id]))
				return false
			}
		}
		for id := range procs {
			if !slices.Contains(ids, id) {
				last = "an instance process no instance owns: " + id
				return false
			}
		}
		return true
	}, failoverWait, 50*time.Millisecond)
	if !ok {
		t.Fatalf("not settled: %s", last)
	}
}

// gone waits until no instance is listed and no instance process runs.
func (c *replicaSet) gone() {
	t := c.t
	t.Helper()
	var last string
	ok := assert.Eventually(t, func() bool {
		insts := c.instances()
		procs := instanceProcs(t)
		last = fmt.Sprintf("%d instances listed, processes of %d instances run", len(insts), len(procs))
		for id, inst := range insts {
			last += fmt.Sprintf("; %s is %v", id, inst["status"])
			break
		}
		for id, pids := range procs {
			last += fmt.Sprintf("; %s runs as %v", id, pids)
			break
		}
		return insts != nil && len(insts) == 0 && len(procs) == 0
	}, failoverWait, 50*time.Millisecond)
	if !ok {
		t.Fatalf("not every instance deleted and every process gone: %s", last)
	}
}

// deleteAll deletes ids round-robin over the live replicas; every delete
// is answered 202 at once. It returns the slowest answer.
func (c *replicaSet) deleteAll(ids []string) time.Duration {
	live := c.live()
	var slowest time.Duration
	for i, id := range ids {
		start := time.Now()
		status, body := call(live[i%len(live)].client, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil)
		slowest = max(slowest, time.Since(start))
		require.Equal(c.t, http.StatusAccepted, status, "delete %s: %v", id, body)
	}
	return slowest
}

// darkWatch measures, for each instance, the time it is listed ready
// (without a failed_reason) while its host does not answer as itself.
type darkWatch struct {
	mu   sync.Mutex
	dark map[string]time.Duration // guarded by mu
	stop func()
}

func (c *replicaSet) watchDark() *darkWatch {
	w := &darkWatch{dark: map[string]time.Duration{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	w.stop = sync.OnceFunc(func() { cancel(); <-done })
	const every = 100 * time.Millisecond
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			var client *fleettest.Client
			for _, r := range c.live() {
				client = r.client
				break
			}
			if client == nil {
				continue
			}
			status, body := call(client, http.MethodGet, "dinosaurs?size=1000", nil)
			if status != http.StatusOK {
				continue
			}
			items, _ := body["items"].([]any)
			for _, it := range items {
				m, _ := it.(map[string]any)
				id, _ := m["id"].(string)
				host, _ := m["host"].(string)
				if m["status"] == "ready" && m["failed_reason"] == nil && !answers(host, id) {
					w.mu.Lock()
					w.dark[id] += every
					w.mu.Unlock()
				}
			}
		}
	}()
	c.t.Cleanup(w.stop)
	return w
}

// report stops the watch and logs the figures: instances that were dark,
// the longest and the total.
func (w *darkWatch) report(t *testing.T, n int) (longest time.Duration) {
	w.stop()
	w.mu.Lock()
	defer w.mu.Unlock()
	var total time.Duration
	for _, d := range w.dark {
		longest = max(longest, d)
		total += d
	}
	t.Logf("ready without answering: %d of %d instances, longest %s, total %s (sampled every 100ms)", len(w.dark), n, longest, total)
	return longest
}

// TestFailoverReplicasStartTogether: two replicas started at once on a
// fresh database both come up (the migrations take a lock), every instance
// created through either runs once, and deletes through either leave
// nothing running.
func TestFailoverReplicasStartTogether(t *testing.T) {
	c := newReplicaSet(t, pgtest.FreshDB(t))
	var wg sync.WaitGroup
	for _, name := range []string{"a", "b"} {
		wg.Go(func() { c.start(name) })
	}
	wg.Wait()
	ids := c.create("rex", 20)
	c.settled(ids)
	t.Logf("slowest delete: %s", c.deleteAll(ids))
	c.gone()
}

// TestFailoverLeaderKilled: the leader is SIGKILLed while instances are
// provisioning. Its instance processes die with it at once (no orphans),
// the other replica takes over, and every instance ends ready, answering
// as itself, as exactly one process.
func TestFailoverLeaderKilled(t *testing.T) {
	c := newReplicaSet(t, pgtest.FreshDB(t))
	c.start("a")
	c.start("b")
	dark := c.watchDark()
	ids := c.create("rex", 30)
	leader := c.leader(t.Context(), "dataplane")
	r := c.get(leader)
	require.NotNil(t, r, "the leader %q is a replica", leader)
	r.kill()
	more := c.create("late", 10)
	ids = append(ids, more...)
	c.settled(ids)
	dark.report(t, len(ids))
	c.deleteAll(ids)
	c.gone()
}

// TestFailoverBothRestarted: both replicas stop (their instances stop
// with them) and start again: every instance runs again, once.
func TestFailoverBothRestarted(t *testing.T) {
	c := newReplicaSet(t, pgtest.FreshDB(t))
	c.start("a")
	c.start("b")
	ids := c.create("rex", 20)
	c.settled(ids)
	for _, r := range c.live() {
		r.terminate(t)
	}
	require.Eventually(t, func() bool { return len(instanceProcs(t)) == 0 }, failoverWait, 20*time.Millisecond,
		"instances stop with their manager")
	c.start("a2")
	c.start("b2")
	dark := c.watchDark()
	c.settled(ids)
	dark.report(t, len(ids))
	c.deleteAll(ids)
	c.gone()
}

// TestFailoverPostgresRestart: PostgreSQL (a private server) restarts
// while creates go on. No accepted create is lost, and once the database
// is back every delete, through either replica, is answered 202 at once.
func TestFailoverPostgresRestart(t *testing.T) {
	srv := pgtest.Start(t)
	c := newReplicaSet(t, srv.URL())
	c.start("a")
	c.start("b")
	ids := c.create("before", 20)
	c.settled(ids)

	// Creates under load while the server restarts.
	var (
		mu       sync.Mutex
		accepted []string
		wg       sync.WaitGroup
	)
	stop := make(chan struct{})
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				live := c.live()
				status, body := call(live[(w+i)%len(live)].client, http.MethodPost, "dinosaurs?async=true", map[string]any{"name": fmt.Sprintf("load-%d-%d", w, i)})
				if status == http.StatusAccepted {
					mu.Lock()
					accepted = append(accepted, body["id"].(string))
					mu.Unlock()
				}
			}
		})
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(accepted) >= 20 }, failoverWait, 10*time.Millisecond)
	srv.Restart(t)
	back := time.Now()
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(accepted) >= 60
	}, failoverWait, 10*time.Millisecond, "creates go on after the restart")
	close(stop)
	wg.Wait()
	all := append(ids, accepted...)
	c.settled(all)
	slowest := c.deleteAll(all)
	t.Logf("%d creates accepted under load, none lost; %d deletes after the restart, all 202, slowest %s, the last %s after the database's return",
		len(accepted), len(all), slowest, time.Since(back))
	c.gone()
}

// TestFailoverCreateThenDelete: create-then-delete pairs from several
// clients across both replicas leave nothing running.
func TestFailoverCreateThenDelete(t *testing.T) {
	c := newReplicaSet(t, pgtest.FreshDB(t))
	c.start("a")
	c.start("b")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			live := c.live()
			for i := range 8 {
				r := live[(w+i)%len(live)]
				status, body := call(r.client, http.MethodPost, "dinosaurs?async=true", map[string]any{"name": fmt.Sprintf("pair-%d-%d", w, i)})
				if !assert.Equal(t, http.StatusAccepted, status, "%v", body) {
					return
				}
				other := live[(w+i+1)%len(live)]
				status, body = call(other.client, http.MethodDelete, "dinosaurs/"+body["id"].(string)+"?async=true", nil)
				assert.Equal(t, http.StatusAccepted, status, "%v", body)
			}
		})
	}
	wg.Wait()
	c.gone()
}
