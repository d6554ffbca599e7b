package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/balancer"
	"github.com/fleetkit/fleetkit/internal/kubetest"
	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/rollout"
)

// cluster is the real single-node cluster the chart is installed into.
var cluster kubetest.Cluster

// The images the chart runs, built by scripts/build-images.sh.
var chartImages = []string{"fleetkit/loadbalancer:latest", "fleetkit/machine-manager:latest",
	"fleetkit/linter:1.0", "fleetkit/linter:1.2", "fleetkit/linter:2.0"}

// clusterWait bounds every wait on the cluster (generous: the node shares
// 2 cores with other work).
const clusterWait = 3 * time.Minute

// installed is the chart installed into a test namespace, reached from the
// host through its Services' ClusterIPs (the node runs kube-proxy).
type installed struct {
	t        *testing.T
	cs       clientset.Interface
	ns       string
	name     string // the machine manager's -name, which labels its Pods
	lint     string // the balancer Service's public URL
	mm       string // the machine manager Service's URL
	mmSecret string
	lb       *balancer.Client // the balancer's admin API, through its Service
}

// onNode returns the test node with images loaded, a client, and a new
// namespace whose Pods and events are logged if the test fails; it skips
// under go test -short, and without the node or the images (fails under
// CI=true).
func onNode(t *testing.T, images ...string) (*kubetest.Node, clientset.Interface, string) {
	t.Helper()
	testenv.Short(t)
	node := cluster.Get(t)
	if err := node.LoadImages(t.Context(), images...); err != nil {
		testenv.Missing(t, "%v (build the images with scripts/build-images.sh)", err)
	}
	cs, err := clientset.NewForConfig(node.Config())
	require.NoError(t, err)
	ns := kubetest.Namespace(t, node)
	t.Cleanup(func() {
		if t.Failed() {
			dumpNamespace(t, cs, ns)
		}
	})
	return node, cs, ns
}

// installChart installs the chart with the Helm SDK into a new namespace
// of the test node, with vals, and waits until its Deployments are
// available; then upgrades it to point the manager at the balancer's
// ClusterIP.
func installChart(t *testing.T, vals map[string]any) *installed {
	t.Helper()
	node, cs, ns := onNode(t, chartImages...)
	cfg := helmConfig(t, node, ns)
	c, err := loader.Load(chartDir)
	require.NoError(t, err)
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = "fleet", ns
	in.Wait, in.Timeout = true, clusterWait
	start := time.Now()
	_, err = in.RunWithContext(t.Context(), c, vals)
	require.NoError(t, err, "helm install")
	t.Logf("helm install: Deployments available after %s", time.Since(start).Round(time.Millisecond))
	secret, err := cs.CoreV1().Secrets(ns).Get(t.Context(), "fleet-linter-fleet-secret", metav1.GetOptions{})
	require.NoError(t, err)

	// The test node has no cluster DNS: the manager reaches the balancer
	// at its Service's ClusterIP, known once installed.
	lbSvc, err := cs.CoreV1().Services(ns).Get(t.Context(), "fleet-linter-fleet-balancer", metav1.GetOptions{})
	require.NoError(t, err)
	lbIP := lbSvc.Spec.ClusterIP
	mmVals := map[string]any{}
	if v, ok := vals["machineManager"].(map[string]any); ok {
		mmVals = maps.Clone(v)
	}
	mmVals["balancerAddress"] = "http://" + lbIP + ":8081"
	vals = maps.Clone(vals)
	vals["machineManager"] = mmVals
	up := action.NewUpgrade(cfg)
	up.Namespace, up.Wait, up.Timeout = ns, true, clusterWait
	_, err = up.RunWithContext(t.Context(), "fleet", c, vals)
	require.NoError(t, err, "helm upgrade")
	again, err := cs.CoreV1().Secrets(ns).Get(t.Context(), secret.Name, metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, secret.Data, again.Data, "an upgrade keeps the generated secrets")

	in2 := &installed{t: t, cs: cs, ns: ns, name: "fleet-linter-fleet"}
	svc := func(name string) string {
		s, err := cs.CoreV1().Services(ns).Get(t.Context(), name, metav1.GetOptions{})
		require.NoError(t, err)
		return s.Spec.ClusterIP
	}
	in2.mmSecret = string(secret.Data["manager"])
	in2.lint = "http://" + lbIP + ":80"
	in2.mm = "http://" + svc("fleet-linter-fleet-machine-manager") + ":5000"
	in2.lb, err = balancer.NewClient("http://"+lbIP+":8081", string(secret.Data["admin"]), balancer.ClientOptions{})
	require.NoError(t, err)
	// Helm's wait may see the Recreate of the manager before it began:
	// wait for the new manager alone, answering through its Service.
	in2.waitFor("the upgraded machine manager", func() bool {
		d, err := cs.AppsV1().Deployments(ns).Get(t.Context(), "fleet-linter-fleet-machine-manager", metav1.GetOptions{})
		if err != nil || d.Status.ObservedGeneration < d.Generation || d.Status.Replicas != 1 ||
			d.Status.UpdatedReplicas != 1 || d.Status.ReadyReplicas != 1 {
			return false
		}
		_, ok := in2.status()
		return ok
	})
	t.Cleanup(func() {
		// The manager's Pods are not the release's: teardown is deleting
		// them (the namespace's deletion would too, later).
		_ = cs.CoreV1().Pods(ns).DeleteCollection(context.Background(), metav1.DeleteOptions{},
			metav1.ListOptions{LabelSelector: machines.LabelProvider + "=" + in2.name})
	})
	return in2
}

