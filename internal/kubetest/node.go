package kubetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// The node's fixed names and addresses: one node runs per machine.
const (
	// NodeName is the node's name. The kubelet listens on 127.0.0.1 only,
	// and the API server reaches it by name (logs, exec, port-forward).
	NodeName = "localhost"
	// Bridge is the CNI bridge the Pods are attached to.
	Bridge = "fleetkit0"
	// PodCIDR is the Pods' network; the host reaches Pod IPs directly.
	PodCIDR = "10.244.0.0/24"
	// GatewayIP is the bridge's address: the Pods' gateway, and where the
	// API server listens so that Pods reach it (through the kubernetes
	// Service, which kube-proxy routes).
	GatewayIP = "10.244.0.1"
	// ServiceCIDR is the range of ClusterIPs; kube-proxy routes them, from
	// the host as from Pods.
	ServiceCIDR = "10.96.0.0/16"
	// PauseImage is the sandbox image, a static Go binary FROM scratch
	// built by scripts/kube-testenv.sh.
	PauseImage = "docker.io/fleetkit/kube-pause:1"
	// CNIVersion is the version of the CNI plugins scripts/kube-testenv.sh
	// builds.
	CNIVersion = "v1.6.2"
	// MaxPods is the kubelet's maxPods: above its default 110, so that 200
	// instances of a fleet fit on the one node, and below the 253 Pod IPs
	// of PodCIDR (.2 to .254) with room for the Pods being torn down.
	MaxPods = 250

	// The kubelet's and kube-proxy's fixed ports, on 127.0.0.1.
	kubeletHealthzPort = 10248
	proxyHealthzPort   = 10256
)

// NodeOptions configures StartNode. The zero value is ready.
type NodeOptions struct {
	// BinDir holds the binaries of scripts/kube-testenv.sh; "" means BinDir().
	BinDir string
	// Logf, when set, is told what StartNode waits for (another test
	// binary's node, for one).
	Logf func(format string, args ...any)
}

// Node is a running single-node cluster: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, a kubelet with a private
// containerd, CNI bridge networking and kube-proxy in iptables mode.
type Node struct {
	api     *Server
	state   string
	binDir  string
	procs   []*proc // in start order; stopped in reverse
	lock    *nodeLock
	ownLock bool   // Stop releases lock
	sock    string // containerd's socket

	stopOnce sync.Once
	stopErr  error
}

// Config returns a client configuration for the cluster's API server (a
// system:masters token; the server verified against the test CA).
func (n *Node) Config() *rest.Config { return n.api.Config() }

// Kubeconfig returns the path of a kubeconfig file for the cluster.
func (n *Node) Kubeconfig() string { return n.api.Kubeconfig() }

// Dir returns the node's state directory (configuration, data and the
// components' logs: etcd.log, kubelet.log, ...).
func (n *Node) Dir() string { return n.state }

// StateDir is the node's state directory. It is fixed, like the node's
// ports and bridge, so that a later run finds what a dead one left.
func StateDir() string { return filepath.Join(CacheDir(), "kube", "node") }

// lockPath is the file whose lock says who runs the node.
func lockPath() string { return filepath.Join(CacheDir(), "kube", "node.lock") }

// nodeTools are the host programs a node needs besides BinDir's.
var nodeTools = []string{"containerd", "containerd-shim-runc-v2", "runc", "ctr", "ip",
	"iptables", "iptables-save", "iptables-restore"}

// CheckNode returns an error wrapping ErrMissing when something a node
// needs is absent: root, a binary of binDir ("" means BinDir()), the pause
// image, a host tool.
func CheckNode(binDir string) error {
	binDir = binDirOr(binDir)
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: a node needs root", ErrMissing)
	}
	files := []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy",
		"cni-" + CNIVersion + "/bridge", "cni-" + CNIVersion + "/host-local", "cni-" + CNIVersion + "/loopback"}
	for _, f := range files {
		p := filepath.Join(binDir, f)
		if fi, err := os.Stat(p); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("%w: no executable %s", ErrMissing, p)
		}
	}
	if fi, err := os.Stat(filepath.Join(binDir, "pause-1.tar")); err != nil || fi.Size() == 0 {
		return fmt.Errorf("%w: no pause image %s (needs Docker to build)", ErrMissing, filepath.Join(binDir, "pause-1.tar"))
	}
	for _, t := range nodeTools {
		if _, err := exec.LookPath(t); err != nil {
			return fmt.Errorf("%w: %s not in PATH (Debian: containerd, runc, iproute2, iptables)", ErrMissing, t)
		}
	}
	return nil
}

