// Package dataplane is the fleet.DataPlane that runs every instance as a
// machine: each cluster maps to a machines.Provider (machines/process,
// machines/docker, machines/machinestest), and a ready instance is a
// running machine whose address is the instance's host.
//
// Apply is level-based: it finds the instance's machines by label, keeps
// one that runs and passes Options.Probe (the one at the recorded host
// first), removes the others (exited, not answering, duplicates adopted
// from another manager) and creates a new one when none is kept, so a data
// plane restarted or a machine that died converges on the next pass.
// Remove removes every machine of the instance; Running and Sweep
// (fleet.Sweeper) let the fleet's sweep remove machines no live instance
// owns, one at a time.
//
//	dp, err := dataplane.New(dataplane.Options{
//		Providers: map[string]machines.Provider{"local": process.New(...)},
//		Spec: func(i fleet.Instance) machines.Spec {
//			return machines.Spec{Name: i.Kind, Command: "my-service", Args: []string{"-addr", "{addr}"}}
//		},
//	})
//
// A DataPlane is safe for concurrent use; its methods block on the
// providers' I/O.
package dataplane
