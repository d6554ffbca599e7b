// Package httpapi is the REST API of a fleet.Service, with the public shape
// of the original kas-fleet-manager: /api/<kind>s_mgmt/v1/<kind>s, its error
// bodies and codes, cloud providers and regions, and an OpenAPI 3 document
// at /api/<kind>s_mgmt/v1/openapi.
//
// A Handler is an http.Handler built on a Service: its writes go through
// Service.Store, so the workers see them at once. Domain errors map to the
// original's error codes in one place (writeError). Callers are identified
// by an auth.Authenticator; creates are checked against a quota.Checker
// and the service's deny list. Bodies are size-limited and a panic under a
// request is answered 500 with the original's body.
//
// A Handler is safe for concurrent use.
//
//	svc, err := fleet.New(st, fleet.Options{Kind: fleet.Dinosaur, Clusters: cluster.Defaults()})
//	if err != nil { ... }
//	api, err := httpapi.New(svc, httpapi.Options{Auth: authn})
//	if err != nil { ... }
//	go svc.Run(ctx)
//	http.ListenAndServe("127.0.0.1:8000", api)
//
// The metrics calls (<kind>s/{id}/metrics/query, query_range, federate)
// answer a ready instance's own metrics, read at each call through
// Options.Metrics (an InstanceMetrics; HTTPMetrics scrapes the instance's
// host). query_range answers from the readings made before, kept in a
// bounded history per Handler.
//
// Metrics (on Options.Registerer, with a constant kind label):
// fleetkit_fleet_api_requests_total{route,method,code} and
// fleetkit_fleet_api_request_duration_seconds{route,method}. Every label
// value comes from a closed set: method is one of the route's methods or
// "other", whatever a client sends.
package httpapi
