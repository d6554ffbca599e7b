package fleet

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// DataPlane runs instances on clusters. The provisioning worker calls Apply
// until the instance is ready; the deprovision worker calls Remove. Both
// must be idempotent and safe for concurrent use; both may block on I/O.
//
// Implementations: InmemDataPlane (in memory, the default) and
// fleet/dataplane, which runs each instance as a machine through a
// machines.Provider per cluster.
type DataPlane interface {
	// Apply makes sure inst runs on inst.ClusterID and reports its state.
	Apply(ctx context.Context, inst Instance) (DataPlaneStatus, error)
	// Remove stops inst; removing an unknown instance succeeds.
	Remove(ctx context.Context, inst Instance) error
}

// DataPlaneStatus is what the data plane reports about an instance.
type DataPlaneStatus struct {
	// Ready is true when the instance serves at Host.
	Ready bool
	Host  string
	// Started is true when this Apply started the instance (it was not
	// running): the caller then checks that the instance still exists, as
	// a delete may have finished while it was started.
	Started bool
	// FailedReason, when set, fails the instance: the data plane gave up.
	FailedReason string
}

// Sweeper is the optional interface of a DataPlane that can list what it
// runs, so that a sweep removes what no live instance owns: machines of
// deleted instances that a late pass started, or that a previous manager
// left behind. Running returns one Instance per machine: its ID,
// ClusterID, Host and, as CreatedAt, when the machine started. It may
// block on I/O. Sweep removes the one machine Running reported as inst
// (its ID and Host), not the instance's other machines.
type Sweeper interface {
	Running(ctx context.Context) ([]Instance, error)
	Sweep(ctx context.Context, inst Instance) error
}

// InmemDataPlaneOptions tunes an InmemDataPlane.
type InmemDataPlaneOptions struct {
	// ReadyAfter is how long after the first Apply an instance becomes
	// ready; 0 means at once.
	ReadyAfter time.Duration
	// Fail, when it returns a non-empty reason for an instance, makes Apply
	// report it failed with that reason.
	Fail func(Instance) string
	// Listen runs, for every instance, a tiny HTTP server on a free
	// loopback port that answers 200 on every path: Host then answers.
	Listen bool
}

// InmemDataPlane is the in-memory reference DataPlane: instances "run" in
// a map. Safe for concurrent use.
type InmemDataPlane struct {
	opts InmemDataPlaneOptions

	mu      sync.Mutex
	running map[string]*inmemInstance // guarded by mu: by instance ID
	applies map[string]int            // guarded by mu: Apply calls by ID
}

type inmemInstance struct {
	cluster string
	since   time.Time
	host    string
	srv     *http.Server
	done    chan struct{}
}

var _ DataPlane = (*InmemDataPlane)(nil)

// NewInmemDataPlane returns an empty in-memory data plane.
func NewInmemDataPlane(opts InmemDataPlaneOptions) *InmemDataPlane {
	return &InmemDataPlane{opts: opts, running: map[string]*inmemInstance{}, applies: map[string]int{}}
}

// Apply implements DataPlane.
func (d *InmemDataPlane) Apply(ctx context.Context, inst Instance) (DataPlaneStatus, error) {
	if d.opts.Fail != nil {
		if reason := d.opts.Fail(inst); reason != "" {
			return DataPlaneStatus{FailedReason: reason}, nil
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.applies[inst.ID]++
	ri, ok := d.running[inst.ID]
	started := !ok
	if !ok {
		ri = &inmemInstance{cluster: inst.ClusterID, since: time.Now(), host: fmt.Sprintf("%s-%s.%s.fleet.local", inst.Name, inst.ID, inst.ClusterID)}
		if d.opts.Listen {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return DataPlaneStatus{}, fmt.Errorf("fleet: inmem data plane: %w", err)
			}
			ri.host = ln.Addr().String()
			ri.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = fmt.Fprintf(w, "%s %s\n", inst.Kind, inst.Name)
			}), ReadHeaderTimeout: 5 * time.Second}
			ri.done = make(chan struct{})
			go func() {
				defer close(ri.done)
				_ = ri.srv.Serve(ln)
			}()
		}
		d.running[inst.ID] = ri
	}
	if time.Since(ri.since) < d.opts.ReadyAfter {
		return DataPlaneStatus{Started: started}, nil
	}
	return DataPlaneStatus{Ready: true, Host: ri.host, Started: started}, nil
}

// Remove implements DataPlane.
func (d *InmemDataPlane) Remove(ctx context.Context, inst Instance) error {
	d.mu.Lock()
	ri, ok := d.running[inst.ID]
	delete(d.running, inst.ID)
	d.mu.Unlock()
	if ok && ri.srv != nil {
		_ = ri.srv.Close()
		<-ri.done
	}
	return nil
}

var _ Sweeper = (*InmemDataPlane)(nil)

// Running implements Sweeper: the instances the data plane runs (ID,
// ClusterID and Host).
func (d *InmemDataPlane) Running(context.Context) ([]Instance, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]Instance, 0, len(d.running))
	for id, ri := range d.running {
		out = append(out, Instance{ID: id, ClusterID: ri.cluster, Host: ri.host, CreatedAt: ri.since})
	}
	return out, nil
}

// Sweep implements Sweeper.
func (d *InmemDataPlane) Sweep(ctx context.Context, inst Instance) error {
	d.mu.Lock()
	ri, ok := d.running[inst.ID]
	d.mu.Unlock()
	if !ok || ri.host != inst.Host {
		return nil
	}
	return d.Remove(ctx, inst)
}

// Close stops every instance's server. Idempotent.
func (d *InmemDataPlane) Close() error {
	d.mu.Lock()
	running := d.running
	d.running = map[string]*inmemInstance{}
	d.mu.Unlock()
	for _, ri := range running {
		if ri.srv != nil {
			_ = ri.srv.Close()
			<-ri.done
		}
	}
	return nil
}

// ExternalResources are the resources outside the data plane an instance
// needs (a DNS record, an SSO client). The preparing worker creates them,
// the ready worker keeps them in sync, the deleting worker removes them.
// Both methods are idempotent, safe for concurrent use, and may block.
type ExternalResources interface {
	Ensure(ctx context.Context, inst Instance) error
	Remove(ctx context.Context, inst Instance) error
}

// InmemResources is the in-memory ExternalResources: a DNS record and an
// SSO client per instance, in maps. Safe for concurrent use.
type InmemResources struct {
	// Fail, when it returns an error for an instance, makes Ensure fail.
	Fail func(Instance) error

	mu      sync.Mutex
	records map[string]string // guarded by mu: instance ID → DNS name
}

var _ ExternalResources = (*InmemResources)(nil)

// Ensure implements ExternalResources.
func (r *InmemResources) Ensure(ctx context.Context, inst Instance) error {
	if r.Fail != nil {
		if err := r.Fail(inst); err != nil {
			return err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.records == nil {
		r.records = map[string]string{}
	}
	r.records[inst.ID] = inst.Name + "-" + inst.ID + ".fleet.local"
	return nil
}

// Remove implements ExternalResources.
func (r *InmemResources) Remove(ctx context.Context, inst Instance) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.records, inst.ID)
	return nil
}

// Len returns how many instances have resources.
func (r *InmemResources) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.records)
}
