package balancer_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// fleet adds counts[v] backends for each version and returns their URIs per
// version in the order added.
func fleet(t *testing.T, b *balancer.Balancer, lang string, counts map[string]int) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	n := 0
	for _, v := range sortedKeys(counts) {
		for range counts[v] {
			u := fmt.Sprintf("http://127.0.0.1:%d", 20000+n)
			n++
			require.NoError(t, b.AddBackend(context.Background(), lang, v, u))
			out[v] = append(out[v], u)
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j] < keys[i] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

// pickN picks n times and counts per URI and per version.
func pickN(t *testing.T, b *balancer.Balancer, lang string, n int) (perURI map[string]int, perVersion map[string]int) {
	t.Helper()
	perURI, perVersion = map[string]int{}, map[string]int{}
	for range n {
		be, err := b.Pick(lang)
		require.NoError(t, err)
		perURI[be.URI]++
		perVersion[be.Version]++
	}
	return perURI, perVersion
}

func newBalancer(t *testing.T, opts balancer.Options) *balancer.Balancer {
	t.Helper()
	b, err := balancer.New(opts)
	require.NoError(t, err)
	return b
}

type ratioCase struct {
	name       string
	backends   map[string]int
	ratio      map[string]int
	n          int
	perBackend map[string]int
}

// ratioCases are the weight sets of the ratio accuracy tests, shared by the
// Balancer and the Proxy tests. perBackend is the exact count of each
// backend of each version after n requests.
var ratioCases = []ratioCase{
	{"contract 60/40 two per version", map[string]int{"1.0": 2, "2.0": 2}, map[string]int{"1.0": 60, "2.0": 40}, 100, map[string]int{"1.0": 30, "2.0": 20}},
	{"contract 99/1 nine and one", map[string]int{"1.0": 9, "2.0": 1}, map[string]int{"1.0": 99, "2.0": 1}, 100, map[string]int{"1.0": 11, "2.0": 1}},
	{"95/5", map[string]int{"1.0": 1, "2.0": 1}, map[string]int{"1.0": 95, "2.0": 5}, 100, map[string]int{"1.0": 95, "2.0": 5}},
	{"95/5 five and one over 200", map[string]int{"1.0": 5, "2.0": 1}, map[string]int{"1.0": 95, "2.0": 5}, 200, map[string]int{"1.0": 38, "2.0": 10}},
	{"1/1/98", map[string]int{"1.0": 1, "1.1": 1, "2.0": 2}, map[string]int{"1.0": 1, "1.1": 1, "2.0": 98}, 100, map[string]int{"1.0": 1, "1.1": 1, "2.0": 49}},
	{"3 versions uneven backends", map[string]int{"1.0": 2, "1.1": 3, "2.0": 4}, map[string]int{"1.0": 50, "1.1": 30, "2.0": 20}, 100, map[string]int{"1.0": 25, "1.1": 10, "2.0": 5}},
	{"3 versions uneven over 300", map[string]int{"1.0": 5, "1.2": 1, "2.0": 3}, map[string]int{"1.0": 50, "1.2": 20, "2.0": 30}, 300, map[string]int{"1.0": 30, "1.2": 60, "2.0": 30}},
}

func TestRatioAccuracy(t *testing.T) {
	for _, tt := range ratioCases {
		t.Run(tt.name, func(t *testing.T) {
			b := newBalancer(t, balancer.Options{})
			uris := fleet(t, b, "python", tt.backends)
			require.NoError(t, b.SetRatio(context.Background(), "python", tt.ratio))

			perURI, perVersion := pickN(t, b, "python", tt.n)
			for v, us := range uris {
				assert.Equal(t, tt.ratio[v]*tt.n/100, perVersion[v], "version %s", v)
				for _, u := range us {
					assert.Equal(t, tt.perBackend[v], perURI[u], "backend %s of %s", u, v)
				}
			}
		})
	}
}

func TestEveryWindowIsExact(t *testing.T) {
	b := newBalancer(t, balancer.Options{})
	fleet(t, b, "java", map[string]int{"1.0": 1, "2.0": 1})
	require.NoError(t, b.SetRatio(context.Background(), "java", map[string]int{"1.0": 95, "2.0": 5}))
	pickN(t, b, "java", 37) // start the window anywhere
	for range 5 {
		_, perVersion := pickN(t, b, "java", 100)
		assert.Equal(t, map[string]int{"1.0": 95, "2.0": 5}, perVersion)
	}
}

func TestSetRatioRestartsSequence(t *testing.T) {
	b := newBalancer(t, balancer.Options{})
	uris := fleet(t, b, "python", map[string]int{"1.0": 2, "2.0": 2})
	ctx := context.Background()
	require.NoError(t, b.SetRatio(ctx, "python", map[string]int{"1.0": 50, "2.0": 50}))
	pickN(t, b, "python", 7)
	require.NoError(t, b.SetRatio(ctx, "python", map[string]int{"1.0": 60, "2.0": 40}))
	perURI, _ := pickN(t, b, "python", 100)
	assert.Equal(t, map[string]int{uris["1.0"][0]: 30, uris["1.0"][1]: 30, uris["2.0"][0]: 20, uris["2.0"][1]: 20}, perURI)
}

func TestDefaultWithoutRatio(t *testing.T) {
	tests := []struct {
		name     string
		backends map[string]int
		want     map[string]int
	}{
		{"single version is round robin", map[string]int{"1.0": 3}, map[string]int{"1.0": 90}},
		{"versions present share equally", map[string]int{"1.0": 2, "2.0": 1}, map[string]int{"1.0": 45, "2.0": 45}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBalancer(t, balancer.Options{})
			fleet(t, b, "go", tt.backends)
			_, perVersion := pickN(t, b, "go", 90)
			assert.Equal(t, tt.want, perVersion)
			_, set := b.Ratio("go")
			assert.False(t, set)
		})
	}
}

