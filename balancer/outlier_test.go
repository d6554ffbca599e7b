package balancer_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// ejectNow reports EjectAfter failures of uri's backend and returns whether
// the last one ejected it.
func ejectNow(t *testing.T, b *balancer.Balancer, lang, uri string, after int) bool {
	t.Helper()
	be := backendOf(t, b, lang, uri)
	ejected := false
	for range after {
		ejected = b.ReportFailure(be)
	}
	return ejected
}

// backendOf returns the *Backend of uri, found by picking.
func backendOf(t *testing.T, b *balancer.Balancer, lang, uri string) *balancer.Backend {
	t.Helper()
	for range 1000 {
		be, err := b.Pick(lang)
		require.NoError(t, err)
		if be.URI == uri {
			return be
		}
	}
	t.Fatalf("%s is never picked", uri)
	return nil
}

// inRotation returns whether uri is in rotation.
func inRotation(t *testing.T, b *balancer.Balancer, uri string) bool {
	t.Helper()
	ej, err := b.EjectedBackends(context.Background())
	require.NoError(t, err)
	_, out := ej[uri]
	return !out
}

// TestEjectionTimeGrows: an ejected backend is back after the base
// ejection time; ejected again at once it stays out twice as long, then
// three times, up to the maximum; time served in rotation wears the
// multiplier down (Envoy's outlier detection).
func TestEjectionTimeGrows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const base = 10 * time.Second
		reg := prometheus.NewRegistry()
		b := newBalancer(t, balancer.Options{BaseEjectionTime: base, MaxEjectionTime: 25 * time.Second, Registerer: reg})
		uris := fleet(t, b, "python", map[string]int{"1.0": 3})
		bad := uris["1.0"][0]

		for i, want := range []time.Duration{base, 2 * base, 25 * time.Second} { // the third is capped
			start := time.Now()
			require.True(t, ejectNow(t, b, "python", bad, balancer.DefaultEjectAfter), "ejection %d", i+1)
			ej, err := b.EjectedBackends(context.Background())
			require.NoError(t, err)
			assert.Equal(t, start.Add(want), ej[bad], "ejection %d: due back", i+1)
			perURI, _ := pickN(t, b, "python", 10)
			assert.Zero(t, perURI[bad], "ejection %d: out of rotation", i+1)

			time.Sleep(want - time.Nanosecond)
			synctest.Wait()
			assert.False(t, inRotation(t, b, bad), "ejection %d: still out just before %s", i+1, want)
			time.Sleep(time.Nanosecond)
			synctest.Wait()
			assert.True(t, inRotation(t, b, bad), "ejection %d: back after %s", i+1, want)
			perURI, _ = pickN(t, b, "python", 30)
			assert.Equal(t, 10, perURI[bad], "ejection %d: its share again", i+1)
		}
		assert.Equal(t, 3.0, metricValue(t, reg, "fleetkit_balancer_ejections_total", "python", "1.0"))

		// Three ejections in a row; 2×base in rotation takes two off, so
		// the next ejection is the second in a row: 2×base.
		time.Sleep(2 * base)
		start := time.Now()
		require.True(t, ejectNow(t, b, "python", bad, balancer.DefaultEjectAfter))
		ej, err := b.EjectedBackends(context.Background())
		require.NoError(t, err)
		assert.Equal(t, start.Add(2*base), ej[bad])
		st, err := b.Backends(context.Background())
		require.NoError(t, err)
		for _, be := range st.Languages["python"].Versions["1.0"].Backends {
			if be.URI == bad {
				assert.False(t, be.Healthy)
				assert.Equal(t, 2, be.Ejections)
				require.NotNil(t, be.EjectedUntil)
				assert.Equal(t, start.Add(2*base), *be.EjectedUntil)
			}
		}
		h, err := b.Health(context.Background())
		require.NoError(t, err)
		require.Len(t, h.Ejected, 1)
		assert.Equal(t, bad, h.Ejected[0].URI)
		assert.Equal(t, start.Add(2*base), *h.Ejected[0].Until)

		// Removing a backend stops its timer; nothing is left running.
		require.NoError(t, b.RemoveBackend(context.Background(), bad))
	})
}

// TestEjectionSuccessResetsFailures: failures must be consecutive.
func TestEjectionSuccessResetsFailures(t *testing.T) {
	b := newBalancer(t, balancer.Options{})
	uris := fleet(t, b, "python", map[string]int{"1.0": 2})
	be := backendOf(t, b, "python", uris["1.0"][0])
	for range 10 {
		assert.False(t, b.ReportFailure(be))
		assert.False(t, b.ReportFailure(be))
		b.ReportSuccess(be)
	}
	assert.True(t, be.Healthy())
}

