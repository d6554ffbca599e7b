package deploy

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/fleetkit/fleetkit/examples/machine-manager/config"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }

// chartDir is the chart under test.
const chartDir = "linter-fleet"

// TestChartLint is `helm lint --strict` of the chart, with its default
// values and with every value set.
func TestChartLint(t *testing.T) {
	for name, vals := range map[string]map[string]any{
		"defaults": nil,
		"set": {"secret": map[string]any{"existingSecret": "mine"},
			"images": map[string]any{"loadbalancer": map[string]any{"tag": "v9"}}},
	} {
		t.Run(name, func(t *testing.T) { lintChart(t, chartDir, vals) })
	}
}

// lintChart is `helm lint --strict` of the chart in dir with vals: no
// warning, no error.
func lintChart(t *testing.T, dir string, vals map[string]any) {
	t.Helper()
	res := lint.All(dir, vals, "fleet", true)
	for _, m := range res.Messages {
		assert.Less(t, m.Severity, support.WarningSev, "%s", m)
	}
}

// manifest is a rendered chart: its objects by kind and name.
type manifest map[string]runtime.Object

func (m manifest) get(kind, name string) runtime.Object { return m[kind+"/"+name] }

// render renders the chart as release "fleet" in namespace "linters" with
// vals, client-side (no cluster: lookup finds nothing).
func render(t *testing.T, vals map[string]any) manifest {
	t.Helper()
	return mustRender(t, chartDir, "fleet", "linters", vals)
}

// mustRender is renderChart, failing the test on an error.
func mustRender(t *testing.T, dir, release, ns string, vals map[string]any) manifest {
	t.Helper()
	m, err := renderChart(t, dir, release, ns, vals)
	require.NoError(t, err)
	return m
}

// renderChart renders the chart in dir as release in namespace ns with
// vals, client-side (no cluster: lookup finds nothing), and decodes its
// objects; those of kinds the client-go scheme lacks (the Prometheus
// operator's) are kept as *unstructured.Unstructured.
func renderChart(t *testing.T, dir, release, ns string, vals map[string]any) (manifest, error) {
	t.Helper()
	c, err := loader.Load(dir)
	require.NoError(t, err)
	cfg := &action.Configuration{
		Capabilities: chartutil.DefaultCapabilities,
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Releases:     storage.Init(driver.NewMemory()),
		Log:          func(string, ...any) {},
	}
	in := action.NewInstall(cfg)
	in.DryRun, in.DryRunOption, in.ReleaseName, in.Namespace = true, "client", release, ns
	rel, err := in.RunWithContext(context.Background(), c, vals)
	if err != nil {
		return nil, err
	}
	out := manifest{}
	for doc := range strings.SplitSeq(rel.Manifest, "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil)
		if runtime.IsNotRegisteredError(err) {
			u := &unstructured.Unstructured{}
			require.NoError(t, yaml.Unmarshal([]byte(doc), &u.Object), doc)
			obj, gvk, err = u, new(u.GroupVersionKind()), nil
		}
		require.NoError(t, err, doc)
		name := obj.(interface{ GetName() string }).GetName()
		out[gvk.Kind+"/"+name] = obj
	}
	return out, nil
}

