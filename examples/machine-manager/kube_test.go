package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/internal/kubetest"
	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/machines"
)

// cluster is the real single-node cluster of the -provider kubernetes test.
var cluster kubetest.Cluster

// TestKubernetesProvider runs the manager with -provider kubernetes against
// the real test cluster, through a kubeconfig and a namespace flag: the
// linters are Pods, and lint requests through the balancer reach them,
// before and during a rollout to 2.0 and after it; teardown deletes the
// Pods.
func TestKubernetesProvider(t *testing.T) {
	testenv.Short(t)
	node := cluster.Get(t)
	if err := node.LoadImages(t.Context(), "fleetkit/linter:1.0", "fleetkit/linter:2.0"); err != nil {
		testenv.Missing(t, "%v (build the images with scripts/build-images.sh)", err)
	}
	cs, err := clientset.NewForConfig(node.Config())
	require.NoError(t, err)
	ns := kubetest.Namespace(t, node)

	// The balancer runs on the host, which reaches Pod IPs.
	bal, lbURL := hostBalancer(t)

	dir := t.TempDir()
	cfg := filepath.Join(dir, "mm.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `
health: {interval: 200ms}
remove_timeout: 30s
state_file: %s
balancer: {address: %q, secret: s3cret}
languages:
  python:
    version: "1.0"
    versions:
      "1.0": {image: "fleetkit/linter:1.0"}
      "2.0": {image: "fleetkit/linter:2.0"}
`, filepath.Join(dir, "state.json"), lbURL), 0o600))
	args := []string{"-provider", "kubernetes", "-kubeconfig", node.Kubeconfig(), "-namespace", ns,
		"-name", "mm-kube-test", "-config", cfg, "-addr", "127.0.0.1:0"}

	pods := func() map[string]string { // Pod IP → version label
		list, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: machines.LabelProvider + "=mm-kube-test"})
		require.NoError(t, err)
		out := map[string]string{}
		for _, p := range list.Items {
			if p.DeletionTimestamp == nil {
				out[p.Status.PodIP] = p.Labels[linter.LabelVersion]
			}
		}
		return out
	}
	lint := func() {
		t.Helper()
		resp, err := http.Post(lbURL+"/lint/python", "application/json", strings.NewReader(`{"code": "import os,sys\n"}`))
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}

	url, stop := startManager(t, args...)
	a := post(t, url+"/create", `{"lang":"python"}`)["ip"].(string)
	b := post(t, url+"/create", `{"lang":"python"}`)["ip"].(string)
	held := backends(t, bal)
	assert.Equal(t, map[string]string{"http://" + a: "1.0", "http://" + b: "1.0"}, held)
	live := pods()
	require.Len(t, live, 2)
	for ip, v := range live {
		assert.Equal(t, "1.0", v)
		assert.Contains(t, held, "http://"+ip+":8080", "the backend is the Pod IP and port")
	}
	for range 10 {
		lint()
	}

	post(t, url+"/init-update", `{"lang":"python","version":"2.0"}`)
	for range 4 { // 5, 10, 50, 100 %
		lint()
		post(t, url+"/update", `{"lang":"python"}`)
		lint()
	}
	for u, v := range backends(t, bal) {
		assert.Equal(t, "2.0", v, u)
	}
	live = pods()
	assert.Len(t, live, 2)
	for ip, v := range live {
		assert.Equal(t, "2.0", v, ip)
	}
	stop()

	require.NoError(t, run(context.Background(), append([]string{"teardown"}, args...), testWriter{t}, nil))
	assert.Empty(t, backends(t, bal), "teardown removes the backends")
	assert.Empty(t, pods(), "and deletes the Pods")
}

// Without a cluster to reach, -provider kubernetes fails at start, naming
// what it could not do.
func TestKubernetesProviderUnreachable(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: fleet}}]
current-context: x
`), 0o600))
	cfg := filepath.Join(dir, "mm.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`
balancer: {address: "http://127.0.0.1:1", secret: s}
languages: {python: {version: "1.0", versions: {"1.0": {image: "fleetkit/linter:1.0"}}}}
`), 0o600))
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err := run(ctx, []string{"-provider", "kubernetes", "-kubeconfig", kc, "-config", cfg, "-addr", "127.0.0.1:0"}, testWriter{t}, nil)
	require.ErrorContains(t, err, "namespace fleet", "the context's namespace is the default")

	require.NoError(t, os.WriteFile(cfg, []byte(`
balancer: {address: "http://127.0.0.1:1", secret: s}
languages: {python: {version: "1.0", versions: {"1.0": {command: linter}}}}
`), 0o600))
	err = run(ctx, []string{"-provider", "kubernetes", "-kubeconfig", kc, "-config", cfg, "-addr", "127.0.0.1:0"}, testWriter{t}, nil)
	require.ErrorContains(t, err, "no image; -provider kubernetes needs one")
}
