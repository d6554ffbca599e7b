package fleet_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
)

func TestParseSearch(t *testing.T) {
	c := func(field string, op fleet.Op, vals ...string) fleet.Cond {
		return fleet.Cond{Field: field, Op: op, Values: vals}
	}
	tests := []struct {
		in   string
		want fleet.Expr
	}{
		{"", nil},
		{"   ", nil},
		{"name = rex", c("name", fleet.OpEq, "rex")},
		{"NAME=rex", c("name", fleet.OpEq, "rex")},
		{"region <> 'us-east-1'", c("region", fleet.OpNe, "us-east-1")},
		{"name like 'r%'", c("name", fleet.OpLike, "r%")},
		{"name ILIKE R%", c("name", fleet.OpILike, "R%")},
		{"status in (ready, 'failed')", c("status", fleet.OpIn, "ready", "failed")},
		{"status NOT IN (ready)", c("status", fleet.OpNotIn, "ready")},
		{"name = 'o''hara'", c("name", fleet.OpEq, "o'hara")},
		{"name = 'a and b'", c("name", fleet.OpEq, "a and b")},
		{"name = a and owner = b or region = c", fleet.Or{
			fleet.And{c("name", fleet.OpEq, "a"), c("owner", fleet.OpEq, "b")},
			c("region", fleet.OpEq, "c"),
		}},
		{"name = a and (owner = b or region = c)", fleet.And{
			c("name", fleet.OpEq, "a"),
			fleet.Or{c("owner", fleet.OpEq, "b"), c("region", fleet.OpEq, "c")},
		}},
		{"cluster_id = c1 and instance_type = standard and cloud_provider = aws", fleet.And{
			c("cluster_id", fleet.OpEq, "c1"), c("instance_type", fleet.OpEq, "standard"), c("cloud_provider", fleet.OpEq, "aws"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := fleet.ParseSearch(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseSearchErrors(t *testing.T) {
	tests := []string{
		"color = red",
		"id = x",
		"name",
		"name =",
		"name == rex",
		"name > rex",
		"name != rex",
		"name = rex and",
		"and name = rex",
		"name = rex or or region = x",
		"name in rex",
		"name in (rex",
		"name in ()",
		"name not like x",
		"name = 'rex",
		"(name = rex",
		"name = rex)",
		"name = rex region = x",
		"name = (rex)",
		strings.TrimSuffix(strings.Repeat("name = a or ", 11), " or "),
	}
	for _, in := range tests {
		t.Run(in, func(t *testing.T) {
			_, err := fleet.ParseSearch(in)
			require.ErrorIs(t, err, fleet.ErrBadSearch)
		})
	}
	_, err := fleet.ParseSearch(strings.TrimSuffix(strings.Repeat("name = a or ", 10), " or "))
	assert.NoError(t, err, "ten clauses are allowed")
}

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
	for from, tos := range fleet.Transitions() {
		assert.True(t, from.Valid())
		for _, to := range tos {
			assert.True(t, to.Valid(), "%s -> %s", from, to)
		}
	}
	for from, tos := range fleet.ClusterTransitions() {
		for _, to := range tos {
			assert.NoError(t, fleet.CheckClusterTransition(from, to))
		}
	}
	assert.ErrorIs(t, fleet.CheckClusterTransition(fleet.ClusterAccepted, fleet.ClusterReady), fleet.ErrIllegalTransition)
}

func TestValidateNameAndIDs(t *testing.T) {
	for _, ok := range []string{"a", "rex", "rex-2", strings.Repeat("a", 32)} {
		assert.NoError(t, fleet.ValidateName(ok), ok)
	}
	for _, bad := range []string{"", "Rex", "2rex", "rex-", "-rex", "re_x", "re x", strings.Repeat("a", 33)} {
		assert.ErrorIs(t, fleet.ValidateName(bad), fleet.ErrInvalid, bad)
	}
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
