// Package dataplane is the fleet.DataPlane that runs every instance as a
// machine: each cluster maps to a machines.Provider (machines/process,
// machines/docker, machines/machinestest), and a ready instance is a
// running machine whose address is the instance's host.
//
// Apply is level-based: it finds the instance's machine by label, removes
// an exited one and creates a new one when none runs, so a data plane
// restarted or a machine that died converges on the next pass. Remove
// removes every machine of the instance.
//
//	dp, err := dataplane.New(dataplane.Options{
//		Providers: map[string]machines.Provider{"local": process.New(...)},
//		Spec: func(i fleet.Instance) machines.Spec {
//			return machines.Spec{Language: i.Kind, Version: "1.0", Command: "my-service"}
//		},
//	})
//
// A DataPlane is safe for concurrent use; its methods block on the
// providers' I/O.
package dataplane

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"sync"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/machines"
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
	return &DataPlane{opts: Options{Providers: maps.Clone(opts.Providers), Spec: opts.Spec}, locks: map[string]*sync.Mutex{}}, nil
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
	all, err := p.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("list machines: %w", err)
	}
	var out []machines.Machine
	for _, m := range all {
		if m.Labels[LabelInstance] == id {
			out = append(out, m)
		}
	}
	return out, nil
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
	for _, m := range ms {
		if m.State == machines.StateRunning && m.Address != "" {
			return fleet.DataPlaneStatus{Ready: true, Host: m.Address}, nil
		}
	}
	for _, m := range ms { // exited: make room for a new one
		if err := p.Remove(ctx, m.ID); err != nil && !errors.Is(err, machines.ErrNotFound) {
			return fleet.DataPlaneStatus{}, fmt.Errorf("remove exited machine %s: %w", m.ID, err)
		}
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
	return fleet.DataPlaneStatus{Ready: true, Host: m.Address}, nil
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
