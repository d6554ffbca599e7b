package fleet_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/inmem"
	"github.com/fleetkit/fleetkit/fleet/storetest"
)

// slowProvider is provisioned after two Ready checks, and its operator
// comes up when operatorUp is set.
type slowProvider struct {
	inmem.ClusterProvider
	checks     atomic.Int32
	operatorUp atomic.Bool
	deleted    atomic.Int32
}

func (p *slowProvider) Ready(ctx context.Context, c cluster.Cluster) (bool, error) {
	return p.checks.Add(1) > 2, nil
}

func (p *slowProvider) FleetshardReady(context.Context, cluster.Cluster) (bool, error) {
	return p.operatorUp.Load(), nil
}

func (p *slowProvider) Delete(ctx context.Context, c cluster.Cluster) (bool, error) {
	p.deleted.Add(1)
	return true, nil
}

// clusterStatus returns the cluster's status, "" before it exists.
func clusterStatus(t *testing.T, st fleet.Store, id string) cluster.Status {
	t.Helper()
	c, err := st.GetCluster(context.Background(), id)
	if errors.Is(err, fleet.ErrNotFound) {
		return ""
	}
	require.NoError(t, err)
	return c.Status
}

func TestClusterLifecycle(t *testing.T) {
	st := memStore(t)
	p := &slowProvider{}
	var terraformed atomic.Int32
	svc, err := fleet.New(st, fleet.Options{
		Kind: fleet.Dinosaur, Clusters: cluster.Defaults(), ClusterProvider: p,
		Terraform: []func(context.Context, cluster.Cluster) (bool, error){func(context.Context, cluster.Cluster) (bool, error) {
			return terraformed.Add(1) > 1, nil // done on the second pass
		}},
		Interval: 20 * time.Millisecond, RetryInterval: 10 * time.Millisecond,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, svc.Run(ctx)) })
	t.Cleanup(func() { cancel(); wg.Wait() })

	require.Eventually(t, func() bool { return clusterStatus(t, st, "local") == cluster.WaitingForFleetshard }, 10*time.Second, 5*time.Millisecond)
	assert.GreaterOrEqual(t, p.checks.Load(), int32(3))
	assert.GreaterOrEqual(t, terraformed.Load(), int32(2))

	// No ready cluster yet: an instance waits in accepted.
	inst := storetest.Instance("rex", "alice", "")
	require.NoError(t, svc.Store().CreateInstance(context.Background(), inst))
	require.Never(t, func() bool { return status(t, st, inst.ID) != fleet.StatusAccepted }, 200*time.Millisecond, 10*time.Millisecond)
	p.operatorUp.Store(true)
	require.Eventually(t, func() bool { return status(t, st, inst.ID) == fleet.StatusReady }, 10*time.Second, 5*time.Millisecond)

	// Deprovisioning waits for the cluster's instances to go.
	require.NoError(t, svc.DeprovisionCluster(context.Background(), "local"))
	assert.Equal(t, cluster.Deprovisioning, clusterStatus(t, st, "local"))
	require.NoError(t, svc.DeprovisionCluster(context.Background(), "local"), "retiring twice does nothing")
	assert.ErrorIs(t, svc.DeprovisionCluster(context.Background(), "nope"), fleet.ErrNotFound)
	require.Never(t, func() bool { return p.deleted.Load() > 0 }, 200*time.Millisecond, 10*time.Millisecond)
	_, err = svc.Store().UpdateInstance(context.Background(), fleet.Update{ID: inst.ID, From: fleet.StatusReady, To: fleet.StatusDeprovision})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return clusterStatus(t, st, "local") == cluster.Cleanup }, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, int32(1), p.deleted.Load())
}

// failingProvider cannot create clusters.
type failingProvider struct{ inmem.ClusterProvider }

func (*failingProvider) Create(context.Context, cluster.Cluster) error {
	return fleet.TerminalError(errors.New("quota exceeded in the cloud account"))
}

func TestClusterProviderTerminalError(t *testing.T) {
	st := memStore(t)
	svc, err := fleet.New(st, fleet.Options{Kind: fleet.Dinosaur, Clusters: cluster.Defaults(),
		ClusterProvider: &failingProvider{}, Interval: 20 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, svc.Run(ctx)) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	require.Eventually(t, func() bool { return clusterStatus(t, st, "local") == cluster.Failed }, 10*time.Second, 5*time.Millisecond)
	c, err := st.GetCluster(context.Background(), "local")
	require.NoError(t, err)
	assert.Equal(t, "quota exceeded in the cloud account", c.FailedReason)
}

// TestRunDeprovisions: Options.Deprovision retires a configured cluster at
// Run; without instances it goes straight on to cleanup, and the other
// cluster is untouched.
func TestRunDeprovisions(t *testing.T) {
	st := memStore(t)
	clusters := []cluster.Cluster{
		{ID: "a", CloudProvider: "aws", Region: "us-east-1", MultiAZ: true},
		{ID: "b", CloudProvider: "aws", Region: "us-east-1", MultiAZ: true},
	}
	p := &slowProvider{}
	p.operatorUp.Store(true)
	svc, err := fleet.New(st, fleet.Options{Kind: fleet.Dinosaur, Clusters: clusters, Deprovision: []string{"b", "never-created"},
		ClusterProvider: p, Interval: 20 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, svc.Run(ctx)) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	require.Eventually(t, func() bool {
		return clusterStatus(t, st, "b") == cluster.Cleanup && clusterStatus(t, st, "a") == cluster.Ready
	}, 10*time.Second, 5*time.Millisecond)
	assert.Equal(t, int32(1), p.deleted.Load())
}
