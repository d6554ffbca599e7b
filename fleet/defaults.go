package fleet

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fleetkit/fleetkit/fleet/cluster"
)

// The defaults of Options.DataPlane, Resources and ClusterProvider: the
// least that runs a fleet in one process. fleet/inmem has the reference
// in-memory implementations, with knobs for tests (delays, failures,
// instances that answer HTTP).

// memDataPlane runs instances nowhere: each is ready at once at a made-up
// host, recorded so that a sweep (it is a Sweeper) finds it.
type memDataPlane struct {
	mu      sync.Mutex
	running map[string]Instance // guarded by mu: ID, ClusterID, Host, CreatedAt (its start)
}

var (
	_ DataPlane = (*memDataPlane)(nil)
	_ Sweeper   = (*memDataPlane)(nil)
)

func newMemDataPlane() *memDataPlane { return &memDataPlane{running: map[string]Instance{}} }

func (d *memDataPlane) Apply(_ context.Context, inst Instance) (DataPlaneStatus, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	r, ok := d.running[inst.ID]
	if !ok {
		r = Instance{ID: inst.ID, ClusterID: inst.ClusterID, Host: fmt.Sprintf("%s-%s.%s.fleet.local", inst.Name, inst.ID, inst.ClusterID), CreatedAt: time.Now()}
		d.running[inst.ID] = r
	}
	return DataPlaneStatus{Ready: true, Host: r.Host, Started: !ok}, nil
}

func (d *memDataPlane) Remove(_ context.Context, inst Instance) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.running, inst.ID)
	return nil
}

func (d *memDataPlane) Running(context.Context) ([]Instance, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Instance, 0, len(d.running))
	for _, r := range d.running {
		out = append(out, r)
	}
	return out, nil
}

func (d *memDataPlane) Sweep(_ context.Context, inst Instance) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r, ok := d.running[inst.ID]; ok && r.Host == inst.Host {
		delete(d.running, inst.ID)
	}
	return nil
}

// noResources: instances need nothing outside the data plane.
type noResources struct{}

func (noResources) Ensure(context.Context, Instance) error { return nil }
func (noResources) Remove(context.Context, Instance) error { return nil }

// readyClusters: clusters need no provisioning; they are provisioned and
// deleted at once.
type readyClusters struct{}

func (readyClusters) Create(context.Context, cluster.Cluster) error         { return nil }
func (readyClusters) Ready(context.Context, cluster.Cluster) (bool, error)  { return true, nil }
func (readyClusters) Delete(context.Context, cluster.Cluster) (bool, error) { return true, nil }
