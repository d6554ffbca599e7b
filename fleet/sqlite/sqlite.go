package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/internal/sqlstore"
)

// Store is a fleet.Store on SQLite. Only the fleet.Store methods and
// Close are exported: the SQL handle and schema stay the store's own.
type Store struct {
	*sqlStore
}

// sqlStore names the embedded field in lower case: the SQL handle stays
// the store's own.
type sqlStore = sqlstore.Store

var (
	_ fleet.Store        = (*Store)(nil)
	_ fleet.AgentReports = (*Store)(nil)
)

// Open opens (creating if needed) the database at path, or a private
// in-memory database for ":memory:" or "", and applies the migrations it
// lacks.
func Open(ctx context.Context, path string) (*Store, error) {
	params := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "foreign_keys(1)", "case_sensitive_like(1)", "synchronous(NORMAL)", "journal_size_limit(67108864)"} {
		params.Add("_pragma", p)
	}
	params.Set("_time_format", "sqlite")
	params.Set("_txlock", "immediate")
	var dsn string
	if path == "" || path == ":memory:" {
		dsn = "file::memory:?" + params.Encode()
	} else {
		params.Add("_pragma", "journal_mode(WAL)")
		dsn = "file:" + strings.ReplaceAll(path, "?", "%3F") + "?" + params.Encode()
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	st, err := sqlstore.New(ctx, db, dialect())
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &Store{sqlStore: st}, nil
}

// dialect is SQLite's sqlstore dialect. LIKE is case-sensitive (the
// case_sensitive_like pragma) as in PostgreSQL; ILIKE compares lower case.
func dialect() sqlstore.Dialect {
	return sqlstore.Dialect{
		Name:     "sqlite",
		TimeType: "DATETIME",
		BoolType: "BOOLEAN",
		ILike:    func(col string) string { return "LOWER(" + col + ") LIKE LOWER(?)" },
		IsUnique: func(err error) bool {
			var e *sqlite.Error
			if !errors.As(err, &e) {
				return false
			}
			return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
		},
	}
}
