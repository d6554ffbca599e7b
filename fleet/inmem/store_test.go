package inmem_test

import (
	"testing"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/inmem"
	"github.com/fleetkit/fleetkit/fleet/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) fleet.Store { return inmem.NewStore() })
}

func TestLifecycle(t *testing.T) {
	storetest.RunLifecycle(t, func(t *testing.T) fleet.Store { return inmem.NewStore() })
}
