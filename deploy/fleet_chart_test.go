package deploy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// The fleet manager's and the fleet agent's charts.
const (
	managerChart = "fleet-manager"
	agentChart   = "fleet-agent"
)

// encoded is obj as JSON, to look for a secret in it.
func encoded(t *testing.T, obj runtime.Object) string {
	t.Helper()
	b, err := json.Marshal(obj)
	require.NoError(t, err)
	return string(b)
}

// assertOnlyIn checks that value appears in the Secret named secret and
// in no other object of m.
func assertOnlyIn(t *testing.T, m manifest, secret, value string) {
	t.Helper()
	for key, obj := range m {
		if key == "Secret/"+secret {
			continue
		}
		assert.NotContains(t, encoded(t, obj), value, "%s: the secret is referenced, not inlined", key)
	}
}

// secretVolume returns the Secrets a Pod spec mounts, by volume name (a
// projected volume's first source).
func secretVolumes(spec corev1.PodSpec) map[string]string {
	out := map[string]string{}
	for _, v := range spec.Volumes {
		switch {
		case v.Secret != nil:
			out[v.Name] = v.Secret.SecretName
		case v.Projected != nil:
			var names []string
			for _, s := range v.Projected.Sources {
				if s.Secret != nil {
					names = append(names, s.Secret.Name)
				}
			}
			out[v.Name] = strings.Join(names, ",")
		}
	}
	return out
}

var managerAllValues = map[string]any{
	"image":          map[string]any{"repository": "registry.example/fleet-manager", "tag": "v3"},
	"kind":           "kafka",
	"replicas":       3,
	"database":       map[string]any{"existingSecret": "pg", "existingSecretKey": "dsn"},
	"provider":       "memory",
	"agent":          map[string]any{"enabled": true, "existingSecret": "agent-key"},
	"auth":           map[string]any{"existingSecret": "jwt"},
	"leaderElection": true,
	"config": map[string]any{"interval": "2s", "lease_ttl": "10s", "quota_list": "quota.yaml",
		"cloud_providers": []any{map[string]any{"id": "aws", "regions": []any{map[string]any{"id": "us-east-1", "instance_types": []any{"standard"}}}}}},
	"files":       map[string]any{"quota.yaml": "- org_id: o1\n  max_units: 10\n"},
	"service":     map[string]any{"type": "ClusterIP", "port": 80},
	"stateVolume": map[string]any{"persistentVolumeClaim": map[string]any{"claimName": "fm"}},
	"extraArgs":   []any{"-name", "fm"},
	"resources":   map[string]any{"requests": map[string]any{"cpu": "10m", "memory": "16Mi"}, "limits": map[string]any{"memory": "64Mi"}},
	"securityContext": map[string]any{"runAsNonRoot": true, "runAsUser": 1000, "runAsGroup": 1000, "readOnlyRootFilesystem": true,
		"allowPrivilegeEscalation": false, "capabilities": map[string]any{"drop": []any{"ALL"}}},
}

func TestFleetManagerChartLint(t *testing.T) {
	t.Run("defaults", func(t *testing.T) { lintChart(t, managerChart, nil) })
	t.Run("all set", func(t *testing.T) { lintChart(t, managerChart, managerAllValues) })
}

func renderManager(t *testing.T, vals map[string]any) manifest {
	t.Helper()
	return mustRender(t, managerChart, "fm", "fleet", vals)
}

// managerConfig is the rendered config.yaml as a map.
func managerConfig(t *testing.T, m manifest) map[string]any {
	t.Helper()
	var cfg map[string]any
	require.NoError(t, yaml.Unmarshal([]byte(m.get("ConfigMap", "fm-fleet-manager").(*corev1.ConfigMap).Data["config.yaml"]), &cfg))
	return cfg
}

