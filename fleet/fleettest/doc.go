// Package fleettest holds helpers for testing code that uses package fleet:
// an API client that speaks the fleet REST API (fleet/httpapi) with
// development tokens. The in-memory implementations of the fleet
// interfaces (a Store, a DataPlane, …) are in fleet/inmem.
package fleettest
