// Command abuse runs the scripted abuse of RELIABILITY.md against a running
// linter fleet (examples/quickstart, or a balancer and machine manager of
// one's own): a steady load of well-behaved lint requests, and beside it
// clients that send what a careless or hostile client sends — lints whose
// answers are larger than the balancer's buffer, inputs that are slow to
// lint, requests to random and malformed paths, invented HTTP methods, and
// slowloris connections. It then reports whether the well-behaved clients
// were served, whether every healthy backend stayed in rotation, and how
// the balancer's /metrics and memory changed.
//
//	go run ./scripts/abuse -lb http://127.0.0.1:8080 -mm http://127.0.0.1:5000 -secret S -pid PID
//
// scripts/abuse.sh starts a quickstart and runs this against it. The exit
// status is 1 when a well-behaved request failed or a healthy backend left
// the rotation.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "abuse:", err)
		os.Exit(1)
	}
}

type config struct {
	lb, admin, mm, fleet string
	secret               string
	pid                  int
	duration             time.Duration
	rate                 int
	slowloris            int
	expect               int
	largeEvery           time.Duration
	slowEvery            time.Duration
	maxMetricGrowth      int
}

func run() error {
	var c config
	flag.StringVar(&c.lb, "lb", "http://127.0.0.1:8080", "the balancer's public URL")
	flag.StringVar(&c.admin, "admin", "", "the balancer's admin URL (default: -lb)")
	flag.StringVar(&c.mm, "mm", "http://127.0.0.1:5000", "the machine manager's URL")
	flag.StringVar(&c.fleet, "fleet", "", "a fleet manager's URL to send invented methods to too (optional)")
	flag.StringVar(&c.secret, "secret", os.Getenv("FLEETKIT_SECRET_KEY"), "the balancer's admin secret (default $FLEETKIT_SECRET_KEY)")
	flag.IntVar(&c.pid, "pid", 0, "PID of the balancer's process, to read its memory (0: not read)")
	flag.DurationVar(&c.duration, "duration", 30*time.Second, "how long the abuse lasts")
	flag.IntVar(&c.rate, "rate", 200, "well-behaved requests per second")
	flag.IntVar(&c.slowloris, "slowloris", 64, "slowloris connections held open")
	flag.IntVar(&c.expect, "expect", 0, "wait (up to a minute) until this many backends are in rotation before starting")
	flag.DurationVar(&c.largeEvery, "large-every", 5*time.Second, "send a burst of 6 lints with answers over the balancer's 8 MiB buffer this often")
	flag.DurationVar(&c.slowEvery, "slow-every", 10*time.Second, "send a lint that is slow to compute this often")
	flag.IntVar(&c.maxMetricGrowth, "max-metric-growth", 200, "fail when the balancer's /metrics grows by more lines")
	flag.Parse()
	if c.admin == "" {
		c.admin = c.lb
	}
	if c.secret == "" {
		return errors.New("-secret (or FLEETKIT_SECRET_KEY) is required to read the balancer's backends")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	before, err := snapshot(ctx, c)
	for deadline := time.Now().Add(time.Minute); err == nil && before.inRotation < c.expect; before, err = snapshot(ctx, c) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d backends in rotation after a minute, want %d", before.inRotation, c.expect)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("before: %w", err)
	}
	fmt.Printf("before: %d backends in rotation (%d healthy in the manager), /metrics %d lines, RSS %s\n",
		before.inRotation, before.managerHealthy, before.metricLines, mib(before.rss))

	actx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	var wg sync.WaitGroup
	good := &tally{}
	abuse := map[string]*tally{}
	start := func(name string, f func(context.Context, *tally)) {
		t := &tally{}
		abuse[name] = t
		wg.Go(func() { f(actx, t) })
	}
	wg.Go(func() { wellBehaved(actx, c, good) })
	start("large answers (100,000 lines of x=1)", func(ctx context.Context, t *tally) {
		body := lintBody(strings.Repeat("x=1\n", 100_000))
		every(ctx, c.largeEvery, func() { burst(6, func() { t.add(post(ctx, c.lb+"/lint/python", body)) }) })
	})
	start("slow input (160 KB line, non-ASCII)", func(ctx context.Context, t *tally) {
		body := lintBody("x=[" + strings.Repeat("'é',", 40_000) + "]\n")
		every(ctx, c.slowEvery, func() { t.add(post(ctx, c.lb+"/lint/python", body)) })
	})
	start("bare-LF requests", func(ctx context.Context, t *tally) {
		every(ctx, 100*time.Millisecond, func() {
			body := `{"code":"x = 1\n"}`
			t.add(raw(ctx, c.lb, fmt.Sprintf("POST /lint/python HTTP/1.1\nHost: x\nContent-Type: application/json\nContent-Length: %d\n\n%s", len(body), body)))
		})
	})
	start("random and malformed paths", func(ctx context.Context, t *tally) {
		body := lintBody("x = 1\n")
		every(ctx, 2*time.Millisecond, func() {
			t.add(post(ctx, c.lb+"/lint/"+randomHex(6), body))
			t.add(raw(ctx, c.lb, "POST /lint/%ff HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"))
		})
	})
	start("invented methods", func(ctx context.Context, t *tally) {
		targets := []string{c.lb + "/lint/python", c.admin + "/health", c.mm + "/status"}
		if c.fleet != "" {
			targets = append(targets, c.fleet+"/api/dinosaurs_mgmt/v1/dinosaurs")
		}
		every(ctx, 2*time.Millisecond, func() {
			for _, u := range targets {
				t.add(do(ctx, "X"+strings.ToUpper(randomHex(5)), u, nil))
			}
		})
	})
	held := &holds{}
	start("slowloris (a head byte every 2 s)", func(ctx context.Context, t *tally) { slowloris(ctx, c.lb, c.slowloris, t, held, true) })
	idle := &holds{}
	start("idle connections (nothing sent)", func(ctx context.Context, t *tally) { slowloris(ctx, c.lb, c.slowloris, t, idle, false) })
	wg.Wait()

	after, err := snapshot(ctx, c)
	if err != nil {
		return fmt.Errorf("after: %w", err)
	}
	fmt.Printf("\nwell-behaved: %d requests, %d failed %v\n", good.n.Load(), good.failed(), good.codes())
	names := make([]string, 0, len(abuse))
	for n := range abuse {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Printf("abuse %-40s %6d requests, answers %v\n", n+":", abuse[n].n.Load(), abuse[n].codes())
	}
	if len(noAnswers.why) > 0 {
		fmt.Printf("requests with no answer, by cause: %v\n", noAnswers.why)
	}
	fmt.Printf("slowloris connections held at most %s, idle ones %s (closed by the server: %d and %d)\n",
		held.max(), idle.max(), held.closed(), idle.closed())
	fmt.Printf("after: %d backends in rotation (%d healthy in the manager), /metrics %d lines (%+d), RSS %s (%+.1f MiB)\n",
		after.inRotation, after.managerHealthy, after.metricLines, after.metricLines-before.metricLines,
		mib(after.rss), float64(after.rss-before.rss)/(1<<20))
	var bad []string
	if good.failed() > 0 {
		bad = append(bad, fmt.Sprintf("%d well-behaved requests failed", good.failed()))
	}
	if after.inRotation < before.inRotation {
		bad = append(bad, fmt.Sprintf("backends in rotation fell from %d to %d", before.inRotation, after.inRotation))
	}
	if after.managerHealthy < before.managerHealthy {
		bad = append(bad, fmt.Sprintf("healthy machines fell from %d to %d", before.managerHealthy, after.managerHealthy))
	}
	if g := after.metricLines - before.metricLines; g > c.maxMetricGrowth {
		bad = append(bad, fmt.Sprintf("/metrics grew by %d lines", g))
	}
	if held.closed() < c.slowloris || idle.closed() < c.slowloris {
		bad = append(bad, "slowloris or idle connections were still held when the run ended")
	}
	if len(bad) > 0 {
		return errors.New(strings.Join(bad, "; "))
	}
	fmt.Println("ok: every well-behaved request served, every backend still in rotation")
	return nil
}