// StartNode starts a single-node cluster and returns once the node is
// Ready, schedulable, its default ServiceAccount exists and kube-proxy has
// synced. It needs root. It waits while another process runs the node
// (one per machine), and first cleans up what a dead one left. It returns
// an error wrapping ErrMissing when a binary or a host tool is absent.
// Call Stop when done; if the process dies instead, the components die
// with it and the next StartNode (or Down) cleans up.
func StartNode(ctx context.Context, opts NodeOptions) (*Node, error) {
	return startNode(ctx, opts, nil)
}

// startNode is StartNode; with held, the caller holds the node's lock
// (and keeps holding it after Stop).
func startNode(ctx context.Context, opts NodeOptions, held *nodeLock) (*Node, error) {
	binDir := opts.BinDir
	if binDir == "" {
		binDir = BinDir()
	}
	if err := CheckNode(binDir); err != nil {
		return nil, err
	}
	state := StateDir()
	// Unix socket paths are limited to 108 bytes.
	if len(state) > 60 {
		return nil, fmt.Errorf("kubetest: state directory %s is too long for the sockets in it (set FLEETKIT_CACHE)", state)
	}
	lock := held
	if lock == nil {
		var err error
		if lock, err = lockNode(ctx, lockPath(), true, opts.Logf); err != nil {
			return nil, err
		}
	}
	n := &Node{state: state, binDir: binDir, lock: lock, ownLock: held == nil, sock: filepath.Join(state, "containerd", "containerd.sock")}
	if err := cleanHost(state, binDir); err != nil {
		if n.ownLock {
			_ = lock.unlock()
		}
		return nil, fmt.Errorf("kubetest: cleaning up after an earlier node: %w", err)
	}
	if err := n.start(ctx); err != nil {
		logs := n.keepLogs()
		return nil, errors.Join(err, n.Stop(), logs)
	}
	return n, nil
}

