package main

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/agent"
	"github.com/fleetkit/fleetkit/fleet/agent/agenttest"
	"github.com/fleetkit/fleetkit/fleet/sqlite"
	"github.com/fleetkit/fleetkit/internal/kubetest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

// kubeCluster is the real single-node cluster of the agent data plane's
// end-to-end tests.
var kubeCluster kubetest.Cluster

// nodeWait bounds every wait on the node (it shares 2 cores).
const nodeWait = 3 * time.Minute

// agentLink is the network between an agent and the control plane: a
// proxy the test can cut, and point at a restarted control plane (which
// listens on a new port).
type agentLink struct {
	srv    *httptest.Server
	target atomic.Pointer[url.URL]
	cut    atomic.Bool
}

func newAgentLink(t testing.TB, target string) *agentLink {
	l := &agentLink{}
	l.point(t, target)
	l.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.cut.Load() {
			http.Error(w, "cut off", http.StatusServiceUnavailable)
			return
		}
		p := httputil.NewSingleHostReverseProxy(l.target.Load())
		p.ErrorHandler = func(w http.ResponseWriter, _ *http.Request, err error) {
			http.Error(w, err.Error(), http.StatusBadGateway) // the control plane is down: said to the agent, not logged
		}
		p.ServeHTTP(w, r)
	}))
	t.Cleanup(l.srv.Close)
	return l
}

func (l *agentLink) point(t testing.TB, target string) {
	u, err := url.Parse(target)
	require.NoError(t, err)
	l.target.Store(u)
}

// nodeAgent is one agent of the library, in this process, for one
// stand-in cluster.
type nodeAgent struct {
	opts agent.Options
	cs   kubernetes.Interface
	stop func()
}

func (a *nodeAgent) start(t testing.TB) {
	t.Helper()
	ag, err := agent.New(a.cs, a.opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ag.Run(ctx) }()
	var once sync.Once
	a.stop = func() {
		once.Do(func() {
			cancel()
			assert.ErrorIs(t, <-done, context.Canceled)
		})
	}
	t.Cleanup(a.stop)
}

// objectsOf returns the UIDs of an instance's objects and Pods in ns
// ("": every instance's), by "Kind/name".
func objectsOf(t testing.TB, cs kubernetes.Interface, ns, id string) map[string]types.UID {
	t.Helper()
	all, err := agenttest.Objects(context.Background(), cs, ns, id)
	require.NoError(t, err)
	return all
}

// podsOf returns an instance's Pods not being deleted: name → ready.
func podsOf(t testing.TB, cs kubernetes.Interface, ns, id string) map[string]bool {
	t.Helper()
	pods, err := agenttest.Pods(context.Background(), cs, ns, id)
	require.NoError(t, err)
	return pods
}

