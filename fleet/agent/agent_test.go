package agent_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/agent"
	"github.com/fleetkit/fleetkit/fleet/agent/agenttest"
	"github.com/fleetkit/fleetkit/internal/kubetest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

// kubeEnv is a bare kube-apiserver: objects are stored, nothing runs
// them, and there is no garbage collector — so every deletion the tests
// see is the agent's own.
var kubeEnv kubetest.Env

func TestMain(m *testing.M) {
	code := testenv.Run(m)
	_ = kubeEnv.Stop()
	os.Exit(testenv.CheckLeaks(code))
}

// wait bounds every wait of the tests.
const wait = 60 * time.Second

// apiEnv is a namespace of its own on the bare API server.
type apiEnv struct {
	cs kubernetes.Interface
	ns string
}

func newAPIEnv(t *testing.T) apiEnv {
	t.Helper()
	srv := kubeEnv.Get(t)
	cs, err := kubernetes.NewForConfig(srv.Config())
	require.NoError(t, err)
	var b [3]byte
	_, _ = rand.Read(b[:])
	ns := "agent-" + hex.EncodeToString(b[:])
	_, err = cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	return apiEnv{cs: cs, ns: ns}
}

// runAgent runs an agent until the test ends or stop is called; stop
// waits for Run to return.
func runAgent(t *testing.T, cs kubernetes.Interface, opts agent.Options) (stop func()) {
	t.Helper()
	a, err := agent.New(cs, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		assert.ErrorIs(t, <-done, context.Canceled)
	}
	t.Cleanup(stop)
	return stop
}

func agentOptions(cp *agenttest.ControlPlane, ns string) agent.Options {
	return agent.Options{
		ControlPlane: cp.URL(), Kind: cp.Kind, Cluster: cp.Cluster, Token: cp.Token, Namespace: ns,
		Heartbeat: 200 * time.Millisecond, Resync: 2 * time.Second, Capacity: 7, HostMode: agent.HostClusterIP,
		Version: "test",
	}
}

// waitFor waits until cond holds, failing after wait.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", wait, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// markAvailable plays the Deployment controller of a bare API server:
// the instance's Deployment reports an available replica.
func markAvailable(t testing.TB, cs kubernetes.Interface, ns, name string) {
	t.Helper()
	d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: 1, ReadyReplicas: 1, AvailableReplicas: 1, UpdatedReplicas: 1}
	_, err = cs.AppsV1().Deployments(ns).UpdateStatus(context.Background(), d, metav1.UpdateOptions{})
	require.NoError(t, err)
}

// TestAppliesObjectsAndReports: for each kind, the agent applies the
// kind's template — a root Secret, a Deployment and a Service owned by
// it, labelled, by the field manager fleet-agent — reports the instance
// installing, then ready at its Service's ClusterIP once its Deployment
// has an available replica, and sends heartbeats with its capacity.
func TestAppliesObjectsAndReports(t *testing.T) {
	for _, tc := range []struct {
		kind      fleet.Kind
		port      string // the Service's port name
		secretKey string
	}{
		{fleet.Dinosaur, "http", "password"},
		{fleet.Kafka, "kafka", "sasl-password"},
	} {
		t.Run(tc.kind.Name, func(t *testing.T) {
			env := newAPIEnv(t)
			cp := agenttest.NewControlPlane(t, tc.kind, "c1")
			cp.Set(cp.Instance("inst0000000000000001", "rex"))
			runAgent(t, env.cs, agentOptions(cp, env.ns))
			name := tc.kind.Name + "-inst0000000000000001"

			waitFor(t, "the instance's objects", func() bool {
				o := objects(t, env.cs, env.ns, "inst0000000000000001")
				return len(o["Secret"]) == 1 && len(o["Deployment"]) == 1 && len(o["Service"]) == 1
			})
			ctx := t.Context()
			root, err := env.cs.CoreV1().Secrets(env.ns).Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			assert.NotEmpty(t, root.Data[tc.secretKey], "the credentials")
			dep, err := env.cs.AppsV1().Deployments(env.ns).Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			svc, err := env.cs.CoreV1().Services(env.ns).Get(ctx, name, metav1.GetOptions{})
			require.NoError(t, err)
			for _, m := range []metav1.Object{root, dep, svc} {
				assert.Equal(t, map[string]string{agent.LabelManagedBy: "fleet-agent", agent.LabelInstance: "inst0000000000000001",
					agent.LabelKind: tc.kind.Name}, subset(m.GetLabels(), agent.LabelManagedBy, agent.LabelInstance, agent.LabelKind), m.GetName())
				managers := []string{}
				for _, f := range m.GetManagedFields() {
					managers = append(managers, f.Manager+"/"+string(f.Operation))
				}
				assert.Contains(t, managers, "fleet-agent/Apply", m.GetName())
			}
			for _, m := range []metav1.Object{dep, svc} {
				require.Len(t, m.GetOwnerReferences(), 1, m.GetName())
				o := m.GetOwnerReferences()[0]
				assert.Equal(t, [4]any{"Secret", name, root.UID, true}, [4]any{o.Kind, o.Name, o.UID, *o.Controller}, "owned by the root")
			}
			c := dep.Spec.Template.Spec.Containers[0]
			assert.Equal(t, agent.DefaultImage, c.Image)
			assert.Equal(t, []string{"instance", "-id", "inst0000000000000001", "-kind", tc.kind.Name, "-name", "rex", "-addr", ":8080"}, c.Args)
			assert.Equal(t, "/health/inst0000000000000001", c.ReadinessProbe.HTTPGet.Path)
			assert.Equal(t, tc.port, svc.Spec.Ports[0].Name)
			assert.Equal(t, int32(8080), svc.Spec.Ports[0].Port)

			waitFor(t, "an installing report", func() bool {
				r, _ := cp.Last()
				return r["inst0000000000000001"] == fleet.InstanceReport{Phase: fleet.PhaseInstalling}
			})
			markAvailable(t, env.cs, env.ns, name)
			want := fleet.InstanceReport{Phase: fleet.PhaseReady, Host: svc.Spec.ClusterIP + ":8080"}
			waitFor(t, "a ready report", func() bool {
				r, _ := cp.Last()
				return len(r) == 1 && r["inst0000000000000001"] == want
			})
			waitFor(t, "heartbeats", func() bool { return len(cp.Heartbeats()) >= 2 })
			assert.Equal(t, agent.Heartbeat{Phase: "ready", Capacity: agent.Capacity{Units: 7}, AgentVersion: "test"}, cp.Heartbeats()[0])
		})
	}
}

