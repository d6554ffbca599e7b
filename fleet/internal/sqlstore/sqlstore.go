package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/lease"
	"github.com/fleetkit/fleetkit/fleet/search"
)

// Dialect is what differs between the databases.
type Dialect struct {
	// Name names the database in errors.
	Name string
	// Numbered placeholders ($1, $2...) instead of ?.
	Numbered bool
	// TimeType and BoolType are the column types of the migrations.
	TimeType, BoolType string
	// ILike renders a case-insensitive LIKE of col against one placeholder.
	ILike func(col string) string
	// IsUnique reports a unique constraint violation.
	IsUnique func(error) bool
	// LockMigrations, when set, runs first in the migration transaction to
	// serialise replicas migrating at once.
	LockMigrations string
	// ForUpdate is appended to the lease read ("" where the transaction
	// already locks the database).
	ForUpdate string
	// ArrayBatch writes a group of like instance updates as one statement
	// over arrays (PostgreSQL's unnest): one round trip for the group.
	// Unset, a batch is one transaction of one statement per update.
	ArrayBatch bool
	// LockScope, when set, runs first in the transaction of a checked
	// create, with the kind and scope as its one argument, to serialise
	// the checked creates of a scope across replicas. Unset where the
	// transaction already holds the database's write lock.
	LockScope string
	// Flushers is how many batches of instance updates may be written at
	// once (0 means 1, right for a single-writer database). More than one
	// flusher each reserve a connection of the pool.
	Flushers int
}

// Store implements fleet.Store on a *sql.DB.
type Store struct {
	db *sql.DB
	d  Dialect
	// stmts caches prepared statements by SQL text. Only queries from a
	// bounded set are cached (never one rendered from a search).
	stmts sync.Map
	up    *updater
}

var _ fleet.Store = (*Store)(nil)

// New applies the migrations db lacks and returns the store.
func New(ctx context.Context, db *sql.DB, d Dialect) (*Store, error) {
	s := &Store{db: db, d: d}
	if err := s.migrate(ctx); err != nil {
		return nil, err
	}
	s.up = newUpdater(s)
	return s, nil
}

// Of returns the SQL store under st (a fleet/sqlite or fleet/postgres
// Store, which embed it), for this package's tests.
func Of(st fleet.Store) (*Store, bool) {
	u, ok := st.(interface{ self() *Store })
	if !ok {
		return nil, false
	}
	return u.self(), true
}

func (s *Store) self() *Store { return s }

// DB returns the database handle of s (for tests).
func DB(s *Store) *sql.DB { return s.db }

// Close stops the group commit, then closes the prepared statements and
// the database handle.
func (s *Store) Close() error {
	s.up.close()
	s.stmts.Range(func(k, v any) bool {
		_ = v.(*sql.Stmt).Close()
		s.stmts.Delete(k)
		return true
	})
	return s.db.Close()
}

