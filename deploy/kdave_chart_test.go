package deploy

import (
	"encoding/json"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/fleetkit/fleetkit/deprecation"
)

// kdaveChart is the chart of `kdave serve`.
const kdaveChart = "kdave"

// kdaveAllValues sets every value of the kdave chart.
var kdaveAllValues = map[string]any{
	"image":            map[string]any{"repository": "registry.example/kdave", "tag": "v2"},
	"scan":             map[string]any{"namespace": "apps", "configMaps": true, "interval": "90m", "pageSize": 50, "target": "v1.38", "kdaveMetrics": true},
	"extraArgs":        []any{"-workers", "2"},
	"service":          map[string]any{"type": "ClusterIP", "port": 9100},
	"serviceMonitor":   map[string]any{"enabled": true, "interval": "30s", "labels": map[string]any{"release": "prom"}},
	"prometheusRule":   map[string]any{"enabled": true, "labels": map[string]any{"release": "prom"}, "for": "5m"},
	"grafanaDashboard": map[string]any{"enabled": true, "annotations": map[string]any{"grafana_folder": "Kubernetes"}},
}

func TestKdaveChartLint(t *testing.T) {
	t.Run("defaults", func(t *testing.T) { lintChart(t, kdaveChart, nil) })
	t.Run("all set", func(t *testing.T) { lintChart(t, kdaveChart, kdaveAllValues) })
}

func renderKdave(t *testing.T, vals map[string]any) manifest {
	t.Helper()
	return mustRender(t, kdaveChart, "dave", "monitoring", vals)
}

// kinds counts a manifest's objects by kind.
func (m manifest) kinds() map[string]int {
	out := map[string]int{}
	for k := range m {
		out[strings.Split(k, "/")[0]]++
	}
	return out
}

// rulesOf maps each resource of rules to its verbs, failing on a rule
// outside the core group or one with a wildcard.
func rulesOf(t *testing.T, rules []rbacv1.PolicyRule) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, r := range rules {
		require.Empty(t, r.NonResourceURLs)
		require.Empty(t, r.ResourceNames)
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				key := res
				if g != "" {
					key = g + "/" + res
				}
				require.NotContains(t, r.Verbs, "*", key)
				require.NotContains(t, res, "*")
				out[key] = append(out[key], r.Verbs...)
			}
		}
	}
	return out
}

// The exporter's rights are exactly what the Helm-release scan uses: list
// release Secrets (and ConfigMaps with the configmap driver), cluster-wide
// or in the one namespace scanned.
func TestKdaveChartRBAC(t *testing.T) {
	const name = "dave-kdave"
	m := renderKdave(t, nil)
	assert.Equal(t, map[string]int{"ServiceAccount": 1, "ClusterRole": 1, "ClusterRoleBinding": 1, "Deployment": 1, "Service": 1}, m.kinds(),
		"no ServiceMonitor, PrometheusRule or dashboard unless asked for")
	role := m.get("ClusterRole", name).(*rbacv1.ClusterRole)
	assert.Equal(t, map[string][]string{"secrets": {"list"}}, rulesOf(t, role.Rules), "Helm's secret driver: list, and nothing else")
	crb := m.get("ClusterRoleBinding", name).(*rbacv1.ClusterRoleBinding)
	assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}, crb.RoleRef)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "monitoring"}}, crb.Subjects)
	spec := m.get("Deployment", name).(*appsv1.Deployment).Spec.Template.Spec
	assert.Equal(t, name, spec.ServiceAccountName)

	t.Run("configmap driver", func(t *testing.T) {
		m := renderKdave(t, map[string]any{"scan": map[string]any{"configMaps": true}})
		assert.Equal(t, map[string][]string{"secrets": {"list"}, "configmaps": {"list"}},
			rulesOf(t, m.get("ClusterRole", name).(*rbacv1.ClusterRole).Rules))
	})

	t.Run("one namespace", func(t *testing.T) {
		m := renderKdave(t, map[string]any{"scan": map[string]any{"namespace": "apps"}})
		assert.Nil(t, m.get("ClusterRoleBinding", name), "no rights outside the namespace scanned")
		rb := m.get("RoleBinding", name).(*rbacv1.RoleBinding)
		assert.Equal(t, "apps", rb.Namespace)
		assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}, rb.RoleRef)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "monitoring"}}, rb.Subjects)
		assert.Contains(t, m.get("Deployment", name).(*appsv1.Deployment).Spec.Template.Spec.Containers[0].Args, "-namespace=apps")
	})
}

