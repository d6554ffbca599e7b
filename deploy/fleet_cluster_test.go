package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
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
// signed with the chart's generated key is accepted, none is refused, a
// dinosaur created through the API becomes ready, and a new manager Pod
// finds it in the store on the state volume.
//
//	CI=true nice go test -count=1 -run TestFleetManagerOnCluster -v ./deploy/
func TestFleetManagerOnCluster(t *testing.T) {
	node, cs, ns := onNode(t, "fleetkit/fleet-manager:latest")
	start := time.Now()
	// The store outlives the Pod on a hostPath (one node).
	state := t.TempDir()
	require.NoError(t, os.Chown(state, 65534, 65534))
	helmInstall(t, helmConfig(t, node, ns), ns, "fm", managerChart, true, map[string]any{"config": map[string]any{"interval": "1s"},
		"stateVolume": map[string]any{"hostPath": map[string]any{"path": state, "type": "Directory"}}})
	t.Logf("helm install fleet-manager: available %s after the install began", time.Since(start).Round(time.Millisecond))

	keys, err := cs.CoreV1().Secrets(ns).Get(t.Context(), "fm-fleet-manager-keys", metav1.GetOptions{})
	require.NoError(t, err)
	tok, err := auth.NewHS256Token(keys.Data["hs256"], "alice", "", time.Hour)
	require.NoError(t, err)
	svc, err := cs.CoreV1().Services(ns).Get(t.Context(), "fm-fleet-manager", metav1.GetOptions{})
	require.NoError(t, err)
	api := fmt.Sprintf("http://%s:%d/api/dinosaurs_mgmt/v1", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)

	call := fleetAPI{t, api}.call

	// Ready Pod, but kube-proxy may not route the Service to it yet.
	deadline := time.Now().Add(clusterWait)
	for {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d/health", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port))
		if err == nil {
			resp.Body.Close()
			break
		}
		require.True(t, time.Now().Before(deadline), "the Service does not answer within %s: %v", clusterWait, err)
		time.Sleep(100 * time.Millisecond)
	}

	code, _ := call(http.MethodGet, "/dinosaurs", "", nil)
	assert.Equal(t, http.StatusUnauthorized, code, "no token")
	code, list := call(http.MethodGet, "/dinosaurs", tok, nil)
	require.Equal(t, http.StatusOK, code, "%v", list)
	assert.Equal(t, "DinosaurRequestList", list["kind"])

	created := time.Now()
	code, d := call(http.MethodPost, "/dinosaurs?async=true", tok, map[string]any{"name": "rex"})
	require.Equal(t, http.StatusAccepted, code, "%v", d)
	id := d["id"].(string)
	deadline = time.Now().Add(clusterWait)
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

	// A new manager Pod (the old one deleted) reads the same SQLite file on
	// the state volume: the dinosaur is still there, and ready.
	pods, err := cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=fm"})
	require.NoError(t, err)
	require.Len(t, pods.Items, 1)
	old := pods.Items[0].Name
	require.NoError(t, cs.CoreV1().Pods(ns).Delete(t.Context(), old, metav1.DeleteOptions{}))
	deleted := time.Now()
	deadline = time.Now().Add(clusterWait)
	for {
		pods, err = cs.CoreV1().Pods(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=fm"})
		require.NoError(t, err)
		if len(pods.Items) == 1 && pods.Items[0].Name != old && pods.Items[0].Status.PodIP != "" {
			code, d = call(http.MethodGet, "/dinosaurs/"+id, tok, nil)
			if code == http.StatusOK && d["status"] == "ready" {
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "the dinosaur not ready on a new Pod within %s: %d %v", clusterWait, code, d)
		time.Sleep(200 * time.Millisecond)
	}
	assert.Equal(t, "rex", d["name"])
	t.Logf("manager Pod deleted: the new one serves dinosaur %s (ready) from the same store %s later", id, time.Since(deleted).Round(time.Millisecond))

	resp, err := http.Get(fmt.Sprintf("http://%s:%d/metrics", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port))
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// fleetAPI is a fleet manager's API through its Service: base is
// http://<ClusterIP>:<port>/api/<kind>s_mgmt/v1.
type fleetAPI struct {
	t    *testing.T
	base string
}

// call calls the API with a bearer token ("": none) and a JSON body (nil:
// none); the status is 0 when nothing answered.
func (a fleetAPI) call(method, path, token string, body any) (int, map[string]any) {
	t := a.t
	t.Helper()
	var in io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, a.base+path, in)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		// While the Service moves to a new Pod: the callers wait on a
		// status, or fail on 0.
		t.Logf("%s %s: %v", method, path, err)
		return 0, nil
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}