// stmt returns the cached prepared statement of query (already rebound),
// or nil when preparing fails (the caller then runs it unprepared, which
// reports the error).
func (s *Store) stmt(ctx context.Context, query string) *sql.Stmt {
	if v, ok := s.stmts.Load(query); ok {
		return v.(*sql.Stmt)
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	if v, loaded := s.stmts.LoadOrStore(query, st); loaded {
		_ = st.Close()
		return v.(*sql.Stmt)
	}
	return st
}

// queryRow, query and exec run query (with ? placeholders), through a
// cached prepared statement when cache is set.
func (s *Store) queryRow(ctx context.Context, cache bool, query string, args ...any) *sql.Row {
	query = s.q(query)
	if st := s.cached(ctx, cache, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.db.QueryRowContext(ctx, query, args...)
}

func (s *Store) query(ctx context.Context, cache bool, query string, args ...any) (*sql.Rows, error) {
	query = s.q(query)
	if st := s.cached(ctx, cache, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.db.QueryContext(ctx, query, args...)
}

func (s *Store) exec(ctx context.Context, cache bool, query string, args ...any) (sql.Result, error) {
	query = s.q(query)
	if st := s.cached(ctx, cache, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return s.db.ExecContext(ctx, query, args...)
}

func (s *Store) cached(ctx context.Context, cache bool, query string) *sql.Stmt {
	if !cache {
		return nil
	}
	return s.stmt(ctx, query)
}

// q rewrites ? placeholders for the dialect. The package's SQL contains no
// ? other than placeholders.
func (s *Store) q(query string) string {
	if !s.d.Numbered {
		return query
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(query[i])
	}
	return b.String()
}

func now() time.Time { return time.Now().UTC() }

// migrations are applied in order, each once; their index+1 is the version.
func (s *Store) migrations() []string {
	r := strings.NewReplacer("{ts}", s.d.TimeType, "{bool}", s.d.BoolType)
	return []string{
		r.Replace(`
CREATE TABLE instances (
	id TEXT PRIMARY KEY,
	kind TEXT NOT NULL,
	name TEXT NOT NULL,
	owner TEXT NOT NULL,
	organisation TEXT NOT NULL DEFAULT '',
	scope TEXT NOT NULL,
	cloud_provider TEXT NOT NULL,
	region TEXT NOT NULL,
	multi_az {bool} NOT NULL,
	instance_type TEXT NOT NULL,
	status TEXT NOT NULL,
	failed_reason TEXT NOT NULL DEFAULT '',
	cluster_id TEXT NOT NULL DEFAULT '',
	host TEXT NOT NULL DEFAULT '',
	created_at {ts} NOT NULL,
	updated_at {ts} NOT NULL,
	status_since {ts} NOT NULL,
	expires_at {ts},
	deleted_at {ts}
);
CREATE UNIQUE INDEX instances_live_name ON instances (kind, scope, name) WHERE deleted_at IS NULL;
CREATE INDEX instances_live_status ON instances (kind, status, status_since) WHERE deleted_at IS NULL;
CREATE INDEX instances_live_cluster ON instances (cluster_id) WHERE deleted_at IS NULL;
CREATE INDEX instances_owner ON instances (owner);
CREATE INDEX instances_organisation ON instances (organisation);
CREATE TABLE clusters (
	id TEXT PRIMARY KEY,
	cloud_provider TEXT NOT NULL,
	region TEXT NOT NULL,
	multi_az {bool} NOT NULL,
	status TEXT NOT NULL,
	failed_reason TEXT NOT NULL DEFAULT '',
	instance_types TEXT NOT NULL DEFAULT '',
	capacity INTEGER NOT NULL DEFAULT 0,
	created_at {ts} NOT NULL,
	updated_at {ts} NOT NULL,
	status_since {ts} NOT NULL
);
CREATE TABLE leases (
	name TEXT PRIMARY KEY,
	holder TEXT NOT NULL,
	token BIGINT NOT NULL,
	expires_at {ts} NOT NULL
);`),
		// Version 2: a host is recorded by one live instance at most, so a
		// stale host never reaches another tenant's instance. Rows that
		// share one today (the old code allowed it) keep it on the oldest;
		// the others' ready worker records a new host.
		`UPDATE instances SET host = '' WHERE deleted_at IS NULL AND host <> '' AND EXISTS (
	SELECT 1 FROM instances o WHERE o.deleted_at IS NULL AND o.host = instances.host AND o.id < instances.id);
CREATE UNIQUE INDEX instances_live_host ON instances (host) WHERE deleted_at IS NULL AND host <> ''`,
		// Version 3: the API's reauthentication_enabled, stored inverted so
		// that existing rows keep the default (on).
		`ALTER TABLE instances ADD COLUMN no_reauthentication ` + s.d.BoolType + ` NOT NULL DEFAULT FALSE`,
		// Version 4: what the agents of data-plane clusters report
		// (fleet.AgentReports), one row per kind and cluster, the reports
		// as JSON.
		r.Replace(`CREATE TABLE agent_reports (
	kind TEXT NOT NULL,
	cluster_id TEXT NOT NULL,
	instances TEXT NOT NULL DEFAULT '',
	instances_at {ts},
	heartbeat TEXT NOT NULL DEFAULT '',
	heartbeat_at {ts},
	PRIMARY KEY (kind, cluster_id)
)`),
	}
}

// migrate applies the migrations in one transaction that first takes the
// migration lock (Dialect.LockMigrations; SQLite's BEGIN IMMEDIATE holds
// the write lock anyway), so replicas starting at once on a fresh database
// migrate one after the other: even the schema_migrations table is
// created under the lock (two concurrent CREATE TABLE IF NOT EXISTS race
// in PostgreSQL's catalogue).
func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: migrate: %w", s.d.Name, err)
	}
	defer func() { _ = tx.Rollback() }()
	if s.d.LockMigrations != "" {
		if _, err := tx.ExecContext(ctx, s.d.LockMigrations); err != nil {
			return fmt.Errorf("%s: lock migrations: %w", s.d.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at `+s.d.TimeType+` NOT NULL)`); err != nil {
		return fmt.Errorf("%s: create schema_migrations: %w", s.d.Name, err)
	}
	var current int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("%s: read schema version: %w", s.d.Name, err)
	}
	for i, m := range s.migrations() {
		v := i + 1
		if v <= current {
			continue
		}
		for _, stmt := range strings.Split(m, ";") {
			if strings.TrimSpace(stmt) == "" {
				continue
			}
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return fmt.Errorf("%s: migration %d: %w", s.d.Name, v, err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`), v, now()); err != nil {
			return fmt.Errorf("%s: record migration %d: %w", s.d.Name, v, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: commit migrations: %w", s.d.Name, err)
	}
	return nil
}

// Version returns the schema version applied.
func Version(ctx context.Context, s *Store) (int, error) {
	var v int
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}

const instanceCols = `id, kind, name, owner, organisation, cloud_provider, region, multi_az, instance_type, status, failed_reason, cluster_id, host, created_at, updated_at, status_since, expires_at, deleted_at, no_reauthentication`

type scanner interface{ Scan(dest ...any) error }

func scanInstance(r scanner) (fleet.Instance, error) {
	var (
		i         fleet.Instance
		status    string
		expires   sql.NullTime
		deletedAt sql.NullTime
	)
	err := r.Scan(&i.ID, &i.Kind, &i.Name, &i.Owner, &i.Organisation, &i.CloudProvider, &i.Region, &i.MultiAZ,
		&i.InstanceType, &status, &i.FailedReason, &i.ClusterID, &i.Host, &i.CreatedAt, &i.UpdatedAt, &i.StatusSince,
		&expires, &deletedAt, &i.NoReauthentication)
	if err != nil {
		return i, err
	}
	i.Status = fleet.Status(status)
	i.CreatedAt, i.UpdatedAt, i.StatusSince = i.CreatedAt.UTC(), i.UpdatedAt.UTC(), i.StatusSince.UTC()
	if expires.Valid {
		t := expires.Time.UTC()
		i.ExpiresAt = &t
	}
	if deletedAt.Valid {
		t := deletedAt.Time.UTC()
		i.DeletedAt = &t
	}
	return i, nil
}

func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC()
}

const insertInstance = `INSERT INTO instances (` + instanceCols + `, scope) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

func validInstance(i fleet.Instance) error {
	if i.ID == "" {
		return fmt.Errorf("%w: instance without ID", fleet.ErrInvalid)
	}
	if !i.Status.Valid() {
		return fmt.Errorf("%w: status %q", fleet.ErrInvalid, i.Status)
	}
	return nil
}

func insertArgs(i fleet.Instance) []any {
	return []any{i.ID, i.Kind, i.Name, i.Owner, i.Organisation, i.CloudProvider, i.Region, i.MultiAZ, i.InstanceType, string(i.Status),
		i.FailedReason, i.ClusterID, i.Host, i.CreatedAt.UTC(), i.UpdatedAt.UTC(), i.StatusSince.UTC(), nullTime(i.ExpiresAt),
		nullTime(i.DeletedAt), i.NoReauthentication, i.Scope()}
}

// CreateInstance implements fleet.Store.
func (s *Store) CreateInstance(ctx context.Context, i fleet.Instance) error {
	if err := validInstance(i); err != nil {
		return err
	}
	_, err := s.exec(ctx, true, insertInstance, insertArgs(i)...)
	return s.insertErr(ctx, i, err)
}

// CreateInstanceChecked implements fleet.Store. The scope lock is
// Dialect.LockScope (PostgreSQL: a transaction-level advisory lock) or,
// without one, the write lock the transaction takes at its start
// (SQLite's BEGIN IMMEDIATE).
func (s *Store) CreateInstanceChecked(ctx context.Context, i fleet.Instance, check func(live int) error) error {
	if err := validInstance(i); err != nil {
		return err
	}
	// Statements in the transaction are not prepared through the cache:
	// on SQLite's single connection a prepare would wait for it forever.
	var checkErr error
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if s.d.LockScope != "" {
			if _, err := tx.ExecContext(ctx, s.q(s.d.LockScope), i.Kind+"/"+i.Scope()); err != nil {
				return err
			}
		}
		where, args, err := s.where(fleet.Query{Kind: i.Kind, Owner: i.Owner, Organisation: i.Organisation})
		if err != nil {
			return err
		}
		var live int
		if err := tx.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM instances WHERE `+where), args...).Scan(&live); err != nil {
			return err
		}
		if checkErr = check(live); checkErr != nil {
			return checkErr
		}
		_, err = tx.ExecContext(ctx, s.q(insertInstance), insertArgs(i)...)
		return err
	})
	if checkErr != nil {
		return checkErr
	}
	return s.insertErr(ctx, i, err)
}

