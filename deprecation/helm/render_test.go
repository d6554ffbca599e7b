package helm_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
)

// writeChart writes a chart whose CronJob apiVersion depends on the
// Kubernetes version it is rendered for, with a hook on a removed API.
func writeChart(t *testing.T) string {
	t.Helper()
	files := map[string]string{
		"jobs/Chart.yaml":  "apiVersion: v2\nname: jobs\nversion: 0.1.0\n",
		"jobs/values.yaml": "schedule: \"0 * * * *\"\n",
		"jobs/templates/cronjob.yaml": `{{- if semverCompare ">=1.25-0" .Capabilities.KubeVersion.GitVersion }}
apiVersion: batch/v1
{{- else }}
apiVersion: batch/v1beta1
{{- end }}
kind: CronJob
metadata:
  name: {{ .Release.Name }}-nightly
  namespace: {{ .Release.Namespace }}
spec:
  schedule: {{ .Values.schedule | quote }}
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: job
              image: busybox
`,
		"jobs/templates/pdb-hook.yaml": `apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: {{ .Release.Name }}-pdb
  annotations:
    "helm.sh/hook": pre-install
spec:
  minAvailable: 1
`,
	}
	return filepath.Join(writeFiles(t, files), "jobs")
}

func TestRenderChart(t *testing.T) {
	dir := writeChart(t)

	tests := []struct {
		target string
		want   []string // apiVersion/kind of the findings
	}{
		// Rendered for 1.23 the chart picks batch/v1beta1, removed in 1.25.
		{"v1.23.0", []string{"batch/v1beta1/CronJob", "policy/v1beta1/PodDisruptionBudget"}},
		// For 1.34 it picks batch/v1; only the hook's removed API is left.
		{"v1.34.0", []string{"policy/v1beta1/PodDisruptionBudget"}},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			target := deprecation.MustParseVersion(tt.target)
			out, err := helm.RenderChart(context.Background(), dir, helm.RenderOptions{Target: target, Namespace: "batch"})
			require.NoError(t, err)
			assert.Contains(t, string(out), "name: jobs-nightly")
			assert.Contains(t, string(out), "namespace: batch")

			c, err := deprecation.NewChecker(nil, deprecation.Options{Target: target})
			require.NoError(t, err)
			res, err := c.Check(context.Background(), dir, out)
			require.NoError(t, err)
			require.Empty(t, res.Errors)
			var got []string
			for _, f := range res.Findings {
				got = append(got, f.APIVersion+"/"+f.Kind)
			}
			assert.ElementsMatch(t, tt.want, got)
		})
	}

	_, err := helm.RenderChart(context.Background(), dir, helm.RenderOptions{})
	require.ErrorIs(t, err, helm.ErrInvalidOptions)
	_, err = helm.RenderChart(context.Background(), filepath.Dir(dir), helm.RenderOptions{Target: deprecation.MustParseVersion("v1.30")})
	require.Error(t, err)
}

// writeFiles writes files under a new temporary directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return dir
}

// A chart that picks its apiVersion from .Capabilities.APIVersions sees
// what the target serves, not Helm's default list (which still holds
// policy/v1beta1): kdave check chart/ and the GitOps builder agree.
func TestRenderChartServedAPIs(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"Chart.yaml": "apiVersion: v2\nname: pdb\nversion: 0.1.0\n",
		"templates/pdb.yaml": `{{- if .Capabilities.APIVersions.Has "policy/v1beta1/PodDisruptionBudget" }}
apiVersion: policy/v1beta1
{{- else }}
apiVersion: policy/v1
{{- end }}
kind: PodDisruptionBudget
metadata: {name: pdb}
spec: {minAvailable: 1}
{{- if .Capabilities.APIVersions.Has "example.com/v1" }}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: extra}
{{- end }}
`,
	})
	tests := []struct {
		target string
		extra  []string
		want   []string
	}{
		{"v1.20.0", nil, []string{"apiVersion: policy/v1beta1"}},
		{"v1.29.0", nil, []string{"apiVersion: policy/v1\n"}},
		{"v1.29.0", []string{"example.com/v1"}, []string{"apiVersion: policy/v1\n", "name: extra"}},
	}
	for _, tt := range tests {
		t.Run(tt.target+strings.Join(tt.extra, ","), func(t *testing.T) {
			out, err := helm.RenderChart(context.Background(), dir, helm.RenderOptions{Target: deprecation.MustParseVersion(tt.target), APIVersions: tt.extra})
			require.NoError(t, err)
			for _, w := range tt.want {
				assert.Contains(t, string(out), w)
			}
			if len(tt.extra) == 0 {
				assert.NotContains(t, string(out), "name: extra")
			}
		})
	}
}

