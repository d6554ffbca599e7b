package storetest

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/fleettest"
	"github.com/fleetkit/fleetkit/fleet/quota"
)

// waitClusterReady waits until cluster id is ready.
func waitClusterReady(t *testing.T, h *Harness, id string) {
	t.Helper()
	require.Eventually(t, func() bool {
		c, err := h.Store.GetCluster(context.Background(), id)
		return err == nil && c.Status == cluster.Ready
	}, waitFor, 10*time.Millisecond)
}

// running reports whether the harness's data plane runs instance id.
func running(t *testing.T, h *Harness, id string) bool {
	t.Helper()
	insts, err := h.DP.Running(context.Background())
	require.NoError(t, err)
	return slices.ContainsFunc(insts, func(i fleet.Instance) bool { return i.ID == id })
}

// testSizeUnits: a plan's size consumes its capacity units (Options.Units)
// of the quota (max_allowed_instances counts units, as the original's
// streaming units) and of its cluster's capacity; the instance records
// them, and instance_types shows them.
func testSizeUnits(t *testing.T, newStore NewStore) {
	q, err := quota.ParseList([]byte(`
registered_users:
  - username: alice
    max_allowed_instances: 3
default:
  max_allowed_instances: 10
`))
	require.NoError(t, err)
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) {
		o.Units = map[string]int{"standard.x2": 2}
		o.API.Sizes = map[string][]string{"standard": {"x1", "x2"}}
		o.API.Quota = q
		o.Clusters = []cluster.Cluster{{ID: "small", CloudProvider: "aws", Region: "us-east-1", MultiAZ: true, Capacity: 3}}
		o.Timeouts = map[fleet.Status]time.Duration{fleet.StatusAccepted: 3 * time.Second}
	})
	r := h.Client.Do(t, alice, http.MethodGet, "instance_types/aws/us-east-1", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.JSONEq(t, `{"instance_types": [
		{"id": "standard", "display_name": "Standard", "sizes": [
			{"id": "x1", "display_name": "x1", "lifespan_seconds": null, "capacity_consumed": 1, "quota_consumed": 1},
			{"id": "x2", "display_name": "x2", "lifespan_seconds": null, "capacity_consumed": 2, "quota_consumed": 2}]},
		{"id": "developer", "display_name": "Developer", "sizes": [
			{"id": "x1", "display_name": "x1", "lifespan_seconds": null, "capacity_consumed": 1, "quota_consumed": 1}]}]}`, string(r.Raw))

	waitClusterReady(t, h, "small")
	r = h.create(t, alice, map[string]any{"name": "big", "plan": "standard.x2"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	assert.Equal(t, "x2", r.Str("size_id"))
	big := r.Str("id")
	inst, err := h.Store.GetInstance(context.Background(), big)
	require.NoError(t, err)
	assert.Equal(t, 2, inst.Units, "the store records the units")
	assert.Equal(t, "x2", inst.Size)
	h.Client.WaitStatus(t, alice, big, "ready", waitFor)

	// Quota: 2 of alice's 3 units are used.
	assertError(t, h.create(t, alice, map[string]any{"name": "big2", "plan": "standard.x2"}), http.StatusForbidden, "5")

	// Capacity: 2 of the cluster's 3 units are taken, so bob's 2-unit
	// instance waits and times out, and his 1-unit instance fits.
	r = h.create(t, bob, map[string]any{"name": "wide", "plan": "standard.x2"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	r = h.Client.WaitStatus(t, bob, r.Str("id"), "failed", waitFor)
	assert.Empty(t, r.Str("cluster_id"))
	r = h.create(t, bob, map[string]any{"name": "narrow"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	assert.Equal(t, "x1", r.Str("size_id"), "without a plan: the first size of the first type")
	assert.Equal(t, "small", h.Client.WaitStatus(t, bob, r.Str("id"), "ready", waitFor).Str("cluster_id"))

	// Deleting the 2-unit instance frees its capacity and its quota.
	require.Equal(t, http.StatusAccepted, h.Client.Do(t, alice, http.MethodDelete, "dinosaurs/"+big+"?async=true", nil).Status)
	h.Client.WaitStatus(t, alice, big, "gone", waitFor)
	r = h.create(t, bob, map[string]any{"name": "later", "plan": "standard.x2"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	assert.Equal(t, "small", h.Client.WaitStatus(t, bob, r.Str("id"), "ready", waitFor).Str("cluster_id"))

	// alice's 3 units of quota again: 2 + 1, whatever the capacity.
	require.Equal(t, http.StatusAccepted, h.create(t, alice, map[string]any{"name": "q1", "plan": "standard.x2"}).Status)
	assertError(t, h.create(t, alice, map[string]any{"name": "q2", "plan": "standard.x2"}), http.StatusForbidden, "5")
	require.Equal(t, http.StatusAccepted, h.create(t, alice, map[string]any{"name": "q3", "plan": "standard.x1"}).Status)
	assertError(t, h.create(t, alice, map[string]any{"name": "q4", "plan": "standard.x1"}), http.StatusForbidden, "5")
}

// testSuspendResume: Service.Suspend and Resume (the original's admin
// update with suspended true/false) move a ready instance through
// suspending → suspended (stopped on the data plane, host withdrawn,
// cluster kept) and resuming → ready again; a suspended instance can be
// deleted; only a ready instance may be suspended.
func testSuspendResume(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), nil)
	ctx := context.Background()
	id := h.mustCreate(t, alice, "rex")
	ready := h.Client.WaitStatus(t, alice, id, "ready", waitFor)
	require.NotEmpty(t, ready.Str("host"))
	require.True(t, running(t, h, id))

	require.NoError(t, h.Service.Suspend(ctx, id))
	require.NoError(t, h.Service.Suspend(ctx, id), "suspending again does nothing")
	r := h.Client.WaitStatus(t, alice, id, "suspended", waitFor)
	assert.Empty(t, r.Str("host"), "a suspended instance answers nowhere")
	assert.Equal(t, ready.Str("cluster_id"), r.Str("cluster_id"), "it keeps its cluster")
	assert.False(t, running(t, h, id), "stopped on the data plane")
	list := h.Client.Do(t, alice, http.MethodGet, "dinosaurs?search=status%3Dsuspended", nil)
	require.Equal(t, http.StatusOK, list.Status, "%s", list.Raw)
	require.Len(t, list.Items(), 1)

	require.NoError(t, h.Service.Resume(ctx, id))
	r = h.Client.WaitStatus(t, alice, id, "ready", waitFor)
	assert.NotEmpty(t, r.Str("host"))
	assert.True(t, running(t, h, id), "started again")
	require.NoError(t, h.Service.Resume(ctx, id), "resuming a ready instance does nothing")

	// Only ready (or resuming) instances are suspended.
	other := h.mustCreate(t, alice, "other")
	h.Client.WaitStatus(t, alice, other, "ready", waitFor)
	require.Equal(t, http.StatusAccepted, h.Client.Do(t, alice, http.MethodDelete, "dinosaurs/"+other+"?async=true", nil).Status)
	var te *fleet.TransitionError
	err := h.Service.Suspend(ctx, other)
	if !errors.Is(err, fleet.ErrNotFound) { // deleted already
		require.ErrorAs(t, err, &te)
	}
	require.ErrorIs(t, h.Service.Suspend(ctx, "no-such-id"), fleet.ErrNotFound)

	// A suspended instance is deleted like any other.
	require.NoError(t, h.Service.Suspend(ctx, id))
	h.Client.WaitStatus(t, alice, id, "suspended", waitFor)
	require.Equal(t, http.StatusAccepted, h.Client.Do(t, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil).Status)
	h.Client.WaitStatus(t, alice, id, "gone", waitFor)
	assert.False(t, running(t, h, id))
}

// testCreateOptions: create honours billing_model (the original's values),
// an organisation administrator's cluster_id, and refuses multi_az false
// with the original's code 35 when no cluster could ever take it.
func testCreateOptions(t *testing.T, newStore NewStore) {
	admin := fleettest.User{Name: "erin", Org: "acme", OrgAdmin: true}
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) {
		o.Clusters = []cluster.Cluster{
			{ID: "a", CloudProvider: "aws", Region: "us-east-1", MultiAZ: true},
			{ID: "b", CloudProvider: "aws", Region: "us-east-1", MultiAZ: true},
			{ID: "c", CloudProvider: "aws", Region: "us-east-1", MultiAZ: false, InstanceTypes: []string{"developer"}},
		}
	})
	r := h.create(t, alice, map[string]any{"name": "std"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	assert.Equal(t, "standard", r.Str("billing_model"), "the default")
	r = h.create(t, alice, map[string]any{"name": "ent", "billing_model": "enterprise"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	assert.Equal(t, "enterprise", r.Str("billing_model"))
	assert.Equal(t, "enterprise", h.Client.Do(t, alice, http.MethodGet, "dinosaurs/"+r.Str("id"), nil).Str("billing_model"), "stored")
	assertError(t, h.create(t, alice, map[string]any{"name": "free", "billing_model": "free"}), http.StatusBadRequest, "21")

	// multi_az false: only cluster c (developer, single AZ) takes it.
	assertError(t, h.create(t, alice, map[string]any{"name": "one-az", "multi_az": false}), http.StatusBadRequest, "35")
	r = h.create(t, alice, map[string]any{"name": "one-az", "multi_az": false, "plan": "developer.x1"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	assert.Equal(t, false, r.Body["multi_az"])
	assert.Equal(t, "c", h.Client.WaitStatus(t, alice, r.Str("id"), "ready", waitFor).Str("cluster_id"))

	// cluster_id: an organisation administrator's choice, checked.
	assertError(t, h.create(t, carol, map[string]any{"name": "pinned", "cluster_id": "b"}), http.StatusForbidden, "11")
	assertError(t, h.create(t, admin, map[string]any{"name": "pinned", "cluster_id": "nowhere"}), http.StatusBadRequest, "21")
	assertError(t, h.create(t, admin, map[string]any{"name": "pinned", "cluster_id": "c"}), http.StatusBadRequest, "21")
	r = h.create(t, admin, map[string]any{"name": "pinned", "cluster_id": "b"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	assert.Equal(t, "b", h.Client.WaitStatus(t, admin, r.Str("id"), "ready", waitFor).Str("cluster_id"), "not the first ready cluster, a")
	assert.Equal(t, "a", h.Client.WaitStatus(t, alice, h.mustCreate(t, alice, "free-choice"), "ready", waitFor).Str("cluster_id"))
}

// testTrailingSlash: a path with a trailing slash is the path without it,
// as in the original.
func testTrailingSlash(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) { o.Clusters = nil })
	r := h.Client.Do(t, alice, http.MethodPost, "dinosaurs/?async=true", map[string]any{"name": "rex"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	id := r.Str("id")
	r = h.Client.Do(t, alice, http.MethodGet, "dinosaurs/", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	require.Len(t, r.Items(), 1)
	r = h.Client.Do(t, alice, http.MethodGet, "dinosaurs/"+id+"/", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.Equal(t, id, r.Str("id"))
	r = h.Client.Do(t, nobody, http.MethodGet, "errors/", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assertError(t, h.Client.Do(t, alice, http.MethodGet, "dinosaurs/"+id+"/nothing/", nil), http.StatusNotFound, "7")
}

// testQuotaCheckFails: a quota checker that fails (rather than refuses)
// is the original's code 121, 500.
func testQuotaCheckFails(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) {
		o.Clusters = nil
		o.API.Quota = quota.CheckerFunc(func(context.Context, quota.Request) error { return errors.New("quota service unreachable") })
	})
	assertError(t, h.create(t, alice, map[string]any{"name": "rex"}), http.StatusInternalServerError, "121")
}

// testKafkaIssue19: for -kind kafka, the same through the kafka document:
// the original's exact reason for code 35, a 2-unit size, suspension of a
// kafka (its bootstrap_server_host withdrawn) and a trailing slash.
func testKafkaIssue19(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) {
		o.Kind = fleet.Kafka
		o.Units = map[string]int{"standard.x2": 2}
		o.API.Sizes = map[string][]string{"standard": {"x1", "x2"}}
	})
	r := h.Client.Do(t, nobody, http.MethodGet, "errors/35/", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.Equal(t, "Only multiAZ Kafkas are supported, use multi_az=true", r.Str("reason"))
	assert.Equal(t, "KAFKAS-MGMT-35", r.Str("code"))
	r = h.Client.Do(t, alice, http.MethodPost, "kafkas?async=true", map[string]any{"name": "events", "multi_az": false})
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Raw)
	assert.Equal(t, "KAFKAS-MGMT-35", r.Code())

	r = h.Client.Do(t, alice, http.MethodPost, "kafkas/?async=true", map[string]any{"name": "events", "plan": "standard.x2", "billing_model": "marketplace"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	assert.Equal(t, "x2", r.Str("size_id"))
	assert.Equal(t, "marketplace", r.Str("billing_model"))
	id := r.Str("id")
	assert.NotEmpty(t, h.Client.WaitStatus(t, alice, id, "ready", waitFor).Str("bootstrap_server_host"))
	require.NoError(t, h.Service.Suspend(context.Background(), id))
	assert.NotContains(t, h.Client.WaitStatus(t, alice, id, "suspended", waitFor).Body, "bootstrap_server_host")
	require.NoError(t, h.Service.Resume(context.Background(), id))
	assert.NotEmpty(t, h.Client.WaitStatus(t, alice, id, "ready", waitFor).Str("bootstrap_server_host"))
}