// TestChartTemplates renders the chart and checks what it promises: the
// objects, RBAC limited to Pods of the namespace, the secret mounted and
// never inlined, image tags from the values, and every container locked
// down with resources.
func TestChartTemplates(t *testing.T) {
	const adminSecret, managerSecret = "admin-s3cret-value", "manager-s3cret-value"
	m := render(t, map[string]any{
		"secret": map[string]any{"admin": adminSecret, "manager": managerSecret},
		"images": map[string]any{
			"loadbalancer":   map[string]any{"tag": "lb-7"},
			"machineManager": map[string]any{"tag": "mm-7"},
			"linter":         map[string]any{"repository": "registry.example/linter"},
		},
		"languages": map[string]any{"python": map[string]any{"version": "1.0", "versions": map[string]any{
			"1.0": map[string]any{}, "2.0-crashy": map[string]any{"tag": "1.2", "args": []any{"-crash-rate", "1"}},
		}}},
	})
	kinds := map[string]int{}
	for k := range m {
		kinds[strings.Split(k, "/")[0]]++
	}
	assert.Equal(t, map[string]int{"Deployment": 2, "Service": 2, "ServiceAccount": 1, "Role": 1, "RoleBinding": 1,
		"Secret": 1, "ConfigMap": 1}, kinds, "no ClusterRole: the manager's rights stop at its namespace")

	t.Run("rbac", func(t *testing.T) {
		role := m.get("Role", "fleet-linter-fleet-machine-manager").(*rbacv1.Role)
		resources := map[string][]string{}
		for _, r := range role.Rules {
			assert.Equal(t, []string{""}, r.APIGroups)
			for _, res := range r.Resources {
				resources[res] = r.Verbs
			}
		}
		assert.Equal(t, map[string][]string{
			"pods":     {"get", "list", "watch", "create", "delete"},
			"pods/log": {"get"},
		}, resources, "Pods only, and no update, patch or wildcard")
		rb := m.get("RoleBinding", "fleet-linter-fleet-machine-manager").(*rbacv1.RoleBinding)
		assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: role.Name}, rb.RoleRef)
		assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: "fleet-linter-fleet-machine-manager", Namespace: "linters"}}, rb.Subjects)
		mm := m.get("Deployment", "fleet-linter-fleet-machine-manager").(*appsv1.Deployment)
		assert.Equal(t, "fleet-linter-fleet-machine-manager", mm.Spec.Template.Spec.ServiceAccountName)
		lb := m.get("Deployment", "fleet-linter-fleet-balancer").(*appsv1.Deployment)
		assert.False(t, *lb.Spec.Template.Spec.AutomountServiceAccountToken, "the balancer does not talk to the API server")
	})

	t.Run("secret", func(t *testing.T) {
		s := m.get("Secret", "fleet-linter-fleet-secret").(*corev1.Secret)
		assert.Equal(t, adminSecret, string(s.Data["admin"]))
		assert.Equal(t, managerSecret, string(s.Data["manager"]))
		for key, obj := range m {
			if key == "Secret/"+s.Name {
				continue
			}
			y, err := runtime.Encode(scheme.Codecs.LegacyCodec(corev1.SchemeGroupVersion, appsv1.SchemeGroupVersion, rbacv1.SchemeGroupVersion), obj)
			require.NoError(t, err)
			assert.NotContains(t, string(y), adminSecret, "%s: the secret is referenced, not inlined", key)
			assert.NotContains(t, string(y), managerSecret, key)
		}
		for _, name := range []string{"fleet-linter-fleet-balancer", "fleet-linter-fleet-machine-manager"} {
			spec := m.get("Deployment", name).(*appsv1.Deployment).Spec.Template.Spec
			var secretVolume bool
			for _, v := range spec.Volumes {
				if v.Secret != nil {
					secretVolume = v.Secret.SecretName == s.Name
				}
			}
			assert.True(t, secretVolume, "%s mounts the Secret", name)
			for _, c := range spec.Containers {
				assert.Empty(t, c.Env, "%s: no secret in the environment (it would show in describe)", name)
				assert.Contains(t, strings.Join(c.Args, " "), "-secret-file=/etc/fleetkit/secret/", name)
			}
		}
	})

	t.Run("images and arguments", func(t *testing.T) {
		lb := m.get("Deployment", "fleet-linter-fleet-balancer").(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
		assert.Equal(t, "fleetkit/loadbalancer:lb-7", lb.Image)
		assert.Equal(t, corev1.PullIfNotPresent, lb.ImagePullPolicy)
		mm := m.get("Deployment", "fleet-linter-fleet-machine-manager").(*appsv1.Deployment)
		assert.Equal(t, appsv1.RecreateDeploymentStrategyType, mm.Spec.Strategy.Type, "never two managers at once")
		c := mm.Spec.Template.Spec.Containers[0]
		assert.Equal(t, "fleetkit/machine-manager:mm-7", c.Image)
		assert.Contains(t, c.Args, "-provider=kubernetes")
		assert.Contains(t, c.Args, "-name=fleet-linter-fleet")

		cm := m.get("ConfigMap", "fleet-linter-fleet-machine-manager").(*corev1.ConfigMap)
		cfg, err := config.Parse([]byte(cm.Data["config.yaml"]))
		require.NoError(t, err, cm.Data["config.yaml"])
		require.NoError(t, cfg.RequireRunnable("kubernetes"))
		assert.Equal(t, "http://fleet-linter-fleet-balancer:8081", cfg.Balancer.Address)
		assert.Equal(t, "/etc/fleetkit/secret/admin", cfg.Balancer.SecretFile)
		assert.Empty(t, cfg.Balancer.Secret)
		py := cfg.Languages["python"]
		assert.Equal(t, "1.0", py.Version)
		assert.Equal(t, "registry.example/linter:1.0", py.Versions["1.0"].Image)
		assert.Equal(t, "registry.example/linter:1.2", py.Versions["2.0-crashy"].Image)
		assert.Equal(t, []string{"-crash-rate", "1"}, py.Versions["2.0-crashy"].Args)
	})

	t.Run("locked down", func(t *testing.T) {
		for _, name := range []string{"fleet-linter-fleet-balancer", "fleet-linter-fleet-machine-manager"} {
			for _, c := range m.get("Deployment", name).(*appsv1.Deployment).Spec.Template.Spec.Containers {
				assertLockedDown(t, name, c)
			}
		}
	})
}