// insertErr maps the error of inserting i.
func (s *Store) insertErr(ctx context.Context, i fleet.Instance, err error) error {
	if err == nil {
		return nil
	}
	if s.d.IsUnique(err) {
		var n int
		if s.db.QueryRowContext(ctx, s.q(`SELECT COUNT(*) FROM instances WHERE id = ?`), i.ID).Scan(&n) == nil && n > 0 {
			return fmt.Errorf("%w: instance %s", cluster.ErrExists, i.ID)
		}
		return fmt.Errorf("%w: %q", fleet.ErrNameTaken, i.Name)
	}
	return fmt.Errorf("%s: create instance: %w", s.d.Name, err)
}

// GetInstance implements fleet.Store.
func (s *Store) GetInstance(ctx context.Context, id string) (fleet.Instance, error) {
	i, err := scanInstance(s.queryRow(ctx, true, `SELECT `+instanceCols+` FROM instances WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return i, fmt.Errorf("%w: instance %s", fleet.ErrNotFound, id)
	}
	if err != nil {
		return i, fmt.Errorf("%s: get instance: %w", s.d.Name, err)
	}
	return i, nil
}

// ListInstances implements fleet.Store.
func (s *Store) ListInstances(ctx context.Context, q fleet.Query) ([]fleet.Instance, int, error) {
	where, args, err := s.where(q)
	if err != nil {
		return nil, 0, err
	}
	var total int
	cache := q.Search == nil // a rendered search would grow the cache without bound
	if err := s.queryRow(ctx, cache, `SELECT COUNT(*) FROM instances WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("%s: count instances: %w", s.d.Name, err)
	}
	if q.Size < 0 || total == 0 {
		return nil, total, nil
	}
	order, err := orderBy(q.OrderBy)
	if err != nil {
		return nil, 0, err
	}
	size := q.PageSize()
	page := max(q.Page, 1)
	rows, err := s.query(ctx, cache, `SELECT `+instanceCols+` FROM instances WHERE `+where+` ORDER BY `+order+` LIMIT ? OFFSET ?`,
		append(args, size, (page-1)*size)...)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: list instances: %w", s.d.Name, err)
	}
	defer rows.Close()
	var out []fleet.Instance
	for rows.Next() {
		i, err := scanInstance(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("%s: list instances: %w", s.d.Name, err)
		}
		out = append(out, i)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("%s: list instances: %w", s.d.Name, err)
	}
	return out, total, nil
}

