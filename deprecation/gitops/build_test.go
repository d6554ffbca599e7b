package gitops

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/internal/dag"
)

const fleet = "testdata/fleet"

var v129 = deprecation.MustParseVersion("v1.29.0")

// objectKey names an object in assertions.
type objectKey struct{ APIVersion, Kind, Namespace, Name string }

func keys(objs []Object) []objectKey {
	out := make([]objectKey, 0, len(objs))
	for _, o := range objs {
		out = append(out, objectKey{o.APIVersion, o.Kind, o.Namespace, o.Name})
	}
	return out
}

// findingKey names a finding in assertions.
type findingKey struct{ APIVersion, Kind, Name string }

func findings(fs []deprecation.Finding) []findingKey {
	out := make([]findingKey, 0, len(fs))
	for _, f := range fs {
		out = append(out, findingKey{f.APIVersion, f.Kind, f.Name})
	}
	return out
}

func TestBuildFleet(t *testing.T) {
	for _, par := range []int{1, 3, 16} {
		t.Run(fmt.Sprintf("parallelism %d", par), func(t *testing.T) { testFleet(t, par) })
	}
}

func testFleet(t *testing.T, par int) {
	res, err := Build(context.Background(), Options{Path: fleet, Target: v129, Parallelism: par})
	require.NoError(t, err)

	ids := make([]string, 0, len(res.Nodes))
	for _, n := range res.Nodes {
		ids = append(ids, n.ID)
	}
	assert.Equal(t, []string{
		"HelmRelease/apps/podinfo", "HelmRelease/apps/redis", "HelmRelease/apps/worker",
		"flux-system/after-broken", "flux-system/apps", "flux-system/broken",
		"flux-system/cycle-a", "flux-system/cycle-b", "flux-system/flux-system",
		"flux-system/helm-apps", "flux-system/infrastructure", "flux-system/team-a", "flux-system/tenants",
	}, ids)

	tests := []struct {
		id       string
		status   Status
		errIs    error
		objects  []objectKey
		images   []string
		findings []findingKey
	}{
		{
			id:     "flux-system/infrastructure",
			status: StatusOK,
			objects: []objectKey{
				{"apps/v1", "Deployment", "ingress", "ingress-nginx"},
				{"policy/v1beta1", "PodSecurityPolicy", "", "restricted"},
			},
			images:   []string{"busybox:1.36", "registry.k8s.io/ingress-nginx/controller:v1.9.4"},
			findings: []findingKey{{"policy/v1beta1", "PodSecurityPolicy", "restricted"}},
		},
		{
			// No kustomization.yaml: generated in memory, values.yaml left
			// out, the extra/ subtree included through its own
			// kustomization; substitution from substitute and a ConfigMap.
			id:     "flux-system/apps",
			status: StatusOK,
			objects: []objectKey{
				{"apps/v1", "Deployment", "apps", "web-prod"},
				{"networking.k8s.io/v1beta1", "Ingress", "apps", "web"},
				{"batch/v1beta1", "CronJob", "apps", "report-prod"},
			},
			images: []string{"alpine:3.19", "nginx:1.25"},
			findings: []findingKey{
				{"networking.k8s.io/v1beta1", "Ingress", "web"},
				{"batch/v1beta1", "CronJob", "report-prod"},
			},
		},
		{
			// The CRD and the Secret are built and left out.
			id:     "flux-system/flux-system",
			status: StatusOK,
			objects: []objectKey{
				{"kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "apps"},
				{"v1", "ConfigMap", "flux-system", "cluster-vars"},
				{"kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "broken"},
				{"kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "after-broken"},
				{"kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "cycle-a"},
				{"kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "cycle-b"},
				{"source.toolkit.fluxcd.io/v1", "GitRepository", "flux-system", "flux-system"},
				{"kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "flux-system"},
				{"kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "helm-apps"},
				{"kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "infrastructure"},
				{"kustomize.toolkit.fluxcd.io/v1", "Kustomization", "flux-system", "tenants"},
			},
		},
		{
			// Discovered in the tenants build output (namePrefix).
			id:      "flux-system/team-a",
			status:  StatusOK,
			objects: []objectKey{{"v1", "ConfigMap", "team-a", "team-a"}},
		},
		{
			id:     "flux-system/helm-apps",
			status: StatusOK,
			objects: []objectKey{
				{"v1", "ConfigMap", "apps", "podinfo-values"},
				{"helm.toolkit.fluxcd.io/v2", "HelmRelease", "apps", "podinfo"},
				{"source.toolkit.fluxcd.io/v1", "HelmRepository", "apps", "bitnami"},
				{"helm.toolkit.fluxcd.io/v2", "HelmRelease", "apps", "redis"},
				{"helm.toolkit.fluxcd.io/v2", "HelmRelease", "apps", "worker"},
			},
		},
		{
			// A local chart needing Kubernetes >= 1.25 that picks the
			// PDB apiVersion from the target.
			id:     "HelmRelease/apps/podinfo",
			status: StatusOK,
			objects: []objectKey{
				{"policy/v1", "PodDisruptionBudget", "apps", "podinfo"},
				{"apps/v1", "Deployment", "apps", "podinfo"},
				{"autoscaling/v2beta2", "HorizontalPodAutoscaler", "apps", "podinfo"},
			},
			images:   []string{"ghcr.io/stefanprodan/podinfo:6.5.0"},
			findings: []findingKey{{"autoscaling/v2beta2", "HorizontalPodAutoscaler", "podinfo"}},
		},
		{id: "HelmRelease/apps/redis", status: StatusSkipped, errIs: ErrRemoteChart},
		{
			id:     "HelmRelease/apps/worker",
			status: StatusOK,
			objects: []objectKey{
				{"policy/v1", "PodDisruptionBudget", "apps", "worker"},
				{"apps/v1", "Deployment", "apps", "worker"},
				{"autoscaling/v2beta2", "HorizontalPodAutoscaler", "apps", "worker"},
			},
			images:   []string{"ghcr.io/stefanprodan/podinfo:6.6.0"},
			findings: []findingKey{{"autoscaling/v2beta2", "HorizontalPodAutoscaler", "worker"}},
		},
		{id: "flux-system/broken", status: StatusFailed},
		{id: "flux-system/after-broken", status: StatusSkipped, errIs: dag.ErrDependency},
		{id: "flux-system/cycle-a", status: StatusFailed, errIs: dag.ErrCycle},
		{id: "flux-system/cycle-b", status: StatusFailed, errIs: dag.ErrCycle},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			n := res.Node(tt.id)
			require.NotNil(t, n)
			assert.Equal(t, tt.status, n.Status, n.Error)
			if tt.status == StatusOK {
				assert.NoError(t, n.Err)
				assert.Empty(t, n.Error)
			} else {
				require.Error(t, n.Err)
				assert.Equal(t, n.Err.Error(), n.Error)
			}
			if tt.errIs != nil {
				assert.ErrorIs(t, n.Err, tt.errIs)
			}
			assert.Equal(t, tt.objects, nilIfEmpty(keys(n.Objects)))
			assert.Equal(t, tt.images, n.Images)
			assert.Equal(t, tt.findings, nilIfEmpty(findings(n.Findings)))
		})
	}
}

// writeFile writes data to name under dir, making its directories.
func writeFile(t *testing.T, dir, name, data string) {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestBuildSubstitution(t *testing.T) {
	res, err := Build(context.Background(), Options{Path: fleet, Target: v129, Only: "apps"})
	require.NoError(t, err)
	n := res.Node("flux-system/apps")
	require.NotNil(t, n)
	require.Equal(t, StatusOK, n.Status, n.Error)
	byName := make(map[string]Object)
	for _, o := range n.Objects {
		byName[o.Name] = o
	}
	web := byName["web-prod"].Body
	assert.Equal(t, 2, lookup(web, "spec", "replicas"), "default applied")
	env := list(web, "spec", "template", "spec", "containers")[0]["env"].([]any)
	assert.Equal(t, "prod.example.com", env[0].(map[string]any)["value"], "from the ConfigMap")
	ing := byName["web"].Body
	assert.Equal(t, "${literal}", list(ing, "spec", "rules")[0]["host"], "substitution disabled by annotation")
}

func TestBuildOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		ids     []string
		kinds   map[string][]string // node → kinds it must hold
		wantErr error
	}{
		{
			name: "only builds what the target needs",
			opts: Options{Only: "apps"},
			// flux-system renders apps: the build that renders a
			// Kustomization is one of its needs.
			ids: []string{"flux-system/apps", "flux-system/flux-system", "flux-system/infrastructure"},
		},
		{
			name: "only with namespace",
			opts: Options{Only: "flux-system/infrastructure"},
			ids:  []string{"flux-system/flux-system", "flux-system/infrastructure"},
		},
		{
			name: "only a failing chain",
			opts: Options{Only: "after-broken"},
			ids:  []string{"flux-system/after-broken", "flux-system/broken", "flux-system/flux-system"},
		},
		{
			name:  "include CRDs and Secrets",
			opts:  Options{Only: "flux-system", IncludeCRDs: true, IncludeSecrets: true},
			ids:   []string{"flux-system/flux-system"},
			kinds: map[string][]string{"flux-system/flux-system": {"CustomResourceDefinition", "Secret"}},
		},
		{
			name: "only renders the target's HelmReleases",
			opts: Options{Only: "helm-apps"},
			ids:  []string{"HelmRelease/apps/podinfo", "HelmRelease/apps/redis", "HelmRelease/apps/worker", "flux-system/flux-system", "flux-system/helm-apps", "flux-system/infrastructure"},
		},
		{name: "unknown only", opts: Options{Only: "nope"}, wantErr: ErrUnknownNode},
		{name: "unknown only with namespace", opts: Options{Only: "x/apps"}, wantErr: ErrUnknownNode},
		{name: "bad path", opts: Options{Path: "testdata/none"}, wantErr: ErrPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := tt.opts
			if opts.Path == "" {
				opts.Path = fleet
			}
			opts.Target = v129
			res, err := Build(context.Background(), opts)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			var ids []string
			for _, n := range res.Nodes {
				ids = append(ids, n.ID)
			}
			assert.Equal(t, tt.ids, ids)
			for id, kinds := range tt.kinds {
				n := res.Node(id)
				require.NotNil(t, n)
				var got []string
				for _, o := range n.Objects {
					got = append(got, o.Kind)
				}
				assert.Subset(t, got, kinds)
			}
		})
	}
}

func TestBuildSources(t *testing.T) {
	// A GitRepository mapped to a local directory is built from there.
	dir := t.TempDir()
	write := func(name, data string) { writeFile(t, dir, name, data) }
	write("repo/ks.yaml", `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: podinfo
  namespace: flux-system
spec:
  path: ./deploy
  sourceRef:
    kind: GitRepository
    name: podinfo
`)
	write("podinfo/deploy/pod.yaml", `apiVersion: v1
kind: Pod
metadata:
  name: podinfo
spec:
  containers:
  - name: podinfo
    image: ghcr.io/stefanprodan/podinfo:6.5.0
`)
	res, err := Build(context.Background(), Options{
		Path:    filepath.Join(dir, "repo"),
		Sources: map[string]string{"flux-system/podinfo": filepath.Join(dir, "podinfo")},
	})
	require.NoError(t, err)
	n := res.Node("flux-system/podinfo")
	require.NotNil(t, n)
	require.Equal(t, StatusOK, n.Status, n.Error)
	assert.Equal(t, []string{"ghcr.io/stefanprodan/podinfo:6.5.0"}, n.Images)
	_, err = os.Stat(filepath.Join(dir, "podinfo/deploy/kustomization.yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist, "the generated kustomization.yaml stays in memory")
}

func TestBuildCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Build(ctx, Options{Path: fleet})
	require.ErrorIs(t, err, context.Canceled)
}

func TestBuildLeavesRepoAlone(t *testing.T) {
	_, err := Build(context.Background(), Options{Path: fleet})
	require.NoError(t, err)
	for _, dir := range []string{"clusters/prod", "apps/prod", "cycle", "tenants/team-a-app"} {
		_, err := os.Stat(filepath.Join(fleet, dir, "kustomization.yaml"))
		assert.ErrorIs(t, err, os.ErrNotExist, dir)
	}
}

func TestBuildHelmValues(t *testing.T) {
	tests := []struct {
		name     string
		target   deprecation.Version
		status   Status
		replicas any
		tier     any
		pdb      string
	}{
		// spec.values wins over valuesFrom; targetPath sets labels.tier.
		{name: "target 1.29", target: v129, status: StatusOK, replicas: 3, tier: "backend", pdb: "policy/v1"},
		{name: "target below the chart's kubeVersion", target: deprecation.MustParseVersion("v1.24.0"), status: StatusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Build(context.Background(), Options{Path: fleet, Target: tt.target, Only: "helm-apps"})
			require.NoError(t, err)
			n := res.Node("HelmRelease/apps/podinfo")
			require.NotNil(t, n)
			require.Equal(t, tt.status, n.Status, n.Error)
			if tt.status != StatusOK {
				assert.Contains(t, n.Error, "kubeVersion")
				redis := res.Node("HelmRelease/apps/redis")
				assert.Equal(t, StatusSkipped, redis.Status, "its dependant")
				assert.ErrorIs(t, redis.Err, dag.ErrDependency)
				return
			}
			for _, o := range n.Objects {
				switch o.Kind {
				case "Deployment":
					assert.Equal(t, tt.replicas, lookup(o.Body, "spec", "replicas"))
					assert.Equal(t, tt.tier, lookup(o.Body, "metadata", "labels", "tier"))
				case "PodDisruptionBudget":
					assert.Equal(t, tt.pdb, o.APIVersion)
				}
			}
		})
	}
}

func TestBuildKustomizeSettings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) { writeFile(t, dir, name, data) }
	write("clusters/ks.yaml", `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: web
  namespace: flux-system
spec:
  path: ./web
  targetNamespace: team-b
  namePrefix: b-
  images:
  - name: nginx
    newTag: "1.27"
  patches:
  - target:
      kind: Deployment
    patch: |
      - op: replace
        path: /spec/replicas
        value: 5
  sourceRef:
    kind: GitRepository
    name: flux-system
`)
	write("web/deploy.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  template:
    spec:
      containers:
      - name: web
        image: nginx:1.25
`)
	res, err := Build(context.Background(), Options{Path: dir, Only: "web"})
	require.NoError(t, err)
	n := res.Node("flux-system/web")
	require.NotNil(t, n)
	require.Equal(t, StatusOK, n.Status, n.Error)
	assert.Equal(t, []objectKey{{"apps/v1", "Deployment", "team-b", "b-web"}}, keys(n.Objects))
	assert.Equal(t, []string{"nginx:1.27"}, n.Images)
	assert.Equal(t, 5, lookup(n.Objects[0].Body, "spec", "replicas"))
	_, err = os.Stat(filepath.Join(dir, "web/kustomization.yaml"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// A remote chart found in the chart cache is rendered; nothing is fetched.
func TestChartCache(t *testing.T) {
	cache := t.TempDir()
	write := func(name, data string) { writeFile(t, cache, name, data) }
	// The release asks for version 18.x, a range: the unpacked <chart>
	// directory serves it.
	write("redis/Chart.yaml", "apiVersion: v2\nname: redis\nversion: 18.6.1\n")
	write("redis/templates/pdb.yaml", "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: {{ .Release.Name }}}\nspec: {minAvailable: 1}\n")
	write("redis/templates/sts.yaml", "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: {{ .Release.Name }}}\nspec:\n  template:\n    spec:\n      containers: [{name: redis, image: \"bitnami/redis:7.2\"}]\n")

	res, err := Build(context.Background(), Options{Path: fleet, ChartCache: cache})
	require.NoError(t, err)
	redis := res.Node("HelmRelease/apps/redis")
	require.NotNil(t, redis)
	require.Equal(t, StatusOK, redis.Status, redis.Error)
	assert.Equal(t, filepath.Join(cache, "redis"), redis.Path)
	assert.Equal(t, []string{"bitnami/redis:7.2"}, redis.Images)
	require.Len(t, redis.Findings, 1)
	assert.Equal(t, "PodDisruptionBudget", redis.Findings[0].Kind)

	// Without the cache it stays "not rendered: remote chart".
	res, err = Build(context.Background(), Options{Path: fleet})
	require.NoError(t, err)
	assert.ErrorIs(t, res.Node("HelmRelease/apps/redis").Err, ErrRemoteChart)
}

const platform = "testdata/platform"

// A Kustomization renamed by the kustomization.yaml that includes it is
// one node, as its parent renders it: final name and namespace, the
// parent's variables substituted in its spec, dependsOn by final names.
func TestBuildRenamedKustomizations(t *testing.T) {
	for _, par := range []int{1, 4} {
		t.Run(fmt.Sprintf("parallelism %d", par), func(t *testing.T) {
			res, err := Build(context.Background(), Options{Path: platform, Target: v129, Parallelism: par})
			require.NoError(t, err)
			var ids []string
			for _, n := range res.Nodes {
				ids = append(ids, n.ID)
				assert.Equal(t, StatusOK, n.Status, "%s: %s", n.ID, n.Error)
			}
			assert.Equal(t, []string{
				"HelmRelease/monitoring/probe",
				"flux-system/flux-system", "flux-system/infrastructure", "flux-system/probe",
				"flux-system/tenants", "flux-system/web",
				"tenants/team-app", "tenants/team-db",
			}, ids, "no node for the raw flux-system/app and flux-system/db")

			app := res.Node("tenants/team-app")
			require.NotNil(t, app)
			assert.Equal(t, "./tenants/a-app", app.Path, "${team} from the parent's postBuild")
			assert.Equal(t, []string{"tenants/team-db"}, app.DependsOn)
			require.Len(t, app.Objects, 1)
			assert.Equal(t, "team-a", lookup(app.Objects[0].Body, "data", "owner"), "its own postBuild, substituted by the parent first")
			assert.Equal(t, []string{"postgres:16"}, res.Node("tenants/team-db").Images)

			// The parent's output names them finally, without the marker.
			var names []string
			for _, o := range res.Node("flux-system/tenants").Objects {
				names = append(names, o.Namespace+"/"+o.Name)
				assert.Nil(t, lookup(o.Body, "metadata", "annotations"), "the marker annotation is removed")
			}
			assert.Equal(t, []string{"tenants/team-app", "tenants/team-db"}, names)
		})
	}
}

// -only takes the name in the repository and builds what renders it.
func TestBuildOnlyRenamed(t *testing.T) {
	res, err := Build(context.Background(), Options{Path: platform, Target: v129, Only: "app"})
	require.NoError(t, err)
	ids := nodeStatuses(res)
	assert.Equal(t, []string{"flux-system/flux-system=ok", "flux-system/tenants=ok", "tenants/team-app=ok", "tenants/team-db=ok"}, ids)
}

// A failed parent fails the Kustomizations it would have rendered; they
// are reported, as read, and skipped.
func TestBuildParentFails(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) { writeFile(t, dir, name, data) }
	write("clusters/ks.yaml", fluxKustomization("root", "./clusters"))
	write("clusters/kustomization.yaml", "resources: [ks.yaml, child.yaml, missing.yaml]\n")
	write("clusters/child.yaml", fluxKustomization("child", "./child"))
	write("child/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	res, err := Build(context.Background(), Options{Path: dir})
	require.NoError(t, err)
	require.Len(t, res.Nodes, 2)
	assert.Equal(t, StatusFailed, res.Node("flux-system/root").Status)
	child := res.Node("flux-system/child")
	require.NotNil(t, child)
	assert.Equal(t, StatusSkipped, child.Status)
	assert.ErrorIs(t, child.Err, dag.ErrDependency)
}

// A Kustomization file that a parent's kustomization.yaml includes from
// outside the parent's path ("../") is still the parent's: one node, the
// renamed one, built after the parent.
func TestBuildRenamedFromOutsidePath(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) { writeFile(t, dir, name, data) }
	write("clusters/prod/apps.yaml", fluxKustomization("apps", "./clusters/prod/apps"))
	write("clusters/prod/apps/kustomization.yaml", "namePrefix: prod-\nresources: [../../../shared/ks.yaml]\n")
	write("shared/ks.yaml", fluxKustomization("web", "./web"))
	write("web/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	res, err := Build(context.Background(), Options{Path: dir})
	require.NoError(t, err)
	ids := nodeStatuses(res)
	assert.Equal(t, []string{"flux-system/apps=ok", "flux-system/prod-web=ok"}, ids, "no node for the raw flux-system/web")
}

// spec.components (relative to spec.path) and spec.commonMetadata apply as
// in kustomize-controller; spec.images replaces the path's own entry.
func TestBuildComponentsAndCommonMetadata(t *testing.T) {
	res, err := Build(context.Background(), Options{Path: platform, Target: v129, Only: "web"})
	require.NoError(t, err)
	n := res.Node("flux-system/web")
	require.NotNil(t, n)
	require.Equal(t, StatusOK, n.Status, n.Error)
	assert.Equal(t, []objectKey{
		{"apps/v1", "Deployment", "web", "web"},
		{"networking.k8s.io/v1beta1", "Ingress", "web", "web"},
	}, keys(n.Objects), "the component's Ingress, in the target namespace")
	for _, o := range n.Objects {
		assert.Equal(t, "web", lookup(o.Body, "metadata", "labels", "team"), o.Kind)
		assert.Equal(t, "platform", lookup(o.Body, "metadata", "annotations", "owner"), o.Kind)
	}
	assert.Equal(t, "enabled", lookup(n.Objects[0].Body, "metadata", "annotations", "tls"), "the component's patch")
	assert.Equal(t, []string{"nginx:1.27"}, n.Images)
	assert.Equal(t, []findingKey{{"networking.k8s.io/v1beta1", "Ingress", "web"}}, findings(n.Findings))
}

// Charts see the APIs the target serves, the repository's CRDs and
// Options.APIVersions in .Capabilities.APIVersions.
func TestBuildHelmAPIVersions(t *testing.T) {
	tests := []struct {
		name   string
		target deprecation.Version
		extra  []string
		want   []objectKey
	}{
		{
			// policy/v1beta1 is removed in 1.25: not served.
			name:   "1.29",
			target: v129,
			want: []objectKey{
				{"policy/v1", "PodDisruptionBudget", "", "probe"},
				{"monitoring.coreos.com/v1", "ServiceMonitor", "", "probe"},
			},
		},
		{
			name:   "1.20 serves policy/v1beta1 only",
			target: deprecation.MustParseVersion("v1.20.0"),
			want: []objectKey{
				{"policy/v1beta1", "PodDisruptionBudget", "", "probe"},
				{"monitoring.coreos.com/v1", "ServiceMonitor", "", "probe"},
			},
		},
		{
			name:   "extra API versions",
			target: v129,
			extra:  []string{"example.com/v9"},
			want: []objectKey{
				{"policy/v1", "PodDisruptionBudget", "", "probe"},
				{"v1", "ConfigMap", "", "probe-extra"},
				{"monitoring.coreos.com/v1", "ServiceMonitor", "", "probe"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Build(context.Background(), Options{Path: platform, Target: tt.target, Only: "probe", APIVersions: tt.extra})
			require.NoError(t, err)
			n := res.Node("HelmRelease/monitoring/probe")
			require.NotNil(t, n)
			require.Equal(t, StatusOK, n.Status, n.Error)
			assert.Equal(t, tt.want, keys(n.Objects))
		})
	}
}

func TestBuildIncludeCRDsAndSecrets(t *testing.T) {
	kinds := func(opts Options) []string {
		opts.Path, opts.Target, opts.Only = platform, v129, "infrastructure"
		res, err := Build(context.Background(), opts)
		require.NoError(t, err)
		n := res.Node("flux-system/infrastructure")
		require.NotNil(t, n)
		var out []string
		for _, o := range n.Objects {
			out = append(out, o.Kind)
		}
		return out
	}
	assert.Empty(t, kinds(Options{}))
	assert.Equal(t, []string{"CustomResourceDefinition"}, kinds(Options{IncludeCRDs: true}))
	assert.Equal(t, []string{"Secret"}, kinds(Options{IncludeSecrets: true}))
	assert.ElementsMatch(t, []string{"Secret", "CustomResourceDefinition"}, kinds(Options{IncludeCRDs: true, IncludeSecrets: true}))
}

// fluxKustomization is a Flux Kustomization in flux-system building path
// from the repository itself.
func fluxKustomization(name, path string) string {
	return fmt.Sprintf(`apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: %s, namespace: flux-system}
spec:
  path: %s
  sourceRef: {kind: GitRepository, name: flux-system}
`, name, path)
}

// nodeStatuses lists res's nodes as "id=status".
func nodeStatuses(res *Result) []string {
	var ids []string
	for _, n := range res.Nodes {
		ids = append(ids, n.ID+"="+string(n.Status))
	}
	return ids
}