// state is what the fleet looks like at one moment.
type state struct {
	inRotation     int   // backends the balancer would pick
	managerHealthy int   // machines the manager reports healthy
	metricLines    int   // lines of the balancer's /metrics
	rss            int64 // bytes; 0 when unknown
}

func snapshot(ctx context.Context, c config) (state, error) {
	var s state
	var st struct {
		Languages map[string]struct {
			Versions map[string]struct {
				Backends []struct {
					Healthy bool `json:"healthy"`
				} `json:"backends"`
			} `json:"versions"`
		} `json:"languages"`
	}
	if err := getJSON(ctx, c.admin+"/backends", c.secret, &st); err != nil {
		return s, err
	}
	for _, l := range st.Languages {
		for _, v := range l.Versions {
			for _, b := range v.Backends {
				if b.Healthy {
					s.inRotation++
				}
			}
		}
	}
	var mm struct {
		Linters []map[string]struct {
			IsHealthy bool `json:"is_healthy"`
		} `json:"linters"`
	}
	if err := getJSON(ctx, c.mm+"/status", "", &mm); err != nil {
		return s, err
	}
	for _, l := range mm.Linters {
		for _, m := range l {
			if m.IsHealthy {
				s.managerHealthy++
			}
		}
	}
	for _, base := range []string{c.admin, c.lb} {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
		req.Header.Set("X-Secret-Key", c.secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return s, err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			s.metricLines = bytes.Count(b, []byte("\n"))
			break
		}
	}
	if c.pid > 0 {
		s.rss = rss(c.pid)
	}
	return s, nil
}

