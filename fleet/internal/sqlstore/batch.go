package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/lease"
)

// Group commit of instance updates. Under load every worker writes one
// compare-and-swap per instance and transition; written one by one, each
// costs a commit (SQLite: a WAL append under the single writer) or a round
// trip (PostgreSQL), and the workers drain slower than the API creates.
// So updates queue, and a flusher writes whatever is queued together: in
// one transaction (SQLite), or one statement per group of like updates
// (PostgreSQL, Dialect.ArrayBatch; several flushers, Dialect.Flushers). A batch forms only from updates queued
// while the previous one was written, so an idle store writes at once.
// Every update keeps its own compare-and-swap and fencing condition and
// gets its own result.

const (
	// maxBatch bounds the updates of one flush.
	maxBatch = 512
	// flushTimeout bounds one flush. A flush writes for several callers,
	// so no single caller's context may cancel it.
	flushTimeout = 30 * time.Second
)

// errClosed is the outcome of an update after Close.
var errClosed = errors.New("store closed")

// updateOp is one queued UpdateInstance and, once done is closed, its
// outcome.
type updateOp struct {
	ctx  context.Context
	u    fleet.Update
	inst fleet.Instance
	err  error
	done chan struct{}
}

// updater owns the flushing goroutines (Dialect.Flushers); Store.Close
// stops them. Each flush takes everything queued, so a second flusher
// starts only on updates queued while the first one writes.
type updater struct {
	s       *Store
	kick    chan struct{}
	stop    chan struct{}
	stopped chan struct{}

	mu     sync.Mutex
	queue  []*updateOp // guarded by mu
	closed bool        // guarded by mu

	// beforeFlush, when set (by tests only, before any update), is called
	// by a flusher with the size of the batch it is about to write.
	beforeFlush func(n int)
}

func newUpdater(s *Store) *updater {
	w := &updater{s: s, kick: make(chan struct{}, 1), stop: make(chan struct{}), stopped: make(chan struct{})}
	n := max(s.d.Flushers, 1)
	var wg sync.WaitGroup
	for range n {
		wg.Go(w.run)
	}
	go func() {
		wg.Wait()
		close(w.stopped)
	}()
	return w
}

// do queues u and waits for its outcome. When ctx ends before u is taken
// into a flush, u is not written; once taken, do waits for the outcome.
func (w *updater) do(ctx context.Context, u fleet.Update) (fleet.Instance, error) {
	op := &updateOp{ctx: ctx, u: u, done: make(chan struct{})}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return fleet.Instance{}, fmt.Errorf("%s: update instance: %w", w.s.d.Name, errClosed)
	}
	w.queue = append(w.queue, op)
	w.mu.Unlock()
	w.wake()
	select {
	case <-op.done:
	case <-ctx.Done():
		w.mu.Lock()
		i := slices.Index(w.queue, op)
		if i >= 0 {
			w.queue = slices.Delete(w.queue, i, i+1)
		}
		w.mu.Unlock()
		if i >= 0 {
			return fleet.Instance{}, fmt.Errorf("%s: update instance: %w", w.s.d.Name, ctx.Err())
		}
		<-op.done
	}
	return op.inst, op.err
}

func (w *updater) wake() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

func (w *updater) run() {
	// With several flushers (PostgreSQL) each writes on a connection of
	// its own, so that the drain never queues for the pool behind the
	// API's inserts; a single flusher (SQLite: one connection in all)
	// uses the pool.
	limit := w.s.db.Stats().MaxOpenConnections
	reserve := w.s.d.Flushers > 1 && (limit == 0 || limit >= 2*w.s.d.Flushers) // leave most to the others
	var c *sql.Conn
	defer func() {
		if c != nil {
			_ = c.Close()
		}
	}()
	for {
		select {
		case <-w.stop:
			return
		case <-w.kick:
		}
		for {
			w.mu.Lock()
			n := min(len(w.queue), maxBatch)
			batch := slices.Clone(w.queue[:n])
			w.queue = slices.Delete(w.queue, 0, n)
			more := len(w.queue) > 0
			w.mu.Unlock()
			if n == 0 {
				break
			}
			if more {
				w.wake() // another flusher may start on the rest
			}
			if c == nil && reserve {
				ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
				c, _ = w.s.db.Conn(ctx) // nil on error: the pool
				cancel()
			}
			if w.beforeFlush != nil {
				w.beforeFlush(len(batch))
			}
			if !w.s.flush(c, batch) && c != nil {
				_ = c.Close() // it may be broken: take another next time
				c = nil
			}
			for _, op := range batch {
				close(op.done)
			}
		}
	}
}

