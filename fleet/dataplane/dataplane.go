package dataplane

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/health"
)

// LabelInstance is the machine label holding the instance ID.
const LabelInstance = "fleet.instance"

// Options configures a DataPlane.
type Options struct {
	// Providers maps cluster IDs to the provider that runs their machines
	// (at least one).
	Providers map[string]machines.Provider
	// Spec returns the machine spec of an instance (required). The
	// instance label is added to its labels.
	Spec func(fleet.Instance) machines.Spec
	// Probe, when set, checks a running machine on every Apply (the ready
	// worker's liveness check); a machine that fails it is replaced. It
	// should make sure the machine answers for this instance, not for
	// another one that took its address: see HTTPProbe.
	Probe func(ctx context.Context, inst fleet.Instance, m machines.Machine) error
}

// HTTPProbe returns a Probe that GETs path(inst) on the machine's address
// and wants 200 within timeout (0: two seconds). A path that names the
// instance (/health/<id>, answered 404 by any other instance) makes it an
// identity check as well.
func HTTPProbe(path func(fleet.Instance) string, timeout time.Duration) func(context.Context, fleet.Instance, machines.Machine) error {
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	client := &http.Client{Timeout: timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return func(ctx context.Context, inst fleet.Instance, m machines.Machine) error {
		_, err := health.Probe(ctx, client, "http://"+m.Address+path(inst))
		return err
	}
}

// DataPlane runs instances as machines.
type DataPlane struct {
	opts Options

	// mu guards locks: one lock per instance, so two passes never create
	// two machines for one instance in this process.
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

var _ fleet.DataPlane = (*DataPlane)(nil)

// New validates opts and returns a DataPlane.
func New(opts Options) (*DataPlane, error) {
	if len(opts.Providers) == 0 {
		return nil, fmt.Errorf("%w: dataplane needs at least one provider", fleet.ErrInvalid)
	}
	for id, p := range opts.Providers {
		if p == nil {
			return nil, fmt.Errorf("%w: dataplane: nil provider for cluster %q", fleet.ErrInvalid, id)
		}
	}
	if opts.Spec == nil {
		return nil, fmt.Errorf("%w: dataplane needs a Spec func", fleet.ErrInvalid)
	}
	opts.Providers = maps.Clone(opts.Providers)
	return &DataPlane{opts: opts, locks: map[string]*sync.Mutex{}}, nil
}

func (d *DataPlane) lock(id string) func() {
	d.mu.Lock()
	l, ok := d.locks[id]
	if !ok {
		l = &sync.Mutex{}
		d.locks[id] = l
	}
	d.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// machinesOf returns the machines of instance id on p.
func machinesOf(ctx context.Context, p machines.Provider, id string) ([]machines.Machine, error) {
	ms, err := p.List(ctx, machines.Selector{LabelInstance: id})
	if err != nil {
		return nil, fmt.Errorf("list machines: %w", err)
	}
	return ms, nil
}

// Apply implements fleet.DataPlane.
func (d *DataPlane) Apply(ctx context.Context, inst fleet.Instance) (fleet.DataPlaneStatus, error) {
	p, ok := d.opts.Providers[inst.ClusterID]
	if !ok {
		return fleet.DataPlaneStatus{FailedReason: fmt.Sprintf("no machine provider for cluster %q", inst.ClusterID)}, nil
	}
	defer d.lock(inst.ID)()
	ms, err := machinesOf(ctx, p, inst.ID)
	if err != nil {
		return fleet.DataPlaneStatus{}, err
	}
	// Keep one running machine that passes the probe, the one at the
	// recorded host first; remove the others: exited, not answering, or a
	// second machine of the instance (another manager's, adopted).
	slices.SortStableFunc(ms, func(a, b machines.Machine) int {
		return cmpBool(a.Address == inst.Host, b.Address == inst.Host)
	})
	var keep *machines.Machine
	for i, m := range ms {
		if keep == nil && m.State == machines.StateRunning && m.Address != "" && d.healthy(ctx, inst, m) {
			keep = &ms[i]
			continue
		}
		if err := p.Remove(ctx, m.ID); err != nil && !errors.Is(err, machines.ErrNotFound) {
			return fleet.DataPlaneStatus{}, fmt.Errorf("remove machine %s: %w", m.ID, err)
		}
	}
	if keep != nil {
		return fleet.DataPlaneStatus{Ready: true, Host: keep.Address}, nil
	}
	spec := d.opts.Spec(inst)
	spec.Labels = maps.Clone(spec.Labels)
	if spec.Labels == nil {
		spec.Labels = map[string]string{}
	}
	spec.Labels[LabelInstance] = inst.ID
	m, err := p.Create(ctx, spec)
	if errors.Is(err, machines.ErrInvalidSpec) {
		return fleet.DataPlaneStatus{FailedReason: fmt.Sprintf("data plane refused the machine: %v", err)}, nil
	}
	if err != nil {
		return fleet.DataPlaneStatus{}, fmt.Errorf("create machine: %w", err)
	}
	return fleet.DataPlaneStatus{Ready: true, Host: m.Address, Started: true}, nil
}

// healthy runs the probe, if any, on m.
func (d *DataPlane) healthy(ctx context.Context, inst fleet.Instance, m machines.Machine) bool {
	return d.opts.Probe == nil || d.opts.Probe(ctx, inst, m) == nil
}

// cmpBool orders true before false.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

var _ fleet.Sweeper = (*DataPlane)(nil)

// Sweep implements fleet.Sweeper: it removes the machines of inst.ID at
// inst.Host only.
func (d *DataPlane) Sweep(ctx context.Context, inst fleet.Instance) error {
	p, ok := d.opts.Providers[inst.ClusterID]
	if !ok {
		return nil
	}
	defer d.lock(inst.ID)()
	ms, err := machinesOf(ctx, p, inst.ID)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.Address != inst.Host {
			continue
		}
		if err := p.Remove(ctx, m.ID); err != nil && !errors.Is(err, machines.ErrNotFound) {
			return fmt.Errorf("remove machine %s: %w", m.ID, err)
		}
	}
	return nil
}

// Running implements fleet.Sweeper: one Instance (ID, ClusterID, Host)
// per machine that carries the instance label, on every provider.
func (d *DataPlane) Running(ctx context.Context) ([]fleet.Instance, error) {
	var out []fleet.Instance
	for cluster, p := range d.opts.Providers {
		all, err := p.List(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("list machines of cluster %s: %w", cluster, err)
		}
		for _, m := range all {
			if id := m.Labels[LabelInstance]; id != "" {
				out = append(out, fleet.Instance{ID: id, ClusterID: cluster, Host: m.Address, CreatedAt: m.CreatedAt})
			}
		}
	}
	return out, nil
}

// Remove implements fleet.DataPlane.
func (d *DataPlane) Remove(ctx context.Context, inst fleet.Instance) error {
	p, ok := d.opts.Providers[inst.ClusterID]
	if !ok {
		return nil // it never ran here
	}
	defer d.lock(inst.ID)()
	ms, err := machinesOf(ctx, p, inst.ID)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if err := p.Remove(ctx, m.ID); err != nil && !errors.Is(err, machines.ErrNotFound) {
			return fmt.Errorf("remove machine %s: %w", m.ID, err)
		}
	}
	d.mu.Lock()
	delete(d.locks, inst.ID)
	d.mu.Unlock()
	return nil
}
