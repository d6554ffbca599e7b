package sqlstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/internal/sqlstore"
	"github.com/fleetkit/fleetkit/fleet/lease"
	"github.com/fleetkit/fleetkit/fleet/postgres"
	"github.com/fleetkit/fleetkit/fleet/sqlite"
	"github.com/fleetkit/fleetkit/internal/pgtest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }

// stores runs fn on each database: SQLite (one flusher, one transaction
// per batch) and PostgreSQL (four flushers, one statement per group) on a
// database of its own.
func stores(t *testing.T, fn func(t *testing.T, st *sqlstore.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(t.Context(), ":memory:")
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		fn(t, of(t, st))
	})
	t.Run("postgres", func(t *testing.T) {
		st, err := postgres.Open(t.Context(), pgtest.FreshDB(t), postgres.Options{})
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		fn(t, of(t, st))
	})
}

func of(t *testing.T, st fleet.Store) *sqlstore.Store {
	t.Helper()
	s, ok := sqlstore.Of(st)
	require.True(t, ok)
	return s
}

func create(t *testing.T, st *sqlstore.Store, n int, status fleet.Status) []fleet.Instance {
	t.Helper()
	now := time.Now().UTC()
	out := make([]fleet.Instance, n)
	for i := range out {
		out[i] = fleet.Instance{ID: fleet.NewID(), Kind: "dinosaur", Name: fmt.Sprintf("i%d-%s", i, fleet.NewID()[:8]), Owner: "alice", CloudProvider: "aws",
			Region: "us-east-1", InstanceType: "standard", Status: status, CreatedAt: now, UpdatedAt: now, StatusSince: now}
		require.NoError(t, st.CreateInstance(t.Context(), out[i]))
	}
	return out
}

// gate holds every flush until open is called, so that updates queue.
type gate struct {
	open    func()
	waiting atomic.Int32 // flushers held
	sizes   chan int     // batch sizes, in order
}

func newGate(st *sqlstore.Store) *gate {
	g := &gate{sizes: make(chan int, 10000)}
	ch := make(chan struct{})
	g.open = sync.OnceFunc(func() { close(ch) })
	sqlstore.SetBeforeFlush(st, func(n int) {
		g.sizes <- n
		g.waiting.Add(1)
		<-ch
	})
	return g
}

// holdFlushers makes every flusher of st hold a batch of one update in
// the gate, one after the other, so that what is queued next forms one
// batch, in order, once the gate opens.
func holdFlushers(t *testing.T, st *sqlstore.Store) *gate {
	t.Helper()
	g := newGate(st)
	n := sqlstore.Flushers(st)
	for i, h := range create(t, st, n, fleet.StatusAccepted) {
		go func() {
			_, _ = st.UpdateInstance(context.Background(), fleet.Update{ID: h.ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing})
		}()
		require.Eventually(t, func() bool { return g.waiting.Load() == int32(i+1) }, 30*time.Second, time.Millisecond)
	}
	return g
}

// waitQueued waits until n updates are queued behind the held flushers.
func waitQueued(t *testing.T, st *sqlstore.Store, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return sqlstore.Queued(st) >= n }, 30*time.Second, time.Millisecond)
}