func TestShareOfVersionWithoutHealthyBackend(t *testing.T) {
	ctx := context.Background()
	t.Run("1/1/98 without 2.0 splits 50/50", func(t *testing.T) {
		b := newBalancer(t, balancer.Options{})
		fleet(t, b, "python", map[string]int{"1.0": 1, "1.1": 1})
		require.NoError(t, b.SetRatio(ctx, "python", map[string]int{"1.0": 1, "1.1": 1, "2.0": 98}))
		_, perVersion := pickN(t, b, "python", 100)
		assert.Equal(t, map[string]int{"1.0": 50, "1.1": 50}, perVersion)
	})
	t.Run("in proportion to the remaining weights", func(t *testing.T) {
		b := newBalancer(t, balancer.Options{})
		uris := fleet(t, b, "python", map[string]int{"1.0": 1, "1.1": 1, "2.0": 1})
		require.NoError(t, b.SetRatio(ctx, "python", map[string]int{"1.0": 60, "1.1": 20, "2.0": 20}))
		require.NoError(t, b.RemoveBackend(ctx, uris["2.0"][0]))
		_, perVersion := pickN(t, b, "python", 100)
		assert.Equal(t, map[string]int{"1.0": 75, "1.1": 25}, perVersion)
		st, err := b.Backends(ctx)
		require.NoError(t, err)
		assert.InDelta(t, 75.0, st.Languages["python"].Versions["1.0"].EffectiveWeight, 1e-9)
		assert.InDelta(t, 0.0, st.Languages["python"].Versions["2.0"].EffectiveWeight, 1e-9)
	})
	t.Run("ejected backends hand over too", func(t *testing.T) {
		b := newBalancer(t, balancer.Options{EjectAfter: 1})
		fleet(t, b, "python", map[string]int{"1.0": 1, "2.0": 1})
		require.NoError(t, b.SetRatio(ctx, "python", map[string]int{"1.0": 60, "2.0": 40}))
		for {
			be, err := b.Pick("python")
			require.NoError(t, err)
			if be.Version == "2.0" {
				assert.True(t, b.ReportFailure(be))
				break
			}
		}
		_, perVersion := pickN(t, b, "python", 10)
		assert.Equal(t, map[string]int{"1.0": 10}, perVersion)
	})
	t.Run("a version left out of the ratio gets nothing", func(t *testing.T) {
		b := newBalancer(t, balancer.Options{})
		fleet(t, b, "python", map[string]int{"1.0": 1, "2.0": 1})
		require.NoError(t, b.SetRatio(ctx, "python", map[string]int{"2.0": 100}))
		_, perVersion := pickN(t, b, "python", 10)
		assert.Equal(t, map[string]int{"2.0": 10}, perVersion)
	})
	t.Run("none left is ErrNoBackend", func(t *testing.T) {
		b := newBalancer(t, balancer.Options{})
		uris := fleet(t, b, "python", map[string]int{"1.0": 1, "2.0": 1})
		require.NoError(t, b.SetRatio(ctx, "python", map[string]int{"2.0": 100}))
		require.NoError(t, b.RemoveBackend(ctx, uris["2.0"][0]))
		_, err := b.Pick("python")
		assert.ErrorIs(t, err, balancer.ErrNoBackend)
	})
}