// post calls the machine manager's API and returns its answer's JSON.
func (f *installed) post(path, body string) map[string]any {
	f.t.Helper()
	req, err := http.NewRequestWithContext(f.t.Context(), http.MethodPost, f.mm+path, strings.NewReader(body))
	require.NoError(f.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Secret-Key", f.mmSecret)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	require.Equal(f.t, http.StatusOK, resp.StatusCode, "%s: %s", path, b)
	var out map[string]any
	require.NoError(f.t, json.Unmarshal(b, &out), "%s", b)
	return out
}

// mmStatus is the part of the manager's /status the test reads.
type mmStatus struct {
	Linters []map[string]struct {
		Version   string `json:"version"`
		Lang      string `json:"lang"`
		IsHealthy bool   `json:"is_healthy"`
	} `json:"linters"`
	Rollouts map[string]struct {
		Current string `json:"current"`
		Target  string `json:"target"`
		Step    int    `json:"step"`
	} `json:"rollouts"`
}

func (f *installed) status() (mmStatus, bool) {
	var st mmStatus
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(f.mm + "/status")
	if err != nil {
		return st, false
	}
	defer resp.Body.Close()
	return st, resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&st) == nil
}

// pods returns the manager's live linter Pods: name → Pod IP.
func (f *installed) pods() map[string]string {
	f.t.Helper()
	list, err := f.cs.CoreV1().Pods(f.ns).List(context.Background(), metav1.ListOptions{LabelSelector: machines.LabelProvider + "=" + f.name})
	require.NoError(f.t, err)
	out := map[string]string{}
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out[p.Name] = p.Status.PodIP
		}
	}
	return out
}

// settled reports whether python has exactly n healthy machines of
// version, each a live Pod, and the balancer routes to exactly those, all
// of the traffic to version.
func (f *installed) settled(version string, n int) bool {
	st, ok := f.status()
	if !ok {
		return false
	}
	ms := map[string]string{}
	for _, l := range st.Linters {
		for addr, s := range l {
			if s.Lang != "python" {
				continue
			}
			if !s.IsHealthy || s.Version != version {
				return false
			}
			ms["http://"+addr] = s.Version
		}
	}
	backends, ratio, err := f.lb.Routes(context.Background(), "python")
	if err != nil || len(ms) != n || len(backends) != n || len(ratio) != 1 || ratio[version] == 0 {
		return false
	}
	pods := f.pods()
	if len(pods) != n {
		return false
	}
	for _, ip := range pods {
		if backends["http://"+ip+":8080"] != version {
			return false
		}
	}
	return true
}

// waitFor waits until cond holds, failing the test after clusterWait.
func (f *installed) waitFor(what string, cond func() bool) time.Duration {
	f.t.Helper()
	start := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Since(start) > clusterWait {
			f.t.Fatalf("not within %s: %s", clusterWait, what)
		}
		<-tick.C
	}
	return time.Since(start)
}

// lintOnce lints a Python snippet through the balancer's Service.
func lintOnce(ctx context.Context, client *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/lint/python", strings.NewReader(`{"code": "import os,sys\n"}`))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", resp.Status, b)
	}
	return nil
}

// load lints steadily through the balancer's Service from two clients
// until stop, and counts what failed.
type load struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// mu guards total and failed.
	mu     sync.Mutex
	total  int
	failed []string
}