// TestGroupCommitBatches: updates queued while the flushers write go out
// together: one flush for everything queued (up to the batch bound), each
// update with its own result.
func TestGroupCommitBatches(t *testing.T) {
	stores(t, func(t *testing.T, st *sqlstore.Store) {
		insts := create(t, st, 300, fleet.StatusAccepted)
		g := holdFlushers(t, st)
		var wg sync.WaitGroup
		errs := make([]error, len(insts))
		got := make([]fleet.Instance, len(insts))
		for i, inst := range insts {
			wg.Go(func() {
				clusterID := "c" + inst.Name
				got[i], errs[i] = st.UpdateInstance(context.Background(), fleet.Update{ID: inst.ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing, ClusterID: &clusterID})
			})
		}
		waitQueued(t, st, len(insts)) // behind the held flushers
		g.open()
		wg.Wait()
		close(g.sizes)
		flushes, largest, total := 0, 0, 0
		for n := range g.sizes {
			flushes++
			largest = max(largest, n)
			total += n
		}
		holders := sqlstore.Flushers(st)
		assert.Equal(t, len(insts)+holders, total, "every update written once")
		assert.Equal(t, len(insts), largest, "what queued went out in one flush")
		assert.Equal(t, holders+1, flushes)
		for i, inst := range insts {
			require.NoError(t, errs[i])
			assert.Equal(t, fleet.StatusPreparing, got[i].Status)
			assert.Equal(t, "c"+inst.Name, got[i].ClusterID, "each row its own values")
		}
	})
}

