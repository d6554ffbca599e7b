package fleet_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
)

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
