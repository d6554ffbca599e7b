package kubetest_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/internal/kubetest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

// cluster is this package's node, for the tests that share one; the
// teardown and crash tests start their own and run after it is stopped.
var cluster kubetest.Cluster

// pauseSpec is a Pod that runs the node's own pause image: it needs no
// image but the node's. It keeps the default grace period (the pause
// exits on SIGTERM), so a delete waits for the kubelet to stop it.
func pauseSpec(name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "pause", Image: kubetest.PauseImage, ImagePullPolicy: corev1.PullNever,
			}},
		},
	}
}

// waitPod watches the Pod until cond holds for it (or it is deleted, when
// cond accepts nil), and returns it.
func waitPod(ctx context.Context, t testing.TB, cs kubernetes.Interface, ns, name string, cond func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", name).String()})
		require.NoError(t, err)
		if len(list.Items) == 0 && cond(nil) {
			return nil
		}
		if len(list.Items) == 1 && cond(&list.Items[0]) {
			return &list.Items[0]
		}
		w, err := cs.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{
			FieldSelector:   fields.OneTermEqualSelector("metadata.name", name).String(),
			ResourceVersion: list.ResourceVersion,
		})
		require.NoError(t, err)
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Deleted:
				if cond(nil) {
					w.Stop()
					return nil
				}
			case watch.Added, watch.Modified:
				if p := ev.Object.(*corev1.Pod); cond(p) {
					w.Stop()
					return p
				}
			}
		}
		w.Stop()
		require.NoError(t, ctx.Err(), "waiting for pod %s/%s", ns, name)
	}
}

func podReady(p *corev1.Pod) bool {
	if p == nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func gone(p *corev1.Pod) bool { return p == nil }

// netcheckImage builds cmd/netcheck into a FROM scratch image on the
// Docker Engine, loads it into the node and removes it from the engine.
func netcheckImage(t *testing.T, node *kubetest.Node) string {
	t.Helper()
	testenv.LookPath(t, "docker")
	dir := t.TempDir()
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, "netcheck"), "./cmd/netcheck")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"),
		[]byte("FROM scratch\nCOPY netcheck /netcheck\nUSER 65534:65534\nENTRYPOINT [\"/netcheck\"]\n"), 0o644))
	var b [4]byte
	_, _ = rand.Read(b[:])
	tag := "fleetkit-test/netcheck:" + hex.EncodeToString(b[:])
	out, err = exec.Command("docker", "build", "-q", "-t", tag, dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	defer func() { _ = exec.Command("docker", "rmi", "-f", tag).Run() }()
	require.NoError(t, node.LoadImages(t.Context(), tag))
	return "docker.io/" + tag
}

