// Package fleet is a managed-service fleet manager, generic over the kind
// of resource it manages (a Kind: "dinosaur", "kafka"): the library behind
// examples/fleet-manager. This package is the domain and the engine; its
// REST API, its stores and its policies are subpackages:
//
//	fleet            Instance, Status, Kind; the Store contract;
//	                 the Service that runs the workers (New, Run); the
//	                 extension points DataPlane, ExternalResources,
//	                 Placement; the sentinel errors
//	fleet/cluster    data plane clusters: Cluster, its statuses, the
//	                 Provider that creates them (Options.ClusterProvider)
//	fleet/lease      leader leases and fencing tokens (lease.Fence)
//	fleet/httpapi    the REST API of a Service (kas-fleet-manager's shape,
//	                 its error codes, its OpenAPI document)
//	fleet/auth       who calls the API: JWT (HS256, RS256, JWKS)
//	fleet/quota      quota list and deny list files
//	fleet/search     the list API's filter language
//	fleet/sqlite     the embedded Store; fleet/postgres the shared one
//	fleet/inmem      in-memory Store, DataPlane, Resources, cluster.Provider
//	fleet/dataplane  instances as machines (a machines.Provider per cluster)
//	fleet/storetest  the suites every Store passes; fleet/fleettest an API
//	                 client for tests
//
// # An instance's life
//
// Workers (Service.Run), one per status, move every instance through its
// lifecycle:
//
//	accepted → preparing → provisioning → ready
//	   (any of them) → failed, with a reason
//	ready/failed (or earlier) → deprovision → deleting → soft deleted
//	ready → suspending → suspended → resuming → ready (Service.Suspend, Resume)
//
// accepted places the instance on a cluster (Placement; no capacity → it
// waits, then fails with the original's reason), preparing creates its
// ExternalResources, provisioning runs it on the DataPlane until ready,
// ready reports an instance that stops running in its failed_reason,
// deprovision and deleting undo it all; suspending stops an instance on
// the data plane and resuming starts it again. A general job counts statuses,
// expires trials and deprovisions denied owners (Options.Denied); a
// cluster job drives clusters through a cluster.Provider.
//
// The statuses and their allowed transitions are data (CheckTransition);
// stores refuse any other change. Every status change is a
// compare-and-swap in the store, a lost swap a *ConflictError; names are
// unique among the live instances of an owner's scope (organisation, else
// owner); a host is recorded by one live instance at most (ErrHostTaken).
//
// # Replicas
//
// Leader election is on whenever the store is shared (SharedStore:
// fleet/postgres), else with Options.LeaderElection: each worker runs only
// while its replica holds the worker's lease in the store (the workers that
// drive the data plane — provisioning, ready, deprovision, deleting,
// suspending, resuming —
// share one, "<kind>/dataplane", so that one replica's data plane runs
// every instance: with a data plane per replica, split leaders would start
// each instance twice), every worker
// write carries the lease's fencing token (a deposed leader's late write
// fails with lease.ErrStaleFence), and a replica that cannot renew stops its
// worker a quarter TTL before the lease can be taken. The data plane is
// converged to the database: a sweep (DataPlane's optional Sweeper), on
// every replica, removes what no live row owns.
//
// # Agent data planes
//
// A data plane may run instances through an agent on each cluster
// (fleet/agentplane, with the agent API of fleet/agentapi). The agents'
// reports live in the store (the optional AgentReports, which every store
// here implements), and a DataPlane that is a ClusterView adjusts the
// clusters placement sees: it leaves out clusters whose agent went silent
// and gives the others the capacity their agent reports.
//
// # How workers are woken
//
// Each worker is an internal/reconcile engine keyed by instance ID, one per
// lease term. Writes through Service.Store (the API's and the workers')
// enqueue the instance in the worker of its new status at once, with the
// row as written. Every Interval a worker also lists its status
// (1000 rows a page, oldest first) to pick up changes made by other
// replicas. Errors are retried with a per-instance backoff; an instance
// that outstays its status's timeout is looked at again at its deadline
// and failed then. Stores write concurrent status changes together
// (group commit), so a worker's Concurrency costs few round trips.
//
// # Concurrency
//
// Every exported type is safe for concurrent use unless its documentation
// says otherwise. Service.Run blocks until its context is done and owns
// every goroutine it starts. Store.CreateInstanceChecked serialises a
// quota check and its insert per owner's scope across every replica
// sharing the database, so concurrent creates never exceed a quota.
//
// # Usage
//
//	st, err := sqlite.Open(ctx, "fleet.db")
//	if err != nil { ... }
//	svc, err := fleet.New(st, fleet.Options{Kind: fleet.Dinosaur, Clusters: cluster.Defaults()})
//	if err != nil { ... }
//	authn, err := auth.NewJWTAuthenticator(auth.JWTOptions{HS256Secret: secret})
//	if err != nil { ... }
//	api, err := httpapi.New(svc, httpapi.Options{Auth: authn})
//	if err != nil { ... }
//	go svc.Run(ctx)
//	http.ListenAndServe("127.0.0.1:8000", api)
//
// Metrics (prefixed fleetkit_fleet_, with a constant kind label):
// reconcile_duration_seconds{worker}, reconciles_total{worker,result},
// instances{status}, status_since_created_seconds{status}, leader{worker};
// each worker's engine adds internal/reconcile's fleetkit_reconcile_*
// metrics (queue depth, duration, retries, errors) named by worker;
// fleet/httpapi adds the API's.
package fleet
