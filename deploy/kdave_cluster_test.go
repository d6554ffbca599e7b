package deploy

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
	"github.com/fleetkit/fleetkit/internal/kubetest"
)

// helmConfig is Helm's real configuration for namespace ns of the node:
// installs create the objects and store the release in Secrets.
func helmConfig(t *testing.T, node *kubetest.Node, ns string) *action.Configuration {
	t.Helper()
	kubeconfig := node.Kubeconfig()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := new(action.Configuration)
	require.NoError(t, cfg.Init(flags, ns, "secret", func(string, ...any) {}))
	return cfg
}

// storeOnly is Helm with its storage in the cluster (drv) but no objects
// created: a release of APIs the API server no longer serves, as a cluster
// upgraded past their removal still holds it.
func storeOnly(drv driver.Driver) *action.Configuration {
	return &action.Configuration{
		Capabilities: chartutil.DefaultCapabilities,
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Releases:     storage.Init(drv),
		Log:          func(string, ...any) {},
	}
}

// helmInstall installs chart dir as name with cfg, then upgrades it once
// with each of upgrades' values.
func helmInstall(t *testing.T, cfg *action.Configuration, ns, name, dir string, wait bool, vals map[string]any, upgrades ...map[string]any) {
	t.Helper()
	c, err := loader.Load(dir)
	require.NoError(t, err)
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace, in.Wait, in.Timeout = name, ns, wait, clusterWait
	_, err = in.RunWithContext(t.Context(), c, vals)
	require.NoError(t, err, "helm install %s", name)
	for _, v := range upgrades {
		up := action.NewUpgrade(cfg)
		up.Namespace = ns
		_, err = up.RunWithContext(t.Context(), name, c, v)
		require.NoError(t, err, "helm upgrade %s", name)
	}
}

// scrape reads the metric families of url.
func scrape(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	return p.TextToMetricFamilies(resp.Body)
}

// series returns the label sets (and values) of family name's series
// whose labels include match.
func series(fams map[string]*dto.MetricFamily, name string, match map[string]string) []map[string]string {
	var out []map[string]string
	f, ok := fams[name]
	if !ok {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		ls := map[string]string{}
		for _, l := range m.GetLabel() {
			ls[l.GetName()] = l.GetValue()
		}
		for k, v := range match {
			if ls[k] != v {
				continue next
			}
		}
		ls["__value__"] = fmt.Sprint(m.GetGauge().GetValue())
		out = append(out, ls)
	}
	return out
}

