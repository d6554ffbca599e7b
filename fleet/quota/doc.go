// Package quota holds the admission policies of the fleet API: a Checker
// says whether an owner may create one more instance (List reads the
// original kas-fleet-manager's quota-management-list file), and DenyList
// (read from a file; its Denied method is a fleet.Options.Denied) refuses
// owners outright.
//
// Both are immutable once loaded and safe for concurrent use. The API calls
// a Checker inside the store transaction that inserts the instance,
// serialised per owner's scope across replicas, so concurrent creates never
// exceed a quota.
//
//	q, err := quota.LoadList("quota.yaml")
//	if err != nil { ... }
//	h, err := httpapi.New(svc, httpapi.Options{Auth: a, Quota: q})
package quota