func TestPickUnknownLanguage(t *testing.T) {
	b := newBalancer(t, balancer.Options{})
	_, err := b.Pick("cobol")
	assert.ErrorIs(t, err, balancer.ErrNoBackend)
}

func TestSetRatioValidation(t *testing.T) {
	tests := []struct {
		name  string
		total int
		lang  string
		ratio map[string]int
		msg   string
	}{
		{"negative weight", 0, "python", map[string]int{"1.0": 110, "2.0": -10}, "non-negative"},
		{"wrong total", 0, "python", map[string]int{"1.0": 60, "2.0": 30}, "sum to 90, want 100"},
		{"empty", 0, "python", map[string]int{}, "sum to 0, want 100"},
		{"empty version", 0, "python", map[string]int{"": 100}, "non-empty"},
		{"empty language", 0, "", map[string]int{"1.0": 100}, "language"},
		{"custom total", 1000, "python", map[string]int{"1.0": 60, "2.0": 40}, "sum to 100, want 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBalancer(t, balancer.Options{RatioTotal: tt.total})
			err := b.SetRatio(context.Background(), tt.lang, tt.ratio)
			require.ErrorIs(t, err, balancer.ErrInvalidRatio)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
	t.Run("custom total accepted", func(t *testing.T) {
		b := newBalancer(t, balancer.Options{RatioTotal: 1000})
		require.NoError(t, b.SetRatio(context.Background(), "python", map[string]int{"1.0": 999, "2.0": 1}))
		fleet(t, b, "python", map[string]int{"1.0": 1, "2.0": 1})
		_, perVersion := pickN(t, b, "python", 1000)
		assert.Equal(t, map[string]int{"1.0": 999, "2.0": 1}, perVersion)
	})
}

func TestNewValidation(t *testing.T) {
	_, err := balancer.New(balancer.Options{RatioTotal: -1})
	assert.Error(t, err)
	_, err = balancer.New(balancer.Options{RatioTotal: 1 << 21})
	assert.Error(t, err)
	b, err := balancer.New(balancer.Options{})
	require.NoError(t, err)
	assert.Equal(t, 100, b.RatioTotal())
}

func TestAddAndRemove(t *testing.T) {
	ctx := context.Background()
	t.Run("invalid backends", func(t *testing.T) {
		b := newBalancer(t, balancer.Options{})
		for _, tc := range []struct{ lang, version, uri string }{
			{"", "1.0", "http://127.0.0.1:1"},
			{"py/thon", "1.0", "http://127.0.0.1:1"},
			{"python", "", "http://127.0.0.1:1"},
			{"python", "1.0", "127.0.0.1:1"},
			{"python", "1.0", "ftp://127.0.0.1:1"},
			{"python", "1.0", "http://"},
			{"python", "1.0", "http://127.0.0.1:1/?q=1"},
		} {
			assert.ErrorIs(t, b.AddBackend(ctx, tc.lang, tc.version, tc.uri), balancer.ErrInvalidBackend, "%+v", tc)
		}
	})
	t.Run("adding twice is not an error and adds once", func(t *testing.T) {
		b := newBalancer(t, balancer.Options{})
		require.NoError(t, b.AddBackend(ctx, "python", "1.0", "http://127.0.0.1:1"))
		require.NoError(t, b.AddBackend(ctx, "python", "1.0", "http://127.0.0.1:1"))
		h, err := b.Health(ctx)
		require.NoError(t, err)
		assert.Equal(t, map[string]map[string][]string{"python": {"1.0": {"http://127.0.0.1:1"}}}, h.Backends)
	})
	t.Run("adding under another version moves", func(t *testing.T) {
		b := newBalancer(t, balancer.Options{})
		require.NoError(t, b.AddBackend(ctx, "python", "1.0", "http://127.0.0.1:1"))
		require.NoError(t, b.AddBackend(ctx, "python", "2.0", "http://127.0.0.1:1"))
		be, err := b.Pick("python")
		require.NoError(t, err)
		assert.Equal(t, "2.0", be.Version)
	})
	t.Run("remove", func(t *testing.T) {
		b := newBalancer(t, balancer.Options{})
		require.NoError(t, b.AddBackend(ctx, "python", "1.0", "http://127.0.0.1:1"))
		assert.ErrorIs(t, b.RemoveBackend(ctx, "http://127.0.0.1:2"), balancer.ErrUnknownBackend)
		require.NoError(t, b.RemoveBackend(ctx, "http://127.0.0.1:1"))
		assert.ErrorIs(t, b.RemoveBackend(ctx, "http://127.0.0.1:1"), balancer.ErrUnknownBackend)
		_, err := b.Pick("python")
		assert.ErrorIs(t, err, balancer.ErrNoBackend)
		st, err := b.Backends(ctx)
		require.NoError(t, err)
		assert.Empty(t, st.Languages, "a language with no backend and no ratio is forgotten")
	})
}

func TestPassiveHealth(t *testing.T) {
	ctx := context.Background()
	reg := prometheus.NewRegistry()
	b := newBalancer(t, balancer.Options{Registerer: reg})
	uris := fleet(t, b, "python", map[string]int{"1.0": 2})
	bad, err := b.Pick("python")
	require.NoError(t, err)
	require.Equal(t, uris["1.0"][0], bad.URI)

	assert.False(t, b.ReportFailure(bad))
	b.ReportSuccess(bad) // a success resets the count
	assert.False(t, b.ReportFailure(bad))
	assert.False(t, b.ReportFailure(bad))
	assert.True(t, b.ReportFailure(bad), "third consecutive failure ejects")
	assert.False(t, b.ReportFailure(bad), "ejects once")
	assert.False(t, bad.Healthy())
	assert.Equal(t, []*balancer.Backend{bad}, b.Ejected())
	assert.Equal(t, 1.0, metricValue(t, reg, "fleetkit_balancer_ejections_total", "python", "1.0"))

	perURI, _ := pickN(t, b, "python", 10)
	assert.Equal(t, map[string]int{uris["1.0"][1]: 10}, perURI)

	require.NoError(t, b.Readmit(ctx, bad.URI))
	assert.True(t, bad.Healthy())
	perURI, _ = pickN(t, b, "python", 10)
	assert.Equal(t, map[string]int{uris["1.0"][0]: 5, uris["1.0"][1]: 5}, perURI)

	assert.ErrorIs(t, b.Readmit(ctx, "http://127.0.0.1:9"), balancer.ErrUnknownBackend)

	t.Run("re-adding readmits", func(t *testing.T) {
		for range 3 {
			b.ReportFailure(bad)
		}
		require.False(t, bad.Healthy())
		require.NoError(t, b.AddBackend(ctx, "python", "1.0", bad.URI))
		assert.True(t, bad.Healthy())
	})
	t.Run("negative EjectAfter never ejects", func(t *testing.T) {
		b := newBalancer(t, balancer.Options{EjectAfter: -1})
		fleet(t, b, "python", map[string]int{"1.0": 1})
		be, err := b.Pick("python")
		require.NoError(t, err)
		for range 100 {
			assert.False(t, b.ReportFailure(be))
		}
		assert.True(t, be.Healthy())
	})
}

func TestPickOther(t *testing.T) {
	b := newBalancer(t, balancer.Options{})
	ctx := context.Background()
	uris := fleet(t, b, "python", map[string]int{"1.0": 1, "2.0": 1})
	require.NoError(t, b.SetRatio(ctx, "python", map[string]int{"1.0": 99, "2.0": 1}))
	first, err := b.Pick("python")
	require.NoError(t, err)
	require.Equal(t, uris["1.0"][0], first.URI)
	// The picker would return 1.0 many times in a row: PickOther still
	// finds the other one.
	other, err := b.PickOther("python", first)
	require.NoError(t, err)
	assert.Equal(t, uris["2.0"][0], other.URI)

	require.NoError(t, b.RemoveBackend(ctx, uris["2.0"][0]))
	_, err = b.PickOther("python", first)
	assert.ErrorIs(t, err, balancer.ErrNoBackend)
}

func TestWeightMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	b := newBalancer(t, balancer.Options{Registerer: reg})
	ctx := context.Background()
	fleet(t, b, "python", map[string]int{"1.0": 1})
	require.NoError(t, b.SetRatio(ctx, "python", map[string]int{"1.0": 95, "2.0": 5}))
	assert.Equal(t, 95.0, metricValue(t, reg, "fleetkit_balancer_weight", "python", "1.0"))
	assert.Equal(t, 5.0, metricValue(t, reg, "fleetkit_balancer_weight", "python", "2.0"))
	assert.Equal(t, 100.0, metricValue(t, reg, "fleetkit_balancer_effective_weight", "python", "1.0"), "2.0 has no backend: 1.0 serves all")
	assert.Equal(t, 0.0, metricValue(t, reg, "fleetkit_balancer_effective_weight", "python", "2.0"))

	_, err := balancer.New(balancer.Options{Registerer: reg})
	assert.Error(t, err, "registering twice fails")
}
