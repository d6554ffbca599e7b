// Package cluster is the data plane cluster domain of package fleet: a
// Cluster and its lifecycle (Status, Transitions), the Provider that
// creates and deletes clusters, and what a fleet.Placement sees of a
// cluster (Usage). The cluster worker of a fleet.Service drives every
// cluster through its statuses; this package holds no state of its own.
package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/fleetkit/fleetkit/fleet/lease"
)

// Cluster is a data plane cluster that hosts instances.
type Cluster struct {
	ID            string
	CloudProvider string
	Region        string
	MultiAZ       bool
	Status        Status
	FailedReason  string
	// InstanceTypes it accepts; empty means any.
	InstanceTypes []string
	// Capacity in units (see fleet.Options.Units); 0 means unlimited.
	Capacity    int
	CreatedAt   time.Time
	UpdatedAt   time.Time
	StatusSince time.Time
}

// Created returns c as a store records it when it is created at t: its
// zero timestamps (CreatedAt, UpdatedAt, StatusSince) set to t.
func (c Cluster) Created(t time.Time) Cluster {
	for _, f := range []*time.Time{&c.CreatedAt, &c.UpdatedAt, &c.StatusSince} {
		if f.IsZero() {
			*f = t
		}
	}
	return c
}

// Defaults is one local cluster in the region of
// httpapi.DefaultCloudProviders (aws, us-east-1).
func Defaults() []Cluster {
	return []Cluster{{ID: "local", CloudProvider: "aws", Region: "us-east-1", MultiAZ: true, Status: Accepted}}
}

// Update is a compare-and-swap change of one cluster (a Store's
// UpdateCluster, as fleet.Update is of an instance).
type Update struct {
	ID           string
	From, To     Status
	FailedReason *string
	Fence        lease.Fence
}

// Usage is a cluster and the capacity units its live instances use.
type Usage struct {
	Cluster
	Used int
}

// ErrExists means a cluster with the ID already exists (a Store's
// CreateCluster).
var ErrExists = errors.New("fleet: already exists")

// Status is the lifecycle state of a data plane cluster.
type Status string

// Cluster statuses: cluster_accepted → cluster_provisioning →
// cluster_provisioned → (terraforming) → waiting_for_fleetshard_operator →
// ready; ready → deprovisioning → cleanup; any but cleanup → failed.
const (
	Accepted             Status = "cluster_accepted"
	Provisioning         Status = "cluster_provisioning"
	Provisioned          Status = "cluster_provisioned"
	WaitingForFleetshard Status = "waiting_for_fleetshard_operator"
	Ready                Status = "ready"
	Deprovisioning       Status = "deprovisioning"
	Cleanup              Status = "cleanup"
	Failed               Status = "failed"
)

// Transitions lists, for every cluster status, the statuses it may move
// to; fleet.CheckTransition enforces it in the stores.
func Transitions() map[Status][]Status {
	return map[Status][]Status{
		Accepted:             {Provisioning, Failed, Deprovisioning},
		Provisioning:         {Provisioned, Failed, Deprovisioning},
		Provisioned:          {WaitingForFleetshard, Failed, Deprovisioning},
		WaitingForFleetshard: {Ready, Failed, Deprovisioning},
		Ready:                {Deprovisioning, Failed},
		Failed:               {Deprovisioning},
		Deprovisioning:       {Cleanup, Failed},
		Cleanup:              {},
	}
}

// Provider creates and deletes data plane clusters. The cluster worker
// calls it; every method is idempotent, safe for concurrent use and may
// block on I/O. An error wrapped by fleet.TerminalError fails the cluster.
type Provider interface {
	// Create starts creating c (cluster_accepted → cluster_provisioning).
	Create(ctx context.Context, c Cluster) error
	// Ready reports whether c is provisioned (→ cluster_provisioned).
	Ready(ctx context.Context, c Cluster) (bool, error)
	// Delete removes c and reports whether it is gone (deprovisioning →
	// cleanup).
	Delete(ctx context.Context, c Cluster) (bool, error)
}

// FleetshardChecker is the optional interface of a Provider that knows
// when the cluster's operator is up (waiting_for_fleetshard_operator →
// ready). Without it the cluster is ready once terraformed.
type FleetshardChecker interface {
	FleetshardReady(ctx context.Context, c Cluster) (bool, error)
}
