package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/lease"
	"github.com/fleetkit/fleetkit/fleet/quota"
	"github.com/fleetkit/fleetkit/fleet/search"
)

// NewStore returns an empty store for one test.
type NewStore func(t *testing.T) fleet.Store

// Run runs the whole suite.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s fleet.Store)
	}{
		{"CreateGet", testCreateGet},
		{"NameUniqueness", testNameUniqueness},
		{"ConcurrentCreateSameName", testConcurrentCreate},
		{"CreateInstanceChecked", testCreateChecked},
		{"CompareAndSwap", testCompareAndSwap},
		{"ConcurrentCompareAndSwap", testConcurrentCAS},
		{"ConcurrentUpdatesOwnOutcome", testConcurrentUpdates},
		{"SoftDelete", testSoftDelete},
		{"OwnerAndSettings", testOwnerAndSettings},
		{"List", testList},
		{"Search", testSearch},
		{"Clusters", testClusters},
		{"Leases", testLeases},
		{"Fencing", testFencing},
		{"AgentReports", testAgentReports},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newStore(t)) })
	}
}

// Instance returns a valid accepted instance for tests.
func Instance(name, owner, org string) fleet.Instance {
	now := time.Now().UTC()
	return fleet.Instance{
		ID: fleet.NewID(), Kind: "dinosaur", Name: name, Owner: owner, Organisation: org,
		CloudProvider: "aws", Region: "us-east-1", MultiAZ: true, InstanceType: "standard",
		Status: fleet.StatusAccepted, CreatedAt: now, UpdatedAt: now, StatusSince: now,
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func create(t *testing.T, s fleet.Store, i fleet.Instance) fleet.Instance {
	t.Helper()
	require.NoError(t, s.CreateInstance(ctx(t), i))
	return i
}

// testOwnerAndSettings: the API's PATCH writes the owner and
// NoReauthentication with the same compare-and-swap as the workers, and the
// name stays unique in the owner's new scope.
func testOwnerAndSettings(t *testing.T, s fleet.Store) {
	c := ctx(t)
	off, dave := true, "dave"
	a := Instance("rex", "carol", "acme")
	a.NoReauthentication = true
	create(t, s, a)
	got, err := s.GetInstance(c, a.ID)
	require.NoError(t, err)
	assert.True(t, got.NoReauthentication, "stored at create")

	on := false
	got, err = s.UpdateInstance(c, fleet.Update{ID: a.ID, From: fleet.StatusAccepted, Owner: &dave, NoReauthentication: &on})
	require.NoError(t, err)
	assert.Equal(t, "dave", got.Owner)
	assert.False(t, got.NoReauthentication)
	got, err = s.GetInstance(c, a.ID)
	require.NoError(t, err)
	assert.Equal(t, "dave", got.Owner)
	assert.Equal(t, "acme", got.Organisation)
	assert.False(t, got.NoReauthentication)
	_, err = s.UpdateInstance(c, fleet.Update{ID: a.ID, From: fleet.StatusAccepted, NoReauthentication: &off})
	require.NoError(t, err)

	// Without an organisation the name is unique per owner: handing an
	// instance to a user who has one of that name is refused.
	b := create(t, s, Instance("trike", "alice", ""))
	create(t, s, Instance("trike", "bob", ""))
	bob := "bob"
	_, err = s.UpdateInstance(c, fleet.Update{ID: b.ID, From: fleet.StatusAccepted, Owner: &bob})
	require.ErrorIs(t, err, fleet.ErrNameTaken)
	empty := ""
	_, err = s.UpdateInstance(c, fleet.Update{ID: b.ID, From: fleet.StatusAccepted, Owner: &empty})
	require.ErrorIs(t, err, fleet.ErrInvalid)
	_, err = s.UpdateInstance(c, fleet.Update{ID: b.ID, From: fleet.StatusReady, Owner: &bob})
	require.ErrorIs(t, err, fleet.ErrConflict, "the swap still guards the status")
	got, err = s.GetInstance(c, b.ID)
	require.NoError(t, err)
	assert.Equal(t, "alice", got.Owner)
}

func testCreateGet(t *testing.T, s fleet.Store) {
	in := Instance("rex", "alice", "acme")
	exp := in.CreatedAt.Add(48 * time.Hour)
	in.ExpiresAt = &exp
	create(t, s, in)
	got, err := s.GetInstance(ctx(t), in.ID)
	require.NoError(t, err)
	assert.Equal(t, in.Name, got.Name)
	assert.Equal(t, in.Owner, got.Owner)
	assert.Equal(t, in.Organisation, got.Organisation)
	assert.Equal(t, in.Kind, got.Kind)
	assert.Equal(t, in.CloudProvider, got.CloudProvider)
	assert.Equal(t, in.Region, got.Region)
	assert.True(t, got.MultiAZ)
	assert.Equal(t, in.InstanceType, got.InstanceType)
	assert.Equal(t, fleet.StatusAccepted, got.Status)
	assert.WithinDuration(t, in.CreatedAt, got.CreatedAt, time.Millisecond)
	assert.WithinDuration(t, in.StatusSince, got.StatusSince, time.Millisecond)
	require.NotNil(t, got.ExpiresAt)
	assert.WithinDuration(t, exp, *got.ExpiresAt, time.Millisecond)
	assert.Nil(t, got.DeletedAt)

	_, err = s.GetInstance(ctx(t), "nosuchid")
	assert.ErrorIs(t, err, fleet.ErrNotFound)

	err = s.CreateInstance(ctx(t), in)
	assert.ErrorIs(t, err, cluster.ErrExists, "same ID twice")
}

func testNameUniqueness(t *testing.T, s fleet.Store) {
	create(t, s, Instance("rex", "alice", ""))
	tests := []struct {
		name    string
		inst    fleet.Instance
		wantErr error
	}{
		{"same owner, same name", Instance("rex", "alice", ""), fleet.ErrNameTaken},
		{"other owner", Instance("rex", "bob", ""), nil},
		{"same name in an organisation", Instance("rex", "carol", "acme"), nil},
		{"same organisation, other owner", Instance("rex", "dave", "acme"), fleet.ErrNameTaken},
		{"other kind", func() fleet.Instance { i := Instance("rex", "alice", ""); i.Kind = "kafka"; return i }(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.CreateInstance(ctx(t), tt.inst)
			if tt.wantErr == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.wantErr)
		})
	}
}

func testConcurrentCreate(t *testing.T, s fleet.Store) {
	const n = 16
	wins, taken := race(t, n, fleet.ErrNameTaken, func(int) error {
		return s.CreateInstance(ctx(t), Instance("race", "alice", ""))
	})
	assert.Equal(t, 1, wins)
	assert.Equal(t, n-1, taken)
}

// race runs attempt(0), …, attempt(n-1) at once and counts the attempts
// that succeeded and those that failed with lost; any other outcome fails
// the test.
func race(t *testing.T, n int, lost error, attempt func(i int) error) (wins, losses int) {
	var (
		wg   sync.WaitGroup
		w, l atomic.Int32
	)
	for i := range n {
		wg.Go(func() {
			err := attempt(i)
			switch {
			case err == nil:
				w.Add(1)
			case errors.Is(err, lost):
				l.Add(1)
			default:
				t.Errorf("unexpected outcome: %v", err)
			}
		})
	}
	wg.Wait()
	return int(w.Load()), int(l.Load())
}

func testCreateChecked(t *testing.T, s fleet.Store) {
	errCheck := errors.New("check failed")
	err := s.CreateInstanceChecked(ctx(t), Instance("rex", "alice", ""), func(int) error { return errCheck })
	require.ErrorIs(t, err, errCheck, "the check's error comes back as is")
	_, total, err := s.ListInstances(ctx(t), fleet.Query{Size: -1})
	require.NoError(t, err)
	assert.Zero(t, total, "a refused create writes nothing")

	// The check sees the live instances of the kind in the scope.
	create(t, s, Instance("a", "carol", "acme"))
	create(t, s, Instance("b", "dave", "acme"))
	create(t, s, Instance("c", "carol", ""))
	other := Instance("d", "carol", "acme")
	other.Kind = "kafka"
	create(t, s, other)
	seen := -1
	require.NoError(t, s.CreateInstanceChecked(ctx(t), Instance("e", "erin", "acme"), func(live int) error { seen = live; return nil }))
	assert.Equal(t, 2, seen)
	err = s.CreateInstanceChecked(ctx(t), Instance("a", "erin", "acme"), func(int) error { return nil })
	assert.ErrorIs(t, err, fleet.ErrNameTaken)

	// Concurrent checked creates of one scope: exactly max get through.
	for _, max := range []int{1, 3} {
		t.Run(fmt.Sprintf("max %d", max), func(t *testing.T) {
			owner := fmt.Sprintf("owner-%d", max)
			const n = 16
			wins, refused := race(t, n, quota.ErrMaxInstances, func(i int) error {
				return s.CreateInstanceChecked(ctx(t), Instance(fmt.Sprintf("d-%d", i), owner, ""), func(live int) error {
					if live >= max {
						return quota.ErrMaxInstances
					}
					return nil
				})
			})
			assert.Equal(t, max, wins)
			assert.Equal(t, n-max, refused)
			_, live, err := s.ListInstances(ctx(t), fleet.Query{Owner: owner, Size: -1})
			require.NoError(t, err)
			assert.Equal(t, max, live)
		})
	}
}

func testCompareAndSwap(t *testing.T, s fleet.Store) {
	in := create(t, s, Instance("rex", "alice", ""))
	clusterID := "c1"
	got, err := s.UpdateInstance(ctx(t), fleet.Update{ID: in.ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing, ClusterID: &clusterID})
	require.NoError(t, err)
	assert.Equal(t, fleet.StatusPreparing, got.Status)
	assert.Equal(t, "c1", got.ClusterID)
	assert.False(t, got.StatusSince.Before(in.StatusSince))

	_, err = s.UpdateInstance(ctx(t), fleet.Update{ID: in.ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing})
	var ce *fleet.ConflictError
	require.ErrorAs(t, err, &ce)
	assert.ErrorIs(t, err, fleet.ErrConflict)
	assert.Equal(t, "preparing", ce.Actual)

	tests := []struct {
		name     string
		from, to fleet.Status
	}{
		{"skip to ready", fleet.StatusPreparing, fleet.StatusReady},
		{"back to accepted", fleet.StatusPreparing, fleet.StatusAccepted},
		{"unknown status", fleet.StatusPreparing, "bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.UpdateInstance(ctx(t), fleet.Update{ID: in.ID, From: tt.from, To: tt.to})
			require.ErrorIs(t, err, fleet.ErrIllegalTransition)
		})
	}

	host := "rex.local:1234"
	got, err = s.UpdateInstance(ctx(t), fleet.Update{ID: in.ID, From: fleet.StatusPreparing, Host: &host})
	require.NoError(t, err, "a write that keeps the status")
	assert.Equal(t, fleet.StatusPreparing, got.Status)
	assert.Equal(t, host, got.Host)

	_, err = s.UpdateInstance(ctx(t), fleet.Update{ID: "nosuchid", From: fleet.StatusAccepted, To: fleet.StatusPreparing})
	assert.ErrorIs(t, err, fleet.ErrNotFound)
}

