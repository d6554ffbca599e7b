package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/internal/sqlstore"
)

// Store is a fleet.Store on PostgreSQL. Only the fleet.Store methods and
// Close are exported: the SQL handle and schema stay the store's own.
type Store struct {
	*sqlStore
}

// sqlStore names the embedded field in lower case: the SQL handle stays
// the store's own.
type sqlStore = sqlstore.Store

var (
	_ fleet.Store        = (*Store)(nil)
	_ fleet.SharedStore  = (*Store)(nil)
	_ fleet.AgentReports = (*Store)(nil)
)

// NeedsLeader implements fleet.SharedStore: replicas share a PostgreSQL
// database, so a Service on it always elects a leader per worker.
func (*Store) NeedsLeader() bool { return true }

// Options tunes Open.
type Options struct {
	// MaxConns bounds the connection pool; 0 means 24. Four of them are
	// reserved for writing the workers' status updates.
	MaxConns int
}

// Open connects to the database at url (a postgres:// URL or a DSN) and
// applies the migrations it lacks.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse url: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	if opts.MaxConns <= 0 {
		opts.MaxConns = 24
	}
	db.SetMaxOpenConns(opts.MaxConns)
	db.SetMaxIdleConns(opts.MaxConns)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	st, err := sqlstore.New(ctx, db, dialect())
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &Store{sqlStore: st}, nil
}

// dialect is PostgreSQL's sqlstore dialect.
func dialect() sqlstore.Dialect {
	return sqlstore.Dialect{
		Name:           "postgres",
		Numbered:       true,
		TimeType:       "TIMESTAMPTZ",
		BoolType:       "BOOLEAN",
		ILike:          func(col string) string { return col + " ILIKE ?" },
		LockMigrations: "SELECT pg_advisory_xact_lock(7302021)",
		// The two-key form: its key space does not overlap the one-key
		// form of LockMigrations.
		LockScope:  "SELECT pg_advisory_xact_lock(7302022, hashtext(?))",
		ForUpdate:  " FOR UPDATE",
		ArrayBatch: true,
		Flushers:   4,
		IsUnique: func(err error) bool {
			var e *pgconn.PgError
			return errors.As(err, &e) && e.Code == "23505"
		},
	}
}