// With defaults: one manager on SQLite in its volume, no Kubernetes
// rights at all (no Role, no token), its API key from the chart's Secret.
func TestFleetManagerChartDefaults(t *testing.T) {
	const name = "fm-fleet-manager"
	m := renderManager(t, nil)
	assert.Equal(t, map[string]int{"ConfigMap": 1, "ServiceAccount": 1, "Deployment": 1, "Service": 1, "Secret": 1}, m.kinds(),
		"no Role, RoleBinding or ClusterRole: leases are in the database")
	sa := m.get("ServiceAccount", name).(*corev1.ServiceAccount)
	assert.False(t, *sa.AutomountServiceAccountToken)
	d := m.get("Deployment", name).(*appsv1.Deployment)
	spec := d.Spec.Template.Spec
	assert.False(t, *spec.AutomountServiceAccountToken, "the manager talks to no API server")
	assert.Equal(t, name, spec.ServiceAccountName)
	assert.Equal(t, appsv1.RecreateDeploymentStrategyType, d.Spec.Strategy.Type, "SQLite: never two managers at once")
	assert.Equal(t, int32(1), *d.Spec.Replicas)
	c := spec.Containers[0]
	assert.Equal(t, []string{"-addr=0.0.0.0:8000", "-kind=dinosaur", "-config=/etc/fleetkit/config/config.yaml", "-provider=process",
		"-replica=$(POD_NAME)", "-database-url=/var/lib/fleetkit/dinosaur.db"}, c.Args)
	assert.Equal(t, "/health", c.ReadinessProbe.HTTPGet.Path)
	assertLockedDown(t, name, c)
	assert.Equal(t, map[string]string{"keys": "fm-fleet-manager-keys"}, secretVolumes(spec), "no database Secret without a URL")

	keys := m.get("Secret", "fm-fleet-manager-keys").(*corev1.Secret)
	assert.Len(t, keys.Data["hs256"], 64, "a generated API key")
	assert.NotContains(t, keys.Data, "token-secret", "no agent key without the agent data plane")
	cfg := managerConfig(t, m)
	assert.Equal(t, false, cfg["leader_election"])
	assert.Equal(t, "/etc/fleetkit/keys/hs256", cfg["auth"].(map[string]any)["hs256_secret_file"])
	assert.NotContains(t, cfg, "agent")
	assert.NotContains(t, cfg, "data_plane", "the embedded data plane: the binary's default")
	assert.Equal(t, "5s", cfg["interval"])
}

// The database URL is a Secret's, created from the value or yours, and
// reaches the manager as a file only.
func TestFleetManagerChartDatabaseSecret(t *testing.T) {
	const url = "postgres://fleet:pa55word@db.example:5432/fleet?sslmode=require"
	m := renderManager(t, map[string]any{"database": map[string]any{"url": url}})
	s := m.get("Secret", "fm-fleet-manager-database").(*corev1.Secret)
	assert.Equal(t, url, string(s.Data["url"]))
	assertOnlyIn(t, m, s.Name, "pa55word")
	d := m.get("Deployment", "fm-fleet-manager").(*appsv1.Deployment)
	c := d.Spec.Template.Spec.Containers[0]
	assert.Contains(t, c.Args, "-database-url-file=/etc/fleetkit/database/url")
	for _, e := range c.Env {
		assert.NotEqual(t, "FLEETKIT_DATABASE_URL", e.Name, "not in the environment (it would show in describe)")
	}
	assert.Equal(t, s.Name, secretVolumes(d.Spec.Template.Spec)["database"])
	assert.Contains(t, c.VolumeMounts, corev1.VolumeMount{Name: "database", MountPath: "/etc/fleetkit/database", ReadOnly: true})
	assert.Empty(t, d.Spec.Strategy.Type, "a shared database: rolling updates")

	m = renderManager(t, map[string]any{"database": map[string]any{"existingSecret": "pg", "existingSecretKey": "dsn"}})
	assert.Nil(t, m.get("Secret", "fm-fleet-manager-database"), "yours, not the chart's")
	d = m.get("Deployment", "fm-fleet-manager").(*appsv1.Deployment)
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Name == "database" {
			assert.Equal(t, "pg", v.Secret.SecretName)
			assert.Equal(t, []corev1.KeyToPath{{Key: "dsn", Path: "url"}}, v.Secret.Items)
		}
	}
}

