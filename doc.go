// Package fleetkit is an SDK for running service fleets: importable
// packages with small interfaces and pluggable implementations, and thin
// example binaries that assemble them into reference services.
//
// This package holds no code; it maps the SDK.
//
//   - [github.com/fleetkit/fleetkit/linter]: lint source code and serve it
//     over HTTP in the four versions of the linter fleet. Interface:
//     linter.Linter; rule sets are linter.Language values in a
//     linter.Registry (built in: linter/python, modelled on pycodestyle, and
//     linter/java, modelled on checkstyle). Assembled by examples/linter
//     (the service) and examples/lint (a CLI).
//   - [github.com/fleetkit/fleetkit/balancer]: a weighted load balancer with
//     exact traffic ratios between versions (balancer.Policy; built in:
//     smooth weighted round robin), its reverse proxy, admin API and admin
//     client. Assembled by examples/loadbalancer and examples/quickstart.
//   - [github.com/fleetkit/fleetkit/machines]: machines that run services.
//     Interface: machines.Provider, implemented on the Docker Engine
//     (machines/docker), as local processes (machines/process, the embedded
//     default) and in memory for tests (machines/machinestest); plus health
//     checking (machines/health).
//   - [github.com/fleetkit/fleetkit/rollout]: the machine manager: gradual
//     rollouts by steps, converged by a surge-first reconciler over a
//     machines.Provider and a rollout.Router (a balancer, local or remote).
//     Assembled by examples/machine-manager and examples/quickstart.
//   - [github.com/fleetkit/fleetkit/fleet]: a managed-service fleet manager
//     generic over the resource kind: per-status workers, clusters and
//     placement, leader election; its REST API is fleet/httpapi (with
//     fleet/auth and fleet/quota). Stores: fleet/sqlite (embedded default),
//     fleet/postgres and fleet/inmem. Assembled by examples/fleet-manager.
//   - [github.com/fleetkit/fleetkit/deprecation]: deprecated and removed
//     Kubernetes apiVersions in manifests (deprecation.Checker) and in
//     deployed Helm releases (deprecation.ReleaseScanner, implemented by
//     deprecation/helm), exported as Prometheus metrics. Assembled by
//     examples/kdave.
//
// Dependencies point from the assembled to the basic: examples import
// packages, implementations with heavy dependencies import their concept
// package, never the reverse, and everything may import internal/.
package fleetkit
