package fleet

import (
	"context"
	"io"
	"log/slog"
	"sort"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet/lease"
)

// rowsStore lists fixed rows: the sweep's only store call.
type rowsStore struct {
	Store
	rows []Instance
}

func (s rowsStore) ListInstances(_ context.Context, q Query) ([]Instance, int, error) {
	return s.rows, len(s.rows), nil
}

// TestSweepGrace (synctest: the grace is time): a machine no live row owns
// goes at once; one at another host than its ready row records stays for
// the grace (the leader may be about to record it), then goes; one at the
// recorded host, or of an instance still provisioning, stays.
func TestSweepGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		dp := newMemDataPlane()
		start := func(id string) string {
			s, err := dp.Apply(ctx, Instance{ID: id, Name: id, ClusterID: "local"})
			require.NoError(t, err)
			return s.Host
		}
		hostKept := start("kept")
		start("moved")
		start("provisioning")
		start("orphan")
		start("failed")
		st := rowsStore{rows: []Instance{
			{ID: "kept", Status: StatusReady, Host: hostKept},
			{ID: "moved", Status: StatusReady, Host: "elsewhere:1"},
			{ID: "provisioning", Status: StatusProvisioning},
			{ID: "failed", Status: StatusFailed},
		}}
		w := &sweeper{st: st, running: dp, kind: "dinosaur", grace: 30 * time.Second, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		running := func() []string {
			insts, err := dp.Running(ctx)
			require.NoError(t, err)
			var ids []string
			for _, i := range insts {
				ids = append(ids, i.ID)
			}
			sort.Strings(ids)
			return ids
		}
		require.NoError(t, w.pass(ctx, lease.Fence{}))
		assert.Equal(t, []string{"kept", "moved", "provisioning"}, running(), "no live row, or failed: swept at once")
		time.Sleep(29 * time.Second)
		require.NoError(t, w.pass(ctx, lease.Fence{}))
		assert.Equal(t, []string{"kept", "moved", "provisioning"}, running(), "within the grace")
		time.Sleep(2 * time.Second)
		require.NoError(t, w.pass(ctx, lease.Fence{}))
		assert.Equal(t, []string{"kept", "provisioning"}, running(), "at another host than its row records, past the grace")
	})
}