func testConcurrentCAS(t *testing.T, s fleet.Store) {
	in := create(t, s, Instance("rex", "alice", ""))
	const n = 16
	wins, conflicts := race(t, n, fleet.ErrConflict, func(int) error {
		_, err := s.UpdateInstance(ctx(t), fleet.Update{ID: in.ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing})
		return err
	})
	assert.Equal(t, 1, wins)
	assert.Equal(t, n-1, conflicts)
}

// testConcurrentUpdates sends updates of many instances at once, as
// workers under load do (stores may write them together): each gets its
// own outcome and its own values.
func testConcurrentUpdates(t *testing.T, s fleet.Store) {
	held, err := s.AcquireLease(ctx(t), "accepted", "replica-a", time.Hour)
	require.NoError(t, err)
	stale := lease.Fence{Lease: "accepted", Token: held.Token - 1}
	const n = 60
	insts := make([]fleet.Instance, n)
	for i := range insts {
		insts[i] = create(t, s, Instance(fmt.Sprintf("d-%d", i), "alice", ""))
	}
	// Every third write carries a stale token, every third expects the
	// wrong status, the others win and set their own cluster.
	want := func(i int) error {
		switch i % 3 {
		case 1:
			return lease.ErrStaleFence
		case 2:
			return fleet.ErrConflict
		}
		return nil
	}
	var wg sync.WaitGroup
	for i, in := range insts {
		wg.Go(func() {
			clusterID := fmt.Sprintf("c-%d", i)
			u := fleet.Update{ID: in.ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing, ClusterID: &clusterID, Fence: held.Fence()}
			switch i % 3 {
			case 1:
				u.Fence = stale
			case 2:
				u.From, u.To = fleet.StatusPreparing, fleet.StatusProvisioning
			}
			got, err := s.UpdateInstance(ctx(t), u)
			if want(i) != nil {
				assert.ErrorIs(t, err, want(i), "instance %d", i)
				return
			}
			if assert.NoError(t, err, "instance %d", i) {
				assert.Equal(t, in.ID, got.ID)
				assert.Equal(t, clusterID, got.ClusterID)
				assert.Equal(t, fleet.StatusPreparing, got.Status)
			}
		})
	}
	wg.Wait()
	for i, in := range insts {
		got, err := s.GetInstance(ctx(t), in.ID)
		require.NoError(t, err)
		if want(i) == nil {
			assert.Equal(t, fleet.StatusPreparing, got.Status, "instance %d", i)
			assert.Equal(t, fmt.Sprintf("c-%d", i), got.ClusterID, "instance %d", i)
		} else {
			assert.Equal(t, fleet.StatusAccepted, got.Status, "instance %d", i)
			assert.Empty(t, got.ClusterID, "instance %d", i)
		}
	}
}