func subset(m map[string]string, keys ...string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// TestRestartMidProvisioning: an agent stopped while it applies a batch
// of instances, and a new one started (the state is in the cluster, not
// in memory): every instance has exactly one Secret, Deployment and
// Service, those made before the restart are adopted (same UID, same
// credentials), and a third agent changes nothing.
func TestRestartMidProvisioning(t *testing.T) {
	env := newAPIEnv(t)
	cp := agenttest.NewControlPlane(t, fleet.Dinosaur, "c1")
	var insts []agent.Instance
	for i := range 12 {
		insts = append(insts, cp.Instance(id(i), "i"))
	}
	cp.Set(insts...)
	opts := agentOptions(cp, env.ns)
	opts.Concurrency = 1 // slow enough to stop it half way
	stop := runAgent(t, env.cs, opts)
	waitFor(t, "the first objects", func() bool { return len(objects(t, env.cs, env.ns, "")["Secret"]) >= 2 })
	stop()
	before := uids(t, env.cs, env.ns)
	require.Less(t, len(before), 36, "stopped mid-provisioning")

	runAgent(t, env.cs, agentOptions(cp, env.ns))
	waitFor(t, "every instance's objects", func() bool { return len(uids(t, env.cs, env.ns)) == 36 })
	o := objects(t, env.cs, env.ns, "")
	for _, k := range []string{"Secret", "Deployment", "Service"} {
		assert.Len(t, o[k], 12, k)
	}
	after := uids(t, env.cs, env.ns)
	for k, uid := range before {
		assert.Equal(t, uid, after[k], "%s adopted, not made again", k)
	}
}

// objects lists the agent's objects of an instance ("": all of them),
// kind → names.
func objects(t testing.TB, cs kubernetes.Interface, ns, id string) map[string][]string {
	t.Helper()
	all, err := agenttest.Objects(context.Background(), cs, ns, id)
	require.NoError(t, err)
	out := map[string][]string{}
	for k := range all {
		kind, name, _ := strings.Cut(k, "/")
		out[kind] = append(out[kind], name)
	}
	return out
}

// uids returns the UIDs of the agent's objects in ns by "Kind/name".
func uids(t testing.TB, cs kubernetes.Interface, ns string) map[string]types.UID {
	t.Helper()
	all, err := agenttest.Objects(context.Background(), cs, ns, "")
	require.NoError(t, err)
	return all
}

func id(i int) string {
	return "inst" + strings.Repeat("0", 14) + string(rune('a'+i/10)) + string(rune('0'+i%10))
}

// TestRecreatesObjectsDeletedByHand: each object of an instance deleted
// by hand comes back; the root Secret deleted by hand (no garbage
// collector here, so its children stay) comes back with the same
// credentials, and its children are owned by the new root.
func TestRecreatesObjectsDeletedByHand(t *testing.T) {
	env := newAPIEnv(t)
	cp := agenttest.NewControlPlane(t, fleet.Dinosaur, "c1")
	cp.Set(cp.Instance(id(0), "rex"))
	opts := agentOptions(cp, env.ns)
	opts.Resync = time.Hour // an event, not a resync, brings them back
	runAgent(t, env.cs, opts)
	waitFor(t, "the objects", func() bool { return len(uids(t, env.cs, env.ns)) == 3 })
	ctx := t.Context()
	name := "dinosaur-" + id(0)
	first, err := env.cs.CoreV1().Secrets(env.ns).Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)

	del := map[string]func() error{
		"Deployment/" + name: func() error { return env.cs.AppsV1().Deployments(env.ns).Delete(ctx, name, metav1.DeleteOptions{}) },
		"Service/" + name:    func() error { return env.cs.CoreV1().Services(env.ns).Delete(ctx, name, metav1.DeleteOptions{}) },
		"Secret/" + name:     func() error { return env.cs.CoreV1().Secrets(env.ns).Delete(ctx, name, metav1.DeleteOptions{}) },
	}
	for _, k := range []string{"Deployment/" + name, "Service/" + name, "Secret/" + name} {
		old := uids(t, env.cs, env.ns)[k]
		require.NoError(t, del[k]())
		waitFor(t, k+" recreated", func() bool {
			u, ok := uids(t, env.cs, env.ns)[k]
			return ok && u != old
		})
	}
	root, err := env.cs.CoreV1().Secrets(env.ns).Get(ctx, name, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, first.Data, root.Data, "the same credentials")
	waitFor(t, "the children owned by the new root", func() bool {
		d, err1 := env.cs.AppsV1().Deployments(env.ns).Get(ctx, name, metav1.GetOptions{})
		s, err2 := env.cs.CoreV1().Services(env.ns).Get(ctx, name, metav1.GetOptions{})
		return err1 == nil && err2 == nil && len(d.OwnerReferences) == 1 && d.OwnerReferences[0].UID == root.UID &&
			len(s.OwnerReferences) == 1 && s.OwnerReferences[0].UID == root.UID
	})
}