// Several replicas elect leaders through the database: they need one they
// share, and get no Kubernetes rights for it.
func TestFleetManagerChartReplicas(t *testing.T) {
	_, err := renderChart(t, managerChart, "fm", "fleet", map[string]any{"replicas": 2})
	require.ErrorContains(t, err, "replicas > 1 needs a shared database")

	m := renderManager(t, managerAllValues)
	assert.NotContains(t, m.kinds(), "Role")
	assert.NotContains(t, m.kinds(), "ClusterRole")
	d := m.get("Deployment", "fm-fleet-manager").(*appsv1.Deployment)
	assert.Equal(t, int32(3), *d.Spec.Replicas)
	cfg := managerConfig(t, m)
	assert.Equal(t, true, cfg["leader_election"])
	assert.Equal(t, "10s", cfg["lease_ttl"])
	assert.Equal(t, "quota.yaml", cfg["quota_list"])
	assert.Equal(t, map[string]any{"token_secret_file": "/etc/fleetkit/keys/token-secret"}, cfg["agent"])
	assert.Equal(t, "agent", cfg["data_plane"], "the agent data plane is chosen by the config")
	assert.Equal(t, "- org_id: o1\n  max_units: 10\n", m.get("ConfigMap", "fm-fleet-manager").(*corev1.ConfigMap).Data["quota.yaml"])
	assert.Nil(t, m.get("Secret", "fm-fleet-manager-keys"), "both keys from your Secrets")
	assert.Equal(t, map[string]string{"keys": "jwt,agent-key", "database": "pg"}, secretVolumes(d.Spec.Template.Spec))
	c := d.Spec.Template.Spec.Containers[0]
	assert.Equal(t, "registry.example/fleet-manager:v3", c.Image)
	assert.Contains(t, c.Args, "-kind=kafka")
	assert.Contains(t, c.Args, "-provider=memory")

	// A changed configuration restarts the manager, which reads it at
	// start only.
	sum := func(m manifest) string {
		return m.get("Deployment", "fm-fleet-manager").(*appsv1.Deployment).Spec.Template.Annotations["checksum/config"]
	}
	assert.NotEqual(t, sum(renderManager(t, nil)), sum(renderManager(t, map[string]any{"config": map[string]any{"interval": "1s"}})))
	assert.Equal(t, sum(renderManager(t, nil)), sum(renderManager(t, nil)))
}

// agentRequired are the values the agent cannot run without.
var agentRequired = map[string]any{"controlPlane": "https://fleet.example", "clusterID": "c1", "token": map[string]any{"value": "fkc1.c1.s3cretMAC"}}

func TestFleetAgentChartLint(t *testing.T) {
	t.Run("required values", func(t *testing.T) { lintChart(t, agentChart, agentRequired) })
	t.Run("all set", func(t *testing.T) {
		lintChart(t, agentChart, map[string]any{"controlPlane": "http://10.0.0.1:8000", "clusterID": "c2", "kind": "kafka",
			"token": map[string]any{"existingSecret": "tok", "existingSecretKey": "t"}, "namespace": "instances",
			"image": map[string]any{"repository": "r/fleet-agent", "tag": "v1"}, "instanceImage": "r/fleet-manager:v1",
			"hostMode": "clusterip", "capacity": 40, "resync": "20s", "heartbeat": "5s", "extraArgs": []any{"-v"}})
	})
}

func renderAgent(t *testing.T, vals map[string]any) manifest {
	t.Helper()
	return mustRender(t, agentChart, "agent", "fleet-system", vals)
}

