package balancer_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// A ratio that weighs only versions without a backend left the language
// answering 503 for good; it is refused now, naming the versions present.
func TestSetRatioRefusesVersionsWithoutBackends(t *testing.T) {
	ctx := context.Background()
	b := newBalancer(t, balancer.Options{})
	require.NoError(t, b.SetRatio(ctx, "python", map[string]int{"3.0": 100}), "no backends at all: nothing to break")
	fleet(t, b, "python", map[string]int{"1.0": 2})
	err := b.SetRatio(ctx, "python", map[string]int{"3.0": 100})
	require.ErrorIs(t, err, balancer.ErrInvalidRatio)
	assert.Contains(t, err.Error(), "[1.0]")
	require.NoError(t, b.SetRatio(ctx, "python", map[string]int{"1.0": 50, "3.0": 50}),
		"a version without backends beside one with them: its share goes to the others")
	_, perVersion := pickN(t, b, "python", 100)
	assert.Equal(t, map[string]int{"1.0": 100}, perVersion)

	admin, err := balancer.NewAdmin(b, balancer.AdminOptions{Secret: "s"})
	require.NoError(t, err)
	srv := httptest.NewServer(admin)
	defer srv.Close()
	c, err := balancer.NewClient(srv.URL, "s", balancer.ClientOptions{})
	require.NoError(t, err)
	err = c.SetRatio(ctx, "python", map[string]int{"2.0": 100})
	require.ErrorIs(t, err, balancer.ErrInvalidRatio)
	var se *balancer.StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusBadRequest, se.StatusCode)
}

// Generation changes with every change of backends or ratios, not with
// ejections, and two balancers never share a token; Routes and the
// client's Routes agree.
func TestGenerationAndRoutes(t *testing.T) {
	ctx := context.Background()
	b := newBalancer(t, balancer.Options{})
	g0, err := b.Generation(ctx)
	require.NoError(t, err)
	uris := fleet(t, b, "python", map[string]int{"1.0": 2, "2.0": 1})
	g1, _ := b.Generation(ctx)
	assert.NotEqual(t, g0, g1)
	require.NoError(t, b.SetRatio(ctx, "python", map[string]int{"1.0": 90, "2.0": 10}))
	g2, _ := b.Generation(ctx)
	assert.NotEqual(t, g1, g2)
	be, err := b.Pick("python")
	require.NoError(t, err)
	for range 3 {
		b.ReportFailure(be)
	}
	require.False(t, be.Healthy(), "ejected")
	g3, _ := b.Generation(ctx)
	assert.Equal(t, g2, g3, "an ejection is no change of what the manager set")
	require.NoError(t, b.RemoveBackend(ctx, uris["2.0"][0]))
	g4, _ := b.Generation(ctx)
	assert.NotEqual(t, g3, g4)

	other := newBalancer(t, balancer.Options{})
	og, _ := other.Generation(ctx)
	assert.NotEqual(t, g0, og, "a new balancer (a restart) has a token of its own")

	backends, ratio, err := b.Routes(ctx, "python")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{uris["1.0"][0]: "1.0", uris["1.0"][1]: "1.0"}, backends)
	assert.Equal(t, map[string]int{"1.0": 90, "2.0": 10}, ratio)
	none, noRatio, err := b.Routes(ctx, "java")
	require.NoError(t, err)
	assert.Empty(t, none)
	assert.Nil(t, noRatio)

	admin, err := balancer.NewAdmin(b, balancer.AdminOptions{Secret: "s"})
	require.NoError(t, err)
	srv := httptest.NewServer(admin)
	defer srv.Close()
	c, err := balancer.NewClient(srv.URL, "s", balancer.ClientOptions{})
	require.NoError(t, err)
	cb, cr, err := c.Routes(ctx, "python")
	require.NoError(t, err)
	assert.Equal(t, backends, cb)
	assert.Equal(t, ratio, cr)
	cg, err := c.Generation(ctx)
	require.NoError(t, err)
	assert.Equal(t, g4, cg)
}

// PickRetry skips what was tried and prefers backends that are not
// already failing.
func TestPickRetryPrefersBackendsNotFailing(t *testing.T) {
	b := newBalancer(t, balancer.Options{EjectAfter: -1})
	fleet(t, b, "python", map[string]int{"1.0": 4})
	var all []*balancer.Backend
	for range 4 {
		be, err := b.Pick("python")
		require.NoError(t, err)
		all = append(all, be)
	}
	b.ReportFailure(all[1])
	b.ReportFailure(all[2])
	for range 20 {
		be, err := b.PickRetry("python", []*balancer.Backend{all[0]})
		require.NoError(t, err)
		assert.Same(t, all[3], be, "the only untried backend not failing")
	}
	be, err := b.PickRetry("python", []*balancer.Backend{all[0], all[3]})
	require.NoError(t, err)
	assert.Contains(t, []*balancer.Backend{all[1], all[2]}, be, "failing ones only when nothing else is left")
	_, err = b.PickRetry("python", all)
	assert.ErrorIs(t, err, balancer.ErrNoBackend)
}

// Nine of ten backends die at once: every request still gets its answer,
// walking past the dead ones (the issue measured 2 failed requests).
func TestProxyNineOfTenDead(t *testing.T) {
	for _, su := range setups {
		t.Run(su.name, func(t *testing.T) {
			e := newProxyEnv(t, su, balancer.Options{}, balancer.ProxyOptions{})
			for range 9 {
				e.add(t, "python", "1.0", refusedURI(t))
			}
			alive := newLinter(t, "1.0", nil)
			e.add(t, "python", "1.0", alive.URI())
			for i := range 200 {
				code, got := e.lint(t, "python", `{"code":"x = 1\n"}`)
				require.Equal(t, http.StatusOK, code, "request %d: %s", i, got)
			}
			assert.EqualValues(t, 200, alive.hits.Load())
		})
	}
}
