package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetkit/fleetkit/fleet/auth"
)

// TestFleetManagerOnCluster installs the fleet-manager chart with its
// defaults (SQLite on the Pod's volume, instances as processes in its Pod)
// into the real test node and uses its API through the Service: a token
// signed with the chart's generated key is accepted, none is refused, and
// a dinosaur created through the API becomes ready.
//
//	CI=true nice go test -count=1 -run TestFleetManagerOnCluster -v ./deploy/
func TestFleetManagerOnCluster(t *testing.T) {
	node, cs, ns := onNode(t, "fleetkit/fleet-manager:latest")
	start := time.Now()
	helmInstall(t, helmConfig(t, node, ns), ns, "fm", managerChart, true, map[string]any{"config": map[string]any{"interval": "1s"}})
	t.Logf("helm install fleet-manager: available %s after the install began", time.Since(start).Round(time.Millisecond))

	keys, err := cs.CoreV1().Secrets(ns).Get(t.Context(), "fm-fleet-manager-keys", metav1.GetOptions{})
	require.NoError(t, err)
	tok, err := auth.NewHS256Token(keys.Data["hs256"], "alice", "", time.Hour)
	require.NoError(t, err)
	svc, err := cs.CoreV1().Services(ns).Get(t.Context(), "fm-fleet-manager", metav1.GetOptions{})
	require.NoError(t, err)
	api := fmt.Sprintf("http://%s:%d/api/dinosaurs_mgmt/v1", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)

	call := func(method, path, token string, body any) (int, map[string]any) {
		t.Helper()
		var in io.Reader
		if body != nil {
			b, err := json.Marshal(body)
			require.NoError(t, err)
			in = bytes.NewReader(b)
		}
		req, err := http.NewRequestWithContext(t.Context(), method, api+path, in)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}

	code, _ := call(http.MethodGet, "/dinosaurs", "", nil)
	assert.Equal(t, http.StatusUnauthorized, code, "no token")
	code, list := call(http.MethodGet, "/dinosaurs", tok, nil)
	require.Equal(t, http.StatusOK, code, "%v", list)
	assert.Equal(t, "DinosaurList", list["kind"])

	created := time.Now()
	code, d := call(http.MethodPost, "/dinosaurs?async=true", tok, map[string]any{"name": "rex"})
	require.Equal(t, http.StatusAccepted, code, "%v", d)
	id := d["id"].(string)
	deadline := time.Now().Add(clusterWait)
	for {
		code, d = call(http.MethodGet, "/dinosaurs/"+id, tok, nil)
		if code == http.StatusOK && d["status"] == "ready" {
			break
		}
		require.True(t, time.Now().Before(deadline), "not ready within %s: %d %v", clusterWait, code, d)
		time.Sleep(200 * time.Millisecond)
	}
	assert.NotEmpty(t, d["host"])
	t.Logf("dinosaur %s: accepted → ready in %s (interval 1s)", id, time.Since(created).Round(time.Millisecond))

	resp, err := http.Get(fmt.Sprintf("http://%s:%d/metrics", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}