func waitNode(t testing.TB, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > nodeWait {
			t.Fatalf("not within %s: %s", nodeWait, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// agentFleet is the fleet manager with the agent data plane on SQLite (a
// file: it survives a restart) and an agent per stand-in cluster.
type agentFleet struct {
	t      testing.TB
	fm     *manager
	args   []string
	db     string
	cs     kubernetes.Interface
	links  map[string]*agentLink
	agents map[string]*nodeAgent
	ns     map[string]string
}

// startAgentFleet starts the manager with clusters (id → capacity units
// its agent reports) and an agent each, in a namespace of its own on the
// test node.
func startAgentFleet(t testing.TB, clusters map[string]int) *agentFleet {
	t.Helper()
	testenv.Short(t)
	node := kubeCluster.Get(t)
	if err := node.LoadImages(t.Context(), DefaultInstanceImage); err != nil {
		testenv.Missing(t, "%v (build the images with scripts/build-images.sh)", err)
	}
	cs, err := kubernetes.NewForConfig(node.Config())
	require.NoError(t, err)
	t.Setenv("FLEETKIT_CACHE", t.TempDir())
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "agent-secret"), []byte("agent-token-key-0123456789abcdef\n"), 0o600))
	var yaml strings.Builder
	yaml.WriteString("clusters:\n")
	ids := slices.Sorted(maps.Keys(clusters))
	for _, id := range ids {
		fmt.Fprintf(&yaml, "  - {id: %s, cloud_provider: aws, region: us-east-1, multi_az: true}\n", id)
	}
	yaml.WriteString("interval: 200ms\nagent:\n  token_secret_file: agent-secret\n  stale_after: 3s\n")
	cfg := filepath.Join(dir, "fleet.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(yaml.String()), 0o600))
	f := &agentFleet{t: t, cs: cs, db: filepath.Join(dir, "fleet.db"), links: map[string]*agentLink{},
		agents: map[string]*nodeAgent{}, ns: map[string]string{}}
	f.args = []string{"-database-url", f.db, "-config", cfg, "-data-plane", "agent"}
	f.fm = start(t, f.args...)
	for _, id := range ids {
		var tok strings.Builder
		require.NoError(t, run(t.Context(), []string{"cluster-token", "-config", cfg, "-kind", "dinosaur", "-cluster", id}, &tok))
		f.ns[id] = kubetest.Namespace(t, node)
		f.links[id] = newAgentLink(t, f.fm.BaseURL)
		f.agents[id] = &nodeAgent{cs: cs, opts: agent.Options{
			ControlPlane: f.links[id].srv.URL, Kind: fleet.Dinosaur, Cluster: id, Token: strings.TrimSpace(tok.String()),
			Namespace: f.ns[id], HostMode: agent.HostClusterIP, Heartbeat: 500 * time.Millisecond, Resync: 5 * time.Second,
			Capacity: clusters[id], Version: "e2e",
		}}
		f.agents[id].start(t)
	}
	t.Cleanup(func() {
		if t.Failed() {
			for id, ns := range f.ns {
				t.Logf("cluster %s (namespace %s): %v", id, ns, objectsOf(t, cs, ns, ""))
			}
		}
	})
	return f
}

// restartManager stops the control plane and starts it again on the same
// database; the links point the agents at its new port.
func (f *agentFleet) restartManager() {
	f.fm.stop()
	f.fm = start(f.t, f.args...)
	for _, l := range f.links {
		l.point(f.t, f.fm.BaseURL)
	}
}

// create creates an instance and returns its id.
func (f *agentFleet) create(name string) string {
	f.t.Helper()
	r := f.fm.Do(f.t, alice, http.MethodPost, "dinosaurs?async=true", map[string]any{"name": name})
	require.Equal(f.t, http.StatusAccepted, r.Status, "%s", r.Raw)
	return r.Str("id")
}

// ready waits until the instance is ready and answers at its host; it
// returns its cluster and host.
func (f *agentFleet) ready(id string) (cluster, host string) {
	f.t.Helper()
	r := f.fm.WaitStatus(f.t, alice, id, "ready", nodeWait)
	cluster, host = r.Str("cluster_id"), r.Str("host")
	waitNode(f.t, id+" answering at "+host, func() bool { return agenttest.Answers(context.Background(), host, id) })
	return cluster, host
}

// TestAgentsOnNode is the agent data plane end to end on a real node: the
// fleet manager (agent data plane, SQLite) and two agents, each with its
// own namespace and token, standing in for two data-plane clusters (one
// node here; each agent sees only its namespace, as it would its own
// cluster). Cluster a's agent reports 2 units of capacity, b's none
// (unlimited): placement fills a, then b.
//
// Instances on both clusters become ready with real Pods answering GET
// /health/<id> at their reported address (the Service's ClusterIP);
// deleting one removes its objects and Pod. Faults: the agent restarted
// mid-provisioning (no duplicate, still ready), the control plane
// restarted (nothing lost, the agents carry on), an instance's Pod
// deleted by hand (replaced, ready again), an agent cut off for longer
// than its heartbeat (its cluster takes no new instance, nothing of it is
// deleted nor failed; reconnected, it takes instances again).
func TestAgentsOnNode(t *testing.T) {
	f := startAgentFleet(t, map[string]int{"a": 2, "b": 0})
	nsA, nsB := f.ns["a"], f.ns["b"]

	// Placed on both clusters, ready with real Pods.
	x1, x2 := f.create("x1"), f.create("x2")
	c1, h1 := f.ready(x1)
	c2, _ := f.ready(x2)
	x3 := f.create("x3")
	c3, h3 := f.ready(x3)
	assert.Equal(t, []string{"a", "a", "b"}, []string{c1, c2, c3}, "a holds 2 units, then b")
	assert.Len(t, objectsOf(t, f.cs, nsA, x1), 4, "Secret, Deployment, Service, Pod")
	assert.Len(t, objectsOf(t, f.cs, nsB, x3), 4)
	assert.Empty(t, objectsOf(t, f.cs, nsB, x1), "nothing of a's on b")

	// Deleting an instance removes its objects and its Pod.
	require.Equal(t, http.StatusAccepted, f.fm.Do(t, alice, http.MethodDelete, "dinosaurs/"+x2+"?async=true", nil).Status)
	f.fm.WaitStatus(t, alice, x2, "gone", nodeWait)
	waitNode(t, "x2's objects and Pod gone", func() bool { return len(objectsOf(t, f.cs, nsA, x2)) == 0 })

	// The agent restarted mid-provisioning: stopped once the instance's
	// root Secret exists, before it is ready; a new agent adopts what is
	// there — one of each object, one Pod — and the instance becomes
	// ready.
	x4 := f.create("x4")
	waitNode(t, "x4's Secret", func() bool { _, ok := objectsOf(t, f.cs, nsA, x4)["Secret/dinosaur-"+x4]; return ok })
	f.agents["a"].stop()
	assert.Equal(t, "provisioning", f.fm.Do(t, alice, http.MethodGet, "dinosaurs/"+x4, nil).Str("status"), "stopped mid-provisioning")
	f.agents["a"].start(t)
	c4, _ := f.ready(x4)
	assert.Equal(t, "a", c4)
	got := objectsOf(t, f.cs, nsA, x4)
	kinds := map[string]int{}
	for k := range got {
		kinds[strings.SplitN(k, "/", 2)[0]]++
	}
	assert.Equal(t, map[string]int{"Secret": 1, "Deployment": 1, "Service": 1, "Pod": 1}, kinds, "no duplicates: %v", got)

	// The control plane restarted: nothing lost, the agents carry on,
	// and a new instance goes to b (a is full).
	before := objectsOf(t, f.cs, nsA, "")
	f.restartManager()
	for _, id := range []string{x1, x3, x4} {
		r := f.fm.Do(t, alice, http.MethodGet, "dinosaurs/"+id, nil)
		assert.Equal(t, "ready", r.Str("status"), id)
	}
	x5 := f.create("x5")
	c5, _ := f.ready(x5)
	assert.Equal(t, "b", c5)
	assert.Equal(t, before, objectsOf(t, f.cs, nsA, ""), "a's objects untouched by the restart")

	// An instance's Pod deleted by hand: the Deployment replaces it and
	// the instance answers again at the same host.
	// The control plane shows the gap in failed_reason while it lasts.
	pods := podsOf(t, f.cs, nsA, x1)
	require.Len(t, pods, 1)
	gap := ""
	for name := range pods {
		require.NoError(t, f.cs.CoreV1().Pods(nsA).Delete(t.Context(), name, metav1.DeleteOptions{}))
		waitNode(t, "x1's new Pod ready", func() bool {
			if r := f.fm.Do(t, alice, http.MethodGet, "dinosaurs/"+x1, nil).Str("failed_reason"); r != "" {
				gap = r
			}
			now := podsOf(t, f.cs, nsA, x1)
			_, old := now[name]
			return len(now) == 1 && !old && !slices.Contains(slices.Collect(maps.Values(now)), false)
		})
	}
	waitNode(t, "x1 answering again, its failed_reason cleared", func() bool {
		r := f.fm.Do(t, alice, http.MethodGet, "dinosaurs/"+x1, nil)
		return agenttest.Answers(context.Background(), h1, x1) && r.Str("status") == "ready" && r.Str("failed_reason") == ""
	})
	t.Logf("the gap as the control plane saw it: %q", gap)

	// Room on a again (x4 deleted), then a's agent cut off for longer
	// than its heartbeat's stale period: the control plane places the
	// next instance on b, and nothing of a's is deleted or failed.
	require.Equal(t, http.StatusAccepted, f.fm.Do(t, alice, http.MethodDelete, "dinosaurs/"+x4+"?async=true", nil).Status)
	f.fm.WaitStatus(t, alice, x4, "gone", nodeWait)
	st, err := sqlite.Open(t.Context(), f.db)
	require.NoError(t, err)
	defer st.Close()
	beforeCut := objectsOf(t, f.cs, nsA, "")
	f.links["a"].cut.Store(true)
	cutAt := time.Now()
	waitNode(t, "a's last heartbeat older than the stale period (3s)", func() bool {
		r, err := st.AgentReport(t.Context(), "dinosaur", "a")
		require.NoError(t, err)
		return time.Since(r.HeartbeatAt) > 3500*time.Millisecond
	})
	x6 := f.create("x6")
	c6, _ := f.ready(x6)
	assert.Equal(t, "b", c6, "a is unschedulable while cut off")
	r1 := f.fm.Do(t, alice, http.MethodGet, "dinosaurs/"+x1, nil)
	assert.Equal(t, "ready", r1.Str("status"), "a's instance is not failed: %s", r1.Raw)
	assert.Equal(t, beforeCut, objectsOf(t, f.cs, nsA, ""), "nothing of a's deleted while cut off")
	assert.True(t, agenttest.Answers(context.Background(), h1, x1), "a's instance still answers")
	t.Logf("a cut off for %s", time.Since(cutAt).Round(time.Millisecond))

	// Reconnected, a takes instances again.
	f.links["a"].cut.Store(false)
	waitNode(t, "a's heartbeat fresh", func() bool {
		r, err := st.AgentReport(t.Context(), "dinosaur", "a")
		require.NoError(t, err)
		return time.Since(r.HeartbeatAt) < time.Second
	})
	x7 := f.create("x7")
	c7, _ := f.ready(x7)
	assert.Equal(t, "a", c7)
	assert.True(t, agenttest.Answers(context.Background(), h3, x3), "b's first instance answers throughout")

	// Everything deleted: both namespaces empty.
	for _, id := range []string{x1, x3, x5, x6, x7} {
		require.Equal(t, http.StatusAccepted, f.fm.Do(t, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil).Status)
	}
	for _, id := range []string{x1, x3, x5, x6, x7} {
		f.fm.WaitStatus(t, alice, id, "gone", nodeWait)
	}
	waitNode(t, "both namespaces empty", func() bool {
		return len(objectsOf(t, f.cs, nsA, "")) == 0 && len(objectsOf(t, f.cs, nsB, "")) == 0
	})
}

// BenchmarkAgentCreateToReady measures create → ready through the fleet
// manager's agent data plane on the real node: 20 instances created one
// after another by POST (async) to the manager, placed on one agent's
// cluster, each waited for until GET shows it ready (the agent applied
// its objects, its Pod passed its readiness probe — every second — and the
// agent's report reached the manager) and then until it answers GET
// /health/<id> at its host. Run it with -benchtime 1x.
//
//	go test -run '^$' -bench BenchmarkAgentCreateToReady -benchtime 1x ./examples/fleet-manager
func BenchmarkAgentCreateToReady(b *testing.B) {
	const n = 20
	f := startAgentFleet(b, map[string]int{"a": 0})
	for b.Loop() {
		ready := make([]time.Duration, 0, n)
		answering := make([]time.Duration, 0, n)
		var ids []string
		for i := range n {
			start := time.Now()
			id := f.create(fmt.Sprintf("b%d", i))
			ids = append(ids, id)
			r := f.fm.WaitStatus(b, alice, id, "ready", nodeWait)
			ready = append(ready, time.Since(start))
			waitNode(b, "answering", func() bool { return agenttest.Answers(context.Background(), r.Str("host"), id) })
			answering = append(answering, time.Since(start))
		}
		start := time.Now()
		for _, id := range ids {
			require.Equal(b, http.StatusAccepted, f.fm.Do(b, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil).Status)
		}
		for _, id := range ids {
			f.fm.WaitStatus(b, alice, id, "gone", nodeWait)
		}
		gone := time.Since(start)
		for _, m := range []struct {
			name string
			ds   []time.Duration
		}{{"ready", ready}, {"answering", answering}} {
			p50, p99 := agenttest.Percentile(m.ds, 50), agenttest.Percentile(m.ds, 99)
			b.ReportMetric(float64(p50.Microseconds())/1000, m.name+"_p50_ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, m.name+"_p99_ms")
			b.Logf("create → %s through the agent, %d sequential instances: p50 %s, p99 %s (min %s)", m.name, n,
				p50.Round(time.Millisecond), p99.Round(time.Millisecond), slices.Min(m.ds).Round(time.Millisecond))
		}
		b.ReportMetric(gone.Seconds(), "delete_all_s")
		b.Logf("delete %d → all gone (the agent removed their objects and reported it): %s", n, gone.Round(time.Millisecond))
	}
}

// BenchmarkAgentFleet measures a burst through the agent data plane on
// the real node: FLEETKIT_AGENT_N (default 100; the node's kubelet runs
// kubetest.MaxPods, 250, at most) instances created at once by 8
// clients, spread over two agents' clusters (a takes half, b the rest),
// each Pod a real per-instance service. It reports the time until all are ready (GET of
// the list shows it, polled every 250 ms), the create → ready p50/p99
// (POST sent → first seen ready), and the time until all are deleted and
// both namespaces are empty. Run it with -benchtime 1x.
//
//	go test -run '^$' -bench BenchmarkAgentFleet -benchtime 1x -timeout 30m ./examples/fleet-manager
func BenchmarkAgentFleet(b *testing.B) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("FLEETKIT_AGENT_N")); err == nil && v > 0 {
		n = v
	}
	f := startAgentFleet(b, map[string]int{"a": n / 2, "b": 0})
	for b.Loop() {
		var (
			mu      sync.Mutex
			created = map[string]time.Time{}
			wg      sync.WaitGroup
			next    atomic.Int64
		)
		start := time.Now()
		for range 8 {
			wg.Go(func() {
				for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
					at := time.Now()
					r := f.fm.Do(b, alice, http.MethodPost, "dinosaurs?async=true", map[string]any{"name": fmt.Sprintf("f%d", i)})
					if r.Status != http.StatusAccepted {
						b.Errorf("create: %d %s", r.Status, r.Raw)
						return
					}
					mu.Lock()
					created[r.Str("id")] = at
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Len(b, created, n)
		readyAt := map[string]time.Time{}
		perCluster := map[string]int{}
		waitNode(b, "all ready", func() bool {
			r := f.fm.Do(b, alice, http.MethodGet, "dinosaurs?size=1000", nil)
			now := time.Now()
			for _, it := range r.Items() {
				id, _ := it["id"].(string)
				if _, ok := readyAt[id]; !ok && it["status"] == "ready" {
					readyAt[id] = now
					c, _ := it["cluster_id"].(string)
					perCluster[c]++
				}
			}
			if len(readyAt) < n {
				time.Sleep(250 * time.Millisecond)
			}
			return len(readyAt) == n
		})
		all := time.Since(start)
		took := make([]time.Duration, 0, n)
		for id, at := range readyAt {
			took = append(took, at.Sub(created[id]))
		}
		p50, p99 := agenttest.Percentile(took, 50), agenttest.Percentile(took, 99)
		start = time.Now()
		for id := range created {
			require.Equal(b, http.StatusAccepted, f.fm.Do(b, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil).Status)
		}
		waitNode(b, "all gone, both namespaces empty", func() bool {
			r := f.fm.Do(b, alice, http.MethodGet, "dinosaurs?size=1000", nil)
			return len(r.Items()) == 0 && len(objectsOf(b, f.cs, f.ns["a"], "")) == 0 && len(objectsOf(b, f.cs, f.ns["b"], "")) == 0
		})
		gone := time.Since(start)
		b.ReportMetric(all.Seconds(), "all_ready_s")
		b.ReportMetric(float64(p50.Microseconds())/1000, "ready_p50_ms")
		b.ReportMetric(float64(p99.Microseconds())/1000, "ready_p99_ms")
		b.ReportMetric(gone.Seconds(), "all_gone_s")
		b.Logf("%d instances at once over two agents %v: all ready in %s (create → ready p50 %s, p99 %s); all deleted, objects and Pods gone in %s",
			n, perCluster, all.Round(time.Millisecond), p50.Round(time.Millisecond), p99.Round(time.Millisecond), gone.Round(time.Millisecond))
	}
}
