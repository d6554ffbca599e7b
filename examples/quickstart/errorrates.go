package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetkit/fleetkit/rollout"
)

// newGathererRates reads the in-process balancer's request counter.
func newGathererRates(g prometheus.Gatherer) rollout.ErrorRateSource {
	return rollout.NewCounterErrorRates(g, rollout.CounterOptions{})
}