// TestNode checks what tests rely on: Pods run and get Ready, the host
// reaches Pod IPs and ClusterIP Services, and Pods reach each other,
// Services and the API server (as in-cluster clients do).
func TestNode(t *testing.T) {
	node := cluster.Get(t)
	t.Cleanup(func() { require.NoError(t, cluster.Stop()) })
	ctx := t.Context()
	cs, err := kubernetes.NewForConfig(node.Config())
	require.NoError(t, err)

	v, err := cs.Discovery().ServerVersion()
	require.NoError(t, err)
	assert.Equal(t, "v"+kubetest.KubeVersion, v.GitVersion)
	n, err := cs.CoreV1().Nodes().Get(ctx, kubetest.NodeName, metav1.GetOptions{})
	require.NoError(t, err)
	assert.Empty(t, n.Spec.Taints, "the node is schedulable")
	// The kubelet's configuration is written at every start (the state
	// directory is wiped first): the node reports its maxPods.
	assert.Equal(t, int64(kubetest.MaxPods), n.Status.Capacity.Pods().Value(), "the kubelet's maxPods")
	_, pods, _ := net.ParseCIDR(kubetest.PodCIDR)
	ones, bits := pods.Mask.Size()
	assert.LessOrEqual(t, kubetest.MaxPods, 1<<(bits-ones)-3, "MaxPods fits PodCIDR (less network, gateway, broadcast)")

	ns := kubetest.Namespace(t, node)
	image := netcheckImage(t, node)

	// A server Pod behind a ClusterIP Service; the scheduler places it.
	srv := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "server", Labels: map[string]string{"app": "server"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name: "server", Image: image, ImagePullPolicy: corev1.PullNever,
				Args:  []string{"serve", ":8080"},
				Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
				ReadinessProbe: &corev1.Probe{
					ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/health", Port: intstr.FromInt32(8080)}},
					PeriodSeconds: 1,
				},
				SecurityContext: &corev1.SecurityContext{
					ReadOnlyRootFilesystem: new(true), AllowPrivilegeEscalation: new(false), RunAsNonRoot: new(true),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
	_, err = cs.CoreV1().Pods(ns).Create(ctx, srv, metav1.CreateOptions{})
	require.NoError(t, err)
	svc, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "server"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "server"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	p := waitPod(ctx, t, cs, ns, "server", podReady)
	assert.Equal(t, kubetest.NodeName, p.Spec.NodeName)
	_, podNet, _ := net.ParseCIDR(kubetest.PodCIDR)
	require.True(t, podNet.Contains(net.ParseIP(p.Status.PodIP)), "Pod IP %s in %s", p.Status.PodIP, kubetest.PodCIDR)

	// From the host: the Pod IP, and the Service once kube-proxy has its
	// endpoint (the EndpointSlice follows the Pod's readiness).
	hc := &http.Client{Timeout: 2 * time.Second}
	get := func(url string) (int, error) {
		resp, err := hc.Get(url)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	status, err := get("http://" + net.JoinHostPort(p.Status.PodIP, "8080") + "/health")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)
	svcURL := "http://" + svc.Spec.ClusterIP + "/health"
	require.Eventually(t, func() bool { s, err := get(svcURL); return err == nil && s == http.StatusOK },
		30*time.Second, 50*time.Millisecond, "the Service %s does not route from the host", svcURL)

	// From a Pod: the other Pod, the Service, and the API server through
	// the kubernetes Service with the Pod's token, verified with the CA
	// the controller-manager publishes.
	check := pauseSpec("check")
	check.Spec.RestartPolicy = corev1.RestartPolicyNever
	check.Spec.Containers[0] = corev1.Container{
		Name: "check", Image: image, ImagePullPolicy: corev1.PullNever,
		Args: []string{"get",
			"http://" + net.JoinHostPort(p.Status.PodIP, "8080") + "/health",
			svcURL,
			"https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)/version",
		},
	}
	_, err = cs.CoreV1().Pods(ns).Create(ctx, check, metav1.CreateOptions{})
	require.NoError(t, err)
	done := waitPod(ctx, t, cs, ns, "check", func(p *corev1.Pod) bool {
		return p != nil && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed)
	})
	logs, _ := cs.CoreV1().Pods(ns).GetLogs("check", &corev1.PodLogOptions{}).DoRaw(ctx)
	require.Equal(t, corev1.PodSucceeded, done.Status.Phase, "netcheck in a Pod:\n%s", logs)
	assert.Contains(t, string(logs), "/version: 200 OK", "the API server answered the Pod")

	// Delete → gone: the kubelet stops the Pod and confirms.
	require.NoError(t, cs.CoreV1().Pods(ns).Delete(ctx, "server", metav1.DeleteOptions{}))
	waitPod(ctx, t, cs, ns, "server", gone)

	err = node.LoadImages(ctx, "fleetkit-test/no-such-image:none")
	require.ErrorIs(t, err, kubetest.ErrMissing, "an image the engine lacks")
}

// hostFacts is what a node changes on the host, as it stands.
type hostFacts struct {
	Mounts     []string // under the state directory, and Pod network namespaces
	Bridge     bool
	KubeChains []string // iptables lines naming KUBE- chains or our rule
	Cgroups    []string // kubepods cgroups
	Paths      map[string]bool
	Sysctls    map[string]string
}

func factsOfHost(t *testing.T) hostFacts {
	t.Helper()
	f := hostFacts{Paths: map[string]bool{}, Sysctls: map[string]string{}}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	require.NoError(t, err)
	for _, line := range strings.Split(string(mi), "\n") {
		fs := strings.Fields(line)
		if len(fs) > 4 && (strings.HasPrefix(fs[4], kubetest.StateDir()) || strings.HasPrefix(fs[4], "/var/run/netns/cni-") || strings.HasPrefix(fs[4], "/run/netns/cni-")) {
			f.Mounts = append(f.Mounts, fs[4])
		}
	}
	_, err = net.InterfaceByName(kubetest.Bridge)
	f.Bridge = err == nil
	for _, cmd := range []string{"iptables-save", "ip6tables-save"} {
		out, _ := exec.Command(cmd).Output()
		for _, line := range strings.Split(string(out), "\n") {
			if strings.Contains(line, "KUBE-") || strings.Contains(line, "fleetkit-kubetest") {
				f.KubeChains = append(f.KubeChains, cmd+": "+line)
			}
		}
	}
	f.Cgroups, _ = filepath.Glob("/sys/fs/cgroup/*/kubepods")
	for _, p := range []string{"/var/lib/kubelet", "/var/log/containers", "/var/log/pods", "/var/lib/cni", "/usr/libexec/kubernetes", "/run/mount", "/var/run/netns", kubetest.StateDir()} {
		_, err := os.Stat(p)
		f.Paths[p] = err == nil
	}
	for _, s := range []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops"} {
		b, _ := os.ReadFile("/proc/sys/" + s)
		f.Sysctls[s] = strings.TrimSpace(string(b))
	}
	return f
}

