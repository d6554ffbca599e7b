// Package search is the filter language of the fleet list API: Parse turns
// the search parameter ("name like 'rex%' and region = us-east-1") into an
// Expr over an allow-list of fields, which a fleet.Query carries to the
// store. Stores render an Expr with placeholders only, so no text of a
// search ever reaches SQL. Every refusal is an *Error whose Reason the API
// answers (code 23).
//
// Parse is a pure function, safe for concurrent use.
package search
