package deploy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/fleet/agent/agenttest"
	"github.com/fleetkit/fleetkit/fleet/auth"
	"github.com/fleetkit/fleetkit/internal/kubetest"
)

// clusterToken prints cluster's agent token as the README does (kubectl
// exec of the manager's cluster-token): the manager's image runs
// cluster-token in a Pod of ns, with the release's config and keys Secret
// mounted where the manager has them, and the token is its log.
func clusterToken(t *testing.T, cs clientset.Interface, ns, release, cluster string) string {
	t.Helper()
	name := "cluster-token-" + cluster
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			RestartPolicy:                corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ref(false),
			SecurityContext:              &corev1.PodSecurityContext{FSGroup: ref[int64](65534)},
			Containers: []corev1.Container{{
				Name:            "cluster-token",
				Image:           "fleetkit/fleet-manager:latest",
				ImagePullPolicy: corev1.PullIfNotPresent,
				Args: []string{"cluster-token", "-config", "/etc/fleetkit/config/config.yaml",
					"-kind", "dinosaur", "-cluster", cluster},
				SecurityContext: &corev1.SecurityContext{RunAsNonRoot: ref(true), RunAsUser: ref[int64](65534),
					ReadOnlyRootFilesystem: ref(true), AllowPrivilegeEscalation: ref(false),
					Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "config", MountPath: "/etc/fleetkit/config", ReadOnly: true},
					{Name: "keys", MountPath: "/etc/fleetkit/keys", ReadOnly: true},
				},
			}},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: release + "-fleet-manager"}}}},
				{Name: "keys", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
					SecretName: release + "-fleet-manager-keys", DefaultMode: ref[int32](0o440)}}},
			},
		},
	}
	_, err := cs.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{})
	require.NoError(t, err)
	deadline := time.Now().Add(clusterWait)
	for {
		p, err := cs.CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
		require.NoError(t, err)
		if p.Status.Phase == corev1.PodSucceeded {
			break
		}
		require.NotEqual(t, corev1.PodFailed, p.Status.Phase, "cluster-token %s failed", cluster)
		require.True(t, time.Now().Before(deadline), "cluster-token %s not done within %s: %s", cluster, clusterWait, p.Status.Phase)
		time.Sleep(200 * time.Millisecond)
	}
	out, err := cs.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(t.Context())
	require.NoError(t, err)
	tok := strings.TrimSpace(string(out))
	require.True(t, strings.HasPrefix(tok, "fkc1."+cluster+"."), "cluster-token printed a token of %s", cluster)
	return tok
}