// close stops the flushers after the flushes in progress and fails what
// is still queued. It is idempotent.
func (w *updater) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	w.mu.Unlock()
	close(w.stop)
	<-w.stopped
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, op := range w.queue {
		op.err = fmt.Errorf("%s: update instance: %w", w.s.d.Name, errClosed)
		close(op.done)
	}
	w.queue = nil
}

// conn is where a flush writes: a reserved *sql.Conn, or nil for the
// pool (with the prepared statement cache).
type conn interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// flush writes batch on c and sets every op's outcome. It reports false
// when a statement failed (not a lost swap) and updates were written one
// by one instead.
func (s *Store) flush(c *sql.Conn, batch []*updateOp) bool {
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	live := make([]*updateOp, 0, len(batch))
	for _, op := range batch {
		if err := op.ctx.Err(); err != nil {
			op.err = fmt.Errorf("%s: update instance: %w", s.d.Name, err)
			continue
		}
		live = append(live, op)
	}
	var q conn // nil: the pool
	if c != nil {
		q = c
	}
	ok := true
	switch {
	case len(live) == 1:
		ok = s.updateOneRetry(ctx, q, live[0])
	case len(live) > 1 && s.d.ArrayBatch:
		// The array statement carries the workers' fields only; an API
		// change of owner or settings (rare) is written on its own.
		var arrays []*updateOp
		for _, op := range live {
			if op.u.Owner != nil || op.u.NoReauthentication != nil {
				ok = s.updateOneRetry(ctx, q, op) && ok
				continue
			}
			arrays = append(arrays, op)
		}
		for _, g := range groups(arrays) {
			ok = s.flushArrays(ctx, q, g) && ok
		}
	case len(live) > 1:
		ok = s.flushTx(ctx, live)
	}
	return ok
}

// updateOne writes op alone on q (nil: the pool). It reports false when
// the statement (or the read that explains a lost swap) failed: the
// connection may be broken. A lost swap or a taken name is an outcome.
func (s *Store) updateOne(ctx context.Context, q conn, op *updateOp) bool {
	query, args := updateSQL(op.u, now())
	var row *sql.Row
	if q == nil {
		q, row = s.db, s.queryRow(ctx, true, query, args...)
	} else {
		row = q.QueryRowContext(ctx, s.q(query), args...)
	}
	var err error
	op.inst, err = scanInstance(row)
	if err == nil {
		op.err = nil
		return true
	}
	op.err = s.updateErr(ctx, q, op.u, err)
	return errors.Is(op.err, fleet.ErrConflict) || errors.Is(op.err, fleet.ErrNotFound) ||
		errors.Is(op.err, lease.ErrStaleFence) || errors.Is(op.err, fleet.ErrNameTaken) || errors.Is(op.err, fleet.ErrHostTaken)
}

// updateOneRetry writes op on q and, when that failed on a reserved
// connection (which may have died with the server), once more on the
// pool, which replaces broken connections. It reports whether q worked.
// Writing twice is safe: the update is a compare-and-swap, so a first
// attempt that did commit makes the second a lost swap, explained as such.
func (s *Store) updateOneRetry(ctx context.Context, q conn, op *updateOp) bool {
	if s.updateOne(ctx, q, op) {
		return true
	}
	if q != nil {
		s.updateOne(ctx, nil, op)
	}
	return false
}

// flushTx writes ops one statement each in one transaction: one commit.
func (s *Store) flushTx(ctx context.Context, ops []*updateOp) bool {
	t := now()
	queries, args := make([]string, len(ops)), make([][]any, len(ops))
	stmts := make([]*sql.Stmt, len(ops))
	for i, op := range ops {
		queries[i], args[i] = updateSQL(op.u, t)
		queries[i] = s.q(queries[i])
		// Prepared before the transaction: on SQLite's single connection
		// a prepare inside it would wait for that connection forever.
		stmts[i] = s.stmt(ctx, queries[i])
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		for i, op := range ops {
			var row *sql.Row
			if stmts[i] != nil {
				row = tx.StmtContext(ctx, stmts[i]).QueryRowContext(ctx, args[i]...)
			} else {
				row = tx.QueryRowContext(ctx, queries[i], args[i]...)
			}
			inst, err := scanInstance(row)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				op.inst, op.err = inst, s.updateErr(ctx, tx, op.u, err)
			case err != nil:
				return err
			default:
				op.inst, op.err = inst, nil
			}
		}
		return nil
	})
	if err != nil {
		// Not a lost swap (that is an outcome) but a failed statement or
		// commit, which undid the others: write each on its own so that
		// each gets its own outcome.
		for _, op := range ops {
			s.updateOne(ctx, nil, op)
		}
		return false
	}
	return true
}

