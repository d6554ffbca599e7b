package kubernetes_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/fleetkit/fleetkit/internal/kubetest"
	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/internal/linterbin"
	"github.com/fleetkit/fleetkit/machines/kubernetes"
	"github.com/fleetkit/fleetkit/machines/machinestest"
)

// cluster is the real single-node cluster the tests run Pods on.
var cluster kubetest.Cluster

// Run stops the cluster (an AtExit function) before the leak check.
func TestMain(m *testing.M) { os.Exit(testenv.CheckLeaks(testenv.Run(m))) }

// images are the linter images of scripts/build-images.sh the tests run.
var images = []string{"fleetkit/linter:1.0", "fleetkit/linter:1.2", "fleetkit/linter:2.0"}

var loaded struct {
	once sync.Once
	err  error
}

// env is what a test needs: the node with the linter images loaded, a
// client and a namespace of the test's own.
type env struct {
	node *kubetest.Node
	cs   clientset.Interface
	ns   string
}

func setup(t testing.TB) env {
	t.Helper()
	node := cluster.Get(t)
	loaded.once.Do(func() { loaded.err = node.LoadImages(context.Background(), images...) })
	if loaded.err != nil {
		testenv.Missing(t, "%v", loaded.err)
	}
	cs, err := clientset.NewForConfig(node.Config())
	require.NoError(t, err)
	return env{node: node, cs: cs, ns: kubetest.Namespace(t, node)}
}

func (e env) provider(t *testing.T, opts kubernetes.Options) *kubernetes.Provider {
	t.Helper()
	opts.Namespace = e.ns
	if opts.StopTimeout == 0 {
		opts.StopTimeout = 2 * time.Second
	}
	p, err := kubernetes.New(e.cs, opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func linterSpec(language, version string) machines.Spec {
	s := linterbin.Spec(language, version)
	s.Image = "fleetkit/linter:" + version
	s.HealthPath = machines.DefaultHealthPath
	s.StartTimeout = time.Minute
	return s
}

func TestConformance(t *testing.T) {
	e := setup(t)
	machinestest.RunConformance(t, machinestest.Harness{
		New: func(t *testing.T, name string) machines.Provider {
			return e.provider(t, kubernetes.Options{Name: name})
		},
		Spec: func(t *testing.T, language, version string) machines.Spec {
			return linterSpec(language, version)
		},
		Adopts: true,
	})
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	cs := fake.NewClientset()
	for name, opts := range map[string]kubernetes.Options{
		"name not a label value": {Name: "no spaces allowed"},
		"bad namespace":          {Namespace: "Upper_Case"},
		"negative stop timeout":  {StopTimeout: -time.Second},
		"negative user":          {RunAsUser: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := kubernetes.New(cs, opts)
			require.ErrorIs(t, err, kubernetes.ErrInvalidOptions)
		})
	}
	_, err := kubernetes.New(nil, kubernetes.Options{})
	require.ErrorIs(t, err, kubernetes.ErrInvalidOptions)
}

// TestPodIsLockedDown checks the Pod the provider makes, and that the
// container really runs that way: as nobody, without capabilities or a way
// to gain privileges, on a read-only root filesystem.
func TestPodIsLockedDown(t *testing.T) {
	e := setup(t)
	p := e.provider(t, kubernetes.Options{Name: "lockdown"})
	spec := linterSpec("java", "1.0")
	spec.Labels = map[string]string{"team": "lint"}
	m, err := p.Create(t.Context(), spec)
	require.NoError(t, err)

	pod, err := e.cs.CoreV1().Pods(e.ns).Get(t.Context(), m.ID, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Equal(t, pod.Status.PodIP+":8080", m.Address)
	assert.Equal(t, "lint", pod.Labels["team"])
	assert.Equal(t, "lockdown", pod.Labels[machines.LabelProvider])
	require.Len(t, pod.Spec.Containers, 1)
	c := pod.Spec.Containers[0]
	assert.Equal(t, []string{"-language", "java", "-version", "1.0", "-addr", "0.0.0.0:8080"}, c.Args)
	require.NotNil(t, c.ReadinessProbe)
	require.NotNil(t, c.ReadinessProbe.HTTPGet)
	assert.Equal(t, "/health", c.ReadinessProbe.HTTPGet.Path)
	assert.Equal(t, int32(8080), c.ReadinessProbe.HTTPGet.Port.IntVal)
	assert.Equal(t, kubernetes.DefaultResources(), c.Resources)
	sc := c.SecurityContext
	require.NotNil(t, sc)
	assert.True(t, *sc.RunAsNonRoot)
	assert.True(t, *sc.ReadOnlyRootFilesystem)
	assert.False(t, *sc.AllowPrivilegeEscalation)
	assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
	assert.False(t, *pod.Spec.AutomountServiceAccountToken)
	assert.Empty(t, pod.Spec.Volumes, "no service account token is mounted")
	assert.NotEmpty(t, pod.Annotations[kubernetes.AnnotationCreated])

	// The container's process, found through its cgroup.
	pids := podProcesses(t, pod)
	require.NotEmpty(t, pids)
	for _, pid := range pids {
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		require.NoError(t, err)
		exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if !strings.HasSuffix(exe, "/linter") {
			continue // the sandbox's pause
		}
		fields := procStatus(string(status))
		assert.Equal(t, "65534", strings.Fields(fields["Uid"])[1], "effective uid")
		assert.Equal(t, "0000000000000000", fields["CapEff"])
		assert.Equal(t, "1", fields["NoNewPrivs"])
		mounts, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", pid))
		require.NoError(t, err)
		assert.True(t, rootReadOnly(string(mounts)), "the root filesystem is mounted read-only")
		return
	}
	t.Fatalf("no linter process among %v", pids)
}

// podProcesses returns the PIDs in the Pod's cgroups on this node.
func podProcesses(t *testing.T, pod *corev1.Pod) []int {
	t.Helper()
	uid := "pod" + string(pod.UID)
	dirs, _ := filepath.Glob("/sys/fs/cgroup/pids/kubepods/*/" + uid + "/*")
	more, _ := filepath.Glob("/sys/fs/cgroup/pids/kubepods/" + uid + "/*")
	var pids []int
	for _, d := range append(dirs, more...) {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			var pid int
			_, _ = fmt.Sscan(f, &pid)
			pids = append(pids, pid)
		}
	}
	return pids
}

func procStatus(s string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = strings.TrimSpace(v)
		}
	}
	return out
}

