package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/agent"
	"github.com/fleetkit/fleetkit/fleet/agent/agenttest"
	"github.com/fleetkit/fleetkit/internal/kubetest"
)

// BenchmarkCreateToReady measures, through the agent binary on the real
// node, 20 instances placed one after another on its cluster: from the
// desired set's change at the control plane (the test's, so its own
// latency is nil) to the agent's report of the instance ready (its Pod
// passed its readiness probe, every second), and to the instance
// answering GET /health/<id> at the reported host (through kube-proxy).
// Then all 20 are removed at once: the time until every object and Pod is
// gone. Run it with -benchtime 1x.
//
//	go test -run '^$' -bench BenchmarkCreateToReady -benchtime 1x ./examples/fleet-agent
func BenchmarkCreateToReady(b *testing.B) {
	const n = 20
	node, cs := nodeEnv(b)
	ns := kubetest.Namespace(b, node)
	cp := agenttest.NewControlPlane(b, fleet.Dinosaur, "bench")
	startAgent(b, node, cp, ns)
	for b.Loop() {
		var insts []agent.Instance
		ready := make([]time.Duration, 0, n)
		answering := make([]time.Duration, 0, n)
		for i := range n {
			id := fmt.Sprintf("b%019d", i)
			insts = append(insts, cp.Instance(id, fmt.Sprintf("i%d", i)))
			start := time.Now()
			cp.Set(insts...)
			var host string
			ready = append(ready, waitFor(b, "ready", func() bool {
				r, _ := cp.Last()
				host = r[id].Host
				return r[id].Phase == fleet.PhaseReady
			}))
			waitFor(b, "answering", func() bool { return agenttest.Answers(b.Context(), host, id) })
			answering = append(answering, time.Since(start))
		}
		start := time.Now()
		cp.Set()
		waitFor(b, "all gone", func() bool { return len(allObjects(b, cs, ns)) == 0 })
		removed := time.Since(start)
		for name, ds := range map[string][]time.Duration{"ready": ready, "answering": answering} {
			p50, p99 := agenttest.Percentile(ds, 50), agenttest.Percentile(ds, 99)
			b.ReportMetric(float64(p50.Microseconds())/1000, name+"_p50_ms")
			b.ReportMetric(float64(p99.Microseconds())/1000, name+"_p99_ms")
			b.Logf("create → %s, %d sequential instances: p50 %s, p99 %s (min %s)", name, n,
				p50.Round(time.Millisecond), p99.Round(time.Millisecond), slices.Min(ds).Round(time.Millisecond))
		}
		b.ReportMetric(removed.Seconds(), "remove_all_s")
		b.Logf("remove %d at once → every object and Pod gone: %s", n, removed.Round(time.Millisecond))
	}
}