// TestGroupCommitOutcomes: one batch holding a success, a lost swap, a
// deleted row, a missing row, a stale fence, a current fence, a second
// update of the same row and an update whose caller gave up: each gets its
// own outcome, and the give-up is not written.
func TestGroupCommitOutcomes(t *testing.T) {
	stores(t, func(t *testing.T, st *sqlstore.Store) {
		ctx := t.Context()
		insts := create(t, st, 7, fleet.StatusAccepted)
		_, err := st.UpdateInstance(ctx, fleet.Update{ID: insts[2].ID, From: fleet.StatusAccepted, To: fleet.StatusDeprovision})
		require.NoError(t, err)
		_, err = st.UpdateInstance(ctx, fleet.Update{ID: insts[2].ID, From: fleet.StatusDeprovision, To: fleet.StatusDeleting})
		require.NoError(t, err)
		_, err = st.UpdateInstance(ctx, fleet.Update{ID: insts[2].ID, From: fleet.StatusDeleting, SoftDelete: true})
		require.NoError(t, err)
		// Lease "w": token 1 held by a, expired, taken over by b (token 2).
		old, err := st.AcquireLease(ctx, "w", "a", time.Millisecond)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			_, err := st.AcquireLease(ctx, "w", "b", time.Hour)
			return err == nil
		}, 10*time.Second, time.Millisecond)
		cur, err := st.AcquireLease(ctx, "w", "b", time.Hour)
		require.NoError(t, err)
		require.Greater(t, cur.Token, old.Token)

		g := holdFlushers(t, st)
		cases := []struct {
			name string
			u    fleet.Update
			ctx  context.Context
			want func(t *testing.T, inst fleet.Instance, err error)
		}{
			{"success", fleet.Update{ID: insts[0].ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing}, nil, func(t *testing.T, inst fleet.Instance, err error) {
				require.NoError(t, err)
				assert.Equal(t, fleet.StatusPreparing, inst.Status)
			}},
			{"lost swap", fleet.Update{ID: insts[1].ID, From: fleet.StatusReady, To: fleet.StatusDeprovision}, nil, func(t *testing.T, _ fleet.Instance, err error) {
				var ce *fleet.ConflictError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, string(fleet.StatusAccepted), ce.Actual)
			}},
			{"deleted", fleet.Update{ID: insts[2].ID, From: fleet.StatusDeleting, SoftDelete: true}, nil, func(t *testing.T, _ fleet.Instance, err error) {
				require.ErrorIs(t, err, fleet.ErrNotFound)
			}},
			{"missing", fleet.Update{ID: "nope", From: fleet.StatusAccepted, To: fleet.StatusPreparing}, nil, func(t *testing.T, _ fleet.Instance, err error) {
				require.ErrorIs(t, err, fleet.ErrNotFound)
			}},
			{"stale fence", fleet.Update{ID: insts[3].ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing, Fence: old.Fence()}, nil, func(t *testing.T, _ fleet.Instance, err error) {
				require.ErrorIs(t, err, lease.ErrStaleFence)
			}},
			{"current fence", fleet.Update{ID: insts[4].ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing, Fence: cur.Fence()}, nil, func(t *testing.T, inst fleet.Instance, err error) {
				require.NoError(t, err)
				assert.Equal(t, fleet.StatusPreparing, inst.Status)
			}},
			{"first of two on one row", fleet.Update{ID: insts[5].ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing}, nil, func(t *testing.T, _ fleet.Instance, err error) {
				require.NoError(t, err)
			}},
			{"second of two on one row", fleet.Update{ID: insts[5].ID, From: fleet.StatusPreparing, To: fleet.StatusProvisioning}, nil, func(t *testing.T, inst fleet.Instance, err error) {
				require.NoError(t, err, "written after the first, in a later group")
				assert.Equal(t, fleet.StatusProvisioning, inst.Status)
			}},
			{"caller gave up", fleet.Update{ID: insts[6].ID, From: fleet.StatusAccepted, To: fleet.StatusPreparing}, canceled(), func(t *testing.T, _ fleet.Instance, err error) {
				require.ErrorIs(t, err, context.Canceled)
			}},
		}
		type result struct {
			inst fleet.Instance
			err  error
		}
		results := make([]chan result, len(cases))
		for i, c := range cases {
			results[i] = make(chan result, 1)
			uctx := c.ctx
			if uctx == nil {
				uctx = context.Background()
			}
			go func() {
				inst, err := st.UpdateInstance(uctx, c.u)
				results[i] <- result{inst, err}
			}()
			if c.ctx == nil {
				waitQueued(t, st, i+1) // in this order, in one batch
			}
		}
		g.open()
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r := <-results[i]
				c.want(t, r.inst, r.err)
			})
		}
		inst, err := st.GetInstance(ctx, insts[6].ID)
		require.NoError(t, err)
		assert.Equal(t, fleet.StatusAccepted, inst.Status, "an update whose caller gave up before the flush is not written")
	})
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestGroupCommitReplacesDeadConnections: the flushers' connections are
// ended by the server (what a PostgreSQL restart does); the store replaces
// them. Each update reports its own outcome, and after at most one failure
// per ended connection every update succeeds again, for good.
func TestGroupCommitReplacesDeadConnections(t *testing.T) {
	url := pgtest.FreshDB(t) + "&application_name=fleetkit_deadconn"
	st, err := postgres.Open(t.Context(), url, postgres.Options{})
	require.NoError(t, err)
	defer st.Close()
	insts := create(t, of(t, st), 200, fleet.StatusReady)
	// Every flusher takes (and keeps) a connection of its own.
	var wg sync.WaitGroup
	for _, inst := range insts[:100] {
		wg.Go(func() {
			host := "h1-" + inst.ID
			_, err := st.UpdateInstance(t.Context(), fleet.Update{ID: inst.ID, From: fleet.StatusReady, Host: &host})
			assert.NoError(t, err)
		})
	}
	wg.Wait()

	admin, err := pgx.Connect(t.Context(), pgtest.SharedURL(t))
	require.NoError(t, err)
	defer admin.Close(context.Background())
	var ended int
	require.NoError(t, admin.QueryRow(t.Context(),
		`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'fleetkit_deadconn'`).Scan(&ended))
	require.Positive(t, ended)

	failures := 0
	for i, inst := range insts[100:] {
		host := "h2-" + inst.ID
		_, err := st.UpdateInstance(t.Context(), fleet.Update{ID: inst.ID, From: fleet.StatusReady, Host: &host})
		if err != nil {
			failures++
			require.LessOrEqual(t, failures, ended, "update %d failed after every ended connection had failed once: %v", i, err)
		}
	}
	t.Logf("%d connections ended, %d of 100 updates failed", ended, failures)
	// The last updates all went through: nothing stays broken.
	for _, inst := range insts[150:] {
		got, err := st.GetInstance(t.Context(), inst.ID)
		require.NoError(t, err)
		assert.Equal(t, "h2-"+inst.ID, got.Host)
	}
}
