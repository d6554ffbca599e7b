package kubetest_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/internal/kubetest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

// BenchmarkNode measures the node's lifecycle once per iteration: start
// → node Ready (schedulable, kube-proxy synced), Pod create → Ready and
// delete → gone for 20 Pods of the pause image one after another (the
// scheduler places them; no readiness probe), and stop (the host clean).
//
//	go test -run '^$' -bench BenchmarkNode -benchtime 1x ./internal/kubetest
func BenchmarkNode(b *testing.B) {
	if err := kubetest.CheckNode(""); err != nil {
		testenv.Missing(b, "%v: run scripts/kube-testenv.sh as root", err)
	}
	if err := cluster.Stop(); err != nil {
		b.Fatal(err)
	}
	const pods = 20
	var up, down []time.Duration
	var ready, deleted []time.Duration
	for b.Loop() {
		start := time.Now()
		node, err := kubetest.StartNode(context.Background(), kubetest.NodeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		up = append(up, time.Since(start))
		cs, err := kubernetes.NewForConfig(node.Config())
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		ns := kubetest.Namespace(b, node)
		for i := range pods {
			name := fmt.Sprintf("p%d", i)
			start := time.Now()
			if _, err := cs.CoreV1().Pods(ns).Create(ctx, pauseSpec(name), metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
			waitPod(ctx, b, cs, ns, name, podReady)
			ready = append(ready, time.Since(start))
		}
		for i := range pods {
			name := fmt.Sprintf("p%d", i)
			start := time.Now()
			if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				b.Fatal(err)
			}
			waitPod(ctx, b, cs, ns, name, gone)
			deleted = append(deleted, time.Since(start))
		}
		start = time.Now()
		if err := node.Stop(); err != nil {
			b.Fatal(err)
		}
		down = append(down, time.Since(start))
	}
	b.ReportMetric(pct(up, 50).Seconds(), "up_s")
	b.ReportMetric(float64(pct(ready, 50).Milliseconds()), "pod_ready_p50_ms")
	b.ReportMetric(float64(pct(ready, 99).Milliseconds()), "pod_ready_p99_ms")
	b.ReportMetric(float64(pct(deleted, 50).Milliseconds()), "pod_gone_p50_ms")
	b.ReportMetric(float64(pct(deleted, 99).Milliseconds()), "pod_gone_p99_ms")
	b.ReportMetric(pct(down, 50).Seconds(), "down_s")
}

// pct returns the p-th percentile (nearest rank) of ds.
func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, (len(s)*p+99)/100-1)]
}