func startLoad(url string) *load {
	ctx, cancel := context.WithCancel(context.Background())
	ld := &load{cancel: cancel}
	for range 2 {
		ld.wg.Go(func() {
			client := &http.Client{Timeout: 10 * time.Second}
			for ctx.Err() == nil {
				err := lintOnce(ctx, client, url)
				if ctx.Err() != nil {
					return
				}
				ld.mu.Lock()
				ld.total++
				if err != nil {
					ld.failed = append(ld.failed, err.Error())
				}
				ld.mu.Unlock()
				time.Sleep(20 * time.Millisecond) // steady, not flat out: the node has 2 cores
			}
		})
	}
	return ld
}

// stop stops the load and returns the requests made and those that failed.
func (ld *load) stop() (int, []string) {
	ld.cancel()
	ld.wg.Wait()
	ld.mu.Lock()
	defer ld.mu.Unlock()
	return ld.total, ld.failed
}

// TestChartOnCluster installs the chart into the real test node with the
// Helm SDK and runs the fleet through it: lint requests through the
// balancer's Service reach linter Pods; a linter Pod deleted by hand is
// noticed and replaced; a gradual rollout to 2.0 under steady load fails no
// request; a rollout to a crashing version is detected and rolled back;
// and a new machine-manager Pod adopts the running linters without
// duplicates.
//
//	CI=true nice go test -count=1 -run TestChartOnCluster -v ./deploy/
func TestChartOnCluster(t *testing.T) {
	// The manager's state outlives its Pod on a hostPath (one node): the
	// restarted manager knows the rollout it had done.
	state := t.TempDir()
	require.NoError(t, os.Chown(state, 65534, 65534))
	f := installChart(t, map[string]any{
		"machineManager": map[string]any{
			"stateVolume": map[string]any{"hostPath": map[string]any{"path": state, "type": "Directory"}},
			"config": map[string]any{
				"start_timeout":     "60s",
				"remove_timeout":    "30s",
				"update_steps":      []any{34, 67, 100},
				"health":            map[string]any{"interval": "250ms", "timeout": "2s", "threshold": 2},
				"replace_unhealthy": true,
				"balancer":          map[string]any{"sample_interval": "500ms"},
				// Automatic mode: each step bakes 2 s; a machine of the new
				// version that crashes aborts it. Latency is not judged: the
				// node shares 2 cores with the test.
				"auto": map[string]any{"enabled": true, "step_after": "2s", "min_requests": 5, "max_error_rate": 0.01,
					"max_latency_ratio": 1000, "latency_slack": "10s", "max_machine_failures": 0},
			},
		},
		"languages": map[string]any{"python": map[string]any{"version": "1.0", "versions": map[string]any{
			"1.0": map[string]any{}, "2.0": map[string]any{},
			"1.2-crashy": map[string]any{"tag": "1.2", "args": []any{"-language", "{language}", "-crash-rate", "0.2"}},
		}}},
	})
	const n = 3
	for range n {
		f.post("/create", `{"lang":"python"}`)
	}
	f.waitFor("3 machines of 1.0 in the balancer", func() bool { return f.settled("1.0", n) })

	t.Run("lint through the balancer Service", func(t *testing.T) {
		client := &http.Client{Timeout: 10 * time.Second}
		for range 20 {
			require.NoError(t, lintOnce(t.Context(), client, f.lint))
		}
		backends, _, err := f.lb.Routes(t.Context(), "python")
		require.NoError(t, err)
		var want []string
		for _, ip := range f.pods() {
			want = append(want, "http://"+ip+":8080")
		}
		assert.ElementsMatch(t, want, slices.Collect(maps.Keys(backends)), "the backends are the linter Pods")
	})

	t.Run("a linter Pod deleted by hand is replaced", func(t *testing.T) {
		before := f.pods()
		var victim string
		for name := range before {
			victim = name
			break
		}
		require.NoError(t, f.cs.CoreV1().Pods(f.ns).Delete(t.Context(), victim, metav1.DeleteOptions{}))
		took := f.waitFor("the deleted Pod replaced", func() bool {
			_, still := f.pods()[victim]
			return !still && f.settled("1.0", n)
		})
		t.Logf("Pod %s deleted by hand: replaced and in the balancer %s later", victim, took.Round(time.Millisecond))
	})

	t.Run("gradual rollout to 2.0 under load", func(t *testing.T) {
		ld := startLoad(f.lint)
		start := time.Now()
		f.post("/init-update", `{"lang":"python","version":"2.0"}`)
		took := f.waitFor("the rollout to 2.0 done", func() bool {
			st, ok := f.status()
			return ok && st.Rollouts["python"].Target == "" && st.Rollouts["python"].Current == "2.0" && f.settled("2.0", n)
		})
		total, failed := ld.stop()
		assert.Empty(t, failed, "no request fails during the rollout")
		assert.Greater(t, total, 50)
		t.Logf("rollout 1.0 → 2.0 of %d Pods, 3 automatic steps: done %s after init-update returned (%s in all); %d requests, %d failed", n,
			took.Round(time.Millisecond), time.Since(start).Round(time.Millisecond), total, len(failed))
	})

	t.Run("a crashing version is rolled back", func(t *testing.T) {
		ld := startLoad(f.lint)
		f.post("/init-update", `{"lang":"python","version":"1.2-crashy"}`)
		took := f.waitFor("the crashing version rolled back", func() bool {
			st, ok := f.status()
			return ok && st.Rollouts["python"].Target == "" && st.Rollouts["python"].Current == "2.0" && f.settled("2.0", n)
		})
		total, failed := ld.stop()
		t.Logf("crashing version: back to 2.0 at full capacity %s after init; %d requests, %d failed", took.Round(time.Millisecond), total, len(failed))
		resp, err := http.Get(f.mm + "/history")
		require.NoError(t, err)
		defer resp.Body.Close()
		var h struct {
			Languages map[string]struct {
				Verdicts []struct {
					Result string `json:"result"`
					Reason string `json:"reason"`
				} `json:"verdicts"`
			} `json:"languages"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
		vs := h.Languages["python"].Verdicts
		require.NotEmpty(t, vs)
		assert.Equal(t, "fail", vs[len(vs)-1].Result, "the abort is the analysis' verdict: %s", vs[len(vs)-1].Reason)
	})

	t.Run("a new machine-manager Pod adopts the linters", func(t *testing.T) {
		before := f.pods()
		sel := "app.kubernetes.io/component=machine-manager"
		list, err := f.cs.CoreV1().Pods(f.ns).List(t.Context(), metav1.ListOptions{LabelSelector: sel})
		require.NoError(t, err)
		require.Len(t, list.Items, 1)
		old := list.Items[0].Name
		ld := startLoad(f.lint)
		require.NoError(t, f.cs.CoreV1().Pods(f.ns).Delete(t.Context(), old, metav1.DeleteOptions{}))
		took := f.waitFor("a new manager Pod Ready", func() bool {
			list, err := f.cs.CoreV1().Pods(f.ns).List(t.Context(), metav1.ListOptions{LabelSelector: sel})
			if err != nil || len(list.Items) != 1 || list.Items[0].Name == old {
				return false
			}
			for _, c := range list.Items[0].Status.Conditions {
				if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
					return true
				}
			}
			return false
		})
		f.waitFor("the fleet as it was", func() bool { return f.settled("2.0", n) })
		// Nothing more happens: for a few seconds of the new manager's
		// health checks and router passes, no Pod is replaced or added.
		assert.Never(t, func() bool { return !maps.Equal(before, f.pods()) }, 3*time.Second, 250*time.Millisecond,
			"the new manager changed the adopted Pods")
		assert.True(t, f.settled("2.0", n))
		assert.Equal(t, before, f.pods(), "the same Pods: none replaced, none added")
		total, failed := ld.stop()
		assert.Empty(t, failed, "the balancer serves while the manager restarts")
		t.Logf("machine-manager Pod replaced: new one Ready %s after the delete; %d linter Pods adopted; %d requests, %d failed",
			took.Round(time.Millisecond), len(before), total, len(failed))
	})
}

// dumpNamespace logs the Pods of ns and its events: what a failed wait on
// the cluster needs to be understood.
func dumpNamespace(t *testing.T, cs clientset.Interface, ns string) {
	ctx := context.Background()
	if pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pods.Items {
			var conds []string
			for _, c := range p.Status.Conditions {
				conds = append(conds, fmt.Sprintf("%s=%s", c.Type, c.Status))
			}
			for _, c := range p.Status.ContainerStatuses {
				conds = append(conds, fmt.Sprintf("%s: ready=%v restarts=%d state=%+v", c.Name, c.Ready, c.RestartCount, c.State))
			}
			t.Logf("pod %s (%s, %s): %s", p.Name, p.Status.Phase, p.Status.PodIP, strings.Join(conds, ", "))
			if p.Labels["app.kubernetes.io/component"] == "machine-manager" {
				tail := int64(40)
				b, err := cs.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: &tail}).DoRaw(ctx)
				t.Logf("pod %s's log (%v):\n%s", p.Name, err, b)
			}
		}
	}
	if evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, e := range evs.Items {
			t.Logf("event %s %s/%s: %s %s (x%d)", e.LastTimestamp.Format(time.TimeOnly), e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message, e.Count)
		}
	}
}

// balancerPods returns the ready balancer replicas' admin clients, by Pod
// name.
func (f *installed) balancerPods(secret string) map[string]*balancer.Client {
	f.t.Helper()
	list, err := f.cs.CoreV1().Pods(f.ns).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/component=balancer"})
	require.NoError(f.t, err)
	out := map[string]*balancer.Client{}
	for _, p := range list.Items {
		ready := false
		for _, c := range p.Status.Conditions {
			ready = ready || c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
		}
		if ready && p.DeletionTimestamp == nil {
			c, err := balancer.NewClient("http://"+p.Status.PodIP+":8081", secret, balancer.ClientOptions{})
			require.NoError(f.t, err)
			out[p.Name] = c
		}
	}
	return out
}

// inStep reports whether there are n ready balancer replicas and each
// routes python to exactly the manager's linter Pods, all of version.
func (f *installed) inStep(secret, version string, n int) bool {
	pods := f.pods()
	want := map[string]string{}
	for _, ip := range pods {
		want["http://"+ip+":8080"] = version
	}
	reps := f.balancerPods(secret)
	if len(reps) != n {
		return false
	}
	for _, c := range reps {
		held, ratio, err := c.Routes(context.Background(), "python")
		if err != nil || !maps.Equal(held, want) || !maps.Equal(ratio, map[string]int{version: 100}) {
			return false
		}
	}
	return true
}

// TestChartTwoBalancers installs the chart with 2 balancer replicas: the
// machine manager keeps both in step through the Service's EndpointSlices,
// a third replica converges at once (its endpoint changes the router's
// Generation, which the manager reads every second, well within one
// resync), and lint requests through the Service reach the linters
// whichever replica answers.
//
//	CI=true nice go test -count=1 -run TestChartTwoBalancers -v ./deploy/
func TestChartTwoBalancers(t *testing.T) {
	f := installChart(t, map[string]any{
		"secret":   map[string]any{"admin": "admin-secret"},
		"balancer": map[string]any{"replicas": 2},
		"machineManager": map[string]any{"config": map[string]any{
			"remove_timeout": "30s", "health": map[string]any{"interval": "250ms"},
		}},
		"languages": map[string]any{"python": map[string]any{"version": "1.0", "versions": map[string]any{"1.0": map[string]any{}}}},
	})
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for name, c := range f.balancerPods("admin-secret") {
			held, ratio, err := c.Routes(context.Background(), "python")
			t.Logf("balancer %s: %v %v %v", name, held, ratio, err)
		}
		t.Logf("linter Pods: %v", f.pods())
		dep, err := f.cs.AppsV1().Deployments(f.ns).Get(context.Background(), "fleet-linter-fleet-machine-manager", metav1.GetOptions{})
		if err == nil {
			t.Logf("manager args: %v", dep.Spec.Template.Spec.Containers[0].Args)
		}
	})
	// /create returns once the Pod is Ready, answers the manager's health
	// check and is in every balancer replica: its latency is the
	// figure "Pod create → healthy in the balancer".
	const n = 20
	creates := make([]time.Duration, n)
	for i := range n {
		start := time.Now()
		f.post("/create", `{"lang":"python"}`)
		creates[i] = time.Since(start)
	}
	slices.Sort(creates)
	t.Logf("Pod create → healthy in both balancer replicas, %d sequential /create: p50 %s, p99 %s (min %s)", n,
		creates[n/2].Round(time.Millisecond), creates[n*99/100].Round(time.Millisecond), creates[0].Round(time.Millisecond))
	f.waitFor("both replicas route to the Pods", func() bool { return len(f.pods()) == n && f.inStep("admin-secret", "1.0", 2) })
	client := &http.Client{Timeout: 10 * time.Second}
	for range 20 {
		require.NoError(t, lintOnce(t.Context(), client, f.lint))
	}

	dep, err := f.cs.AppsV1().Deployments(f.ns).Get(t.Context(), "fleet-linter-fleet-balancer", metav1.GetOptions{})
	require.NoError(t, err)
	dep.Spec.Replicas = new(int32(3))
	_, err = f.cs.AppsV1().Deployments(f.ns).Update(t.Context(), dep, metav1.UpdateOptions{})
	require.NoError(t, err)
	f.waitFor("a third replica Ready", func() bool { return len(f.balancerPods("admin-secret")) == 3 })
	took := f.waitFor("the third replica in step", func() bool { return f.inStep("admin-secret", "1.0", 3) })
	assert.Less(t, took, rollout.DefaultResyncInterval, "within one resync")
	t.Logf("a third balancer replica: in step %s after it was Ready (resync %s)", took.Round(time.Millisecond), rollout.DefaultResyncInterval)
}
