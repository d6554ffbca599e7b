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
)

const testdata = "../../deprecation/testdata/"

// testdata2 holds this binary's own fixtures.
const testdata2 = "testdata/"

func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantOut    []string
		wantStderr string
	}{
		{"no command", nil, "", 1, nil, "usage: kdave <command>"},
		{"serve bad flag", []string{"serve", "-nope"}, "", 1, nil, "flag provided but not defined"},
		{"help", []string{"help"}, "", 0, []string{"check   check manifest files"}, ""},
		{"no paths", []string{"check"}, "", 1, nil, "usage: kdave check"},
		{"bad target", []string{"check", "-target", "latest", "-"}, "", 1, nil, "invalid version"},
		{"bad format", []string{"check", "-o", "xml", "-"}, "", 1, nil, "unknown output format"},
		{"missing rules file", []string{"check", "-rules", "nope.yaml", "-"}, "", 1, nil, "nope.yaml"},
		{"bad rules file", []string{"check", "-rules", testdata + "rules/bad-field.yaml", "-"}, "", 1, nil, "invalid rules"},
		{"clean", []string{"check", testdata + "manifests/current.yaml"}, "", 0, []string{"0 finding(s)", "target Kubernetes v1.37.0"}, ""},
		{"deprecated", []string{"check", "-target", "v1.21", "-"}, "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n", 2, []string{"CronJob", "deprecated"}, ""},
		{"removed", []string{"check", "-target", "v1.25", "-"}, "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n", 3, []string{"removed"}, ""},
		{"no replacement", []string{"check", "-target", "v1.25", "-"}, "apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: p}\n", 4, []string{"none"}, ""},
		{"error only", []string{"check", "nope.yaml"}, "", 1, []string{"error: nope.yaml"}, ""},
		{"directory", []string{"check", testdata + "manifests"}, "", 4, []string{"9 finding(s), 1 error(s) in 16 document(s) of 5 source(s)"}, ""},
		// Charts are rendered for the target: for 1.23 the CronJob is batch/v1beta1
		// (removed in 1.25, so "removal soon"), for 1.34 batch/v1; the hook's
		// PodDisruptionBudget is checked too.
		{"chart rendered for 1.23", []string{"check", "-target", "v1.23", testdata2 + "charts/jobs"}, "", 2,
			[]string{"jobs-nightly", "batch/v1beta1", "jobs-pdb", "2 finding(s)"}, ""},
		{"chart rendered for 1.34", []string{"check", "-target", "v1.34", testdata2 + "charts/jobs"}, "", 3,
			[]string{"jobs-pdb", "1 finding(s)"}, ""},
		{"extra rules", []string{"check", "-rules", testdata + "rules/cert-manager.yaml", "-target", "v1.25", "-"},
			"apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n---\napiVersion: cert-manager.io/v1alpha2\nkind: Certificate\nmetadata: {name: tls}\n",
			4, []string{"v1.40.0", "cert-manager.io/v1alpha2", "not known to be served"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tt.args, strings.NewReader(tt.stdin), &out, &errOut)
			assert.Equal(t, tt.wantCode, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
			for _, w := range tt.wantOut {
				assert.Contains(t, out.String(), w)
			}
			if tt.wantStderr != "" {
				assert.Contains(t, errOut.String(), tt.wantStderr)
			}
		})
	}
}

func TestRunJSON(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check", "-o", "json", "-target", "v1.22", testdata + "manifests/cluster-dump.json"}, nil, &out, &errOut)
	assert.Equal(t, 3, code, errOut.String())
	var rep struct {
		Targets map[string]string `json:"target-versions"`
		Items   []struct {
			API struct {
				Kind string `json:"kind"`
			} `json:"api"`
			Item  int    `json:"item"`
			State string `json:"state"`
		} `json:"items"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	assert.Equal(t, "v1.22.0", rep.Targets["k8s"])
	require.Len(t, rep.Items, 1)
	assert.Equal(t, "ClusterRole", rep.Items[0].API.Kind)
	assert.Equal(t, 1, rep.Items[0].Item)
	assert.Equal(t, "removed", rep.Items[0].State)
}

// A chart that fails to render is an error entry; the other paths are
// still checked.
func TestRunBrokenChart(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "templates"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte("apiVersion: v2\nname: broken\nversion: 0.1.0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "templates", "x.yaml"), []byte("{{ .Values.nope.deeper }}\n"), 0o644))
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check", "-target", "v1.25", dir, "-"}, strings.NewReader("apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n"), &out, &errOut)
	assert.Equal(t, 3, code, out.String())
	assert.Contains(t, out.String(), "rendering chart")
	assert.Contains(t, out.String(), "CronJob")
}

func TestRunFlux(t *testing.T) {
	const repo = "../../deprecation/gitops/testdata/fleet"
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check", "-flux", repo}, nil, &out, &errOut)
	assert.Equal(t, 4, code, "PodSecurityPolicy has no replacement; stderr: %s", errOut.String())
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
		assert.Contains(t, out.String(), want)
	}

	// -only builds what one Kustomization needs; JSON output.
	out.Reset()
	code = run(context.Background(), []string{"check", "-flux", repo, "-only", "flux-system/apps", "-o", "json"}, nil, &out, &errOut)
	assert.Equal(t, 4, code)
	var got struct {
		Nodes []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"nodes"`
		Exit int `json:"exitCode"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
	var ids []string
	for _, n := range got.Nodes {
		ids = append(ids, n.ID+"="+n.Status)
	}
	// apps depends on infrastructure, and flux-system renders it;
	// nothing else is built.
	assert.Equal(t, []string{"flux-system/apps=ok", "flux-system/flux-system=ok", "flux-system/infrastructure=ok"}, ids)
	assert.Equal(t, 4, got.Exit)

	code = run(context.Background(), []string{"check", "-flux", repo, "-only", "nope"}, nil, &out, &errOut)
	assert.Equal(t, 1, code)
	code = run(context.Background(), []string{"check", "-flux", repo, "-o", "yaml"}, nil, &out, &errOut)
	assert.Equal(t, 1, code)
}

// CRDs and Secrets are left out of the objects unless asked for; charts
// see the APIs given with -api-versions.
func TestRunFluxFlags(t *testing.T) {
	const repo = "../../deprecation/gitops/testdata/platform"
	type node struct {
		ID      string `json:"id"`
		Objects []struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Name       string `json:"name"`
		} `json:"objects"`
	}
	objects := func(t *testing.T, id string, args ...string) []string {
		var out, errOut bytes.Buffer
		args = append([]string{"check", "-target", "v1.29", "-o", "json", "-flux", repo}, args...)
		code := run(context.Background(), args, nil, &out, &errOut)
		require.NotEqual(t, 1, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
		var got struct{ Nodes []node }
		require.NoError(t, json.Unmarshal(out.Bytes(), &got), out.String())
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
