// Package fleetkit is an SDK for running service fleets: importable
// packages with small interfaces and pluggable implementations, and thin
// example binaries that assemble them into reference services.
//
// This package holds no code; it maps the SDK.
//
//   - [github.com/fleetkit/fleetkit/linter]: lint source code and serve it
//     over HTTP. Interface: linter.Linter; rule sets are linter.Language
//     values in a linter.Registry (built in: linter/python, modelled on
//     pycodestyle, and linter/java, modelled on checkstyle). Assembled by
//     examples/linter (the service) and examples/lint (a CLI).
//   - [github.com/fleetkit/fleetkit/balancer]: a weighted load balancer
//     with exact traffic ratios between versions, its reverse proxy, admin
//     API and admin client. Assembled by examples/loadbalancer.
//   - [github.com/fleetkit/fleetkit/machines]: machines that run services.
//     Interface: machines.Provider, implemented on the Docker Engine
//     (machines/docker), as local processes (machines/process, the embedded
//     default) and in memory for tests (machines/machinestest); plus health
//     checking.
//   - [github.com/fleetkit/fleetkit/deprecation]: find deprecated and
//     removed Kubernetes apiVersions in manifests. Assembled by
//     examples/kdave.
//
// Planned, per the design documents: rollout (the machine manager with
// gradual updates), fleet (a managed-service fleet manager) and the Helm
// and GitOps sources of deprecation.
//
// Dependencies point from the assembled to the basic: examples import
// packages, implementations with heavy dependencies import their concept
// package, never the reverse, and everything may import internal/.
package fleetkit