func testSoftDelete(t *testing.T, s fleet.Store) {
	in := create(t, s, Instance("rex", "alice", ""))
	for _, step := range []struct{ from, to fleet.Status }{
		{fleet.StatusAccepted, fleet.StatusDeprovision},
		{fleet.StatusDeprovision, fleet.StatusDeleting},
	} {
		_, err := s.UpdateInstance(ctx(t), fleet.Update{ID: in.ID, From: step.from, To: step.to})
		require.NoError(t, err)
	}
	got, err := s.UpdateInstance(ctx(t), fleet.Update{ID: in.ID, From: fleet.StatusDeleting, SoftDelete: true})
	require.NoError(t, err)
	require.NotNil(t, got.DeletedAt)

	got, err = s.GetInstance(ctx(t), in.ID)
	require.NoError(t, err, "a soft-deleted row is kept")
	require.NotNil(t, got.DeletedAt)
	assert.Equal(t, fleet.StatusDeleting, got.Status)

	_, total, err := s.ListInstances(ctx(t), fleet.Query{})
	require.NoError(t, err)
	assert.Equal(t, 0, total)
	_, total, err = s.ListInstances(ctx(t), fleet.Query{IncludeDeleted: true})
	require.NoError(t, err)
	assert.Equal(t, 1, total)

	_, err = s.UpdateInstance(ctx(t), fleet.Update{ID: in.ID, From: fleet.StatusDeleting, SoftDelete: true})
	assert.ErrorIs(t, err, fleet.ErrNotFound)

	create(t, s, Instance("rex", "alice", "")) // the name is free again
}

