// Package inmem holds in-memory implementations of the fleet interfaces,
// for embedding a fleet in one process and for tests: Store (a fleet.Store
// that passes fleet/storetest's conformance suite), DataPlane (instances
// "run" in a map, optionally each behind a tiny HTTP server, with delays
// and failures to inject), Resources (fleet.ExternalResources) and
// ClusterProvider.
//
// Every type is safe for concurrent use and never blocks on I/O. Nothing
// outlives the process, and replicas cannot share a Store: use
// fleet/sqlite or fleet/postgres for that.
//
//	st := inmem.NewStore()
//	dp := inmem.NewDataPlane(inmem.DataPlaneOptions{Listen: true})
//	defer dp.Close()
//	svc, err := fleet.New(st, fleet.Options{Kind: fleet.Dinosaur, Clusters: cluster.Defaults(), DataPlane: dp})
package inmem
