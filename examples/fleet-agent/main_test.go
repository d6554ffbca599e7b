package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/agent/agenttest"
	"github.com/fleetkit/fleetkit/internal/kubetest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

// cluster is the real single-node cluster (a kubelet running real Pods).
var cluster kubetest.Cluster

func TestMain(m *testing.M) { os.Exit(testenv.CheckLeaks(testenv.Run(m))) }

// instanceImage is the per-instance service, built by
// scripts/build-images.sh.
const instanceImage = "fleetkit/fleet-manager:latest"

// clusterWait bounds every wait on the node (it shares 2 cores).
const clusterWait = 3 * time.Minute

// Bad flags fail before anything starts, naming the problem.
func TestFlags(t *testing.T) {
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	require.NoError(t, os.WriteFile(tok, []byte("t\n"), 0o600))
	kc := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "http://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, namespace: ns1}}]
current-context: c
`), 0o600))
	base := []string{"-control-plane", "http://127.0.0.1:1", "-cluster", "c1", "-kubeconfig", kc, "-addr", "127.0.0.1:0"}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"no token file": {base, "-token-file is required"},
		"missing token": {append(base, "-token-file", filepath.Join(dir, "nope")), "no such file"},
		"host mode":     {append(base, "-token-file", tok, "-host-mode", "nodeport"), "host mode"},
		"no cluster":    {append(base, "-token-file", tok, "-cluster", ""), "no cluster id"},
		"bad URL":       {append(base, "-token-file", tok, "-control-plane", "cp"), "control plane URL"},
		"extra args":    {append(base, "-token-file", tok, "extra"), "unexpected arguments"},
		"unknown flag":  {append(base, "-nope"), "not defined"},
	} {
		t.Run(name, func(t *testing.T) {
			err := run(t.Context(), tc.args, io.Discard, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// agentProc is the agent binary's run, in process.
type agentProc struct {
	addr   string
	cancel context.CancelFunc
	done   chan error
}

// startAgent runs the agent with the contract's flags against cp, in ns of
// the node; stop waits for it to exit.
func startAgent(t testing.TB, node *kubetest.Node, cp *agenttest.ControlPlane, ns string, extra ...string) *agentProc {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tok, []byte(cp.Token+"\n"), 0o600))
	args := append([]string{"-control-plane", cp.URL(), "-kind", cp.Kind.Name, "-cluster", cp.Cluster,
		"-token-file", tok, "-namespace", ns, "-kubeconfig", node.Kubeconfig(), "-host-mode", "clusterip",
		"-heartbeat", "1s", "-resync", "10s", "-capacity", "10", "-image", instanceImage, "-addr", "127.0.0.1:0"}, extra...)
	ctx, cancel := context.WithCancel(context.Background())
	p := &agentProc{cancel: cancel, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() { p.done <- run(ctx, args, testWriter{t}, func(a string) { addr <- a }) }()
	select {
	case p.addr = <-addr:
	case err := <-p.done:
		t.Fatalf("fleet-agent exited: %v", err)
	}
	t.Cleanup(p.stop)
	return p
}

func (p *agentProc) stop() {
	if p.cancel == nil {
		return
	}
	p.cancel()
	p.cancel = nil
	<-p.done
}

// testWriter sends the agent's log to the test's.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// waitFor polls cond until it holds, failing after clusterWait, and
// returns how long it took.
func waitFor(t testing.TB, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > clusterWait {
			t.Fatalf("not within %s: %s", clusterWait, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

var client = &http.Client{Timeout: 5 * time.Second}

// nodeEnv is the node with the instance image loaded.
func nodeEnv(t testing.TB) (*kubetest.Node, kubernetes.Interface) {
	t.Helper()
	testenv.Short(t)
	node := cluster.Get(t)
	if err := loadImage(node); err != nil {
		testenv.Missing(t, "%v (build the images with scripts/build-images.sh)", err)
	}
	cs, err := kubernetes.NewForConfig(node.Config())
	require.NoError(t, err)
	return node, cs
}

var loaded struct {
	once sync.Once
	err  error
}

func loadImage(node *kubetest.Node) error {
	loaded.once.Do(func() { loaded.err = node.LoadImages(context.Background(), instanceImage) })
	return loaded.err
}

// TestAgentOnNode runs the agent binary against a control plane of the
// test's (the wire contract, a desired set the test controls) on a real
// node: the instance's Pod of the per-instance service becomes ready and
// answers GET /health/<id> at the host the agent reports (the Service's
// ClusterIP: the node has no cluster DNS, it has kube-proxy); a Pod
// deleted by hand is replaced and the instance answers again; an instance
// no longer desired loses every object and its Pod. /healthz and
// /metrics answer.
func TestAgentOnNode(t *testing.T) {
	node, cs := nodeEnv(t)
	ns := kubetest.Namespace(t, node)
	cp := agenttest.NewControlPlane(t, fleet.Dinosaur, "node1")
	const id = "d0000000000000000001"
	start := time.Now()
	cp.Set(cp.Instance(id, "rex"))
	p := startAgent(t, node, cp, ns)
	t.Cleanup(func() {
		if t.Failed() {
			dump(t, cs, ns)
		}
	})

	var host string
	waitFor(t, "the instance reported ready", func() bool {
		r, _ := cp.Last()
		host = r[id].Host
		return r[id].Phase == fleet.PhaseReady
	})
	ready := time.Since(start)
	svc, err := cs.CoreV1().Services(ns).Get(t.Context(), "dinosaur-"+id, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, svc.Spec.ClusterIP+":8080", host)
	waitFor(t, "the instance answering at its host", func() bool { return agenttest.Answers(context.Background(), host, id) })
	t.Logf("create → reported ready %s, → answering at %s %s", ready.Round(time.Millisecond), host, time.Since(start).Round(time.Millisecond))
	resp, err := client.Get("http://" + host + "/")
	require.NoError(t, err)
	var info map[string]string
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&info))
	resp.Body.Close()
	assert.Equal(t, map[string]string{"id": id, "kind": "dinosaur", "name": "rex"}, info)

	for path, want := range map[string]string{"/healthz": "ok", "/metrics": "fleetkit_agent_applies_total"} {
		resp, err := client.Get("http://" + p.addr + path)
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Contains(t, string(b), want, path)
	}

	// A Pod deleted by hand: the Deployment replaces it, the agent
	// reports the gap (installing) and then the instance ready again, and
	// it answers.
	mark := len(cp.Reports())
	pods := livePods(t, cs, ns, id)
	require.Len(t, pods, 1)
	for name := range pods {
		require.NoError(t, cs.CoreV1().Pods(ns).Delete(t.Context(), name, metav1.DeleteOptions{}))
		waitFor(t, "a new ready Pod", func() bool {
			now := livePods(t, cs, ns, id)
			_, old := now[name]
			return len(now) == 1 && !old && slicesAll(now)
		})
	}
	waitFor(t, "ready again and answering", func() bool {
		r, _ := cp.Last()
		return r[id].Phase == fleet.PhaseReady && agenttest.Answers(context.Background(), r[id].Host, id)
	})
	gap := false
	for _, r := range cp.Reports()[mark:] {
		gap = gap || r[id].Phase == fleet.PhaseInstalling
	}
	assert.True(t, gap, "the agent reported the instance not ready while its Pod was replaced")

	// No longer desired: every object and the Pod go, the report is
	// empty.
	cp.Set()
	waitFor(t, "the objects and the Pod gone", func() bool {
		return len(livePods(t, cs, ns, id)) == 0 && len(allObjects(t, cs, ns)) == 0
	})
	waitFor(t, "an empty report", func() bool { r, n := cp.Last(); return n > 0 && len(r) == 0 })
}

// livePods returns the instance's Pods not being deleted: name → ready.
func livePods(t testing.TB, cs kubernetes.Interface, ns, id string) map[string]bool {
	t.Helper()
	pods, err := agenttest.Pods(context.Background(), cs, ns, id)
	require.NoError(t, err)
	return pods
}

// allObjects lists the agent's instance objects and Pods in ns.
func allObjects(t testing.TB, cs kubernetes.Interface, ns string) map[string]types.UID {
	t.Helper()
	all, err := agenttest.Objects(context.Background(), cs, ns, "")
	require.NoError(t, err)
	return all
}

func slicesAll(m map[string]bool) bool {
	for _, v := range m {
		if !v {
			return false
		}
	}
	return true
}

// dump logs the namespace's Pods and events, for a failed test.
func dump(t *testing.T, cs kubernetes.Interface, ns string) {
	ctx := context.Background()
	if pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pods.Items {
			b, _ := json.Marshal(p.Status)
			t.Logf("Pod %s: %s", p.Name, b)
		}
	}
	if evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, e := range evs.Items {
			t.Logf("event %s %s: %s %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
}
