package fleet_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
)

func TestQuotaList(t *testing.T) {
	q, err := fleet.ParseQuotaList([]byte(`
organisations:
  - id: acme
    max_allowed_instances: 3
    instance_types: [standard]
registered_users:
  - username: alice
    max_allowed_instances: 1
`))
	require.NoError(t, err)
	tests := []struct {
		name string
		req  fleet.QuotaRequest
		want error
	}{
		{"user under max", fleet.QuotaRequest{Owner: "alice", InstanceType: "developer", Live: 0}, nil},
		{"user at max", fleet.QuotaRequest{Owner: "alice", InstanceType: "developer", Live: 1}, fleet.ErrMaxInstances},
		{"org member", fleet.QuotaRequest{Owner: "bob", Organisation: "acme", InstanceType: "standard", Live: 2}, nil},
		{"org at max", fleet.QuotaRequest{Owner: "bob", Organisation: "acme", InstanceType: "standard", Live: 3}, fleet.ErrMaxInstances},
		{"org type not allowed", fleet.QuotaRequest{Owner: "bob", Organisation: "acme", InstanceType: "developer"}, fleet.ErrInsufficientQuota},
		{"unknown user, no default", fleet.QuotaRequest{Owner: "eve", InstanceType: "standard"}, fleet.ErrInsufficientQuota},
		{"registered user in an unknown org", fleet.QuotaRequest{Owner: "alice", Organisation: "other", InstanceType: "standard"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := q.CheckQuota(context.Background(), tt.req)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.want)
		})
	}
	_, err = fleet.ParseQuotaList([]byte("organisations: [{id: x, max_allowed: 1}]"))
	assert.ErrorIs(t, err, fleet.ErrInvalid, "unknown fields are refused")
}

func TestDenyList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deny.yaml")
	require.NoError(t, os.WriteFile(path, []byte("users: [mallory]\norganisations: [evil]\n"), 0o600))
	d, err := fleet.LoadDenyList(path)
	require.NoError(t, err)
	assert.True(t, d.Denied("mallory", ""))
	assert.True(t, d.Denied("bob", "evil"))
	assert.False(t, d.Denied("bob", "acme"))
	assert.False(t, d.Denied("bob", ""))
}

func TestFirstReady(t *testing.T) {
	inst := fleet.Instance{CloudProvider: "aws", Region: "us-east-1", MultiAZ: true, InstanceType: "standard"}
	ready := func(id string, mut func(*fleet.ClusterUsage)) fleet.ClusterUsage {
		c := fleet.ClusterUsage{Cluster: fleet.Cluster{ID: id, CloudProvider: "aws", Region: "us-east-1", MultiAZ: true, Status: fleet.ClusterReady, Capacity: 10}}
		if mut != nil {
			mut(&c)
		}
		return c
	}
	tests := []struct {
		name     string
		clusters []fleet.ClusterUsage
		want     string
	}{
		{"first fits", []fleet.ClusterUsage{ready("a", nil), ready("b", nil)}, "a"},
		{"not ready", []fleet.ClusterUsage{ready("a", func(c *fleet.ClusterUsage) { c.Status = fleet.ClusterProvisioning }), ready("b", nil)}, "b"},
		{"full", []fleet.ClusterUsage{ready("a", func(c *fleet.ClusterUsage) { c.Used = 9 }), ready("b", nil)}, "b"},
		{"other region", []fleet.ClusterUsage{ready("a", func(c *fleet.ClusterUsage) { c.Region = "eu-west-1" }), ready("b", nil)}, "b"},
		{"single AZ", []fleet.ClusterUsage{ready("a", func(c *fleet.ClusterUsage) { c.MultiAZ = false }), ready("b", nil)}, "b"},
		{"type not hosted", []fleet.ClusterUsage{ready("a", func(c *fleet.ClusterUsage) { c.InstanceTypes = []string{"developer"} }), ready("b", nil)}, "b"},
		{"unlimited", []fleet.ClusterUsage{ready("a", func(c *fleet.ClusterUsage) { c.Capacity, c.Used = 0, 1000 })}, "a"},
		{"none", []fleet.ClusterUsage{ready("a", func(c *fleet.ClusterUsage) { c.Used = 10 })}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fleet.FirstReady{}.Place(inst, 2, tt.clusters)
			if tt.want == "" {
				require.ErrorIs(t, err, fleet.ErrNoCapacity)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}
