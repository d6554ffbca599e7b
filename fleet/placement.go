package fleet

import (
	"fmt"
	"slices"

	"github.com/fleetkit/fleetkit/fleet/cluster"
)

// Placement chooses the cluster of an instance. It is a pure function of
// its inputs, called by the accepted worker under a lock, so it need not be
// safe for concurrent use.
type Placement interface {
	// Place returns the ID of the cluster for inst, which needs units
	// capacity units, among clusters; ErrNoCapacity when none fits.
	Place(inst Instance, units int, clusters []cluster.Usage) (string, error)
}

// firstReady is the default Placement, the original's: the first cluster
// (by ID) that is ready, matches the instance's cloud provider, region,
// multi-AZ and instance type, and has units free.
type firstReady struct{}

var _ Placement = firstReady{}

// Place implements Placement.
func (firstReady) Place(inst Instance, units int, clusters []cluster.Usage) (string, error) {
	for _, c := range clusters {
		if fits(c, inst, units) {
			return c.ID, nil
		}
	}
	return "", fmt.Errorf("%w: %s %s %s", ErrNoCapacity, inst.CloudProvider, inst.Region, inst.InstanceType)
}

// fits reports whether the instance could go to c now.
func fits(c cluster.Usage, inst Instance, units int) bool {
	return c.Status == cluster.Ready &&
		c.CloudProvider == inst.CloudProvider &&
		c.Region == inst.Region &&
		c.MultiAZ == inst.MultiAZ &&
		(len(c.InstanceTypes) == 0 || slices.Contains(c.InstanceTypes, inst.InstanceType)) &&
		(c.Capacity == 0 || c.Used+units <= c.Capacity)
}
