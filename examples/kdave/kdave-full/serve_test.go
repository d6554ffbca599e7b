package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
	"github.com/fleetkit/fleetkit/deprecation/helm/helmtest"
	"github.com/fleetkit/fleetkit/internal/httpserver"
	"github.com/fleetkit/fleetkit/internal/kubetest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

// kube is this package's API server, started by the first test that
// needs it.
var kubeEnv = kubetest.Env{Options: kubetest.Options{APIServerArgs: helmtest.APIServerArgs}}

func TestMain(m *testing.M) {
	code := testenv.Run(m)
	// The shared API server outlives the tests; stopped here, its
	// processes and the clients' connections to it end before the leak
	// check.
	_ = kubeEnv.Stop()
	os.Exit(testenv.CheckLeaks(code))
}

func TestParseServeFlags(t *testing.T) {
	devnull, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer devnull.Close()

	cfg, err := parseServeFlags(nil, devnull)
	require.NoError(t, err)
	assert.Equal(t, ":8000", cfg.addr)
	assert.Equal(t, deprecation.DefaultCacheInterval, cfg.cache.Interval)
	assert.EqualValues(t, 256, cfg.scan.PageSize)
	assert.True(t, cfg.scan.Target.IsZero(), "default: the cluster's version")
	assert.NotNil(t, cfg.scan.Rules)

	cfg, err = parseServeFlags([]string{"-addr", "127.0.0.1:9", "-interval", "5m", "-tolerance", "1m", "-page-size", "10",
		"-workers", "3", "-target", "v1.25", "-data-file", "/tmp/x.json", "-kdave-metrics", "-namespace", "shop",
		"-configmaps", "-kubeconfig", "/k", "-rules", testdata + "rules/cert-manager.yaml"}, devnull)
	require.NoError(t, err)
	assert.Equal(t, serveConfig{
		addr: "127.0.0.1:9", kubeconfig: "/k", kdaveMetrics: true,
		cache: deprecation.CacheOptions{Interval: 5 * time.Minute, Tolerance: time.Minute, DataFile: "/tmp/x.json"},
		scan: helm.Options{Rules: cfg.scan.Rules, Target: deprecation.MustParseVersion("v1.25"), Namespace: "shop",
			PageSize: 10, Workers: 3, ConfigMaps: true},
	}, cfg)
	_, ok := cfg.scan.Rules.Lookup("cert-manager.io/v1alpha2", "Certificate")
	assert.True(t, ok, "extra rules merged")

	for _, args := range [][]string{
		{"-target", "latest"},
		{"-rules", "nope.yaml"},
		{"extra-arg"},
		{"-interval", "soon"},
	} {
		_, err := parseServeFlags(args, devnull)
		assert.Error(t, err, "%q", args)
	}
}

func TestRestConfig(t *testing.T) {
	dir := t.TempDir()
	kc := filepath.Join(dir, "config")
	require.NoError(t, os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t0k}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600))

	cfg, err := restConfig(kc, "")
	require.NoError(t, err)
	assert.Equal(t, "https://127.0.0.1:1", cfg.Host)
	assert.Equal(t, "t0k", cfg.BearerToken)

	t.Setenv("KUBECONFIG", kc)
	cfg, err = restConfig("", "")
	require.NoError(t, err)
	assert.Equal(t, "t0k", cfg.BearerToken, "from $KUBECONFIG")

	_, err = restConfig(filepath.Join(dir, "missing"), "")
	require.Error(t, err)

	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", dir) // no ~/.kube/config
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err = restConfig("", "")
	require.ErrorContains(t, err, "not in a cluster")
}

// wantSeries are the exporter's finding and count series for helmtest's
// releases on a v1.37 cluster, exactly.
var wantSeries = []string{
	`fleetkit_deprecation_api_objects{api_version="extensions/v1beta1",deprecated_in="v1.14.0",kind="Ingress",name="legacy",namespace="billing",release="legacy",removed_in="v1.22.0",replacement="networking.k8s.io/v1",state="removed"} 1`,
	`fleetkit_deprecation_api_objects{api_version="policy/v1beta1",deprecated_in="v1.21.0",kind="PodDisruptionBudget",name="legacy-hook",namespace="billing",release="legacy",removed_in="v1.25.0",replacement="policy/v1",state="removed"} 1`,
	`fleetkit_deprecation_api_objects{api_version="resource.k8s.io/v1beta1",deprecated_in="v1.35.0",kind="DeviceClass",name="billing-web-gpu",namespace="billing",release="web",removed_in="v1.38.0",replacement="resource.k8s.io/v1",state="removal-soon"} 1`,
	`fleetkit_deprecation_api_objects{api_version="resource.k8s.io/v1beta1",deprecated_in="v1.35.0",kind="DeviceClass",name="shop-web-gpu",namespace="shop",release="web",removed_in="v1.38.0",replacement="resource.k8s.io/v1",state="removal-soon"} 1`,
	`fleetkit_deprecation_api_objects{api_version="resource.k8s.io/v1beta1",deprecated_in="v1.35.0",kind="ResourceClaimTemplate",name="web-gpu",namespace="billing",release="web",removed_in="v1.38.0",replacement="resource.k8s.io/v1",state="removal-soon"} 1`,
	`fleetkit_deprecation_api_objects{api_version="resource.k8s.io/v1beta1",deprecated_in="v1.35.0",kind="ResourceClaimTemplate",name="web-gpu",namespace="shop",release="web",removed_in="v1.38.0",replacement="resource.k8s.io/v1",state="removal-soon"} 1`,
	`fleetkit_deprecation_releases 4`,
	`fleetkit_deprecation_releases_corrupt 1`,
	`fleetkit_deprecation_releases_deprecated 2`,
	`fleetkit_deprecation_releases_removed 1`,
	`fleetkit_deprecation_target_info{k8s_version="v1.37.1"} 1`,
	`wf_k8s_deployed_releases 4`,
	`wf_k8s_deployed_releases_with_deprecated_api_version 3`,
	`wf_k8s_deployed_releases_with_removed_api_version 1`,
}

