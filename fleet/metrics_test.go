package fleet_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/inmem"
	"github.com/fleetkit/fleetkit/fleet/storetest"
)

// TestWorkerEngineMetrics: each worker's reconcile engine reports on the
// Service's Registerer, named by worker.
func TestWorkerEngineMetrics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := prometheus.NewRegistry()
		svc, err := fleet.New(inmem.NewStore(), fleet.Options{Kind: fleet.Dinosaur, Clusters: cluster.Defaults(), Registerer: reg})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { assert.NoError(t, svc.Run(ctx)) })
		defer func() { cancel(); wg.Wait() }()
		require.NoError(t, svc.Store().CreateInstance(context.Background(), storetest.Instance("rex", "alice", "")))
		synctest.Wait()

		mfs, err := reg.Gather()
		require.NoError(t, err)
		calls := map[string]uint64{}
		for _, mf := range mfs {
			if mf.GetName() != "fleetkit_reconcile_duration_seconds" {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "name" {
						calls[l.GetValue()] = m.GetHistogram().GetSampleCount()
					}
				}
			}
		}
		assert.Positive(t, calls["dinosaur/accepted"], "engines: %v", calls)
	})
}
