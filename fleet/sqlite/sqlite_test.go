package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/sqlite"
	"github.com/fleetkit/fleetkit/fleet/storetest"
)

func TestConformance(t *testing.T) {
	t.Run("memory", func(t *testing.T) {
		storetest.Run(t, func(t *testing.T) fleet.Store {
			st, err := sqlite.Open(context.Background(), ":memory:")
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			return st
		})
	})
	t.Run("file", func(t *testing.T) {
		// One file for the suite, truncated between tests like PostgreSQL.
		path := filepath.Join(t.TempDir(), "fleet.db")
		storetest.Run(t, func(t *testing.T) fleet.Store {
			st, err := sqlite.Open(context.Background(), path)
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			require.NoError(t, sqlite.Truncate(context.Background(), st))
			return st
		})
	})
}

func TestMigrationsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.db")
	for range 2 {
		st, err := sqlite.Open(context.Background(), path)
		require.NoError(t, err)
		v, err := sqlite.Version(context.Background(), st)
		require.NoError(t, err)
		require.Equal(t, 4, v)
		require.NoError(t, st.Close())
	}
}

func TestLifecycle(t *testing.T) {
	storetest.RunLifecycle(t, func(t *testing.T) fleet.Store {
		st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "fleet.db"))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	})
}

// TestQuotaAcrossReplicas runs two replicas on two handles (two
// connections) to one database file.
func TestQuotaAcrossReplicas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fleet.db")
	var stores [2]*sqlite.Store
	for i := range stores {
		st, err := sqlite.Open(context.Background(), path)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		stores[i] = st
	}
	storetest.QuotaAcrossReplicas(t, stores[0], stores[1])
}

// BenchmarkLoad creates FLEETKIT_LOAD_N (default 10,000) instances through
// the API from FLEETKIT_LOAD_CLIENTS (default 32) clients and waits until
// all are ready (in-memory data plane):
//
//	go test -run '^$' -bench Load -benchtime 1x ./fleet/sqlite
func BenchmarkLoad(b *testing.B) {
	n := storetest.LoadN(b)
	for range b.N {
		st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "fleet.db"))
		require.NoError(b, err)
		res := storetest.Load(b, st, n, storetest.LoadClients(b))
		b.Log(res)
		storetest.ReportLoad(b, res)
		require.NoError(b, st.Close())
	}
}

// TestHostsUniqueMigration: a database from before version 2, where two
// live rows could record one host, keeps the host on one row and clears
// the other's (its ready worker records a new one); from then on a second
// live row cannot record a host (ErrHostTaken).
func TestHostsUniqueMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "fleet.db")
	st, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	// Back to version 1.
	_, err = sqlite.DB(st).ExecContext(ctx, `DROP INDEX instances_live_host`)
	require.NoError(t, err)
	_, err = sqlite.DB(st).ExecContext(ctx, `DELETE FROM schema_migrations WHERE version >= 2`)
	require.NoError(t, err)
	now := time.Now().UTC()
	for _, id := range []string{"a", "b", "c"} {
		host := "127.0.0.1:1"
		if id == "c" {
			host = "127.0.0.1:3"
		}
		require.NoError(t, st.CreateInstance(ctx, fleet.Instance{ID: id, Kind: "dinosaur", Name: id, Owner: "alice", Status: fleet.StatusReady,
			Host: host, CreatedAt: now, UpdatedAt: now, StatusSince: now}))
	}
	// The rows are written; the later migrations' columns go too.
	_, err = sqlite.DB(st).ExecContext(ctx, `ALTER TABLE instances DROP COLUMN no_reauthentication`)
	require.NoError(t, err)
	_, err = sqlite.DB(st).ExecContext(ctx, `DROP TABLE agent_reports`)
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st, err = sqlite.Open(ctx, path)
	require.NoError(t, err)
	defer st.Close()
	hosts := map[string]string{}
	for _, id := range []string{"a", "b", "c"} {
		inst, err := st.GetInstance(ctx, id)
		require.NoError(t, err)
		hosts[id] = inst.Host
	}
	require.Equal(t, map[string]string{"a": "127.0.0.1:1", "b": "", "c": "127.0.0.1:3"}, hosts)
	host := "127.0.0.1:3"
	_, err = st.UpdateInstance(ctx, fleet.Update{ID: "b", From: fleet.StatusReady, Host: &host})
	require.ErrorIs(t, err, fleet.ErrHostTaken)
	host = "127.0.0.1:2"
	_, err = st.UpdateInstance(ctx, fleet.Update{ID: "b", From: fleet.StatusReady, Host: &host})
	require.NoError(t, err)
}