func testList(t *testing.T, s fleet.Store) {
	base := time.Now().UTC().Add(-time.Hour)
	for i := range 25 {
		in := Instance(fmt.Sprintf("dino-%02d", i), []string{"alice", "bob"}[i%2], "")
		in.CreatedAt = base.Add(time.Duration(i) * time.Second)
		create(t, s, in)
	}
	page, total, err := s.ListInstances(ctx(t), fleet.Query{Owner: "alice", Size: 5, Page: 2})
	require.NoError(t, err)
	assert.Equal(t, 13, total)
	require.Len(t, page, 5)
	assert.Equal(t, "dino-10", page[0].Name, "created_at ascending by default")

	page, _, err = s.ListInstances(ctx(t), fleet.Query{OrderBy: []fleet.Order{{Field: "name", Desc: true}}, Size: 3})
	require.NoError(t, err)
	require.Len(t, page, 3)
	assert.Equal(t, []string{"dino-24", "dino-23", "dino-22"}, names(page))

	_, total, err = s.ListInstances(ctx(t), fleet.Query{Size: -1, Statuses: []fleet.Status{fleet.StatusReady}})
	require.NoError(t, err)
	assert.Equal(t, 0, total)

	_, _, err = s.ListInstances(ctx(t), fleet.Query{OrderBy: []fleet.Order{{Field: "name; DROP TABLE instances"}}})
	assert.ErrorIs(t, err, fleet.ErrInvalid)
}