// TestRemovesWhatIsNoLongerDesired: an instance dropped from the desired
// set has its root Secret and its children deleted by the agent itself
// (a bare API server collects no garbage), and leaves the report; the
// other instance stays.
func TestRemovesWhatIsNoLongerDesired(t *testing.T) {
	env := newAPIEnv(t)
	cp := agenttest.NewControlPlane(t, fleet.Dinosaur, "c1")
	cp.Set(cp.Instance(id(0), "a"), cp.Instance(id(1), "b"))
	runAgent(t, env.cs, agentOptions(cp, env.ns))
	waitFor(t, "both reported", func() bool { r, _ := cp.Last(); return len(r) == 2 })
	require.Len(t, uids(t, env.cs, env.ns), 6)

	cp.Set(cp.Instance(id(0), "a"))
	waitFor(t, "b's objects gone", func() bool { return len(objects(t, env.cs, env.ns, id(1))) == 0 })
	waitFor(t, "b gone from the report", func() bool {
		r, _ := cp.Last()
		_, ok := r[id(1)]
		return len(r) == 1 && !ok
	})
	assert.Len(t, uids(t, env.cs, env.ns), 3, "a's objects stay")
}

// TestCutOffRemovesNothing: an agent started while its control plane is
// unreachable, with the objects of an earlier agent in the namespace,
// removes nothing and keeps trying; once the control plane answers, it
// converges (here: removes the one instance no longer desired).
func TestCutOffRemovesNothing(t *testing.T) {
	env := newAPIEnv(t)
	cp := agenttest.NewControlPlane(t, fleet.Dinosaur, "c1")
	cp.Set(cp.Instance(id(0), "a"), cp.Instance(id(1), "b"))
	stop := runAgent(t, env.cs, agentOptions(cp, env.ns))
	waitFor(t, "the objects", func() bool { return len(uids(t, env.cs, env.ns)) == 6 })
	stop()

	cp.SetDown(true)
	cp.Set(cp.Instance(id(0), "a"))
	before := uids(t, env.cs, env.ns)
	runAgent(t, env.cs, agentOptions(cp, env.ns))
	// Wait for the agent to have tried a few times (it has run its
	// resync too: Resync is 2 s).
	start := time.Now()
	waitFor(t, "time for a resync", func() bool { return time.Since(start) > 3*time.Second })
	assert.Equal(t, before, uids(t, env.cs, env.ns), "nothing deleted while cut off")

	cp.SetDown(false)
	waitFor(t, "b's objects gone", func() bool { return len(objects(t, env.cs, env.ns, id(1))) == 0 })
	assert.Len(t, uids(t, env.cs, env.ns), 3)
}