// Helm's template flags: --is-upgrade, --no-hooks, --skip-tests,
// --show-only.
func TestRenderFlags(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"Chart.yaml":           "apiVersion: v2\nname: flags\nversion: 0.1.0\n",
		"templates/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {upgrade: {{ .Release.IsUpgrade | quote }}}\n",
		"templates/other.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n",
		"templates/hook.yaml":  "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: hook, annotations: {helm.sh/hook: pre-install}}\n",
		"templates/test.yaml":  "apiVersion: v1\nkind: Pod\nmetadata: {name: t, annotations: {helm.sh/hook: test}}\nspec: {containers: [{name: t, image: busybox}]}\n",
	})
	v := deprecation.MustParseVersion("v1.30.0")
	render := func(opts helm.RenderOptions) string {
		opts.Target = v
		out, err := helm.RenderChart(context.Background(), dir, opts)
		require.NoError(t, err)
		return string(out)
	}
	all := render(helm.RenderOptions{})
	assert.Contains(t, all, `upgrade: "false"`)
	assert.Contains(t, all, "# Source: flags/templates/hook.yaml\n")
	assert.Contains(t, all, "name: t,")
	assert.Contains(t, render(helm.RenderOptions{IsUpgrade: true}), `upgrade: "true"`)
	assert.NotContains(t, render(helm.RenderOptions{NoHooks: true}), "name: hook")
	skip := render(helm.RenderOptions{SkipTests: true})
	assert.NotContains(t, skip, "name: t,")
	assert.Contains(t, skip, "name: hook")
	only := render(helm.RenderOptions{ShowOnly: []string{"templates/other.yaml"}})
	assert.Equal(t, "---\n# Source: flags/templates/other.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: other}\n", only)
	_, err := helm.RenderChart(context.Background(), dir, helm.RenderOptions{Target: v, ShowOnly: []string{"templates/none.yaml"}})
	require.ErrorIs(t, err, helm.ErrInvalidOptions)
}

// A chart that never finishes rendering does not hold up the caller: the
// context's deadline ends the call.
func TestRenderNeverFinishes(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"Chart.yaml":          "apiVersion: v2\nname: slow\nversion: 0.1.0\n",
		"templates/slow.yaml": "{{- range until 30000 }}{{ range until 30000 }}{{ end }}{{ end }}\n",
	})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := helm.RenderChart(ctx, dir, helm.RenderOptions{Target: deprecation.MustParseVersion("v1.30.0")})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestServedAPIs(t *testing.T) {
	rules := deprecation.DefaultRules()
	got := helm.ServedAPIs(rules, deprecation.MustParseVersion("v1.29.0"))
	for _, api := range []string{"v1", "apps/v1", "batch/v1", "networking.k8s.io/v1", "policy/v1", "rbac.authorization.k8s.io/v1", "autoscaling/v2", "batch/v1/CronJob", "flowcontrol.apiserver.k8s.io/v1"} {
		assert.True(t, got[api], api)
	}
	for _, api := range []string{"extensions/v1beta1", "policy/v1beta1", "batch/v1beta1/CronJob", "autoscaling/v2beta2"} {
		assert.False(t, got[api], api)
	}
	old := helm.ServedAPIs(rules, deprecation.MustParseVersion("v1.20.0"))
	assert.True(t, old["policy/v1beta1"])
	assert.False(t, old["policy/v1"], "served from 1.21")
	assert.False(t, old["flowcontrol.apiserver.k8s.io/v1"])
}
