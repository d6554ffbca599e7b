// Package sqlstore is the fleet.Store shared by fleet/sqlite and
// fleet/postgres: one database/sql implementation parameterised by a
// Dialect. Every value reaches SQL as a placeholder argument.
package sqlstore
