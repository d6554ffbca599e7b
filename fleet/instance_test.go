package fleet_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/cluster"
)

func TestTransitions(t *testing.T) {
	tests := []struct {
		from, to fleet.Status
		ok       bool
	}{
		{fleet.StatusAccepted, fleet.StatusPreparing, true},
		{fleet.StatusPreparing, fleet.StatusProvisioning, true},
		{fleet.StatusProvisioning, fleet.StatusReady, true},
		{fleet.StatusReady, fleet.StatusDeprovision, true},
		{fleet.StatusFailed, fleet.StatusDeprovision, true},
		{fleet.StatusDeprovision, fleet.StatusDeleting, true},
		{fleet.StatusAccepted, fleet.StatusFailed, true},
		{fleet.StatusReady, fleet.StatusReady, true},
		{fleet.StatusAccepted, fleet.StatusReady, false},
		{fleet.StatusReady, fleet.StatusAccepted, false},
		{fleet.StatusDeleting, fleet.StatusReady, false},
		{fleet.StatusFailed, fleet.StatusReady, false},
		{fleet.StatusDeprovision, fleet.StatusFailed, false},
		{fleet.StatusReady, fleet.StatusSuspending, true},
		{fleet.StatusSuspending, fleet.StatusSuspended, true},
		{fleet.StatusSuspended, fleet.StatusResuming, true},
		{fleet.StatusResuming, fleet.StatusReady, true},
		{fleet.StatusSuspended, fleet.StatusDeprovision, true},
		{fleet.StatusSuspending, fleet.StatusResuming, true},
		{fleet.StatusAccepted, fleet.StatusSuspending, false},
		{fleet.StatusFailed, fleet.StatusSuspending, false},
		{fleet.StatusSuspended, fleet.StatusReady, false},
		{fleet.StatusDeprovision, fleet.StatusSuspending, false},
		{"bogus", "bogus", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.from)+"->"+string(tt.to), func(t *testing.T) {
			err := fleet.CheckTransition(tt.from, tt.to)
			if tt.ok {
				require.NoError(t, err)
				return
			}
			var te *fleet.TransitionError
			require.ErrorAs(t, err, &te)
			assert.ErrorIs(t, err, fleet.ErrIllegalTransition)
		})
	}
	for from, tos := range fleet.Transitions[fleet.Status]() {
		assert.True(t, from.Valid())
		for _, to := range tos {
			assert.True(t, to.Valid(), "%s -> %s", from, to)
		}
	}
	for from, tos := range fleet.Transitions[cluster.Status]() {
		for _, to := range tos {
			assert.NoError(t, fleet.CheckTransition(from, to))
		}
	}
	assert.ErrorIs(t, fleet.CheckTransition(cluster.Accepted, cluster.Ready), fleet.ErrIllegalTransition)
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := fleet.NewID()
		require.Len(t, id, 20)
		require.Regexp(t, `^[0-9a-v]{20}$`, id)
		require.False(t, seen[id])
		seen[id] = true
	}
}

func TestKind(t *testing.T) {
	k, err := fleet.Kind{Name: "unicorn"}.Normalize()
	require.NoError(t, err)
	assert.Equal(t, "unicorns", k.Plural)
	assert.Equal(t, "Unicorn", k.Display)
	assert.Equal(t, "/api/unicorns_mgmt/v1", k.BasePath())
	assert.Equal(t, "UNICORNS-MGMT", k.CodePrefix())
	assert.Equal(t, "/api/kafkas_mgmt/v1", fleet.Kafka.BasePath())
	_, err = fleet.Kind{Name: "Bad Name"}.Normalize()
	assert.ErrorIs(t, err, fleet.ErrInvalid)
}

func TestQueryPageSize(t *testing.T) {
	for size, want := range map[int]int{-1: 0, 0: 100, 1: 1, 1000: 1000, 1001: 1000} {
		assert.Equal(t, want, fleet.Query{Size: size}.PageSize(), "Size %d", size)
	}
}
