package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckClusterRealAPIServer runs `kdave check -cluster` against a real
// kube-apiserver 1.37 holding helmtest's releases: the Helm releases'
// manifests and hooks, and the live objects whose managed fields show they
// were written through resource.k8s.io/v1beta1 (Helm installed them so).
// managers matches the managers a source names.
var managers = regexp.MustCompile(`\(managed fields of [^)]*\)`)

func TestCheckClusterRealAPIServer(t *testing.T) {
	srv := cluster(t)
	type item struct {
		FilePath, Name, Namespace, State string
		API                              struct{ Version, Kind string }
	}
	check := func(t *testing.T, args ...string) (int, []string, string) {
		t.Helper()
		code, out, errOut := runFull(append([]string{"check", "-cluster", "-o", "json"}, args...), "")
		var doc struct {
			Items   []item
			Targets map[string]string `json:"target-versions"`
			Errors  []struct{ Source string }
		}
		require.NoError(t, json.Unmarshal([]byte(out), &doc), "stdout:\n%s\nstderr:\n%s", out, errOut)
		var got []string
		for _, it := range doc.Items {
			src := it.FilePath
			switch {
			case strings.HasPrefix(src, "secret/"):
				// secret/<ns>/sh.helm.release.v1.<name>.v<revision>/...
				parts := strings.Split(src, "/")
				name := strings.TrimPrefix(parts[2], "sh.helm.release.v1.")
				src = "release " + parts[1] + "/" + name[:strings.LastIndex(name, ".v")]
			default:
				// The manager is the installing program's name.
				src = "live " + managers.ReplaceAllString(src, "(managed fields)")
			}
			got = append(got, src+": "+it.API.Version+" "+it.API.Kind+" "+it.Namespace+"/"+it.Name+" "+it.State)
		}
		sort.Strings(got)
		assert.Equal(t, "v1.37.1", doc.Targets["k8s"], "the cluster's version")
		return code, got, errOut
	}

	code, got, errOut := check(t, "-kubeconfig", srv.Kubeconfig())
	assert.Equal(t, 3, code, errOut)
	assert.Equal(t, []string{
		"live deviceclasses.resource.k8s.io/billing-web-gpu (managed fields): resource.k8s.io/v1beta1 DeviceClass /billing-web-gpu removal-soon",
		"live deviceclasses.resource.k8s.io/shop-web-gpu (managed fields): resource.k8s.io/v1beta1 DeviceClass /shop-web-gpu removal-soon",
		"live resourceclaimtemplates.resource.k8s.io/billing/web-gpu (managed fields): resource.k8s.io/v1beta1 ResourceClaimTemplate billing/web-gpu removal-soon",
		"live resourceclaimtemplates.resource.k8s.io/shop/web-gpu (managed fields): resource.k8s.io/v1beta1 ResourceClaimTemplate shop/web-gpu removal-soon",
		"release billing/legacy: extensions/v1beta1 Ingress /legacy removed",
		"release billing/legacy: policy/v1beta1 PodDisruptionBudget /legacy-hook removed",
		"release billing/web: resource.k8s.io/v1beta1 DeviceClass /billing-web-gpu removal-soon",
		"release billing/web: resource.k8s.io/v1beta1 ResourceClaimTemplate /web-gpu removal-soon",
		"release shop/web: resource.k8s.io/v1beta1 DeviceClass /shop-web-gpu removal-soon",
		"release shop/web: resource.k8s.io/v1beta1 ResourceClaimTemplate /web-gpu removal-soon",
	}, got)

	// pluto's detect-api-resources: the live objects only, one namespace,
	// a context picked from a kubeconfig whose current one is elsewhere.
	kc, err := os.ReadFile(srv.Kubeconfig())
	require.NoError(t, err)
	other := filepath.Join(t.TempDir(), "config")
	cfg := strings.Replace(string(kc), "current-context: kubetest", "current-context: nowhere", 1)
	require.NoError(t, os.WriteFile(other, []byte(cfg), 0o600))
	code, _, errOut = runFull([]string{"detect-api-resources", "--kubeconfig", other}, "")
	assert.Equal(t, 1, code, "the current context does not exist")
	assert.Contains(t, errOut, "nowhere")

	_, got, _ = check(t, "-cluster-sources", "api-resources", "-n", "shop", "-kubeconfig", other, "--kube-context", "kubetest")
	assert.Equal(t, []string{
		"live resourceclaimtemplates.resource.k8s.io/shop/web-gpu (managed fields): resource.k8s.io/v1beta1 ResourceClaimTemplate shop/web-gpu removal-soon",
	}, got)
	_, got, _ = check(t, "-cluster-sources", "helm", "-namespace", "billing", "-kubeconfig", srv.Kubeconfig(), "-only-show-removed")
	assert.Len(t, got, 2, "the legacy release's removed APIs")
}
