// Package openapitest checks exchanges with a fleet API against the OpenAPI
// document that API serves, with kin-openapi's validator. It lives apart
// from fleettest so that importing fleettest does not pull in kin-openapi.
//
// A Validator is safe for concurrent use. Typical use:
//
//	v := openapitest.Fetch(t, client)
//	client.Check = v.Check
package openapitest