// nodeProcesses returns the PIDs of the node's shims and of the processes
// in its Pods' cgroups.
func nodeProcesses(t *testing.T) []int {
	t.Helper()
	var pids []int
	procs, _ := filepath.Glob("/sys/fs/cgroup/pids/kubepods/*/*/cgroup.procs")
	more, _ := filepath.Glob("/sys/fs/cgroup/pids/kubepods/*/*/*/cgroup.procs")
	for _, f := range append(procs, more...) {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(s)
			pids = append(pids, pid)
		}
	}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), "containerd-shim") && strings.Contains(string(cmdline), kubetest.StateDir()) {
			pid, _ := strconv.Atoi(e.Name())
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return slices.Compact(pids)
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}

const crashChildEnv = "FLEETKIT_KUBETEST_CRASH_CHILD"

// TestCrashChild is the process TestCrashRecoveryAndTeardown kills: it
// starts a node under the lock its parent holds (inherited as fd 3), runs
// a Pod and waits to be killed.
func TestCrashChild(t *testing.T) {
	if os.Getenv(crashChildEnv) != "1" {
		t.Skip("the child process of TestCrashRecoveryAndTeardown")
	}
	node, err := kubetest.StartNodeLocked(context.Background(), os.NewFile(3, "node.lock"))
	require.NoError(t, err)
	cs, err := kubernetes.NewForConfig(node.Config())
	require.NoError(t, err)
	ns := kubetest.Namespace(t, node)
	_, err = cs.CoreV1().Pods(ns).Create(t.Context(), pauseSpec("left-behind"), metav1.CreateOptions{})
	require.NoError(t, err)
	waitPod(t.Context(), t, cs, ns, "left-behind", podReady)
	fmt.Println("READY")
	select {} // until killed
}

// TestCrashRecoveryAndTeardown kills a process that runs a node with a
// Pod (SIGKILL: nothing of it runs after), checks that the Pod's processes
// and the host changes outlived it, starts a node again — which must
// clean up and work — and checks that stopping it leaves the host as it
// was before either node. The test holds the node's lock throughout (the
// child shares it), so no other package's node comes in between.
func TestCrashRecoveryAndTeardown(t *testing.T) {
	testenv.Short(t)
	if err := kubetest.CheckNode(""); err != nil {
		testenv.Missing(t, "%v: run scripts/kube-testenv.sh as root", err)
	}
	require.NoError(t, cluster.Stop(), "this test starts nodes of its own")
	lock, err := kubetest.LockNode(t.Context())
	require.NoError(t, err)
	defer lock.Close()

	before := factsOfHost(t)
	require.False(t, before.Bridge, "a node is running")
	require.ErrorIs(t, kubetest.Down(t.Context(), ""), kubetest.ErrLocked, "down while the node is held")

	child := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.v")
	child.Env = append(os.Environ(), crashChildEnv+"=1")
	child.ExtraFiles = []*os.File{lock}
	out, err := child.StdoutPipe()
	require.NoError(t, err)
	child.Stderr = child.Stdout
	require.NoError(t, child.Start())
	ready := make(chan struct{})
	var output strings.Builder
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			output.WriteString(sc.Text() + "\n")
			if sc.Text() == "READY" {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
	case <-time.After(3 * time.Minute):
		_ = child.Process.Kill()
		t.Fatalf("the child's node did not come up:\n%s", output.String())
	}
	leftover := nodeProcesses(t)
	require.NotEmpty(t, leftover, "the child's Pod has no processes")
	require.NoError(t, child.Process.Signal(syscall.SIGKILL))
	_ = child.Wait()

	crashed := factsOfHost(t)
	assert.True(t, crashed.Bridge, "the crash left the bridge")
	assert.NotEmpty(t, crashed.Mounts, "the crash left mounts")
	var survivors []int
	for _, pid := range leftover {
		if alive(pid) {
			survivors = append(survivors, pid)
		}
	}
	assert.NotEmpty(t, survivors, "the Pod's processes and shims outlive the test binary")

	// The next start cleans up and works.
	start := time.Now()
	node, err := kubetest.StartNodeLocked(t.Context(), lock)
	require.NoError(t, err)
	t.Logf("start after the crash (cleanup included): %v", time.Since(start).Round(time.Millisecond))
	for _, pid := range survivors {
		assert.False(t, alive(pid), "pid %d of the dead node survived the next start", pid)
	}
	cs, err := kubernetes.NewForConfig(node.Config())
	require.NoError(t, err)
	ns := kubetest.Namespace(t, node)
	_, err = cs.CoreV1().Pods(ns).Create(t.Context(), pauseSpec("after"), metav1.CreateOptions{})
	require.NoError(t, err)
	waitPod(t.Context(), t, cs, ns, "after", podReady)
	running := nodeProcesses(t)
	require.NotEmpty(t, running)

	// Stop leaves the host as it was, with a Pod running.
	start = time.Now()
	require.NoError(t, node.Stop())
	t.Logf("stop with a Pod running: %v", time.Since(start).Round(time.Millisecond))
	for _, pid := range running {
		assert.False(t, alive(pid), "pid %d survived Stop", pid)
	}
	assert.Equal(t, before, factsOfHost(t))
}
