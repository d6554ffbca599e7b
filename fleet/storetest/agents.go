package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
)

// testAgentReports: the latest instance report and heartbeat per kind and
// cluster, stamped with the store's clock; a report keeps only the live
// instances of the kind placed on the cluster.
func testAgentReports(t *testing.T, s fleet.Store) {
	c := ctx(t)
	ar, ok := s.(fleet.AgentReports)
	require.True(t, ok, "%T implements fleet.AgentReports", s)

	a, err := ar.AgentReport(c, "dinosaur", "c1")
	require.NoError(t, err)
	assert.Zero(t, a, "no report yet")

	place := func(i fleet.Instance, clusterID string) fleet.Instance {
		i = create(t, s, i)
		i, err := s.UpdateInstance(c, fleet.Update{ID: i.ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing, ClusterID: &clusterID})
		require.NoError(t, err)
		return i
	}
	on1 := place(Instance("on1", "alice", ""), "c1")
	on2 := place(Instance("on2", "alice", ""), "c2")
	gone := place(Instance("gone", "alice", ""), "c1")
	_, err = s.UpdateInstance(c, fleet.Update{ID: gone.ID, From: fleet.StatusPreparing, To: fleet.StatusDeprovision})
	require.NoError(t, err)
	_, err = s.UpdateInstance(c, fleet.Update{ID: gone.ID, From: fleet.StatusDeprovision, To: fleet.StatusDeleting, SoftDelete: true})
	require.NoError(t, err)
	kafka := Instance("k", "alice", "")
	kafka.Kind = "kafka"
	kafka = place(kafka, "c1")

	before := time.Now().Add(-time.Second) // the SQL stores may round to the second
	require.NoError(t, ar.PutInstanceReports(c, "dinosaur", "c1", map[string]fleet.InstanceReport{
		on1.ID:     {Phase: fleet.PhaseReady, Host: "h1:8080"},
		on2.ID:     {Phase: fleet.PhaseReady, Host: "h2:8080"}, // on another cluster
		gone.ID:    {Phase: fleet.PhaseInstalling},             // soft deleted
		kafka.ID:   {Phase: fleet.PhaseFailed, Reason: "x"},    // another kind
		"unknown1": {Phase: fleet.PhaseReady, Host: "h3:8080"},
	}))
	after := time.Now().Add(time.Second)
	a, err = ar.AgentReport(c, "dinosaur", "c1")
	require.NoError(t, err)
	assert.Equal(t, map[string]fleet.InstanceReport{on1.ID: {Phase: fleet.PhaseReady, Host: "h1:8080"}}, a.Instances, "only instances placed on the cluster are written")
	assert.True(t, a.InstancesAt.After(before) && a.InstancesAt.Before(after), "received at %s", a.InstancesAt)
	assert.True(t, a.HeartbeatAt.IsZero(), "no heartbeat yet")

	// The heartbeat keeps the instance report, and the reverse.
	require.NoError(t, ar.PutHeartbeat(c, "dinosaur", "c1", fleet.Heartbeat{Phase: "ready", Capacity: 7, AgentVersion: "v1"}))
	a, err = ar.AgentReport(c, "dinosaur", "c1")
	require.NoError(t, err)
	assert.Equal(t, fleet.Heartbeat{Phase: "ready", Capacity: 7, AgentVersion: "v1"}, a.Heartbeat)
	assert.True(t, a.HeartbeatAt.After(before) && a.HeartbeatAt.Before(after), "received at %s", a.HeartbeatAt)
	assert.Len(t, a.Instances, 1)

	// A new report replaces the old one whole: an empty one lists nothing.
	require.NoError(t, ar.PutInstanceReports(c, "dinosaur", "c1", map[string]fleet.InstanceReport{}))
	a, err = ar.AgentReport(c, "dinosaur", "c1")
	require.NoError(t, err)
	assert.Empty(t, a.Instances)
	assert.False(t, a.InstancesAt.IsZero(), "an empty report is a report")
	assert.Equal(t, 7, a.Heartbeat.Capacity)

	// Per kind and cluster.
	require.NoError(t, ar.PutInstanceReports(c, "kafka", "c1", map[string]fleet.InstanceReport{kafka.ID: {Phase: fleet.PhaseFailed, Reason: "no"}}))
	require.NoError(t, ar.PutHeartbeat(c, "dinosaur", "c2", fleet.Heartbeat{Phase: "ready", Capacity: 3}))
	all, err := ar.AgentReportsOf(c, "dinosaur")
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, 7, all["c1"].Heartbeat.Capacity)
	assert.Equal(t, 3, all["c2"].Heartbeat.Capacity)
	assert.True(t, all["c2"].InstancesAt.IsZero())
	k, err := ar.AgentReport(c, "kafka", "c1")
	require.NoError(t, err)
	assert.Equal(t, map[string]fleet.InstanceReport{kafka.ID: {Phase: fleet.PhaseFailed, Reason: "no"}}, k.Instances)
	assert.True(t, k.HeartbeatAt.IsZero())
}