func names(is []fleet.Instance) []string {
	out := make([]string, len(is))
	for i, in := range is {
		out[i] = in.Name
	}
	return out
}

func testSearch(t *testing.T, s fleet.Store) {
	for _, spec := range []struct{ name, owner, region string }{
		{"rex", "alice", "us-east-1"},
		{"raptor", "alice", "eu-west-1"},
		{"Trike", "bob", "us-east-1"},
		{"o'hara", "bob", "eu-west-1"},
	} {
		in := Instance(spec.name, spec.owner, "")
		in.Region = spec.region
		create(t, s, in)
	}
	tests := []struct {
		search string
		want   []string
	}{
		{"name = rex", []string{"rex"}},
		{"name <> rex", []string{"raptor", "Trike", "o'hara"}},
		{"owner = alice and region = eu-west-1", []string{"raptor"}},
		{"region = eu-west-1 or name = rex", []string{"rex", "raptor", "o'hara"}},
		{"name in (rex, 'Trike')", []string{"rex", "Trike"}},
		{"name not in (rex, Trike)", []string{"raptor", "o'hara"}},
		{"name like r%", []string{"rex", "raptor"}},
		{"name like t%", nil},
		{"name ilike t%", []string{"Trike"}},
		{"name = 'o''hara'", []string{"o'hara"}},
		{"name = 'x'' OR 1=1 --'", nil},
		{"owner = bob and (region = us-east-1 or name like o%)", []string{"Trike", "o'hara"}},
	}
	for _, tt := range tests {
		t.Run(tt.search, func(t *testing.T) {
			e, err := search.Parse(tt.search)
			require.NoError(t, err)
			got, _, err := s.ListInstances(ctx(t), fleet.Query{Search: e})
			require.NoError(t, err)
			assert.ElementsMatch(t, tt.want, names(got))
		})
	}
}

func testClusters(t *testing.T, s fleet.Store) {
	c := cluster.Cluster{ID: "c1", CloudProvider: "aws", Region: "us-east-1", MultiAZ: true, Status: cluster.Accepted,
		InstanceTypes: []string{"standard", "developer"}, Capacity: 10}
	require.NoError(t, s.CreateCluster(ctx(t), c))
	assert.ErrorIs(t, s.CreateCluster(ctx(t), c), cluster.ErrExists)
	got, err := s.GetCluster(ctx(t), "c1")
	require.NoError(t, err)
	assert.Equal(t, c.InstanceTypes, got.InstanceTypes)
	assert.Equal(t, 10, got.Capacity)
	assert.True(t, got.MultiAZ)

	got, err = s.UpdateCluster(ctx(t), cluster.Update{ID: "c1", From: cluster.Accepted, To: cluster.Provisioning})
	require.NoError(t, err)
	assert.Equal(t, cluster.Provisioning, got.Status)
	_, err = s.UpdateCluster(ctx(t), cluster.Update{ID: "c1", From: cluster.Accepted, To: cluster.Provisioning})
	assert.ErrorIs(t, err, fleet.ErrConflict)
	_, err = s.UpdateCluster(ctx(t), cluster.Update{ID: "c1", From: cluster.Provisioning, To: cluster.Ready})
	assert.ErrorIs(t, err, fleet.ErrIllegalTransition)
	_, err = s.GetCluster(ctx(t), "nope")
	assert.ErrorIs(t, err, fleet.ErrNotFound)

	require.NoError(t, s.CreateCluster(ctx(t), cluster.Cluster{ID: "c0", Status: cluster.Ready}))
	all, err := s.ListClusters(ctx(t))
	require.NoError(t, err)
	require.Len(t, all, 2)
	assert.Equal(t, "c0", all[0].ID)
}

