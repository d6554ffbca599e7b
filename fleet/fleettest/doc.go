// Package fleettest holds helpers for testing code that uses package fleet:
// an API client that speaks the fleet REST API with development tokens.
// The in-memory fakes (InmemDataPlane, InmemResources,
// InmemClusterProvider) live in package fleet itself, next to their
// interfaces, since they are also the service's defaults.
package fleettest