// series returns the exposition lines of the metrics named with prefixes,
// leaving out the ones whose values are times.
func series(body string, prefixes ...string) (lines []string, kdaveInfo int) {
	for _, l := range strings.Split(body, "\n") {
		switch {
		case strings.HasPrefix(l, "#"), l == "":
		case strings.HasPrefix(l, "fleetkit_deprecation_scan_duration_seconds "),
			strings.HasPrefix(l, "fleetkit_deprecation_last_scan_timestamp_seconds "),
			strings.HasPrefix(l, "wf_k8s_deprecated_versions_job_info{"):
		case strings.HasPrefix(l, "wf_k8s_deprecated_versions_info{"):
			kdaveInfo++
		default:
			for _, p := range prefixes {
				if strings.HasPrefix(l, p) {
					lines = append(lines, l)
				}
			}
		}
	}
	slices.Sort(lines)
	return lines, kdaveInfo
}

// populated fills the API server with helmtest's releases once.
var populated sync.Once

// cluster returns this package's API server, with helmtest's releases.
func cluster(t *testing.T) *kubetest.Server {
	t.Helper()
	srv := kubeEnv.Get(t)
	client, err := kubernetes.NewForConfig(srv.Config())
	require.NoError(t, err)
	populated.Do(func() { helmtest.Populate(t, srv.Kubeconfig(), client) })
	return srv
}

func TestServeRealAPIServer(t *testing.T) {
	srv := cluster(t)

	dataFile := filepath.Join(t.TempDir(), "kdave.json")
	devnull, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer devnull.Close()
	cfg, err := parseServeFlags([]string{"-kubeconfig", srv.Kubeconfig(), "-page-size", "2", "-kdave-metrics",
		"-data-file", dataFile, "-addr", "127.0.0.1:0"}, devnull)
	require.NoError(t, err)
	restCfg, err := restConfig(cfg.kubeconfig, cfg.kubeContext)
	require.NoError(t, err)
	ln, err := httpserver.Listen(cfg.addr)
	require.NoError(t, err)
	base := "http://" + ln.Addr().String()

	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- serve(ctx, restCfg, cfg, ln) }()

	get := func(path string) (int, string) {
		resp, err := http.Get(base + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	// The start-up scan runs in the background; /releases answers 503
	// until it is done.
	require.Eventually(t, func() bool { code, _ := get("/releases"); return code == http.StatusOK }, 30*time.Second, 50*time.Millisecond)

	code, body := get("/metrics")
	require.Equal(t, http.StatusOK, code)
	lines, kdaveInfo := series(body, "fleetkit_deprecation_", "wf_k8s_")
	assert.Equal(t, wantSeries, lines)
	assert.Equal(t, 6, kdaveInfo, "one kdave info series per finding")
	assert.Contains(t, body, "fleetkit_deprecation_scan_duration_seconds ")
	assert.Contains(t, body, "fleetkit_deprecation_last_scan_timestamp_seconds ")
	assert.Contains(t, body, `wf_k8s_deprecated_versions_info{api_version="extensions/v1beta1",deprecated="true",deprecated_in_version="v1.14.0",helm_version="v3",k8s_version="v1.37.1",kind="Ingress",name="legacy",namespace="billing",`)

	code, body = get("/health")
	assert.Equal(t, http.StatusOK, code, body)

	code, body = get("/releases")
	require.Equal(t, http.StatusOK, code)
	var rep deprecation.ScanReport
	require.NoError(t, json.Unmarshal([]byte(body), &rep))
	assert.Len(t, rep.Releases, 4)
	require.Len(t, rep.Corrupt, 1)
	assert.Contains(t, rep.Corrupt[0].Err.Error(), "gzip")

	cancel()
	select {
	case err := <-errc:
		require.NoError(t, err, "graceful shutdown")
	case <-time.After(15 * time.Second):
		t.Fatal("serve did not stop")
	}
	_, err = os.Stat(dataFile)
	require.NoError(t, err, "the scan was saved")
}
