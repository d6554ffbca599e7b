package search_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet/search"
)

func TestParse(t *testing.T) {
	c := func(field string, op search.Op, vals ...string) search.Cond {
		return search.Cond{Field: field, Op: op, Values: vals}
	}
	tests := []struct {
		in   string
		want search.Expr
	}{
		{"", nil},
		{"   ", nil},
		{"name = rex", c("name", search.OpEq, "rex")},
		{"NAME=rex", c("name", search.OpEq, "rex")},
		{"region <> 'us-east-1'", c("region", search.OpNe, "us-east-1")},
		{"name like 'r%'", c("name", search.OpLike, "r%")},
		{"name ILIKE R%", c("name", search.OpILike, "R%")},
		{"status in (ready, 'failed')", c("status", search.OpIn, "ready", "failed")},
		{"status NOT IN (ready)", c("status", search.OpNotIn, "ready")},
		{"name = 'o''hara'", c("name", search.OpEq, "o'hara")},
		{"name = 'a and b'", c("name", search.OpEq, "a and b")},
		{"name = a and owner = b or region = c", search.Or{
			search.And{c("name", search.OpEq, "a"), c("owner", search.OpEq, "b")},
			c("region", search.OpEq, "c"),
		}},
		{"name = a and (owner = b or region = c)", search.And{
			c("name", search.OpEq, "a"),
			search.Or{c("owner", search.OpEq, "b"), c("region", search.OpEq, "c")},
		}},
		{"cluster_id = c1 and instance_type = standard and cloud_provider = aws", search.And{
			c("cluster_id", search.OpEq, "c1"), c("instance_type", search.OpEq, "standard"), c("cloud_provider", search.OpEq, "aws"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := search.Parse(tt.in)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestParseErrors(t *testing.T) {
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
			_, err := search.Parse(in)
			require.ErrorIs(t, err, search.ErrInvalid)
		})
	}
	_, err := search.Parse(strings.TrimSuffix(strings.Repeat("name = a or ", 10), " or "))
	assert.NoError(t, err, "ten clauses are allowed")
}