// TestKdaveOnCluster installs the kdave chart into the real test node with
// the Helm SDK, next to real Helm releases, and reads its /metrics through
// its Service: the releases' removed and soon-removed APIs are reported,
// superseded revisions are not, and releases of Helm's configmap driver
// are read too. A scan run here with a client that records its requests
// shows the chart's ClusterRole covers every request the scan makes.
//
//	CI=true nice go test -count=1 -run TestKdaveOnCluster -v ./deploy/
func TestKdaveOnCluster(t *testing.T) {
	node, cs, mon := onNode(t, "fleetkit/kdave:latest")
	apps := kubetest.Namespace(t, node)

	// The releases kdave reads. "legacy" was installed with an Ingress
	// of extensions/v1beta1 that its revision 2 dropped: only the deployed
	// revision counts. "legacy-cm" is the same chart in Helm's configmap
	// driver. "served" is installed for real.
	helmInstall(t, storeOnly(driver.NewSecrets(cs.CoreV1().Secrets(apps))), apps, "legacy", "testdata/legacy", false,
		map[string]any{"oldIngress": true}, map[string]any{"oldIngress": false})
	helmInstall(t, storeOnly(driver.NewConfigMaps(cs.CoreV1().ConfigMaps(apps))), apps, "legacy-cm", "testdata/legacy", false, nil)
	helmInstall(t, helmConfig(t, node, apps), apps, "served", "testdata/served", true, nil)
	_, candidates := cs.Discovery().ServerResourcesForGroupVersion("coordination.k8s.io/v1beta1")
	_, err := cs.CoordinationV1beta1().LeaseCandidates(apps).Get(t.Context(), "served-candidate", metav1.GetOptions{})
	servedDeprecated := err == nil
	t.Logf("coordination.k8s.io/v1beta1 served: %v (discovery error: %v); release served holds a LeaseCandidate: %v", candidates == nil, candidates, servedDeprecated)

	// kdave, in its own namespace, scanning every namespace; its
	// ClusterRole and ClusterRoleBinding outlive the namespace, so the
	// release is uninstalled.
	var b [3]byte
	_, _ = rand.Read(b[:])
	name := "kdave-" + hex.EncodeToString(b[:])
	kcfg := helmConfig(t, node, mon)
	start := time.Now()
	helmInstall(t, kcfg, mon, name, kdaveChart, true, map[string]any{"scan": map[string]any{"configMaps": true}})
	t.Logf("helm install kdave: ready (first scan done) %s after the install began", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		un := action.NewUninstall(kcfg)
		un.Wait, un.Timeout = true, clusterWait
		_, err := un.Run(name)
		assert.NoError(t, err, "helm uninstall")
	})
	svc, err := cs.CoreV1().Services(mon).Get(t.Context(), name, metav1.GetOptions{})
	require.NoError(t, err)
	base := fmt.Sprintf("http://%s:%d", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)

	var fams map[string]*dto.MetricFamily
	deadline := time.Now().Add(clusterWait)
	for {
		fams, err = scrape(t.Context(), base+"/metrics")
		if err == nil && len(series(fams, "fleetkit_deprecation_last_scan_timestamp_seconds", nil)) == 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "no scan in /metrics within %s: %v", clusterWait, err)
		time.Sleep(200 * time.Millisecond)
	}

	t.Run("metrics", func(t *testing.T) {
		target := series(fams, "fleetkit_deprecation_target_info", nil)
		require.Len(t, target, 1)
		info, err := cs.Discovery().ServerVersion()
		require.NoError(t, err)
		v, err := deprecation.ParseVersion(info.GitVersion)
		require.NoError(t, err)
		assert.Equal(t, v.String(), target[0]["k8s_version"], "checked against the cluster's own version")

		for _, rel := range []string{"legacy", "legacy-cm"} {
			objects := map[string]string{}
			for _, s := range series(fams, "fleetkit_deprecation_api_objects", map[string]string{"namespace": apps, "release": rel}) {
				objects[s["kind"]+" "+s["api_version"]] = s["state"]
				assert.Equal(t, "1", s["__value__"])
			}
			assert.Equal(t, map[string]string{
				"PodSecurityPolicy policy/v1beta1":                "removed",
				"FlowSchema flowcontrol.apiserver.k8s.io/v1beta3": "removed",
				"DeviceClass resource.k8s.io/v1beta1":             "removal-soon",
			}, objects, "%s: its deployed revision's removed APIs, no ConfigMap (v1), no Ingress (revision 1 only)", rel)

			// What KdaveAPIRemovedInNextRelease selects.
			next := series(fams, "wf_k8s_deprecated_versions_info", map[string]string{"namespace": apps, "release_name": rel,
				"removed": "false", "removed_in_next_release": "true"})
			require.Len(t, next, 1, rel)
			assert.Equal(t, "DeviceClass", next[0]["kind"])
			assert.Equal(t, "v1.38.0", next[0]["removed_in_version"])
		}

		served := series(fams, "fleetkit_deprecation_api_objects", map[string]string{"namespace": apps, "release": "served"})
		if servedDeprecated {
			require.Len(t, served, 1)
			assert.Equal(t, "LeaseCandidate", served[0]["kind"])
			assert.Equal(t, "removal-soon", served[0]["state"])
		} else {
			assert.Empty(t, served, "the served release uses no deprecated API on this cluster")
		}

		// Every deployed release in the cluster, in both drivers, was
		// scanned: the count is what Helm's storage holds — but kdave's
		// own release, which was still pending-install during the first
		// scan (Helm marks it deployed after the wait).
		sel := metav1.ListOptions{LabelSelector: "owner=helm,status=deployed,name!=" + name}
		secrets, err := cs.CoreV1().Secrets("").List(t.Context(), sel)
		require.NoError(t, err)
		cms, err := cs.CoreV1().ConfigMaps("").List(t.Context(), sel)
		require.NoError(t, err)
		counts := series(fams, "fleetkit_deprecation_releases", nil)
		require.Len(t, counts, 1)
		assert.Equal(t, fmt.Sprint(len(secrets.Items)+len(cms.Items)), counts[0]["__value__"])
		assert.GreaterOrEqual(t, len(secrets.Items)+len(cms.Items), 3)
		removed := series(fams, "fleetkit_deprecation_releases_removed", nil)
		require.Len(t, removed, 1)
		assert.NotEqual(t, "0", removed[0]["__value__"])

		resp, err := http.Get(base + "/health")
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
	})

	t.Run("the ClusterRole covers the scan", func(t *testing.T) {
		role, err := cs.RbacV1().ClusterRoles().Get(t.Context(), name, metav1.GetOptions{})
		require.NoError(t, err)
		cfg := rest.CopyConfig(node.Config())
		rec := &requestLog{}
		cfg.Wrap(rec.wrap)
		client, err := clientset.NewForConfig(cfg)
		require.NoError(t, err)
		s, err := helm.New(client, helm.Options{ConfigMaps: true, PageSize: 1})
		require.NoError(t, err)
		rep, err := deprecation.ScanReleases(t.Context(), s, nil)
		require.NoError(t, err)
		require.NotEmpty(t, rep.Releases)
		used := rec.requests(t)
		assert.ElementsMatch(t, []string{"list secrets", "list configmaps", "get /version"}, used,
			"what the scan does, page after page (page size 1)")
		for _, u := range rec.infos {
			if !u.IsResourceRequest {
				// /version: system:public-info-viewer, granted to everyone.
				assert.Equal(t, "/version", u.Path)
				continue
			}
			assert.True(t, allows(role.Rules, u.APIGroup, u.Resource, u.Verb), "%s %s is not in the ClusterRole", u.Verb, u.Resource)
		}
	})
}

// requestLog records the requests a client makes, as the API server's
// authorizer sees them.
type requestLog struct {
	// mu guards infos.
	mu    sync.Mutex
	infos []*request.RequestInfo
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	resolver := &request.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		info, err := resolver.NewRequestInfo(r)
		if err == nil {
			l.mu.Lock()
			l.infos = append(l.infos, info)
			l.mu.Unlock()
		}
		return rt.RoundTrip(r)
	})
}

// requests returns the distinct requests made: "verb resource", or
// "get path" for a non-resource request.
func (l *requestLog) requests(t *testing.T) []string {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, i := range l.infos {
		s := i.Verb + " " + i.Resource
		if !i.IsResourceRequest {
			s = i.Verb + " " + i.Path
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// allows reports whether rules grant verb on resource of group, as RBAC
// reads them (a "*" anywhere would grant it, and the render tests forbid
// one).
func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	has := func(list []string, v string) bool {
		return slices.Contains(list, v) || slices.Contains(list, rbacv1.ResourceAll)
	}
	for _, r := range rules {
		if has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, verb) && len(r.ResourceNames) == 0 {
			return true
		}
	}
	return false
}
