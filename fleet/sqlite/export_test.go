package sqlite

import (
	"context"
	"database/sql"

	"github.com/fleetkit/fleetkit/fleet/internal/sqlstore"
)

// Truncate deletes every row but keeps the schema (between tests).
func Truncate(ctx context.Context, s *Store) error { return sqlstore.Truncate(ctx, s.sqlStore) }

// Version returns the schema version applied.
func Version(ctx context.Context, s *Store) (int, error) { return sqlstore.Version(ctx, s.sqlStore) }

// DB returns the database handle.
func DB(s *Store) *sql.DB { return sqlstore.DB(s.sqlStore) }
