package postgres_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/postgres"
	"github.com/fleetkit/fleetkit/fleet/storetest"
	"github.com/fleetkit/fleetkit/internal/pgtest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }

// URLEnv names the variable that points the tests at a PostgreSQL server;
// scripts/start-postgres.sh starts one and prints it.
const URLEnv = "FLEETKIT_TEST_POSTGRES_URL"

func openEmpty(t *testing.T) *postgres.Store {
	t.Helper()
	url := os.Getenv(URLEnv)
	if url == "" {
		testenv.Missing(t, "%s is not set (eval \"$(scripts/start-postgres.sh)\" starts a server)", URLEnv)
	}
	st, err := postgres.Open(context.Background(), url, postgres.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, postgres.Truncate(context.Background(), st))
	return st
}

func TestConformance(t *testing.T) {
	openEmpty(t)
	storetest.Run(t, func(t *testing.T) fleet.Store { return openEmpty(t) })
}

func TestMigrationsOnce(t *testing.T) {
	st := openEmpty(t)
	v, err := postgres.Version(context.Background(), st)
	require.NoError(t, err)
	require.Equal(t, 4, v)
}

func TestLifecycle(t *testing.T) {
	openEmpty(t)
	storetest.RunLifecycle(t, func(t *testing.T) fleet.Store { return openEmpty(t) })
}

// TestQuotaAcrossReplicas runs two replicas on two connection pools to
// one database.
func TestQuotaAcrossReplicas(t *testing.T) {
	a := openEmpty(t)
	b, err := postgres.Open(context.Background(), os.Getenv(URLEnv), postgres.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })
	storetest.QuotaAcrossReplicas(t, a, b)
}

// BenchmarkLoad creates FLEETKIT_LOAD_N (default 10,000) instances through
// the API from FLEETKIT_LOAD_CLIENTS (default 32) clients and waits until
// all are ready (in-memory data plane):
//
//	eval "$(scripts/start-postgres.sh)"
//	go test -run '^$' -bench Load -benchtime 1x ./fleet/postgres
func BenchmarkLoad(b *testing.B) {
	n := storetest.LoadN(b)
	url := os.Getenv(URLEnv)
	if url == "" {
		testenv.Missing(b, "%s is not set (eval \"$(scripts/start-postgres.sh)\" starts a server)", URLEnv)
	}
	for range b.N {
		st, err := postgres.Open(context.Background(), url, postgres.Options{})
		require.NoError(b, err)
		require.NoError(b, postgres.Truncate(context.Background(), st))
		res := storetest.Load(b, st, n, storetest.LoadClients(b))
		b.Log(res)
		storetest.ReportLoad(b, res)
		require.NoError(b, st.Close())
	}
}

// TestReplicasMigrateAtOnce: any number of replicas start together on a
// fresh database; the migration lock makes them migrate one after the
// other (the second used to fail creating schema_migrations).
func TestReplicasMigrateAtOnce(t *testing.T) {
	for round := range 3 {
		url := pgtest.FreshDB(t)
		errs := make([]error, 8)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				st, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 4})
				if err == nil {
					var v int
					v, err = postgres.Version(context.Background(), st)
					if err == nil && v != 4 {
						err = fmt.Errorf("schema version %d", v)
					}
					_ = st.Close()
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i, err := range errs {
			require.NoError(t, err, "round %d, replica %d", round, i)
		}
	}
}