// inTx runs fn in a transaction and commits it.
func (s *Store) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// groupKey is what the updates of one array statement share: everything
// but the instance and its new cluster, host and reason.
type groupKey struct {
	from, to             fleet.Status
	cluster, host, cause bool
	softDelete           bool
	fence                lease.Fence
}

func keyOf(u fleet.Update) groupKey {
	to := u.To
	if to == "" {
		to = u.From
	}
	return groupKey{from: u.From, to: to, cluster: u.ClusterID != nil, host: u.Host != nil, cause: u.FailedReason != nil,
		softDelete: u.SoftDelete, fence: u.Fence}
}

// groups splits ops into groups of like updates, in order of first
// appearance; a second update of one instance goes to a later group, as
// one statement updates a row at most once.
func groups(ops []*updateOp) [][]*updateOp {
	type group struct {
		key groupKey
		ids map[string]bool
		ops []*updateOp
	}
	var gs []*group
	for _, op := range ops {
		k := keyOf(op.u)
		i := slices.IndexFunc(gs, func(g *group) bool { return g.key == k && !g.ids[op.u.ID] })
		if i < 0 {
			gs, i = append(gs, &group{key: k, ids: map[string]bool{}}), len(gs)
		}
		gs[i].ids[op.u.ID] = true
		gs[i].ops = append(gs[i].ops, op)
	}
	out := make([][]*updateOp, len(gs))
	for i, g := range gs {
		out[i] = g.ops
	}
	return out
}

// arrayUpdateSQL is the PostgreSQL statement of a group: the instances and
// their new values as arrays, one compare-and-swap per row.
func arrayUpdateSQL(k groupKey) string {
	sets := []string{"status = $1", "updated_at = $2"}
	if k.to != k.from {
		sets = append(sets, "status_since = $2")
	}
	if k.cluster {
		sets = append(sets, "cluster_id = v.cluster_id")
	}
	if k.host {
		sets = append(sets, "host = v.host")
	}
	if k.cause {
		sets = append(sets, "failed_reason = v.failed_reason")
	}
	if k.softDelete {
		sets = append(sets, "deleted_at = $2")
	}
	where := "i.id = v.id AND i.status = $3 AND i.deleted_at IS NULL"
	if !k.fence.IsZero() {
		where += " AND EXISTS (SELECT 1 FROM leases WHERE name = $8 AND token = $9)"
	}
	return `UPDATE instances AS i SET ` + strings.Join(sets, ", ") +
		` FROM unnest($4::text[], $5::text[], $6::text[], $7::text[]) AS v(id, cluster_id, host, failed_reason) WHERE ` + where +
		` RETURNING i.` + strings.ReplaceAll(instanceCols, ", ", ", i.")
}

// flushArrays writes one group (see groups) in one statement on q.
func (s *Store) flushArrays(ctx context.Context, q conn, ops []*updateOp) bool {
	if len(ops) == 1 {
		return s.updateOneRetry(ctx, q, ops[0])
	}
	k := keyOf(ops[0].u)
	ids := make([]string, len(ops))
	clusters, hosts, causes := make([]string, len(ops)), make([]string, len(ops)), make([]string, len(ops))
	for i, op := range ops {
		ids[i] = op.u.ID
		if op.u.ClusterID != nil {
			clusters[i] = *op.u.ClusterID
		}
		if op.u.Host != nil {
			hosts[i] = *op.u.Host
		}
		if op.u.FailedReason != nil {
			causes[i] = *op.u.FailedReason
		}
	}
	args := []any{string(k.to), now(), string(k.from), ids, clusters, hosts, causes}
	if !k.fence.IsZero() {
		args = append(args, k.fence.Lease, k.fence.Token)
	}
	written, err := s.arrayUpdate(ctx, q, arrayUpdateSQL(k), args)
	if err != nil {
		for _, op := range ops {
			s.updateOne(ctx, nil, op)
		}
		return false
	}
	if q == nil {
		q = s.db
	}
	for _, op := range ops {
		inst, ok := written[op.u.ID]
		if !ok {
			op.err = s.updateErr(ctx, q, op.u, sql.ErrNoRows)
			continue
		}
		op.inst, op.err = inst, nil
	}
	return true
}

func (s *Store) arrayUpdate(ctx context.Context, q conn, query string, args []any) (map[string]fleet.Instance, error) {
	var (
		rows *sql.Rows
		err  error
	)
	if q == nil {
		rows, err = s.query(ctx, true, query, args...)
	} else {
		rows, err = q.QueryContext(ctx, query, args...)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	written := map[string]fleet.Instance{}
	for rows.Next() {
		inst, err := scanInstance(rows)
		if err != nil {
			return nil, err
		}
		written[inst.ID] = inst
	}
	return written, rows.Err()
}