// TestFleetAgentOnCluster is the README's path for the agent data plane,
// on the real test node: deploy/fleet-manager installed with
// agent.enabled and two agent clusters in its config, each cluster's
// token printed by the manager's cluster-token (with the release's keys
// Secret), and deploy/fleet-agent installed twice — two releases, each in
// its own namespace with its own cluster ID and token. The two agents on
// the one node stand in for two data-plane clusters: each sees only its
// namespace, as it would its own cluster. The node has no cluster DNS:
// the agents reach the manager at its Service's ClusterIP and report
// instances at theirs (hostMode clusterip).
//
// Both clusters become ready on their agents' heartbeats; a token grants
// its own cluster only; dinosaurs created through the manager's Service
// are placed on both (dp-1's agent reports 1 unit of capacity), become
// ready, and each answers GET /health/<id> at its reported host from its
// real Pod; deleting one removes its objects and Pod.
//
//	CI=true nice go test -count=1 -run TestFleetAgentOnCluster -v ./deploy/
func TestFleetAgentOnCluster(t *testing.T) {
	node, cs, ns := onNode(t, "fleetkit/fleet-manager:latest", "fleetkit/fleet-agent:latest")
	start := time.Now()
	clusters := []string{"dp-1", "dp-2"}
	var cfgClusters []any
	for _, id := range clusters {
		cfgClusters = append(cfgClusters, map[string]any{"id": id, "cloud_provider": "aws", "region": "us-east-1", "multi_az": true})
	}
	helmInstall(t, helmConfig(t, node, ns), ns, "fm", managerChart, true, map[string]any{
		"agent":  map[string]any{"enabled": true},
		"config": map[string]any{"interval": "1s", "clusters": cfgClusters}})
	t.Logf("helm install fleet-manager (agent data plane): available %s after the install began", time.Since(start).Round(time.Millisecond))

	svc, err := cs.CoreV1().Services(ns).Get(t.Context(), "fm-fleet-manager", metav1.GetOptions{})
	require.NoError(t, err)
	manager := fmt.Sprintf("http://%s:%d", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
	api := manager + "/api/dinosaurs_mgmt/v1"
	keys, err := cs.CoreV1().Secrets(ns).Get(t.Context(), "fm-fleet-manager-keys", metav1.GetOptions{})
	require.NoError(t, err)
	require.NotEmpty(t, keys.Data["token-secret"], "the chart generated the agents' token key")
	jwt, err := auth.NewHS256Token(keys.Data["hs256"], "alice", "", time.Hour)
	require.NoError(t, err)

	call := fleetAPI{t, api}.call
	// waitUntil polls cond until it holds, failing after clusterWait.
	waitUntil := func(what string, cond func() bool) time.Duration {
		t.Helper()
		begin := time.Now()
		for !cond() {
			require.True(t, time.Since(begin) < clusterWait, "not within %s: %s", clusterWait, what)
			time.Sleep(200 * time.Millisecond)
		}
		return time.Since(begin)
	}
	// Ready Pod, but kube-proxy may not route the Service to it yet.
	waitUntil("the manager's Service answering", func() bool {
		resp, err := http.Get(manager + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return true
	})

	// Each cluster's token, and an agent release for each, in its own
	// namespace (dp-1's reporting 1 unit: placement fills it, then dp-2).
	tokens, nss := map[string]string{}, map[string]string{}
	for _, id := range clusters {
		tokens[id] = clusterToken(t, cs, ns, "fm", id)
		// No agent yet: the cluster waits for one (not ready).
		code, c := call(http.MethodGet, "/agent-clusters/"+id, tokens[id], nil)
		require.Equal(t, http.StatusOK, code, "%v", c)
		assert.NotEqual(t, "ready", c["status"], "%s is ready before its agent runs", id)
		t.Logf("cluster %s before its agent: %v", id, c["status"])
		nss[id] = kubetest.Namespace(t, node)
		capacity := 0
		if id == "dp-1" {
			capacity = 1
		}
		began := time.Now()
		helmInstall(t, helmConfig(t, node, nss[id]), nss[id], id, agentChart, true, map[string]any{
			"controlPlane": manager, "clusterID": id, "token": map[string]any{"value": tokens[id]},
			"hostMode": "clusterip", "heartbeat": "2s", "capacity": capacity})
		t.Logf("helm install fleet-agent %s in %s: available after %s", id, nss[id], time.Since(began).Round(time.Millisecond))
	}
	t.Cleanup(func() {
		if t.Failed() {
			for _, id := range clusters {
				dumpNamespace(t, cs, nss[id])
				if objs, err := agenttest.Objects(context.Background(), cs, nss[id], ""); err == nil {
					t.Logf("cluster %s (namespace %s): %v", id, nss[id], objs)
				}
			}
		}
	})

	// Both clusters ready on their agents' heartbeats, each read with its
	// own token; a token does not read the other cluster.
	for _, id := range clusters {
		took := waitUntil(id+" ready", func() bool {
			code, c := call(http.MethodGet, "/agent-clusters/"+id, tokens[id], nil)
			return code == http.StatusOK && c["status"] == "ready"
		})
		t.Logf("cluster %s ready %s after its agent was available", id, took.Round(time.Millisecond))
	}
	code, body := call(http.MethodGet, "/agent-clusters/dp-2", tokens["dp-1"], nil)
	assert.Equal(t, http.StatusForbidden, code, "dp-1's token reads dp-2: %v", body)
	code, _ = call(http.MethodGet, "/agent-clusters/dp-1", jwt, nil)
	assert.Equal(t, http.StatusUnauthorized, code, "a user's token is no cluster token")

	// create creates a dinosaur and waits until it is placed: its cluster.
	create := func(name string) (id, cluster string) {
		t.Helper()
		code, d := call(http.MethodPost, "/dinosaurs?async=true", jwt, map[string]any{"name": name})
		require.Equal(t, http.StatusAccepted, code, "%v", d)
		id = d["id"].(string)
		waitUntil(name+" placed", func() bool {
			code, d = call(http.MethodGet, "/dinosaurs/"+id, jwt, nil)
			cluster, _ = d["cluster_id"].(string)
			return code == http.StatusOK && cluster != ""
		})
		return id, cluster
	}
	created := time.Now()
	x1, c1 := create("x1")
	x2, c2 := create("x2")
	assert.Equal(t, []string{"dp-1", "dp-2"}, []string{c1, c2}, "dp-1 holds 1 unit, then dp-2")

	hosts := map[string]string{}
	for _, x := range []struct{ id, cluster string }{{x1, c1}, {x2, c2}} {
		var d map[string]any
		waitUntil(x.id+" ready", func() bool {
			var code int
			code, d = call(http.MethodGet, "/dinosaurs/"+x.id, jwt, nil)
			return code == http.StatusOK && d["status"] == "ready"
		})
		host, _ := d["host"].(string)
		hosts[x.id] = host
		t.Logf("dinosaur %s on %s: ready at %s, %s after the first create", x.id, x.cluster, host, time.Since(created).Round(time.Millisecond))

		// Its objects in its cluster's namespace only, its Pod ready, and
		// the reported host is its Service's ClusterIP.
		objs, err := agenttest.Objects(t.Context(), cs, nss[x.cluster], x.id)
		require.NoError(t, err)
		assert.Len(t, objs, 4, "Secret, Deployment, Service, Pod: %v", objs)
		for _, other := range clusters {
			if other != x.cluster {
				objs, err := agenttest.Objects(t.Context(), cs, nss[other], x.id)
				require.NoError(t, err)
				assert.Empty(t, objs, "nothing of %s on %s", x.id, other)
			}
		}
		pods, err := agenttest.Pods(t.Context(), cs, nss[x.cluster], x.id)
		require.NoError(t, err)
		assert.Len(t, pods, 1)
		for name, ready := range pods {
			assert.True(t, ready, "Pod %s ready", name)
		}
		isvc, err := cs.CoreV1().Services(nss[x.cluster]).Get(t.Context(), "dinosaur-"+x.id, metav1.GetOptions{})
		require.NoError(t, err)
		assert.Equal(t, net.JoinHostPort(isvc.Spec.ClusterIP, "8080"), host)

		took := waitUntil(x.id+" answering at "+host, func() bool { return agenttest.Answers(t.Context(), host, x.id) })
		t.Logf("dinosaur %s answers GET /health/%s at %s (%s after ready)", x.id, x.id, host, took.Round(time.Millisecond))
	}

	// Deleting x1 removes its objects and its Pod from dp-1; x2 answers
	// throughout.
	code, _ = call(http.MethodDelete, "/dinosaurs/"+x1+"?async=true", jwt, nil)
	require.Equal(t, http.StatusAccepted, code)
	deleted := time.Now()
	waitUntil(x1+" gone from the API", func() bool {
		code, _ := call(http.MethodGet, "/dinosaurs/"+x1, jwt, nil)
		return code == http.StatusNotFound
	})
	waitUntil(x1+"'s objects and Pod gone from dp-1", func() bool {
		objs, err := agenttest.Objects(t.Context(), cs, nss["dp-1"], x1)
		require.NoError(t, err)
		return len(objs) == 0
	})
	t.Logf("dinosaur %s deleted: gone, objects and Pod removed, %s after the DELETE", x1, time.Since(deleted).Round(time.Millisecond))
	assert.True(t, agenttest.Answers(t.Context(), hosts[x2], x2), "x2 answers after x1 is gone")
	code, d := call(http.MethodGet, "/dinosaurs/"+x2, jwt, nil)
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "ready", d["status"])
}

// ref returns a pointer to v, for the API's optional fields.
func ref[T any](v T) *T { return &v }