// rootReadOnly reports whether mountinfo's "/" mount has the ro option.
func rootReadOnly(mountinfo string) bool {
	for _, line := range strings.Split(mountinfo, "\n") {
		f := strings.Fields(line)
		if len(f) > 5 && f[4] == "/" {
			return strings.HasPrefix(f[5], "ro")
		}
	}
	return false
}

func TestCreateFailuresLeaveNothing(t *testing.T) {
	e := setup(t)
	tests := []struct {
		name     string
		opts     kubernetes.Options
		mutate   func(*machines.Spec)
		wantErr  error
		contains string
	}{
		{"image missing", kubernetes.Options{ImagePullPolicy: corev1.PullNever},
			func(s *machines.Spec) { s.Image = "fleetkit-test/none:0" }, machines.ErrInvalidSpec, "ErrImageNeverPull"},
		{"image not pullable", kubernetes.Options{},
			func(s *machines.Spec) { s.Image = "fleetkit-test/none:0" }, machines.ErrInvalidSpec, "image fleetkit-test/none:0"},
		{"exits at once", kubernetes.Options{},
			func(s *machines.Spec) { c := linterbin.Spec("cobol", "1.0"); s.Name, s.Args = c.Name, c.Args }, machines.ErrExited, "cobol"},
		{"no image", kubernetes.Options{},
			func(s *machines.Spec) { s.Image = "" }, machines.ErrInvalidSpec, "image is empty"},
		{"label value", kubernetes.Options{},
			func(s *machines.Spec) { s.Labels = map[string]string{"team": "has spaces"} }, machines.ErrInvalidSpec, "team"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Name = fmt.Sprintf("fail-%d", i)
			p := e.provider(t, tt.opts)
			spec := linterSpec("python", "1.0")
			tt.mutate(&spec)
			_, err := p.Create(t.Context(), spec)
			require.ErrorIs(t, err, tt.wantErr)
			assert.Contains(t, err.Error(), tt.contains)
			ms, err := p.List(t.Context(), nil)
			require.NoError(t, err)
			assert.Empty(t, ms, "a failed create leaves no machine")
			pods, err := e.cs.CoreV1().Pods(e.ns).List(t.Context(), metav1.ListOptions{LabelSelector: machines.LabelProvider + "=" + tt.opts.Name})
			require.NoError(t, err)
			assert.Empty(t, pods.Items, "a failed create leaves no Pod")
		})
	}
}