func (n *Node) start(ctx context.Context) error {
	for _, d := range []string{"api", "containerd", "kubelet", "cni/conf", "cni/ipam"} {
		if err := os.MkdirAll(filepath.Join(n.state, d), 0o700); err != nil {
			return err
		}
	}
	for _, cmd := range iptablesCommands {
		// down removes every KUBE-* chain: they must be the node's.
		if out, err := exec.Command(cmd + "-save").Output(); err == nil && strings.Contains(string(out), "\n:KUBE-") {
			return fmt.Errorf("kubetest: %s has KUBE-* chains: this host runs Kubernetes already", cmd)
		}
	}
	if _, err := recordHost(n.state); err != nil {
		return err
	}
	if err := n.startNetwork(); err != nil {
		return err
	}
	if err := n.startContainerd(ctx); err != nil {
		return err
	}

	pki, err := writePKI(filepath.Join(n.state, "api"),
		[]net.IP{net.ParseIP(GatewayIP), net.ParseIP("10.96.0.1"), net.IPv4(127, 0, 0, 1)},
		[]string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"})
	if err != nil {
		return err
	}
	n.api = &Server{dir: filepath.Join(n.state, "api")}
	if err := n.api.startControlPlane(ctx, filepath.Join(n.binDir, "etcd"), filepath.Join(n.binDir, "kube-apiserver"), GatewayIP, pki, nil); err != nil {
		n.procs = append(n.procs, n.api.procs...)
		return err
	}
	n.procs = append(n.procs, n.api.procs...)
	kubeconfig := n.api.Kubeconfig()

	if _, err := n.startProc("kube-controller-manager",
		"--kubeconfig="+kubeconfig, "--leader-elect=false", "--secure-port=0",
		"--service-account-private-key-file="+pki.saKeyFile, "--root-ca-file="+pki.caFile,
		"--use-service-account-credentials=false", "--cluster-cidr="+PodCIDR, "--service-cluster-ip-range="+ServiceCIDR,
		// The node lifecycle controller lifts the node's not-ready taint on
		// its next pass after the node is Ready: pass every second.
		"--node-monitor-period=1s", "--kube-api-qps=200", "--kube-api-burst=400"); err != nil {
		return err
	}
	if _, err := n.startProc("kube-scheduler", "--kubeconfig="+kubeconfig, "--leader-elect=false", "--secure-port=0"); err != nil {
		return err
	}
	if err := n.startKubelet(kubeconfig); err != nil {
		return err
	}
	if err := n.startKubeProxy(kubeconfig); err != nil {
		return err
	}
	return n.waitNodeReady(ctx)
}

func (n *Node) startProc(name string, args ...string) (*proc, error) {
	p, err := startProc(n.state, name, filepath.Join(n.binDir, name), args...)
	if err != nil {
		return nil, err
	}
	n.procs = append(n.procs, p)
	return p, nil
}

// startNetwork makes the bridge with the gateway address (before the API
// server, which listens there), routes the Service range through it, and
// lets Pods on it reach each other where the FORWARD policy drops.
func (n *Node) startNetwork() error {
	if err := checkRoutesFree(); err != nil {
		return err
	}
	for _, args := range [][]string{
		{"ip", "link", "add", Bridge, "type", "bridge"},
		{"ip", "addr", "add", GatewayIP + "/24", "dev", Bridge},
		{"ip", "link", "set", Bridge, "up"},
		{"ip", "route", "add", ServiceCIDR, "dev", Bridge, "src", GatewayIP},
		{"iptables", "-w", "-I", "FORWARD", "1", "-i", Bridge, "-o", Bridge, "-m", "comment", "--comment", forwardComment, "-j", "ACCEPT"},
	} {
		if err := run(args[0], args[1:]...); err != nil {
			return fmt.Errorf("kubetest: setting up the network: %w", err)
		}
	}
	conf := fmt.Sprintf(`{"cniVersion": "1.0.0", "name": "fleetkit", "plugins": [
  {"type": "bridge", "bridge": %q, "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": %q,
            "ranges": [[{"subnet": %q, "gateway": %q}]], "routes": [{"dst": "0.0.0.0/0"}]}}]}
`, Bridge, filepath.Join(n.state, "cni", "ipam"), PodCIDR, GatewayIP)
	return os.WriteFile(filepath.Join(n.state, "cni", "conf", "10-fleetkit.conflist"), []byte(conf), 0o600)
}

// checkRoutesFree refuses to start where the node's networks are already
// routed (another cluster, a VPN): the node would break them.
func checkRoutesFree() error {
	out, err := exec.Command("ip", "-4", "route", "show").Output()
	if err != nil {
		return fmt.Errorf("kubetest: ip route: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && (f[0] == PodCIDR || f[0] == ServiceCIDR) {
			return fmt.Errorf("kubetest: %s is already routed on this host (%s)", f[0], line)
		}
	}
	return nil
}

// startContainerd starts a containerd of the node's own (root, state,
// socket, runc root in the state directory) beside any other on the host
// (Docker's), and imports the pause image.
func (n *Node) startContainerd(ctx context.Context) error {
	d := filepath.Join(n.state, "containerd")
	cfg := fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
[grpc]
  address = %[3]q
[ttrpc]
  address = %[4]q
[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  # root here may lack CAP_SYS_RESOURCE: a negative oom_score_adj (-998 for
  # the sandbox) then fails every Pod with runc's misleading "can't get
  # final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        # must match the kubelet's cgroupDriver: containerd 1.6 cannot tell it
        SystemdCgroup = false
        Root = %[7]q
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[8]q
    conf_dir = %[9]q
`, filepath.Join(d, "root"), filepath.Join(d, "state"), n.sock, n.sock+".ttrpc", filepath.Join(d, "opt"),
		PauseImage, filepath.Join(d, "runc"), filepath.Join(n.binDir, "cni-"+CNIVersion), filepath.Join(n.state, "cni", "conf"))
	cfgFile := filepath.Join(d, "config.toml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return err
	}
	p, err := startProc(n.state, "containerd", "containerd", "--config", cfgFile)
	if err != nil {
		return err
	}
	n.procs = append(n.procs, p)
	err = poll(ctx, 30*time.Second, "containerd", []*proc{p}, func(ctx context.Context) (bool, string) {
		c, err := net.Dial("unix", n.sock)
		if err != nil {
			return false, err.Error()
		}
		c.Close()
		return true, ""
	})
	if err != nil {
		return err
	}
	f, err := os.Open(filepath.Join(n.binDir, "pause-1.tar"))
	if err != nil {
		return err
	}
	defer f.Close()
	return n.importImages(ctx, f)
}

// importImages imports a docker save or OCI archive into the node's
// containerd, where the kubelet finds its images.
func (n *Node) importImages(ctx context.Context, archive io.Reader) error {
	cmd := exec.CommandContext(ctx, "ctr", "--address", n.sock, "--namespace", "k8s.io", "images", "import", "-")
	cmd.Stdin = archive
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubetest: ctr images import: %v: %s", err, lastLine(out))
	}
	return nil
}

// LoadImages copies images from the Docker Engine into the node (docker
// save | ctr images import): nothing is pulled, so Pods use images loaded
// this way with a tag other than latest (or imagePullPolicy Never). An
// unreachable engine or an image it does not have is an error wrapping
// ErrMissing.
func (n *Node) LoadImages(ctx context.Context, images ...string) error {
	if len(images) == 0 {
		return nil
	}
	if _, err := exec.LookPath("docker"); err != nil {
		return fmt.Errorf("%w: docker not in PATH", ErrMissing)
	}
	if out, err := exec.CommandContext(ctx, "docker", append([]string{"image", "inspect", "-f", "{{.Id}}"}, images...)...).CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s on the Docker Engine (scripts/build-images.sh builds fleetkit's): %s", ErrMissing, strings.Join(images, " "), lastLine(out))
	}
	save := exec.CommandContext(ctx, "docker", append([]string{"save"}, images...)...)
	var stderr strings.Builder
	save.Stderr = &stderr
	out, err := save.StdoutPipe()
	if err != nil {
		return err
	}
	if err := save.Start(); err != nil {
		return err
	}
	importErr := n.importImages(ctx, out)
	_, _ = io.Copy(io.Discard, out) // let docker save finish if import stopped early
	if err := save.Wait(); err != nil {
		return fmt.Errorf("kubetest: docker save: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return importErr
}

func (n *Node) startKubelet(kubeconfig string) error {
	d := filepath.Join(n.state, "kubelet")
	cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false           # 1.35+ refuses cgroup v1 hosts by default
failSwapOn: false
cgroupDriver: cgroupfs        # containerd 1.6 cannot report its driver; must match SystemdCgroup = false
containerRuntimeEndpoint: unix://%[1]s
address: 127.0.0.1
healthzBindAddress: 127.0.0.1
healthzPort: %[2]d
readOnlyPort: 0
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
podLogsDir: %[3]s
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%%", imagefs.available: "1%%", nodefs.inodesFree: "1%%"}
nodeStatusUpdateFrequency: 5s
serializeImagePulls: false
kubeAPIQPS: 200
kubeAPIBurst: 400
maxPods: %[4]d
`, n.sock, kubeletHealthzPort, filepath.Join(d, "logs"), MaxPods)
	cfgFile := filepath.Join(d, "config.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return err
	}
	_, err := n.startProc("kubelet", "--config="+cfgFile, "--kubeconfig="+kubeconfig,
		"--root-dir="+filepath.Join(d, "root"), "--cert-dir="+filepath.Join(d, "certs"),
		"--hostname-override="+NodeName, "--node-ip="+GatewayIP, "--volume-plugin-dir="+filepath.Join(d, "volume-plugins"))
	return err
}

func (n *Node) startKubeProxy(kubeconfig string) error {
	cfg := fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: %q}
mode: iptables
hostnameOverride: %s
clusterCIDR: %s
healthzBindAddress: 127.0.0.1:%d
metricsBindAddress: 127.0.0.1:10249
# Leave the host's conntrack settings alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
# No NodePorts on 127.0.0.1: that needs route_localnet on every interface.
iptables: {localhostNodePorts: false}
`, kubeconfig, NodeName, PodCIDR, proxyHealthzPort)
	cfgFile := filepath.Join(n.state, "kube-proxy.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		return err
	}
	_, err := n.startProc("kube-proxy", "--config="+cfgFile)
	return err
}

// waitNodeReady waits until Pods can run: the node is Ready without the
// not-ready taint, the default ServiceAccount exists (the admission plugin
// rejects Pods without it) and kube-proxy has synced.
func (n *Node) waitNodeReady(ctx context.Context) error {
	cs, err := kubernetes.NewForConfig(n.Config())
	if err != nil {
		return err
	}
	hc := &http.Client{Timeout: time.Second}
	return poll(ctx, 120*time.Second, "node "+NodeName, n.procs, func(ctx context.Context) (bool, string) {
		node, err := cs.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		ready := false
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady {
				ready = c.Status == corev1.ConditionTrue
				if !ready {
					return false, "node not Ready: " + c.Message
				}
			}
		}
		if !ready {
			return false, "node has no Ready condition"
		}
		for _, t := range node.Spec.Taints {
			if t.Key == corev1.TaintNodeNotReady {
				return false, "node still tainted " + t.Key
			}
		}
		if _, err := cs.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{}); err != nil {
			return false, "default ServiceAccount: " + err.Error()
		}
		resp, err := hc.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", proxyHealthzPort))
		if err != nil {
			return false, "kube-proxy: " + err.Error()
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, "kube-proxy: " + resp.Status
		}
		return true, ""
	})
}

// keepLogs copies the components' logs out of the state directory, which
// Stop removes, and returns an error naming where they are.
func (n *Node) keepLogs() error {
	logs, _ := filepath.Glob(filepath.Join(n.state, "*.log"))
	apiLogs, _ := filepath.Glob(filepath.Join(n.state, "api", "*.log"))
	logs = append(logs, apiLogs...)
	if len(logs) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "fleetkit-kubenode-logs-")
	if err != nil {
		return nil
	}
	for _, l := range logs {
		if b, err := os.ReadFile(l); err == nil {
			_ = os.WriteFile(filepath.Join(dir, filepath.Base(l)), b, 0o600)
		}
	}
	return fmt.Errorf("kubetest: the components' logs are in %s", dir)
}

// Stop stops the node's components (the kubelet first, etcd last), then
// removes every trace of the node from the host (see Down) and releases
// the node for the next process. It is idempotent.
func (n *Node) Stop() error {
	n.stopOnce.Do(func() {
		// The kubelet and kube-proxy stop first, etcd and containerd last;
		// cleanHost then removes the Pods, so no graceful Pod shutdown is
		// waited for.
		var errs []error
		for i := len(n.procs) - 1; i >= 0; i-- {
			errs = append(errs, n.procs[i].stop(3*time.Second))
		}
		errs = append(errs, cleanHost(n.state, n.binDir))
		if n.ownLock {
			errs = append(errs, n.lock.unlock())
		}
		n.stopErr = errors.Join(errs...)
	})
	return n.stopErr
}

// Down removes what a node left on this host after its process died:
// containers, shims and Pod processes of the node's containerd, mounts
// under the state directory, Pod network namespaces, the bridge, the
// kubepods cgroups, kube-proxy's iptables rules, and the host paths and
// kernel settings the kubelet changed (paths only if the node created
// them). It returns ErrLocked while a live process runs the node.
func Down(ctx context.Context, binDir string) error {
	if binDir == "" {
		binDir = BinDir()
	}
	lock, err := lockNode(ctx, lockPath(), false, nil)
	if err != nil {
		return err
	}
	return errors.Join(cleanHost(StateDir(), binDir), lock.unlock())
}
