package storetest

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/inmem"
)

// faultyDP is the in-memory data plane with faults a test turns on: an
// Apply held at a gate, an instance that stops running, a host forced once.
type faultyDP struct {
	*inmem.DataPlane

	mu      sync.Mutex
	gates   map[string]chan struct{} // guarded by mu: Apply of an ID waits for the close
	entered map[string]chan struct{} // guarded by mu: closed when that Apply reached its gate
	applied map[string]chan struct{} // guarded by mu: closed when that Apply returned
	down    map[string]bool          // guarded by mu: Apply fails for these IDs
	force   map[string]string        // guarded by mu: the host the next Apply of an ID reports
}

func newFaultyDP(dp *inmem.DataPlane) *faultyDP {
	return &faultyDP{DataPlane: dp, gates: map[string]chan struct{}{}, entered: map[string]chan struct{}{}, applied: map[string]chan struct{}{},
		down: map[string]bool{}, force: map[string]string{}}
}

var errDown = errors.New("instance is not running")

func (d *faultyDP) Apply(ctx context.Context, inst fleet.Instance) (fleet.DataPlaneStatus, error) {
	d.mu.Lock()
	gate, entered, down := d.gates[inst.Name], d.entered[inst.Name], d.down[inst.ID]
	host, forced := d.force[inst.Name]
	delete(d.force, inst.Name)
	d.mu.Unlock()
	if gate != nil {
		close(entered)
		<-gate
		defer func() {
			d.mu.Lock()
			close(d.applied[inst.Name])
			d.mu.Unlock()
		}()
	}
	if down {
		return fleet.DataPlaneStatus{}, errDown
	}
	s, err := d.DataPlane.Apply(ctx, inst)
	if forced && err == nil {
		s.Host = host
	}
	return s, err
}

// hold makes the next Apply of the instance named name wait; release lets
// it go on, entered is closed once it waits, applied once it returned.
func (d *faultyDP) hold(name string) (entered, applied <-chan struct{}, release func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	g, e, a := make(chan struct{}), make(chan struct{}), make(chan struct{})
	d.gates[name], d.entered[name], d.applied[name] = g, e, a
	return e, a, sync.OnceFunc(func() {
		d.mu.Lock()
		delete(d.gates, name)
		d.mu.Unlock()
		close(g)
	})
}

func (d *faultyDP) setDown(id string, down bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.down[id] = down
}

func faultHarness(t *testing.T, st fleet.Store, sweep time.Duration) (*Harness, *faultyDP) {
	var f *faultyDP
	h := NewHarness(t, st, func(o *HarnessOptions) {
		f = newFaultyDP(o.DataPlane.(*inmem.DataPlane))
		o.DataPlane, o.SweepInterval = f, sweep
	})
	return h, f
}

// testCreateThenDelete: a provisioning pass that started an instance after
// its delete finished (it read the instance before) leaves nothing
// running: the data plane converges to the row (deleted → nothing runs),
// without the sweep's help.
func testCreateThenDelete(t *testing.T, newStore NewStore) {
	h, f := faultHarness(t, newStore(t), time.Hour)
	entered, applied, release := f.hold("late")
	defer release()
	id := h.mustCreate(t, alice, "late")
	<-entered // provisioning read the instance and is about to start it
	require.Equal(t, http.StatusAccepted, h.Client.Do(t, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil).Status)
	h.Client.WaitStatus(t, alice, id, "gone", waitFor)
	release() // the late pass starts the deleted instance now
	<-applied
	require.Eventually(t, func() bool { return len(runningIDs(t, h.DP)) == 0 }, waitFor, 5*time.Millisecond,
		"a deleted instance is not left running")
}

// testSweep: machines no live row owns (another manager's, or one started
// for a row that is gone) are removed by the sweep.
func testSweep(t *testing.T, newStore NewStore) {
	h, _ := faultHarness(t, newStore(t), 50*time.Millisecond)
	live := h.mustCreate(t, alice, "live")
	h.Client.WaitStatus(t, alice, live, "ready", waitFor)
	_, err := h.DP.Apply(t.Context(), fleet.Instance{ID: fleet.NewID(), Kind: "dinosaur", Name: "orphan", ClusterID: "local"})
	require.NoError(t, err)
	require.Len(t, runningIDs(t, h.DP), 2)
	require.Eventually(t, func() bool {
		ids := runningIDs(t, h.DP)
		return len(ids) == 1 && ids[0] == live
	}, waitFor, 5*time.Millisecond, "the orphan is swept, the live instance stays")
}

// testReadyReportsLoss: a ready instance that stops running shows it in
// the API (failed_reason on the ready instance) at the next ready pass,
// and the reason clears once it runs again.
func testReadyReportsLoss(t *testing.T, newStore NewStore) {
	h, f := faultHarness(t, newStore(t), time.Hour)
	id := h.mustCreate(t, alice, "rex")
	h.Client.WaitStatus(t, alice, id, "ready", waitFor)
	f.setDown(id, true)
	var r map[string]any
	require.Eventually(t, func() bool {
		r = h.Client.Do(t, alice, http.MethodGet, "dinosaurs/"+id, nil).Body
		return r["failed_reason"] != nil
	}, waitFor, 5*time.Millisecond, "the loss is reported")
	assert.Equal(t, "ready", r["status"])
	assert.Contains(t, r["failed_reason"], "not running")
	f.setDown(id, false)
	require.Eventually(t, func() bool {
		return h.Client.Do(t, alice, http.MethodGet, "dinosaurs/"+id, nil).Body["failed_reason"] == nil
	}, waitFor, 5*time.Millisecond, "cleared once it runs again")
}

// testHostNotReused: a data plane that hands an instance the host another
// live instance still records does not get it recorded: that host's
// clients would reach another tenant.
func testHostNotReused(t *testing.T, newStore NewStore) {
	rec := &hostRecorder{Store: newStore(t), hosts: map[string][]string{}}
	h, f := faultHarness(t, rec, time.Hour)
	a := h.mustCreate(t, alice, "a")
	hostA := h.Client.WaitStatus(t, alice, a, "ready", waitFor).Str("host")
	f.mu.Lock()
	f.force["b"] = hostA
	f.mu.Unlock()
	b := h.mustCreate(t, bob, "b")
	hostB := h.Client.WaitStatus(t, bob, b, "ready", waitFor).Str("host")
	assert.NotEqual(t, hostA, hostB)
	f.mu.Lock()
	_, pending := f.force["b"]
	f.mu.Unlock()
	assert.False(t, pending, "the data plane did offer the taken host")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.NotContains(t, rec.hosts[b], hostA, "never recorded, not even for a moment")
}

// hostRecorder records every host written to each instance.
type hostRecorder struct {
	fleet.Store
	mu    sync.Mutex
	hosts map[string][]string // guarded by mu: by instance ID
}

func (r *hostRecorder) UpdateInstance(ctx context.Context, u fleet.Update) (fleet.Instance, error) {
	inst, err := r.Store.UpdateInstance(ctx, u)
	if err == nil && u.Host != nil {
		r.mu.Lock()
		r.hosts[u.ID] = append(r.hosts[u.ID], *u.Host)
		r.mu.Unlock()
	}
	return inst, err
}
