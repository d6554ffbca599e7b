// Package storetest holds the suites every fleet.Store runs (fleet/sqlite
// always, fleet/postgres against a real server), so they behave the same:
//
//   - Run: the Store conformance suite (uniqueness under concurrency,
//     checked creates serialised per scope, compare-and-swap, soft
//     delete, search, leases and fencing).
//   - RunLifecycle: a whole fleet.Service on the store, driven through its
//     REST API (create → ready → deleted, errors, quota, visibility, deny
//     list, timeouts, data plane failure, trials, failover of replicas).
//   - Load: the create→ready throughput measurement of the benchmarks.
//
// A store's tests call them with a function returning an empty store:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) fleet.Store { return openEmptyStore(t) })
//	}
//
// newStore must return an empty store (a fresh database, or truncated
// tables) each time it is called. Subtests run one after another.
package storetest