func getJSON(ctx context.Context, u, secret string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	if secret != "" {
		req.Header.Set("X-Secret-Key", secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("GET %s: %s: %s", u, resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// rss reads the resident set size of pid from /proc.
func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mib(n int64) string {
	if n == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// wellBehaved sends c.rate small lint requests a second, alternating
// languages, and counts every answer that is not a 200.
func wellBehaved(ctx context.Context, c config, t *tally) {
	bodies := []struct{ lang, body string }{
		{"python", lintBody("import os\n\n\ndef f(a, b):\n    return a + b\n")},
		{"java", lintBody("class A {\n    int f(int a) {\n        return a + 1;\n    }\n}\n")},
	}
	var i atomic.Int64
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(c.rate))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-tick.C:
		}
		b := bodies[i.Add(1)%2]
		wg.Go(func() {
			// Its own deadline, so the end of the run does not cancel a
			// request in flight and count it as failed.
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			t.add(post(rctx, c.lb+"/lint/"+b.lang, b.body))
		})
	}
}

func lintBody(code string) string {
	b, _ := json.Marshal(map[string]string{"code": code})
	return string(b)
}

var client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}

// post sends body and returns the status, or 0 when no answer came.
func post(ctx context.Context, u, body string) int {
	return do(ctx, http.MethodPost, u, strings.NewReader(body))
}

func do(ctx context.Context, method, u string, body io.Reader) int {
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return -1
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return cutAtEnd
		}
		noAnswer(err)
		return 0
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// cutAtEnd is the code of a request the end of the run cancelled: not
// counted.
const cutAtEnd = -3

// noAnswers counts why requests got no answer, for the report.
var noAnswers = struct {
	sync.Mutex
	why map[string]int
}{why: map[string]int{}}

func noAnswer(err error) {
	msg := err.Error()
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		msg = msg[i+2:] // the cause, without the URL
	}
	noAnswers.Lock()
	noAnswers.why[msg]++
	noAnswers.Unlock()
}

// raw sends one request as given bytes on a new connection (for what
// net/http's client refuses to send) and returns the answer's status.
func raw(ctx context.Context, base, request string) int {
	u, err := url.Parse(base)
	if err != nil {
		return -1
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		return 0
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		noAnswer(err)
		return 0
	}
	line := make([]byte, 12)
	if _, err := io.ReadFull(conn, line); err != nil {
		if ctx.Err() != nil {
			return cutAtEnd
		}
		noAnswer(err)
		return 0
	}
	code, _ := strconv.Atoi(string(line[9:12]))
	return code
}

// slowloris holds n connections that send a request head one byte every
// two seconds (or, without dribble, nothing at all), and counts how many
// the server closed before the run ended (as status 408, "closed by the
// server") and how long it held them.
func slowloris(ctx context.Context, base string, n int, t *tally, h *holds, dribble bool) {
	u, err := url.Parse(base)
	if err != nil {
		return
	}
	head := "POST /lint/python HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Padding: " + strings.Repeat("a", 4096)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", u.Host)
			if err != nil {
				t.add(0)
				return
			}
			defer conn.Close()
			start := time.Now()
			closed := make(chan struct{})
			go func() { // the server closing shows as the end of reads
				_, _ = io.Copy(io.Discard, conn)
				close(closed)
			}()
			tick := time.NewTicker(2 * time.Second)
			defer tick.Stop()
			for i := 0; ; i++ {
				select {
				case <-ctx.Done():
					t.add(-2) // still held when the run ended
					return
				case <-closed:
					h.add(time.Since(start))
					t.add(http.StatusRequestTimeout)
					return
				case <-tick.C:
				}
				if dribble {
					_, _ = conn.Write([]byte{head[i%len(head)]})
				}
			}
		})
	}
	wg.Wait()
}

// holds records how long the server held connections before closing them.
type holds struct {
	mu sync.Mutex
	d  []time.Duration // guarded by mu
}

func (h *holds) add(d time.Duration) {
	h.mu.Lock()
	h.d = append(h.d, d)
	h.mu.Unlock()
}

func (h *holds) max() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	var m time.Duration
	for _, d := range h.d {
		m = max(m, d)
	}
	return m.Round(100 * time.Millisecond)
}

func (h *holds) closed() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.d)
}

// burst runs f n times at once: consecutive failures are what passive
// health counts, and a burst lands them on a backend back to back.
func burst(n int, f func()) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(f)
	}
	wg.Wait()
}

func every(ctx context.Context, d time.Duration, f func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			f()
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tally counts answers by status (0: no answer; -2: slowloris connection
// still open at the end).
type tally struct {
	n  atomic.Int64
	mu sync.Mutex
	by map[int]int // guarded by mu
}

func (t *tally) add(code int) {
	if code == cutAtEnd {
		return
	}
	t.n.Add(1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.by == nil {
		t.by = map[int]int{}
	}
	t.by[code]++
}

func (t *tally) failed() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for code, k := range t.by {
		if code != http.StatusOK {
			n += k
		}
	}
	return n
}

func (t *tally) codes() map[int]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[int]int, len(t.by))
	for k, v := range t.by {
		out[k] = v
	}
	return out
}