// watch collects the provider's events until the test ends.
func watch(t *testing.T, p *kubernetes.Provider) <-chan machines.Event {
	events := make(chan machines.Event, 64)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Watch(ctx, func(e machines.Event) { events <- e }) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return events
}

// nextEvent returns the next event of machine id.
func nextEvent(t *testing.T, events <-chan machines.Event, id string) machines.Event {
	t.Helper()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case e := <-events:
			if e.Machine.ID == id {
				return e
			}
		case <-deadline:
			t.Fatalf("no event for %s", id)
		}
	}
}

// machine returns the provider's view of machine id once cond holds.
func machine(t *testing.T, p *kubernetes.Provider, id string, cond func(machines.Machine) bool) machines.Machine {
	t.Helper()
	var got machines.Machine
	require.Eventually(t, func() bool {
		m, err := p.Get(t.Context(), id)
		if errors.Is(err, machines.ErrNotFound) {
			return false
		}
		require.NoError(t, err)
		got = m
		return cond(m)
	}, 2*time.Minute, 20*time.Millisecond, "machine %s: last seen %+v", id, got)
	return got
}

func serving(m machines.Machine) bool { return m.State == machines.StateRunning && m.Reason == "" }

func crash(t *testing.T, m machines.Machine) {
	t.Helper()
	resp, err := http.Post(m.URL()+"/lint", "application/json", strings.NewReader(`{"code": ""}`))
	require.NoError(t, err)
	resp.Body.Close()
	assert.GreaterOrEqual(t, resp.StatusCode, 500)
}

// TestCrashLoopSurfaces crashes a linter (1.2 given empty code exits with
// status 3) until the kubelet backs off: every exit is an event, and the
// machine shows as not serving with the reason.
func TestCrashLoopSurfaces(t *testing.T) {
	e := setup(t)
	p := e.provider(t, kubernetes.Options{Name: "crashloop"})
	events := watch(t, p)
	m, err := p.Create(t.Context(), linterSpec("python", "1.2"))
	require.NoError(t, err)

	for crashes := 1; ; crashes++ {
		crash(t, m)
		ev := nextEvent(t, events, m.ID)
		assert.Equal(t, 3, ev.ExitCode)
		assert.Equal(t, machines.StateExited, ev.Machine.State)
		assert.Contains(t, ev.Err.Error(), "exit code 3")
		// The kubelet restarts it at once, or backs off.
		got := machine(t, p, m.ID, func(m machines.Machine) bool {
			return strings.HasPrefix(m.Reason, "CrashLoopBackOff") || serving(m)
		})
		if strings.HasPrefix(got.Reason, "CrashLoopBackOff") {
			assert.Equal(t, machines.StateExited, got.State)
			assert.Contains(t, got.Reason, "(last exit: Error, exit code 3)")
			return
		}
		require.Less(t, crashes, 5, "no back-off after %d crashes; last seen %+v", crashes, got)
		m = got
	}
}

