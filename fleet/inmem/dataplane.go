package inmem

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/fleetkit/fleetkit/fleet"
)

// DataPlaneOptions tunes an DataPlane.
type DataPlaneOptions struct {
	// ReadyAfter is how long after the first Apply an instance becomes
	// ready; 0 means at once.
	ReadyAfter time.Duration
	// Fail, when it returns a non-empty reason for an instance, makes Apply
	// report it failed with that reason.
	Fail func(fleet.Instance) string
	// Listen runs, for every instance, a tiny HTTP server on a free
	// loopback port that answers 200 on every path: Host then answers.
	Listen bool
}

// DataPlane is the in-memory reference DataPlane: instances "run" in
// a map. Safe for concurrent use.
type DataPlane struct {
	opts DataPlaneOptions

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

var _ fleet.DataPlane = (*DataPlane)(nil)

// NewDataPlane returns an empty in-memory data plane.
func NewDataPlane(opts DataPlaneOptions) *DataPlane {
	return &DataPlane{opts: opts, running: map[string]*inmemInstance{}, applies: map[string]int{}}
}

// Apply implements fleet.DataPlane.
func (d *DataPlane) Apply(ctx context.Context, inst fleet.Instance) (fleet.DataPlaneStatus, error) {
	if d.opts.Fail != nil {
		if reason := d.opts.Fail(inst); reason != "" {
			return fleet.DataPlaneStatus{FailedReason: reason}, nil
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
				return fleet.DataPlaneStatus{}, fmt.Errorf("inmem: data plane: %w", err)
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
		return fleet.DataPlaneStatus{Started: started}, nil
	}
	return fleet.DataPlaneStatus{Ready: true, Host: ri.host, Started: started}, nil
}

// Remove implements fleet.DataPlane.
func (d *DataPlane) Remove(ctx context.Context, inst fleet.Instance) error {
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

var _ fleet.Sweeper = (*DataPlane)(nil)

// Running implements fleet.Sweeper: the instances the data plane runs (ID,
// ClusterID and Host).
func (d *DataPlane) Running(context.Context) ([]fleet.Instance, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]fleet.Instance, 0, len(d.running))
	for id, ri := range d.running {
		out = append(out, fleet.Instance{ID: id, ClusterID: ri.cluster, Host: ri.host, CreatedAt: ri.since})
	}
	return out, nil
}

// Sweep implements fleet.Sweeper.
func (d *DataPlane) Sweep(ctx context.Context, inst fleet.Instance) error {
	d.mu.Lock()
	ri, ok := d.running[inst.ID]
	d.mu.Unlock()
	if !ok || ri.host != inst.Host {
		return nil
	}
	return d.Remove(ctx, inst)
}

// Close stops every instance's server. Idempotent.
func (d *DataPlane) Close() error {
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

// Resources is the in-memory fleet.ExternalResources: a DNS record and an
// SSO client per instance, in maps. Safe for concurrent use.
type Resources struct {
	// Fail, when it returns an error for an instance, makes Ensure fail.
	Fail func(fleet.Instance) error

	mu      sync.Mutex
	records map[string]string // guarded by mu: instance ID → DNS name
}

var _ fleet.ExternalResources = (*Resources)(nil)

// Ensure implements fleet.ExternalResources.
func (r *Resources) Ensure(ctx context.Context, inst fleet.Instance) error {
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

// Remove implements fleet.ExternalResources.
func (r *Resources) Remove(ctx context.Context, inst fleet.Instance) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.records, inst.ID)
	return nil
}

// Len returns how many instances have resources.
func (r *Resources) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.records)
}