// TestMaxEjectionPercent: at most MaxEjectionPercent of a language's
// backends are out at once (one always may be, from two backends up), and
// the last backend in rotation never leaves, whatever its failures.
func TestMaxEjectionPercent(t *testing.T) {
	tests := []struct {
		name     string
		backends int
		percent  int
		ejected  int // how many of the backends failing in turn get ejected
	}{
		{"one backend is never ejected", 1, 100, 0},
		{"two at 100%: one, the other stays", 2, 100, 1},
		{"two at the default 50%: one", 2, 0, 1},
		{"four at 50%: two", 4, 50, 2},
		{"five at 50%: two", 5, 50, 2},
		{"ten at 10%: one", 10, 10, 1},
		{"ten at 1%: still one", 10, 1, 1},
		{"four at 100%: three", 4, 100, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBalancer(t, balancer.Options{MaxEjectionPercent: tt.percent, BaseEjectionTime: time.Hour})
			uris := fleet(t, b, "python", map[string]int{"1.0": tt.backends/2 + tt.backends%2, "2.0": tt.backends / 2})
			all := append(uris["1.0"], uris["2.0"]...)
			bes := make([]*balancer.Backend, len(all))
			for i, u := range all {
				bes[i] = backendOf(t, b, "python", u)
			}
			// Every backend fails, over and over: only the allowed share
			// goes, and the others keep serving (and failing).
			for range 5 {
				for _, be := range bes {
					b.ReportFailure(be)
				}
			}
			assert.Len(t, b.Ejected(), tt.ejected)
			_, err := b.Pick("python")
			assert.NoError(t, err, "a language never loses its last backend to ejection")
		})
	}
}

// TestEjectionCapIsPerLanguage: the share is counted within a language.
func TestEjectionCapIsPerLanguage(t *testing.T) {
	b := newBalancer(t, balancer.Options{EjectAfter: 1, BaseEjectionTime: time.Hour})
	py := fleet(t, b, "python", map[string]int{"1.0": 2})
	java := map[string][]string{}
	for i := range 2 {
		u := "http://127.0.0.1:" + []string{"31000", "31001"}[i]
		require.NoError(t, b.AddBackend(context.Background(), "java", "1.0", u))
		java["1.0"] = append(java["1.0"], u)
	}
	assert.True(t, ejectNow(t, b, "python", py["1.0"][0], 1))
	assert.True(t, ejectNow(t, b, "java", java["1.0"][0], 1))
	assert.False(t, ejectNow(t, b, "java", java["1.0"][1], 5), "java's last backend stays")
	assert.Len(t, b.Ejected(), 2)
}

// TestNegativeBaseEjectionTime: with no timed readmission an ejected
// backend waits for a health check, Readmit or AddBackend.
func TestNegativeBaseEjectionTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBalancer(t, balancer.Options{BaseEjectionTime: -1})
		uris := fleet(t, b, "python", map[string]int{"1.0": 2})
		bad := uris["1.0"][0]
		require.True(t, ejectNow(t, b, "python", bad, balancer.DefaultEjectAfter))
		ej, err := b.EjectedBackends(context.Background())
		require.NoError(t, err)
		assert.True(t, ej[bad].IsZero(), "no time it is due back")
		time.Sleep(24 * time.Hour)
		synctest.Wait()
		assert.False(t, inRotation(t, b, bad))
		require.NoError(t, b.Readmit(context.Background(), bad))
		assert.True(t, inRotation(t, b, bad))
	})
}

// TestReadmittedEarlyStopsTheTimer: a backend a health check readmits is
// not readmitted again (or ejected anew) by its old timer.
func TestReadmittedEarlyStopsTheTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBalancer(t, balancer.Options{BaseEjectionTime: 10 * time.Second})
		uris := fleet(t, b, "python", map[string]int{"1.0": 3})
		bad := uris["1.0"][0]
		require.True(t, ejectNow(t, b, "python", bad, balancer.DefaultEjectAfter))
		time.Sleep(5 * time.Second)
		require.NoError(t, b.Readmit(context.Background(), bad))
		// Ejected again at once: the second in a row, 20 s from now; the
		// first ejection's timer (due in 5 s) must not end it early.
		start := time.Now()
		require.True(t, ejectNow(t, b, "python", bad, balancer.DefaultEjectAfter))
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.False(t, inRotation(t, b, bad), "the earlier ejection's timer did not readmit it")
		time.Sleep(time.Until(start.Add(20 * time.Second)))
		synctest.Wait()
		assert.True(t, inRotation(t, b, bad))
	})
}

func TestNewValidatesOutlierOptions(t *testing.T) {
	for _, o := range []balancer.Options{{MaxEjectionPercent: -1}, {MaxEjectionPercent: 101}, {MaxEjectionTime: -time.Second}} {
		_, err := balancer.New(o)
		assert.Error(t, err, "%+v", o)
	}
}
