// Package fleet is a managed-service fleet manager, generic over the kind
// of resource it manages (a Kind: "dinosaur", "kafka"): the library behind
// examples/fleet-manager.
//
// Users create instances through a REST API (Service.Handler) with the
// public shape of the original kas-fleet-manager,
// /api/<kind>s_mgmt/v1/<kind>s, its error bodies and codes, and an OpenAPI
// 3 document at /api/<kind>s_mgmt/v1/openapi. Workers (Service.Run), one
// per status, move every instance through its lifecycle:
//
//	accepted → preparing → provisioning → ready
//	   (any of them) → failed, with a reason
//	ready/failed (or earlier) → deprovision → deleting → soft deleted
//
// The statuses and their allowed transitions are data (Transitions);
// stores refuse any other change. Every status change is a
// compare-and-swap in the store (UPDATE … WHERE id = ? AND status = ?), a
// lost swap a *ConflictError; names are unique among live instances of an
// owner's scope (organisation, else owner) by a partial unique index.
//
// # Pieces
//
//   - Store (InstanceStore, ClusterStore, LeaseStore): fleet/sqlite (the
//     embedded default) and fleet/postgres; fleet/storetest is the
//     conformance suite both pass and the lifecycle suite of the API.
//   - Reconciler (level-based; Result and TerminalError as in
//     controller-runtime) and Runtime: one Worker per status with its own
//     resync interval, woken at once by a Notifier when an instance enters
//     its status, bounded concurrency, per-instance backoff, per-state
//     timeouts that fail the instance with a reason.
//   - The standard workers: accepted (Placement over clusters; no capacity
//     → waits, then fails with the original's reason), preparing
//     (ExternalResources), provisioning (DataPlane), ready, deprovision,
//     deleting (soft delete), a general job (status metrics, trial expiry,
//     deny-listed owners → deprovision) and a cluster job driving clusters
//     through a ClusterProvider.
//   - Quota (QuotaList reads the original's quota list shape), DenyList
//     (StaticDenyList), Authenticator (JWTAuthenticator: HS256 shared
//     secret, RS256 keys from a file or a JWKS URL, configurable claims).
//   - The data plane converges to the database: a pass that started an
//     instance re-reads its row and removes what is no longer live, and a
//     sweep (DataPlane's optional Sweeper), on every replica, removes
//     machines no live row owns; the ready worker reports an instance that
//     does not run in its failed_reason until it runs again; a host is
//     recorded by one live instance at most (ErrHostTaken).
//   - Leader election: on whenever the store is shared (SharedStore:
//     fleet/postgres), else with Options.LeaderElection; each worker runs only
//     while its replica holds the worker's lease in the store; leases are
//     renewed in a transaction that re-checks the holder, every worker
//     write carries the lease's fencing token (a deposed leader's late
//     write fails with ErrStaleFence), and a replica that cannot renew
//     stops its worker a quarter TTL before the lease can be taken.
//
// In-memory implementations ship next to the interfaces and are the
// defaults: InmemDataPlane, InmemResources, InmemClusterProvider.
// fleet/dataplane runs instances as machines (machines.Provider per
// cluster), so a ready instance is a running service whose host answers.
//
// # How workers are woken
//
// Writes through Service.Store (the API's and the workers') go through a
// NotifyingStore: the worker of the new status receives the row as written
// and reconciles it at once, without a list query. Every Interval a worker
// also lists (MaxPageSize rows a page, oldest in the status first; the
// next page at once while full pages are dispatched) to pick up changes
// made by other replicas, retries that fell due, and per-state timeouts.
// Stores write concurrent status changes together (group commit), so a
// worker's Concurrency costs few round trips. Timeouts are therefore checked at those passes: an instance
// fails at most one Interval (or one retry) after its deadline.
//
// # Concurrency
//
// Every exported type is safe for concurrent use unless its documentation
// says otherwise. Service.Run and Runtime.Run block until their context is
// done and own every goroutine they start. A quota check and its insert
// are one store transaction, serialised per owner's scope across every
// replica sharing the database (Store.CreateInstanceChecked), so
// concurrent creates on several replicas never exceed a quota.
//
// # Usage
//
//	st, err := sqlite.Open(ctx, "fleet.db")
//	if err != nil { ... }
//	auth, err := fleet.NewJWTAuthenticator(fleet.JWTOptions{HS256Secret: secret})
//	if err != nil { ... }
//	svc, err := fleet.New(st, fleet.Options{
//		Kind:     fleet.Dinosaur,
//		Auth:     auth,
//		Clusters: fleet.DefaultClusters(),
//	})
//	if err != nil { ... }
//	go svc.Run(ctx)
//	http.ListenAndServe("127.0.0.1:8000", svc.Handler())
//
// Metrics (prefixed fleetkit_fleet_, with a constant kind label):
// reconcile_duration_seconds{worker}, reconciles_total{worker,result},
// instances{status}, status_since_created_seconds{status},
// api_requests_total{route,method,code},
// api_request_duration_seconds{route,method}, leader{worker}. Every label
// value comes from a closed set: method is one of the route's methods or
// "other", whatever a client sends.
package fleet