// Without secret values the chart generates them (different ones); with
// an existing Secret it renders none and mounts that one.
func TestChartSecretSources(t *testing.T) {
	m := render(t, nil)
	s := m.get("Secret", "fleet-linter-fleet-secret").(*corev1.Secret)
	assert.Len(t, s.Data["admin"], 32)
	assert.Len(t, s.Data["manager"], 32)
	assert.NotEqual(t, s.Data["admin"], s.Data["manager"])

	m = render(t, map[string]any{"secret": map[string]any{"existingSecret": "mine"}})
	assert.Nil(t, m.get("Secret", "fleet-linter-fleet-secret"))
	for _, name := range []string{"fleet-linter-fleet-balancer", "fleet-linter-fleet-machine-manager"} {
		var mounted []string
		for _, v := range m.get("Deployment", name).(*appsv1.Deployment).Spec.Template.Spec.Volumes {
			if v.Secret != nil {
				mounted = append(mounted, v.Secret.SecretName)
			}
		}
		assert.Equal(t, []string{"mine"}, mounted, name)
	}
}

// A changed configuration changes the manager's Pod template (the manager
// reads it at start only), and balancerAddress replaces the Service's name.
func TestChartConfigRestartsManager(t *testing.T) {
	checksum := func(m manifest) string {
		return m.get("Deployment", "fleet-linter-fleet-machine-manager").(*appsv1.Deployment).Spec.Template.Annotations["checksum/config"]
	}
	base := render(t, nil)
	moved := render(t, map[string]any{"machineManager": map[string]any{"balancerAddress": "http://10.96.0.9:8081"}})
	assert.NotEqual(t, checksum(base), checksum(moved))
	cfg, err := config.Parse([]byte(moved.get("ConfigMap", "fleet-linter-fleet-machine-manager").(*corev1.ConfigMap).Data["config.yaml"]))
	require.NoError(t, err)
	assert.Equal(t, "http://10.96.0.9:8081", cfg.Balancer.Address)
	assert.Equal(t, checksum(base), checksum(render(t, nil)), "the same values, the same template")
}

// With 2 balancer replicas the manager finds them through the Service's
// EndpointSlices: it is told the Service, and may read its EndpointSlices
// (and nothing more).
func TestChartBalancerReplicas(t *testing.T) {
	m := render(t, map[string]any{"balancer": map[string]any{"replicas": 2}})
	assert.Equal(t, int32(2), *m.get("Deployment", "fleet-linter-fleet-balancer").(*appsv1.Deployment).Spec.Replicas)
	c := m.get("Deployment", "fleet-linter-fleet-machine-manager").(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	assert.Contains(t, c.Args, "-balancer-service=fleet-linter-fleet-balancer")
	role := m.get("Role", "fleet-linter-fleet-machine-manager").(*rbacv1.Role)
	assert.Contains(t, role.Rules, rbacv1.PolicyRule{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"},
		Verbs: []string{"get", "list", "watch"}})
	assert.Len(t, role.Rules, 3)

	one := render(t, nil)
	c = one.get("Deployment", "fleet-linter-fleet-machine-manager").(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
	for _, a := range c.Args {
		assert.NotContains(t, a, "-balancer-service", "one replica: balancer.address")
	}
}
