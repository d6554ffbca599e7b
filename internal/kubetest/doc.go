// Package kubetest runs real Kubernetes for integration tests, from
// binaries built once by scripts/kube-testenv.sh (no downloads are
// possible here; facts in shared/reference/kube-testenv.md and
// kube-cluster.md).
//
// Two environments:
//
//   - Env: etcd and kube-apiserver on loopback. Objects are stored, Pods
//     never run; enough for Helm releases. Several may run at once.
//   - Cluster: a real single-node cluster — etcd, kube-apiserver,
//     kube-controller-manager, kube-scheduler, a kubelet running real Pods
//     through a private containerd (never Docker's), CNI bridge networking
//     (Pod IPs in PodCIDR are reachable from the host) and kube-proxy in
//     iptables mode (ClusterIP Services route, from the host and from
//     Pods). Needs root. Images come from the Docker Engine through
//     Node.LoadImages; nothing is pulled.
//
// A test package shares one of each: declare it as a package variable and
// ask it for the environment in each test that needs one; it starts on
// first use.
//
//	var cluster kubetest.Cluster
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		node := cluster.Get(t) // skips (fails under CI=true) without the binaries or root
//		require.NoError(t, node.LoadImages(t.Context(), "fleetkit/linter:1.0"))
//		client := kubernetes.NewForConfigOrDie(node.Config())
//		ns := kubetest.Namespace(t, node)
//		...
//	}
//
// # One node per machine
//
// The node has fixed ports (the kubelet's 10250 and 10248, kube-proxy's
// 10249 and 10256), one bridge (Bridge) and the host's kubepods cgroups, so
// one runs per machine at a time. `go test ./...` runs packages in
// parallel: a package that wants the node while another holds it waits (a
// flock on a file in the cache directory) rather than fails.
//
// # Leaving the host as it was
//
// The components are started with a parent-death signal from a thread that
// lives as long as they should, so they die with the test binary even
// though testenv.Main exits without running deferred calls. Containers,
// their shims and mounts survive a dead test binary; the next StartNode,
// and `scripts/kube-testenv.sh down` (Down), remove them, and a Cluster
// stops its node at exit through testenv.AtExit. What the node changes and
// down undoes: containerd's containers and shims, the processes in the
// kubepods cgroups and the cgroups, mounts under StateDir, Pod network
// namespaces, the bridge and its route, one iptables FORWARD rule (Pods on
// the bridge reach each other where Docker set the FORWARD policy to
// DROP), kube-proxy's rules, the kernel settings the kubelet changes, and
// the host paths it creates (only if it created them).
//
// # Concurrency
//
// Env, Cluster, Server and Node are safe for concurrent use by the tests
// of a package; Stop is idempotent.
package kubetest
