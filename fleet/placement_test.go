package fleet_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/cluster"
)

func TestFirstReady(t *testing.T) {
	inst := fleet.Instance{CloudProvider: "aws", Region: "us-east-1", MultiAZ: true, InstanceType: "standard"}
	ready := func(id string, mut func(*cluster.Usage)) cluster.Usage {
		c := cluster.Usage{Cluster: cluster.Cluster{ID: id, CloudProvider: "aws", Region: "us-east-1", MultiAZ: true, Status: cluster.Ready, Capacity: 10}}
		if mut != nil {
			mut(&c)
		}
		return c
	}
	tests := []struct {
		name     string
		clusters []cluster.Usage
		want     string
	}{
		{"first fits", []cluster.Usage{ready("a", nil), ready("b", nil)}, "a"},
		{"not ready", []cluster.Usage{ready("a", func(c *cluster.Usage) { c.Status = cluster.Provisioning }), ready("b", nil)}, "b"},
		{"full", []cluster.Usage{ready("a", func(c *cluster.Usage) { c.Used = 9 }), ready("b", nil)}, "b"},
		{"other region", []cluster.Usage{ready("a", func(c *cluster.Usage) { c.Region = "eu-west-1" }), ready("b", nil)}, "b"},
		{"single AZ", []cluster.Usage{ready("a", func(c *cluster.Usage) { c.MultiAZ = false }), ready("b", nil)}, "b"},
		{"type not hosted", []cluster.Usage{ready("a", func(c *cluster.Usage) { c.InstanceTypes = []string{"developer"} }), ready("b", nil)}, "b"},
		{"unlimited", []cluster.Usage{ready("a", func(c *cluster.Usage) { c.Capacity, c.Used = 0, 1000 })}, "a"},
		{"none", []cluster.Usage{ready("a", func(c *cluster.Usage) { c.Used = 10 })}, ""},
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