// The values become kdave serve's flags; the container is locked down and
// probed on /health.
func TestKdaveChartDeployment(t *testing.T) {
	c := renderKdave(t, nil).get("Deployment", "dave-kdave").(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	assert.Equal(t, "fleetkit/kdave:latest", c.Image)
	assert.Equal(t, []string{"serve", "-addr=0.0.0.0:8000", "-interval=1h", "-page-size=256", "-kdave-metrics"}, c.Args)
	assert.Equal(t, "/health", c.ReadinessProbe.HTTPGet.Path)
	assertLockedDown(t, "kdave", c)

	m := renderKdave(t, kdaveAllValues)
	c = m.get("Deployment", "dave-kdave").(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	assert.Equal(t, "registry.example/kdave:v2", c.Image)
	assert.Equal(t, []string{"serve", "-addr=0.0.0.0:8000", "-interval=90m", "-page-size=50", "-namespace=apps", "-configmaps",
		"-target=v1.38", "-kdave-metrics", "-workers", "2"}, c.Args)
	svc := m.get("Service", "dave-kdave").(*corev1.Service)
	assert.Equal(t, int32(9100), svc.Spec.Ports[0].Port)
	assert.Equal(t, "http-metrics", svc.Spec.Ports[0].TargetPort.StrVal)
}

// assertLockedDown checks a container runs as non-root, read-only, with no
// capability, with resources and a readiness probe.
func assertLockedDown(t *testing.T, name string, c corev1.Container) {
	t.Helper()
	sc := c.SecurityContext
	require.NotNil(t, sc, name)
	assert.True(t, *sc.RunAsNonRoot, name)
	assert.NotZero(t, *sc.RunAsUser, name)
	assert.True(t, *sc.ReadOnlyRootFilesystem, name)
	assert.False(t, *sc.AllowPrivilegeEscalation, name)
	assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop, name)
	assert.False(t, c.Resources.Requests.Cpu().IsZero(), name)
	assert.False(t, c.Resources.Limits.Memory().IsZero(), name)
	assert.NotNil(t, c.ReadinessProbe, name)
}

// collectorMetrics returns the metrics kdave serve exports (its collector
// with kdave's names on), each with its label names.
func collectorMetrics(t *testing.T) map[string][]string {
	t.Helper()
	c, err := deprecation.NewCollector(func() *deprecation.ScanReport { return nil }, deprecation.CollectorOptions{Kdave: true})
	require.NoError(t, err)
	ch := make(chan *prometheus.Desc, 64)
	c.Describe(ch)
	close(ch)
	desc := regexp.MustCompile(`fqName: "([^"]+)".*variableLabels: \{([^}]*)\}\}$`)
	out := map[string][]string{}
	for d := range ch {
		sub := desc.FindStringSubmatch(d.String())
		require.NotNil(t, sub, d.String())
		out[sub[1]] = strings.Split(sub[2], ",")
	}
	require.Contains(t, out, "fleetkit_deprecation_api_objects")
	return out
}

var (
	// metricRef is a metric name of kdave's in a PromQL expression, with
	// its matchers if any.
	metricRef = regexp.MustCompile(`\b((?:fleetkit_deprecation|wf_k8s)_[a-z_]+)(\{[^}]*\})?`)
	matcher   = regexp.MustCompile(`([a-z_]+)\s*(?:=~|!~|!=|=)`)
	grouping  = regexp.MustCompile(`\bby \(([^)]*)\)`)
)

// checkExpr checks that expr reads only metrics kdave exports, and
// matches and groups only by their labels (or the scrape's job and
// instance).
func checkExpr(t *testing.T, exported map[string][]string, where, expr string) {
	t.Helper()
	refs := metricRef.FindAllStringSubmatch(expr, -1)
	require.NotEmpty(t, refs, "%s reads no kdave metric: %s", where, expr)
	labels := []string{"job", "instance"}
	for _, r := range refs {
		ls, ok := exported[r[1]]
		require.True(t, ok, "%s: %s is not a metric kdave exports (%s)", where, r[1], expr)
		labels = append(labels, ls...)
		for _, mm := range matcher.FindAllStringSubmatch(r[2], -1) {
			assert.Contains(t, append(slices.Clone(ls), "job", "instance"), mm[1], "%s: %s has no label %s", where, r[1], mm[1])
		}
	}
	for _, g := range grouping.FindAllStringSubmatch(expr, -1) {
		for l := range strings.SplitSeq(g[1], ",") {
			assert.Contains(t, labels, strings.TrimSpace(l), "%s: by a label no metric has: %s", where, expr)
		}
	}
}

// The ServiceMonitor scrapes the Service's port and keeps the releases'
// namespace label; the alerts and the dashboard read metrics and labels
// kdave really exports.
func TestKdaveChartMonitoring(t *testing.T) {
	exported := collectorMetrics(t)
	m := renderKdave(t, kdaveAllValues)
	svc := m.get("Service", "dave-kdave").(*corev1.Service)

	sm := m.get("ServiceMonitor", "dave-kdave").(*unstructured.Unstructured)
	sel, _, _ := unstructured.NestedStringMap(sm.Object, "spec", "selector", "matchLabels")
	for k, v := range sel {
		assert.Equal(t, v, svc.Labels[k], "the ServiceMonitor selects the Service: %s", k)
	}
	assert.Equal(t, "prom", sm.GetLabels()["release"])
	eps, _, _ := unstructured.NestedSlice(sm.Object, "spec", "endpoints")
	require.Len(t, eps, 1)
	ep := eps[0].(map[string]any)
	assert.Equal(t, svc.Spec.Ports[0].Name, ep["port"])
	assert.Equal(t, true, ep["honorLabels"], "the series' namespace label is the release's, not the target's")

	t.Run("alerts", func(t *testing.T) {
		pr := m.get("PrometheusRule", "dave-kdave").(*unstructured.Unstructured)
		groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
		require.Len(t, groups, 1)
		alerts := map[string]map[string]any{}
		for _, r := range groups[0].(map[string]any)["rules"].([]any) {
			r := r.(map[string]any)
			alerts[r["alert"].(string)] = r
			checkExpr(t, exported, r["alert"].(string), r["expr"].(string))
			assert.Equal(t, "5m", r["for"])
			for _, a := range r["annotations"].(map[string]any) {
				assert.Contains(t, a, "{{ $", "the annotation keeps Prometheus' templates, not Helm's")
			}
		}
		assert.ElementsMatch(t, []string{"KdaveAPIRemovedInNextRelease", "KdaveAPIRemovalSoon", "KdaveAPIRemoved", "KdaveReleaseCorrupt", "KdaveScanStale"},
			slices.Collect(maps.Keys(alerts)))
		next := alerts["KdaveAPIRemovedInNextRelease"]["expr"].(string)
		assert.Contains(t, next, `removed_in_next_release="true"`)
		assert.Contains(t, next, `removed="false"`, "not the APIs already removed: KdaveAPIRemoved has those")
		assert.Contains(t, alerts["KdaveScanStale"]["expr"], "> 3 * 5400", "three intervals of 90m")

		// Without kdave's metric names there is no next-release series:
		// no alert reads it.
		m := renderKdave(t, map[string]any{"prometheusRule": map[string]any{"enabled": true}, "scan": map[string]any{"kdaveMetrics": false}})
		c := m.get("Deployment", "dave-kdave").(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
		assert.NotContains(t, c.Args, "-kdave-metrics")
		pr = m.get("PrometheusRule", "dave-kdave").(*unstructured.Unstructured)
		groups, _, _ = unstructured.NestedSlice(pr.Object, "spec", "groups")
		for _, r := range groups[0].(map[string]any)["rules"].([]any) {
			assert.NotContains(t, r.(map[string]any)["expr"], "wf_k8s_")
		}
	})

	t.Run("dashboard", func(t *testing.T) {
		cm := m.get("ConfigMap", "dave-kdave-dashboard").(*corev1.ConfigMap)
		assert.Equal(t, "1", cm.Labels["grafana_dashboard"], "Grafana's sidecar finds it")
		assert.Equal(t, "Kubernetes", cm.Annotations["grafana_folder"])
		file, err := os.ReadFile("kdave/dashboards/kdave.json")
		require.NoError(t, err)
		assert.JSONEq(t, string(file), cm.Data["kdave.json"], "the chart's file, whole")
		var d struct {
			UID    string `json:"uid"`
			Panels []struct {
				Title   string `json:"title"`
				Targets []struct {
					Expr string `json:"expr"`
				} `json:"targets"`
			} `json:"panels"`
		}
		require.NoError(t, json.Unmarshal([]byte(cm.Data["kdave.json"]), &d))
		assert.NotEmpty(t, d.UID)
		require.NotEmpty(t, d.Panels)
		read := map[string]bool{}
		for _, p := range d.Panels {
			require.NotEmpty(t, p.Targets, p.Title)
			for _, tg := range p.Targets {
				checkExpr(t, exported, p.Title, tg.Expr)
				for _, r := range metricRef.FindAllStringSubmatch(tg.Expr, -1) {
					read[r[1]] = true
				}
			}
		}
		for _, name := range []string{"fleetkit_deprecation_api_objects", "fleetkit_deprecation_releases", "fleetkit_deprecation_releases_removed",
			"fleetkit_deprecation_scan_duration_seconds", "fleetkit_deprecation_last_scan_timestamp_seconds"} {
			assert.True(t, read[name], "the dashboard shows %s", name)
		}
	})

	t.Run("a bad interval", func(t *testing.T) {
		_, err := renderChart(t, kdaveChart, "dave", "monitoring", map[string]any{"prometheusRule": map[string]any{"enabled": true},
			"scan": map[string]any{"interval": "1d"}})
		require.ErrorContains(t, err, `scan.interval "1d"`)
	})
}
