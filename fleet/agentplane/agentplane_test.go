package agentplane_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/agentapi"
	"github.com/fleetkit/fleetkit/fleet/agentplane"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/inmem"
	"github.com/fleetkit/fleetkit/fleet/storetest"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

// agent plays a cluster's agent against the agent API, in process (the
// handler, no network: time is synctest's).
type agent struct {
	t       *testing.T
	api     http.Handler
	cluster string
}

func (a *agent) call(method, suffix string, body any) *httptest.ResponseRecorder {
	a.t.Helper()
	b, err := json.Marshal(body)
	require.NoError(a.t, err)
	r := httptest.NewRequest(method, "/api/dinosaurs_mgmt/v1/agent-clusters/"+a.cluster+suffix, strings.NewReader(string(b)))
	r.Header.Set("Authorization", "Bearer "+agentapi.Token(secret, "dinosaur", a.cluster))
	w := httptest.NewRecorder()
	a.api.ServeHTTP(w, r)
	require.Less(a.t, w.Code, 300, w.Body.String())
	return w
}

func (a *agent) heartbeat(units int) {
	a.call(http.MethodPut, "/status", map[string]any{"phase": "ready", "capacity": map[string]int{"units": units}, "agent_version": "test"})
}

// desired returns the IDs of the instances the control plane wants here.
func (a *agent) desired() []string {
	var list struct {
		Items []struct {
			ID string `json:"id"`
		} `json:"items"`
	}
	require.NoError(a.t, json.Unmarshal(a.call(http.MethodGet, "/dinosaurs", nil).Body.Bytes(), &list))
	var ids []string
	for _, i := range list.Items {
		ids = append(ids, i.ID)
	}
	return ids
}

func (a *agent) report(r map[string]fleet.InstanceReport) {
	a.call(http.MethodPut, "/dinosaurs/status", r)
}

type fixture struct {
	st  *inmem.Store
	svc *fleet.Service
	dp  *agentplane.DataPlane
	api *agentapi.Handler
}

// newFixture runs a Service on the agent data plane with clusters ids,
// until the test ends. Call it inside a synctest bubble.
func newFixture(t *testing.T, ids ...string) *fixture {
	st := inmem.NewStore()
	dp, err := agentplane.New(st, agentplane.Options{Kind: "dinosaur"})
	require.NoError(t, err)
	var clusters []cluster.Cluster
	for _, id := range ids {
		clusters = append(clusters, cluster.Cluster{ID: id, CloudProvider: "aws", Region: "us-east-1", MultiAZ: true, Status: cluster.Accepted})
	}
	svc, err := fleet.New(st, fleet.Options{Kind: fleet.Dinosaur, Clusters: clusters, DataPlane: dp, ClusterProvider: dp,
		Interval: time.Second, RetryInterval: time.Second, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	api, err := agentapi.New(st, agentapi.Options{Kind: fleet.Dinosaur, Secret: secret})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, svc.Run(ctx)) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	synctest.Wait() // Run has created the clusters
	return &fixture{st: st, svc: svc, dp: dp, api: api}
}

func (f *fixture) agent(t *testing.T, id string) *agent { return &agent{t: t, api: f.api, cluster: id} }

// eventually waits (in fake time) until cond holds, at most a minute.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("not within a minute: %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (f *fixture) inst(t *testing.T, id string) fleet.Instance {
	t.Helper()
	i, err := f.st.GetInstance(context.Background(), id)
	require.NoError(t, err)
	return i
}

func (f *fixture) clusterStatus(t *testing.T, id string) cluster.Status {
	t.Helper()
	c, err := f.st.GetCluster(context.Background(), id)
	require.NoError(t, err)
	return c.Status
}

func (f *fixture) create(t *testing.T, name string) string {
	t.Helper()
	i := storetest.Instance(name, "alice", "")
	require.NoError(t, f.svc.Store().CreateInstance(context.Background(), i))
	return i.ID
}

