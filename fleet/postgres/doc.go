// Package postgres is the production fleet.Store: PostgreSQL through pgx
// (its database/sql driver, so it shares its SQL with fleet/sqlite).
// Several replicas can share one database: names are unique by a partial
// unique index, status changes are compare-and-swap (concurrent ones
// written together, one statement per group of like changes), leases
// re-check their holder under a row lock, and migrations and the quota
// check of each owner's scope are serialised by advisory locks.
//
//	st, err := postgres.Open(ctx, "postgres://user@127.0.0.1:5432/fleet?sslmode=disable")
//	if err != nil { ... }
//	defer st.Close()
//
// A Store is safe for concurrent use.
package postgres