func (s *Store) where(q fleet.Query) (string, []any, error) {
	var (
		conds []string
		args  []any
	)
	if !q.IncludeDeleted {
		conds = append(conds, "deleted_at IS NULL")
	}
	if q.Kind != "" {
		conds, args = append(conds, "kind = ?"), append(args, q.Kind)
	}
	switch {
	case q.Organisation != "":
		conds, args = append(conds, "organisation = ?"), append(args, q.Organisation)
	case q.Owner != "":
		conds, args = append(conds, "owner = ?"), append(args, q.Owner)
	}
	if len(q.Statuses) > 0 {
		conds = append(conds, "status IN ("+placeholders(len(q.Statuses))+")")
		for _, st := range q.Statuses {
			args = append(args, string(st))
		}
	}
	if q.ClusterID != "" {
		conds, args = append(conds, "cluster_id = ?"), append(args, q.ClusterID)
	}

	if q.Search != nil {
		sqlText, sargs, err := s.render(q.Search)
		if err != nil {
			return "", nil, err
		}
		conds, args = append(conds, sqlText), append(args, sargs...)
	}
	if len(conds) == 0 {
		return "1 = 1", nil, nil
	}
	return strings.Join(conds, " AND "), args, nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// searchColumns maps search fields to columns: the allow-list again, so
// that only these identifiers can reach SQL whatever the Expr holds.
var searchColumns = map[string]string{
	"cloud_provider": "cloud_provider", "name": "name", "owner": "owner", "region": "region",
	"status": "status", "instance_type": "instance_type", "cluster_id": "cluster_id",
}

func (s *Store) render(e search.Expr) (string, []any, error) {
	switch e := e.(type) {
	case search.Cond:
		col, ok := searchColumns[e.Field]
		if !ok {
			return "", nil, search.Errorf("field %q", e.Field)
		}
		args := make([]any, len(e.Values))
		for i, v := range e.Values {
			args[i] = v
		}
		one := len(e.Values) == 1
		switch {
		case e.Op == search.OpEq && one:
			return col + " = ?", args, nil
		case e.Op == search.OpNe && one:
			return col + " <> ?", args, nil
		case e.Op == search.OpLike && one:
			return col + " LIKE ?", args, nil
		case e.Op == search.OpILike && one:
			return s.d.ILike(col), args, nil
		case e.Op == search.OpIn && len(e.Values) > 0:
			return col + " IN (" + placeholders(len(e.Values)) + ")", args, nil
		case e.Op == search.OpNotIn && len(e.Values) > 0:
			return col + " NOT IN (" + placeholders(len(e.Values)) + ")", args, nil
		}
		return "", nil, search.Errorf("operator %q with %d values", e.Op, len(e.Values))
	case search.And, search.Or:
		terms, sep := []search.Expr(nil), " AND "
		if and, ok := e.(search.And); ok {
			terms = and
		} else {
			terms, sep = e.(search.Or), " OR "
		}
		if len(terms) == 0 {
			return "", nil, search.Errorf("empty %s", strings.TrimSpace(sep))
		}
		parts := make([]string, 0, len(terms))
		var args []any
		for _, t := range terms {
			p, a, err := s.render(t)
			if err != nil {
				return "", nil, err
			}
			parts, args = append(parts, "("+p+")"), append(args, a...)
		}
		return "(" + strings.Join(parts, sep) + ")", args, nil
	default:
		return "", nil, search.Errorf("unknown expression %T", e)
	}
}

var orderColumns = map[string]string{
	"id": "id", "name": "name", "owner": "owner", "organisation": "organisation", "cloud_provider": "cloud_provider",
	"region": "region", "status": "status", "instance_type": "instance_type", "cluster_id": "cluster_id",
	"created_at": "created_at", "updated_at": "updated_at", "status_since": "status_since",
}

func orderBy(os []fleet.Order) (string, error) {
	if len(os) == 0 {
		return "created_at, id", nil
	}
	parts := make([]string, 0, len(os)+1)
	for _, o := range os {
		col, ok := orderColumns[o.Field]
		if !ok {
			return "", fmt.Errorf("%w: cannot order by %q", fleet.ErrInvalid, o.Field)
		}
		if o.Desc {
			col += " DESC"
		}
		parts = append(parts, col)
	}
	return strings.Join(append(parts, "id"), ", "), nil
}

// UpdateInstance implements fleet.Store. Concurrent updates are
// group-committed (see updater): each keeps its own compare-and-swap and
// fencing condition and its own result.
func (s *Store) UpdateInstance(ctx context.Context, u fleet.Update) (fleet.Instance, error) {
	to := u.To
	if to == "" {
		to = u.From
	}
	if err := fleet.CheckTransition(u.From, to); err != nil {
		return fleet.Instance{}, err
	}
	if u.Owner != nil && *u.Owner == "" {
		return fleet.Instance{}, fmt.Errorf("%w: empty owner for %s", fleet.ErrInvalid, u.ID)
	}
	return s.up.do(ctx, u)
}

// updateSQL renders u as one compare-and-swap UPDATE … RETURNING (with ?
// placeholders) written at t.
func updateSQL(u fleet.Update, t time.Time) (string, []any) {
	to := u.To
	if to == "" {
		to = u.From
	}
	sets := []string{"status = ?", "updated_at = ?"}
	args := []any{string(to), t}
	if to != u.From {
		sets, args = append(sets, "status_since = ?"), append(args, t)
	}
	if u.ClusterID != nil {
		sets, args = append(sets, "cluster_id = ?"), append(args, *u.ClusterID)
	}
	if u.Host != nil {
		sets, args = append(sets, "host = ?"), append(args, *u.Host)
	}
	if u.FailedReason != nil {
		sets, args = append(sets, "failed_reason = ?"), append(args, *u.FailedReason)
	}
	if u.Owner != nil {
		// The scope follows the owner when there is no organisation; the
		// unique index then refuses a name the new owner already uses.
		sets = append(sets, "owner = ?", "scope = CASE WHEN organisation = '' THEN ? ELSE scope END")
		args = append(args, *u.Owner, fleet.Instance{Owner: *u.Owner}.Scope())
	}
	if u.NoReauthentication != nil {
		sets, args = append(sets, "no_reauthentication = ?"), append(args, *u.NoReauthentication)
	}
	if u.SoftDelete {
		sets, args = append(sets, "deleted_at = ?"), append(args, t)
	}
	where := "id = ? AND status = ? AND deleted_at IS NULL"
	args = append(args, u.ID, string(u.From))
	if !u.Fence.IsZero() {
		where += " AND EXISTS (SELECT 1 FROM leases WHERE name = ? AND token = ?)"
		args = append(args, u.Fence.Lease, u.Fence.Token)
	}
	return `UPDATE instances SET ` + strings.Join(sets, ", ") + ` WHERE ` + where + ` RETURNING ` + instanceCols, args
}

// updateErr maps the error of an update's statement; a lost swap (no row)
// is explained by reading the row through q.
func (s *Store) updateErr(ctx context.Context, q conn, u fleet.Update, err error) error {
	if !errors.Is(err, sql.ErrNoRows) {
		if s.d.IsUnique(err) && u.Host != nil {
			return fmt.Errorf("%w: %s for %s", fleet.ErrHostTaken, *u.Host, u.ID)
		}
		if s.d.IsUnique(err) {
			return fmt.Errorf("%w: %s", fleet.ErrNameTaken, u.ID)
		}
		return fmt.Errorf("%s: update instance: %w", s.d.Name, err)
	}
	// The swap lost: say why.
	cur, gerr := scanInstance(q.QueryRowContext(ctx, s.q(`SELECT `+instanceCols+` FROM instances WHERE id = ?`), u.ID))
	switch {
	case errors.Is(gerr, sql.ErrNoRows):
		return fmt.Errorf("%w: instance %s", fleet.ErrNotFound, u.ID)
	case gerr != nil:
		return fmt.Errorf("%s: get instance: %w", s.d.Name, gerr)
	case cur.DeletedAt != nil:
		return fmt.Errorf("%w: instance %s is deleted", fleet.ErrNotFound, u.ID)
	case cur.Status != u.From:
		return &fleet.ConflictError{ID: u.ID, Expected: string(u.From), Actual: string(cur.Status)}
	default:
		return fmt.Errorf("%w: lease %s token %d", lease.ErrStaleFence, u.Fence.Lease, u.Fence.Token)
	}
}

const clusterCols = `id, cloud_provider, region, multi_az, status, failed_reason, instance_types, capacity, created_at, updated_at, status_since`

func scanCluster(r scanner) (cluster.Cluster, error) {
	var (
		c      cluster.Cluster
		status string
		types  string
	)
	err := r.Scan(&c.ID, &c.CloudProvider, &c.Region, &c.MultiAZ, &status, &c.FailedReason, &types, &c.Capacity,
		&c.CreatedAt, &c.UpdatedAt, &c.StatusSince)
	if err != nil {
		return c, err
	}
	c.Status = cluster.Status(status)
	if types != "" {
		c.InstanceTypes = strings.Split(types, ",")
	}
	c.CreatedAt, c.UpdatedAt, c.StatusSince = c.CreatedAt.UTC(), c.UpdatedAt.UTC(), c.StatusSince.UTC()
	return c, nil
}

// CreateCluster implements fleet.Store.
func (s *Store) CreateCluster(ctx context.Context, c cluster.Cluster) error {
	if c.ID == "" {
		return fmt.Errorf("%w: cluster without ID", fleet.ErrInvalid)
	}
	for _, t := range c.InstanceTypes {
		if t == "" || strings.Contains(t, ",") {
			return fmt.Errorf("%w: instance type %q", fleet.ErrInvalid, t)
		}
	}
	c = c.Created(now())
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO clusters (`+clusterCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		c.ID, c.CloudProvider, c.Region, c.MultiAZ, string(c.Status), c.FailedReason, strings.Join(c.InstanceTypes, ","),
		c.Capacity, c.CreatedAt.UTC(), c.UpdatedAt.UTC(), c.StatusSince.UTC())
	if err != nil {
		if s.d.IsUnique(err) {
			return fmt.Errorf("%w: cluster %s", cluster.ErrExists, c.ID)
		}
		return fmt.Errorf("%s: create cluster: %w", s.d.Name, err)
	}
	return nil
}

// GetCluster implements fleet.Store.
func (s *Store) GetCluster(ctx context.Context, id string) (cluster.Cluster, error) {
	c, err := scanCluster(s.db.QueryRowContext(ctx, s.q(`SELECT `+clusterCols+` FROM clusters WHERE id = ?`), id))
	if errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("%w: cluster %s", fleet.ErrNotFound, id)
	}
	if err != nil {
		return c, fmt.Errorf("%s: get cluster: %w", s.d.Name, err)
	}
	return c, nil
}

// ListClusters implements fleet.Store.
func (s *Store) ListClusters(ctx context.Context) ([]cluster.Cluster, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+clusterCols+` FROM clusters ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("%s: list clusters: %w", s.d.Name, err)
	}
	defer rows.Close()
	var out []cluster.Cluster
	for rows.Next() {
		c, err := scanCluster(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: list clusters: %w", s.d.Name, err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// UpdateCluster implements fleet.Store.
func (s *Store) UpdateCluster(ctx context.Context, u cluster.Update) (cluster.Cluster, error) {
	to := u.To
	if to == "" {
		to = u.From
	}
	if err := fleet.CheckTransition(u.From, to); err != nil {
		return cluster.Cluster{}, err
	}
	t := now()
	sets := []string{"status = ?", "updated_at = ?"}
	args := []any{string(to), t}
	if to != u.From {
		sets, args = append(sets, "status_since = ?"), append(args, t)
	}
	if u.FailedReason != nil {
		sets, args = append(sets, "failed_reason = ?"), append(args, *u.FailedReason)
	}
	where := "id = ? AND status = ?"
	args = append(args, u.ID, string(u.From))
	if !u.Fence.IsZero() {
		where += " AND EXISTS (SELECT 1 FROM leases WHERE name = ? AND token = ?)"
		args = append(args, u.Fence.Lease, u.Fence.Token)
	}
	c, err := scanCluster(s.db.QueryRowContext(ctx, s.q(`UPDATE clusters SET `+strings.Join(sets, ", ")+` WHERE `+where+` RETURNING `+clusterCols), args...))
	if err == nil {
		return c, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return c, fmt.Errorf("%s: update cluster: %w", s.d.Name, err)
	}
	cur, gerr := s.GetCluster(ctx, u.ID)
	switch {
	case gerr != nil:
		return c, gerr
	case cur.Status != u.From:
		return c, &fleet.ConflictError{ID: u.ID, Expected: string(u.From), Actual: string(cur.Status)}
	default:
		return c, fmt.Errorf("%w: lease %s token %d", lease.ErrStaleFence, u.Fence.Lease, u.Fence.Token)
	}
}

// AcquireLease implements fleet.Store.
func (s *Store) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (lease.Lease, error) {
	if name == "" || holder == "" || ttl <= 0 {
		return lease.Lease{}, fmt.Errorf("%w: lease needs a name, a holder and a positive ttl", fleet.ErrInvalid)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return lease.Lease{}, fmt.Errorf("%s: acquire lease: %w", s.d.Name, err)
	}
	defer func() { _ = tx.Rollback() }()
	t := now()
	l := lease.Lease{Name: name, Holder: holder, ExpiresAt: t.Add(ttl)}
	var (
		curHolder  string
		curToken   int64
		curExpires time.Time
	)
	err = tx.QueryRowContext(ctx, s.q(`SELECT holder, token, expires_at FROM leases WHERE name = ?`+s.d.ForUpdate), name).Scan(&curHolder, &curToken, &curExpires)
	var res sql.Result
	switch {
	case errors.Is(err, sql.ErrNoRows):
		// First use: the row is created on demand.
		l.Token = 1
		res, err = tx.ExecContext(ctx, s.q(`INSERT INTO leases (name, holder, token, expires_at) VALUES (?, ?, 1, ?) ON CONFLICT (name) DO NOTHING`), name, holder, l.ExpiresAt)
	case err != nil:
		return lease.Lease{}, fmt.Errorf("%s: read lease: %w", s.d.Name, err)
	case curHolder == holder:
		// Renewal, re-checked in the write: still ours, same token.
		l.Token = curToken
		res, err = tx.ExecContext(ctx, s.q(`UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ? AND token = ?`), l.ExpiresAt, name, holder, curToken)
	case curExpires.After(t):
		return lease.Lease{}, fmt.Errorf("%w: %s held by %s until %s", lease.ErrHeld, name, curHolder, curExpires.UTC().Format(time.RFC3339Nano))
	default:
		// Take-over of an expired lease: a new token fences the old holder.
		l.Token = curToken + 1
		res, err = tx.ExecContext(ctx, s.q(`UPDATE leases SET holder = ?, token = ?, expires_at = ? WHERE name = ? AND token = ?`), holder, l.Token, l.ExpiresAt, name, curToken)
	}
	if err != nil {
		return lease.Lease{}, fmt.Errorf("%s: write lease: %w", s.d.Name, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return lease.Lease{}, fmt.Errorf("%w: %s changed concurrently", lease.ErrHeld, name)
	}
	if err := tx.Commit(); err != nil {
		return lease.Lease{}, fmt.Errorf("%s: commit lease: %w", s.d.Name, err)
	}
	return l, nil
}

// ReleaseLease implements fleet.Store.
func (s *Store) ReleaseLease(ctx context.Context, l lease.Lease) error {
	_, err := s.db.ExecContext(ctx, s.q(`UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ? AND token = ?`), time.Unix(0, 0).UTC(), l.Name, l.Holder, l.Token)
	if err != nil {
		return fmt.Errorf("%s: release lease: %w", s.d.Name, err)
	}
	return nil
}

// Truncate deletes every row of every table but keeps the schema: what
// integration tests do between tests instead of re-migrating.
func Truncate(ctx context.Context, s *Store) error {
	for _, t := range []string{"instances", "clusters", "leases", "agent_reports"} {
		if _, err := s.db.ExecContext(ctx, `DELETE FROM `+t); err != nil {
			return fmt.Errorf("%s: truncate %s: %w", s.d.Name, t, err)
		}
	}
	return nil
}