// The agent's Role, in the instances' namespace only, holds exactly what
// it does to an instance's objects; its flags are the contract's.
func TestFleetAgentChart(t *testing.T) {
	const name = "agent-fleet-agent"
	vals := map[string]any{"controlPlane": "http://10.0.0.1:8000", "clusterID": "c2", "kind": "kafka", "namespace": "instances",
		"token": agentRequired["token"], "hostMode": "clusterip", "capacity": 40}
	m := renderAgent(t, vals)
	assert.Equal(t, map[string]int{"ServiceAccount": 1, "Role": 1, "RoleBinding": 1, "Secret": 1, "Deployment": 1}, m.kinds(),
		"no ClusterRole: the agent's rights stop at the instances' namespace")
	role := m.get("Role", name).(*rbacv1.Role)
	assert.Equal(t, "instances", role.Namespace)
	apply := []string{"list", "watch", "create", "patch", "delete"}
	assert.Equal(t, map[string][]string{"secrets": append([]string{"get"}, apply...), "configmaps": apply, "services": apply,
		"apps/deployments": apply, "pods": {"list", "watch"}},
		rulesOf(t, role.Rules), "informers, server-side apply, delete; get on its key Secret only; Pods watched; no update")
	rb := m.get("RoleBinding", name).(*rbacv1.RoleBinding)
	assert.Equal(t, "instances", rb.Namespace)
	assert.Equal(t, rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}, rb.RoleRef)
	assert.Equal(t, []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: "fleet-system"}}, rb.Subjects)

	d := m.get("Deployment", name).(*appsv1.Deployment)
	assert.Equal(t, appsv1.RecreateDeploymentStrategyType, d.Spec.Strategy.Type, "one agent per cluster at a time")
	spec := d.Spec.Template.Spec
	assert.Equal(t, name, spec.ServiceAccountName)
	c := spec.Containers[0]
	assert.Equal(t, []string{"-control-plane=http://10.0.0.1:8000", "-kind=kafka", "-cluster=c2", "-token-file=/etc/fleetkit/token/token",
		"-namespace=instances", "-resync=30s", "-heartbeat=10s", "-capacity=40", "-image=fleetkit/fleet-manager:latest",
		"-host-mode=clusterip", "-addr=0.0.0.0:8081"}, c.Args)
	assert.Equal(t, "/healthz", c.ReadinessProbe.HTTPGet.Path)
	assertLockedDown(t, name, c)
	tok := m.get("Secret", "agent-fleet-agent-token").(*corev1.Secret)
	assert.Equal(t, "fkc1.c1.s3cretMAC", string(tok.Data["token"]))
	assertOnlyIn(t, m, tok.Name, "s3cretMAC")
	assert.Equal(t, map[string]string{"token": tok.Name}, secretVolumes(spec))
	assert.Empty(t, c.Env, "the token is a file, not in the environment")

	t.Run("defaults to the release's namespace", func(t *testing.T) {
		m := renderAgent(t, agentRequired)
		assert.Equal(t, "fleet-system", m.get("Role", name).(*rbacv1.Role).Namespace)
		c := m.get("Deployment", name).(*appsv1.Deployment).Spec.Template.Spec.Containers[0]
		assert.Contains(t, c.Args, "-namespace=fleet-system")
		assert.Contains(t, c.Args, "-host-mode=dns")
	})

	t.Run("an existing token Secret", func(t *testing.T) {
		m := renderAgent(t, map[string]any{"controlPlane": "http://cp", "clusterID": "c1", "token": map[string]any{"existingSecret": "tok", "existingSecretKey": "t"}})
		assert.Nil(t, m.get("Secret", "agent-fleet-agent-token"))
		for _, v := range m.get("Deployment", name).(*appsv1.Deployment).Spec.Template.Spec.Volumes {
			assert.Equal(t, "tok", v.Secret.SecretName)
			assert.Equal(t, []corev1.KeyToPath{{Key: "t", Path: "token"}}, v.Secret.Items)
		}
	})

	t.Run("required values", func(t *testing.T) {
		for missing, want := range map[string]string{"controlPlane": "controlPlane", "clusterID": "clusterID", "token": "token"} {
			vals := map[string]any{}
			for k, v := range agentRequired {
				if k != missing {
					vals[k] = v
				}
			}
			_, err := renderChart(t, agentChart, "agent", "fleet-system", vals)
			require.ErrorContains(t, err, want, "without %s", missing)
		}
		_, err := renderChart(t, agentChart, "agent", "fleet-system", map[string]any{"controlPlane": "http://cp", "clusterID": "c1",
			"token": agentRequired["token"], "hostMode": "nodeport"})
		require.ErrorContains(t, err, `hostMode "nodeport"`)
	})
}