// TestLifecycle: a cluster waits for its agent's first heartbeat; an
// instance becomes ready with the host its agent reports; an agent gone
// silent makes its cluster unschedulable without failing its instances;
// a delete completes once the agent stops reporting the instance.
func TestLifecycle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, "a")
		a := f.agent(t, "a")
		time.Sleep(10 * time.Second)
		assert.Equal(t, cluster.WaitingForFleetshard, f.clusterStatus(t, "a"), "no heartbeat yet")
		rex := f.create(t, "rex")
		time.Sleep(10 * time.Second)
		assert.Equal(t, fleet.StatusAccepted, f.inst(t, rex).Status, "no ready cluster")
		assert.Empty(t, a.desired())

		a.heartbeat(0)
		eventually(t, "cluster ready", func() bool { return f.clusterStatus(t, "a") == cluster.Ready })
		eventually(t, "rex desired", func() bool { return len(a.desired()) == 1 })
		assert.Equal(t, []string{rex}, a.desired())
		assert.Equal(t, fleet.StatusProvisioning, f.inst(t, rex).Status)
		a.report(map[string]fleet.InstanceReport{rex: {Phase: "installing"}})
		time.Sleep(10 * time.Second)
		assert.Equal(t, fleet.StatusProvisioning, f.inst(t, rex).Status, "installing is not ready")
		a.report(map[string]fleet.InstanceReport{rex: {Phase: "ready", Host: "dinosaur-rex.ns.svc:8080"}})
		eventually(t, "rex ready", func() bool { return f.inst(t, rex).Status == fleet.StatusReady })
		assert.Equal(t, "dinosaur-rex.ns.svc:8080", f.inst(t, rex).Host)

		// Silent for longer than the stale period: the cluster takes no
		// new instance, and rex stays ready.
		ok, err := f.dp.Schedulable(context.Background(), "a")
		require.NoError(t, err)
		require.True(t, ok)
		time.Sleep(agentplane.DefaultStaleAfter + time.Second)
		ok, err = f.dp.Schedulable(context.Background(), "a")
		require.NoError(t, err)
		assert.False(t, ok, "stale")
		bob := f.create(t, "bob")
		time.Sleep(time.Minute)
		assert.Equal(t, fleet.StatusAccepted, f.inst(t, bob).Status, "an unschedulable cluster takes nothing")
		assert.Equal(t, fleet.StatusReady, f.inst(t, rex).Status, "a silent agent fails nothing")
		assert.Empty(t, f.inst(t, rex).FailedReason)
		assert.Equal(t, cluster.Ready, f.clusterStatus(t, "a"))
		a.heartbeat(0)
		eventually(t, "bob placed", func() bool { return f.inst(t, bob).Status == fleet.StatusProvisioning })

		// Delete rex: done once the agent no longer reports it.
		_, err = f.svc.Store().UpdateInstance(context.Background(), fleet.Update{ID: rex, From: fleet.StatusReady, To: fleet.StatusDeprovision})
		require.NoError(t, err)
		assert.Equal(t, []string{bob}, a.desired(), "rex is no longer desired")
		a.report(map[string]fleet.InstanceReport{rex: {Phase: "ready", Host: "dinosaur-rex.ns.svc:8080"}, bob: {Phase: "installing"}})
		time.Sleep(10 * time.Second)
		assert.Equal(t, fleet.StatusDeprovision, f.inst(t, rex).Status, "still reported: not removed")
		a.report(map[string]fleet.InstanceReport{bob: {Phase: "installing"}})
		eventually(t, "rex deleted", func() bool { return f.inst(t, rex).DeletedAt != nil })
	})
}

// TestFailedReport: an instance its agent reports failed fails with the
// agent's reason.
func TestFailedReport(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, "a")
		a := f.agent(t, "a")
		a.heartbeat(0)
		rex := f.create(t, "rex")
		eventually(t, "rex desired", func() bool { return len(a.desired()) == 1 })
		a.report(map[string]fleet.InstanceReport{rex: {Phase: "failed", Reason: "image pull failed"}})
		eventually(t, "rex failed", func() bool { return f.inst(t, rex).Status == fleet.StatusFailed })
		assert.Equal(t, "image pull failed", f.inst(t, rex).FailedReason)
		assert.Empty(t, a.desired(), "a failed instance is not desired")
	})
}

// TestPlacementAcrossClusters: instances go to both ready agent clusters
// within the capacity their agents report, never to a stale one.
func TestPlacementAcrossClusters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, "a", "b")
		a, b := f.agent(t, "a"), f.agent(t, "b")
		a.heartbeat(2)
		b.heartbeat(2)
		eventually(t, "clusters ready", func() bool {
			return f.clusterStatus(t, "a") == cluster.Ready && f.clusterStatus(t, "b") == cluster.Ready
		})
		var ids []string
		for _, n := range []string{"i1", "i2", "i3", "i4", "i5"} {
			ids = append(ids, f.create(t, n))
		}
		eventually(t, "four placed", func() bool { return len(a.desired())+len(b.desired()) == 4 })
		time.Sleep(5 * time.Second)
		assert.Len(t, a.desired(), 2, "capacity 2 reported by a's agent")
		assert.Len(t, b.desired(), 2, "capacity 2 reported by b's agent")
		placed := map[string]bool{}
		for _, id := range append(a.desired(), b.desired()...) {
			placed[id] = true
		}
		var waiting string
		for _, id := range ids {
			if !placed[id] {
				waiting = id
			}
		}
		require.NotEmpty(t, waiting)
		assert.Equal(t, fleet.StatusAccepted, f.inst(t, waiting).Status, "no capacity left")

		// a's agent reports more room: the waiting instance goes there.
		a.heartbeat(10)
		eventually(t, "placed on a", func() bool { return f.inst(t, waiting).ClusterID == "a" })
		// a goes silent: though it has room, the next instance goes to b,
		// which its agent says has room too.
		time.Sleep(agentplane.DefaultStaleAfter + time.Second)
		b.heartbeat(10)
		six := f.create(t, "i6")
		eventually(t, "i6 placed", func() bool { return f.inst(t, six).ClusterID != "" })
		assert.Equal(t, "b", f.inst(t, six).ClusterID, "the stale cluster a is skipped")
		assert.Len(t, a.desired(), 3)
	})
}