// TestRefusedObjectsReportFailed: a template replaced by the user that
// gives an object the API server refuses makes the instance failed, with
// the server's reason; the others are unaffected.
func TestRefusedObjectsReportFailed(t *testing.T) {
	env := newAPIEnv(t)
	cp := agenttest.NewControlPlane(t, fleet.Dinosaur, "c1")
	tmpl, err := agent.ParseTemplate("bad", `apiVersion: v1
kind: Secret
metadata: {name: {{ json .Name }}}
---
apiVersion: v1
kind: Service
metadata: {name: {{ json .Name }}}
spec:
  ports: [{port: {{ if eq .Instance.Name "bad" }}700000{{ else }}8080{{ end }}}]
`)
	require.NoError(t, err)
	opts := agentOptions(cp, env.ns)
	opts.Template = tmpl
	cp.Set(cp.Instance(id(0), "bad"), cp.Instance(id(1), "good"))
	runAgent(t, env.cs, opts)
	waitFor(t, "bad failed, good installing", func() bool {
		r, _ := cp.Last()
		return r[id(0)].Phase == fleet.PhaseFailed && r[id(1)].Phase == fleet.PhaseInstalling
	})
	r, _ := cp.Last()
	assert.Contains(t, r[id(0)].Reason, "Service dinosaur-"+id(0)+" refused")
	assert.Contains(t, r[id(0)].Reason, "700000")
}

// New refuses what it cannot run, naming it.
func TestNewRejectsInvalidOptions(t *testing.T) {
	cs := kubernetes.NewForConfigOrDie(&rest.Config{Host: "http://127.0.0.1:1"}) // New does no I/O
	good := agent.Options{ControlPlane: "http://cp:8000", Kind: fleet.Dinosaur, Cluster: "c1", Token: "t", Namespace: "ns"}
	_, err := agent.New(cs, good)
	require.NoError(t, err)
	noRoot, err := agent.ParseTemplate("x", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ json .Name }}}\n")
	require.NoError(t, err)
	pod, err := agent.ParseTemplate("x", "apiVersion: v1\nkind: Secret\nmetadata: {name: {{ json .Name }}}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		edit func(*agent.Options)
		want error
	}{
		"no cluster":  {func(o *agent.Options) { o.Cluster = "" }, agent.ErrInvalidOptions},
		"no token":    {func(o *agent.Options) { o.Token = "" }, agent.ErrInvalidOptions},
		"bad ns":      {func(o *agent.Options) { o.Namespace = "Not_A_Namespace" }, agent.ErrInvalidOptions},
		"bad url":     {func(o *agent.Options) { o.ControlPlane = "cp:8000" }, agent.ErrInvalidOptions},
		"bad kind":    {func(o *agent.Options) { o.Kind = fleet.Kind{Name: "Bad Kind"} }, agent.ErrInvalidOptions},
		"host mode":   {func(o *agent.Options) { o.HostMode = "nodeport" }, agent.ErrInvalidOptions},
		"negative":    {func(o *agent.Options) { o.Resync = -time.Second }, agent.ErrInvalidOptions},
		"no root":     {func(o *agent.Options) { o.Template = noRoot }, agent.ErrTemplate},
		"Pod in tmpl": {func(o *agent.Options) { o.Template = pod }, agent.ErrTemplate},
	} {
		t.Run(name, func(t *testing.T) {
			o := good
			tc.edit(&o)
			_, err := agent.New(cs, o)
			assert.True(t, errors.Is(err, tc.want), "%v", err)
		})
	}
}

// TestWrongTokenAppliesNothing: refused by the control plane (401), the
// agent applies nothing, and keeps asking.
func TestWrongTokenAppliesNothing(t *testing.T) {
	env := newAPIEnv(t)
	cp := agenttest.NewControlPlane(t, fleet.Dinosaur, "c1")
	cp.Set(cp.Instance(id(0), "a"))
	opts := agentOptions(cp, env.ns)
	opts.Token = "wrong"
	runAgent(t, env.cs, opts)
	waitFor(t, "refused calls", func() bool { return cp.Refused() >= 3 })
	assert.Empty(t, uids(t, env.cs, env.ns))
	r, n := cp.Last()
	assert.Zero(t, n, "%v", r)
	assert.Empty(t, cp.Heartbeats())
}
