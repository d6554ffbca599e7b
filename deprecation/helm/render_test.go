package helm_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
)

// writeChart writes a chart whose CronJob apiVersion depends on the
// Kubernetes version it is rendered for, with a hook on a removed API.
func writeChart(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "jobs")
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: jobs\nversion: 0.1.0\n",
		"values.yaml": "schedule: \"0 * * * *\"\n",
		"templates/cronjob.yaml": `{{- if semverCompare ">=1.25-0" .Capabilities.KubeVersion.GitVersion }}
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
		"templates/pdb-hook.yaml": `apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: {{ .Release.Name }}-pdb
  annotations:
    "helm.sh/hook": pre-install
spec:
  minAvailable: 1
`,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	return dir
}

func TestRenderChart(t *testing.T) {
	dir := writeChart(t)
	require.True(t, helm.IsChart(dir))
	require.False(t, helm.IsChart(filepath.Dir(dir)))

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