func testLeases(t *testing.T, s fleet.Store) {
	a, err := s.AcquireLease(ctx(t), "accepted", "replica-a", time.Hour)
	require.NoError(t, err, "the row is created on demand")
	assert.Equal(t, int64(1), a.Token)

	_, err = s.AcquireLease(ctx(t), "accepted", "replica-b", time.Hour)
	assert.ErrorIs(t, err, lease.ErrHeld)

	renewed, err := s.AcquireLease(ctx(t), "accepted", "replica-a", time.Hour)
	require.NoError(t, err)
	assert.Equal(t, a.Token, renewed.Token, "renewal keeps the token")

	require.NoError(t, s.ReleaseLease(ctx(t), renewed))
	b, err := s.AcquireLease(ctx(t), "accepted", "replica-b", time.Hour)
	require.NoError(t, err, "a released lease is free")
	assert.Equal(t, a.Token+1, b.Token, "a take-over increments the token")

	// Expiry: a short lease lapses and another holder takes it over.
	short, err := s.AcquireLease(ctx(t), "deleting", "replica-a", 50*time.Millisecond)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		l, err := s.AcquireLease(ctx(t), "deleting", "replica-b", time.Hour)
		return err == nil && l.Token == short.Token+1
	}, 10*time.Second, 20*time.Millisecond)

	// Concurrent first acquisitions: exactly one holder wins.
	var (
		wg   sync.WaitGroup
		wins atomic.Int32
	)
	for i := range 8 {
		wg.Go(func() {
			if _, err := s.AcquireLease(ctx(t), "general", fmt.Sprintf("r-%d", i), time.Hour); err == nil {
				wins.Add(1)
			} else if !errors.Is(err, lease.ErrHeld) {
				t.Errorf("unexpected error: %v", err)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, int32(1), wins.Load())
}

func testFencing(t *testing.T, s fleet.Store) {
	in := create(t, s, Instance("rex", "alice", ""))
	old, err := s.AcquireLease(ctx(t), "accepted", "replica-a", 50*time.Millisecond)
	require.NoError(t, err)
	got, err := s.UpdateInstance(ctx(t), fleet.Update{ID: in.ID, From: fleet.StatusAccepted, Fence: old.Fence()})
	require.NoError(t, err, "a write under the current token")
	assert.Equal(t, fleet.StatusAccepted, got.Status)

	var next lease.Lease
	require.Eventually(t, func() bool {
		next, err = s.AcquireLease(ctx(t), "accepted", "replica-b", time.Hour)
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)

	_, err = s.UpdateInstance(ctx(t), fleet.Update{ID: in.ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing, Fence: old.Fence()})
	require.ErrorIs(t, err, lease.ErrStaleFence, "the deposed holder's late write is rejected")
	_, err = s.UpdateInstance(ctx(t), fleet.Update{ID: in.ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing, Fence: lease.Fence{Lease: "nosuch", Token: 1}})
	require.ErrorIs(t, err, lease.ErrStaleFence)
	_, err = s.UpdateInstance(ctx(t), fleet.Update{ID: in.ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing, Fence: next.Fence()})
	require.NoError(t, err)

	require.NoError(t, s.CreateCluster(ctx(t), cluster.Cluster{ID: "c1", Status: cluster.Accepted}))
	_, err = s.UpdateCluster(ctx(t), cluster.Update{ID: "c1", From: cluster.Accepted, To: cluster.Provisioning, Fence: old.Fence()})
	require.ErrorIs(t, err, lease.ErrStaleFence)
}