// TestOOMKilledSurfaces makes a linter allocate past its memory limit: the
// kernel kills it, and the machine reports OOMKilled.
func TestOOMKilledSurfaces(t *testing.T) {
	e := setup(t)
	res := kubernetes.DefaultResources()
	res.Limits[corev1.ResourceMemory] = resource.MustParse("32Mi")
	p := e.provider(t, kubernetes.Options{Name: "oom", Resources: res})
	events := watch(t, p)
	spec := linterSpec("python", "1.0")
	spec.Args = append(spec.Args, "-max-body", "268435456")
	m, err := p.Create(t.Context(), spec)
	require.NoError(t, err)

	// 64 MiB of code: the linter holds it and its tokens in memory.
	code := bytes.Repeat([]byte("x = 1\\n"), 64<<20/7)
	body := append(append([]byte(`{"code": "`), code...), `"}`...)
	resp, err := http.Post(m.URL()+"/lint", "application/json", bytes.NewReader(body))
	if err == nil {
		resp.Body.Close()
	}
	ev := nextEvent(t, events, m.ID)
	assert.Equal(t, 137, ev.ExitCode)
	assert.Contains(t, ev.Err.Error(), "OOMKilled")
	got := machine(t, p, m.ID, func(m machines.Machine) bool { return strings.Contains(m.Reason, "OOMKilled") })
	t.Logf("after the OOM kill: %s %s", got.State, got.Reason)
}

// TestEvictedSurfaces writes the status the kubelet writes when it evicts
// a Pod (phase Failed, reason Evicted): the machine shows as not serving
// with the reason, and Watch reports it.
func TestEvictedSurfaces(t *testing.T) {
	e := setup(t)
	p := e.provider(t, kubernetes.Options{Name: "evicted"})
	events := watch(t, p)
	m, err := p.Create(t.Context(), linterSpec("python", "1.0"))
	require.NoError(t, err)

	pod, err := e.cs.CoreV1().Pods(e.ns).Get(t.Context(), m.ID, metav1.GetOptions{})
	require.NoError(t, err)
	pod.Status.Phase = corev1.PodFailed
	pod.Status.Reason = "Evicted"
	pod.Status.Message = "The node was low on resource: memory."
	_, err = e.cs.CoreV1().Pods(e.ns).UpdateStatus(t.Context(), pod, metav1.UpdateOptions{})
	require.NoError(t, err)

	ev := nextEvent(t, events, m.ID)
	assert.Contains(t, ev.Err.Error(), "Evicted: The node was low on resource: memory.")
	got := machine(t, p, m.ID, func(m machines.Machine) bool { return m.State == machines.StateExited })
	assert.Equal(t, "Evicted: The node was low on resource: memory.", got.Reason)
	require.NoError(t, p.Remove(t.Context(), m.ID), "an evicted machine can be removed")
}

// TestDeletedByHandIsReported deletes a machine's Pod behind the
// provider's back.
func TestDeletedByHandIsReported(t *testing.T) {
	e := setup(t)
	p := e.provider(t, kubernetes.Options{Name: "byhand"})
	events := watch(t, p)
	m, err := p.Create(t.Context(), linterSpec("python", "1.0"))
	require.NoError(t, err)
	keep, err := p.Create(t.Context(), linterSpec("python", "1.0"))
	require.NoError(t, err)

	require.NoError(t, e.cs.CoreV1().Pods(e.ns).Delete(t.Context(), m.ID, metav1.DeleteOptions{}))
	ev := nextEvent(t, events, m.ID)
	assert.Contains(t, ev.Err.Error(), "deleted")
	assert.Equal(t, -1, ev.ExitCode)
	require.Eventually(t, func() bool {
		ms, err := p.List(t.Context(), nil)
		return err == nil && len(ms) == 1 && ms[0].ID == keep.ID
	}, time.Minute, 20*time.Millisecond)

	// Remove is not reported.
	require.NoError(t, p.Remove(t.Context(), keep.ID))
	select {
	case ev := <-events:
		t.Fatalf("Remove was reported: %+v", ev)
	case <-time.After(300 * time.Millisecond):
	}
}

func TestClosedProvider(t *testing.T) {
	e := setup(t)
	p := e.provider(t, kubernetes.Options{Name: "closed"})
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "idempotent")
	_, err := p.Create(t.Context(), linterSpec("python", "1.0"))
	require.ErrorIs(t, err, machines.ErrClosed)
	_, err = p.List(t.Context(), nil)
	require.ErrorIs(t, err, machines.ErrClosed)
	require.ErrorIs(t, p.Remove(t.Context(), "x"), machines.ErrClosed)
	require.ErrorIs(t, p.Watch(t.Context(), func(machines.Event) {}), machines.ErrClosed)
}
