package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/examples/kdave/internal/cli"
)

const testdata = "../../../deprecation/testdata/"

// testdata2 holds this binary's own fixtures.
const testdata2 = "testdata/"

// runFull runs kdave-full's command line in this process.
func runFull(args []string, stdin string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, cli.IO{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut})
	return code, out.String(), errOut.String()
}

// TestRunCharts: charts among the paths are rendered for the target: for
// 1.23 the CronJob is batch/v1beta1 (removed in 1.25, so "removal soon"),
// for 1.34 batch/v1; the hook's PodDisruptionBudget is checked too.
func TestRunCharts(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string
	}{
		{"chart rendered for 1.23", []string{"check", "-target", "v1.23", testdata2 + "charts/jobs"}, 2,
			[]string{"jobs-nightly", "batch/v1beta1", "jobs-pdb", "2 finding(s)"}},
		{"chart rendered for 1.34", []string{"check", testdata2 + "charts/jobs", "-target", "v1.34"}, 3,
			[]string{"jobs-pdb", "1 finding(s)"}},
		{"chart and manifests, pluto's output", []string{"check", "-o", "wide", "-target", "v1.25", testdata2 + "charts/jobs", testdata + "manifests/legacy-app.yaml"}, 4,
			[]string{"jobs-pdb", "shop-restricted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runFull(tt.args, "")
			assert.Equal(t, tt.wantCode, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			for _, w := range tt.wantOut {
				assert.Contains(t, out, w)
			}
		})
	}
}

// A chart that fails to render is an error entry; the other paths are
// still checked.
func TestRunBrokenChart(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "templates"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: broken\nversion: 0.1.0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "templates", "x.yaml"), []byte("{{ .Values.nope.deeper }}\n"), 0o644))
	code, out, _ := runFull([]string{"check", "-target", "v1.25", dir, "-"}, "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n")
	assert.Equal(t, 3, code, out)
	assert.Contains(t, out, "rendering chart")
	assert.Contains(t, out, "CronJob")
}

func TestRunFlux(t *testing.T) {
	const repo = "../../../deprecation/gitops/testdata/fleet"
	code, out, errOut := runFull([]string{"check", "-flux", repo}, "")
	assert.Equal(t, 4, code, "PodSecurityPolicy has no replacement; stderr: %s", errOut)
	for _, want := range []string{
		"flux-system/apps            Kustomization  ok",
		"flux-system/broken          Kustomization  failed",
		"flux-system/after-broken    Kustomization  skipped",
		"dag: dependency cycle",
		"HelmRelease/apps/redis      HelmRelease    skipped",
		"not rendered: remote chart",
		"ghcr.io/stefanprodan/podinfo:6.5.0",
		"CronJob                  apps/report-prod",
		"5 finding(s), 3 error(s) in 31 document(s) of 13 source(s)",
	} {
		assert.Contains(t, out, want)
	}

	// -only builds what one Kustomization needs; JSON output.
	code, out, _ = runFull([]string{"check", "-flux", repo, "-only", "flux-system/apps", "-o", "json"}, "")
	assert.Equal(t, 4, code)
	var got struct {
		Nodes []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"nodes"`
		Exit int `json:"exitCode"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got), out)
	var ids []string
	for _, n := range got.Nodes {
		ids = append(ids, n.ID+"="+n.Status)
	}
	// apps depends on infrastructure, and flux-system renders it;
	// nothing else is built.
	assert.Equal(t, []string{"flux-system/apps=ok", "flux-system/flux-system=ok", "flux-system/infrastructure=ok"}, ids)
	assert.Equal(t, 4, got.Exit)

	code, _, _ = runFull([]string{"check", "-flux", repo, "-only", "nope"}, "")
	assert.Equal(t, 1, code)
	code, _, _ = runFull([]string{"check", "-flux", repo, "-o", "yaml"}, "")
	assert.Equal(t, 1, code)
	// pluto's flags apply to the findings of a Flux build too.
	code, out, _ = runFull([]string{"check", "-flux", repo, "-o", "csv", "-columns", "KIND,NAME", "-ignore-unavailable-replacements", "-ignore-removals"}, "")
	assert.Equal(t, 2, code)
	assert.True(t, strings.HasPrefix(out, "KIND,NAME\n"), out)
}

// CRDs and Secrets are left out of the objects unless asked for; charts
// see the APIs given with -api-versions.
func TestRunFluxFlags(t *testing.T) {
	const repo = "../../../deprecation/gitops/testdata/platform"
	type node struct {
		ID      string `json:"id"`
		Objects []struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Name       string `json:"name"`
		} `json:"objects"`
	}
	objects := func(t *testing.T, id string, args ...string) []string {
		args = append([]string{"check", "-target", "v1.29", "-o", "json", "-flux", repo}, args...)
		code, out, errOut := runFull(args, "")
		require.NotEqual(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
		var got struct{ Nodes []node }
		require.NoError(t, json.Unmarshal([]byte(out), &got), out)
		var kinds []string
		for _, n := range got.Nodes {
			if n.ID == id {
				for _, o := range n.Objects {
					kinds = append(kinds, o.APIVersion+" "+o.Kind+" "+o.Name)
				}
			}
		}
		return kinds
	}
	const infra = "flux-system/infrastructure"
	assert.Empty(t, objects(t, infra, "-only", "infrastructure"))
	assert.Equal(t, []string{"apiextensions.k8s.io/v1 CustomResourceDefinition servicemonitors.monitoring.coreos.com"},
		objects(t, infra, "-only", "infrastructure", "-include-crds"))
	assert.Equal(t, []string{"v1 Secret registry"}, objects(t, infra, "-only", "infrastructure", "-include-secrets"))

	const probe = "HelmRelease/monitoring/probe"
	assert.NotContains(t, objects(t, probe, "-only", "probe"), "v1 ConfigMap probe-extra")
	assert.Contains(t, objects(t, probe, "-only", "probe", "-api-versions", "other.io/v1, example.com/v9"), "v1 ConfigMap probe-extra")
}
