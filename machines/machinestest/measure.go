package machinestest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fleetkit/fleetkit/machines"
)

// Figures are the latencies Measure took, one per machine.
type Figures struct {
	// Ready is from calling Create to its return (running, and healthy
	// when the spec has a HealthPath).
	Ready []time.Duration
	// Healthy is from calling Create to the first 200 from the machine's
	// health path, asked by the caller after Create returned.
	Healthy []time.Duration
	// Removed is from calling Remove to its return (the machine gone).
	Removed []time.Duration
}

// Percentile returns the p-th percentile (nearest rank) of ds, 0 for none.
func Percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, max(0, (len(s)*p+99)/100-1))]
}

// String gives p50 and p99 of each figure.
func (f Figures) String() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	return fmt.Sprintf("create→ready p50 %s p99 %s; create→healthy p50 %s p99 %s; remove→gone p50 %s p99 %s (%d machines)",
		ms(Percentile(f.Ready, 50)), ms(Percentile(f.Ready, 99)), ms(Percentile(f.Healthy, 50)), ms(Percentile(f.Healthy, 99)),
		ms(Percentile(f.Removed, 50)), ms(Percentile(f.Removed, 99)), len(f.Ready))
}

// Measure creates n machines of spec one after another, times each to
// ready and to healthy (spec.HealthPath, or machines.DefaultHealthPath),
// and removes each, timing that too. It is the side-by-side measurement of
// providers in BENCHMARKS.md.
func Measure(ctx context.Context, p machines.Provider, spec machines.Spec, n int) (Figures, error) {
	path := spec.HealthPath
	if path == "" {
		path = machines.DefaultHealthPath
	}
	var f Figures
	for range n {
		start := time.Now()
		m, err := p.Create(ctx, spec)
		if err != nil {
			return f, err
		}
		f.Ready = append(f.Ready, time.Since(start))
		if err := machines.WaitReady(ctx, m.Address, machines.WaitOptions{Path: path}); err != nil {
			return f, err
		}
		f.Healthy = append(f.Healthy, time.Since(start))
		start = time.Now()
		if err := p.Remove(ctx, m.ID); err != nil {
			return f, err
		}
		f.Removed = append(f.Removed, time.Since(start))
	}
	return f, nil
}
