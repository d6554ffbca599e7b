// Package sqlite is the embedded fleet.Store: SQLite through
// modernc.org/sqlite (pure Go, no cgo, no server). It is the default of
// examples/fleet-manager.
//
// The database is a file (created with its schema on first use) or, for
// ":memory:", private to the Store. Writes are serialised by SQLite; the
// Store uses one connection, so it is safe for concurrent use and never
// sees SQLITE_BUSY from itself; concurrent status changes are written in
// one transaction, and every transaction takes the write lock at its
// start (BEGIN IMMEDIATE), which also serialises quota checks. Several processes may share a file (WAL
// mode, busy timeout), though PostgreSQL (fleet/postgres) is the store
// for several replicas.
//
//	st, err := sqlite.Open(ctx, "fleet.db")
//	if err != nil { ... }
//	defer st.Close()
package sqlite
