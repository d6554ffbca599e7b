package balancer_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// router is the method set a machine manager declares (as rollout does);
// both implementations satisfy it.
type router interface {
	AddBackend(ctx context.Context, lang, version, uri string) error
	RemoveBackend(ctx context.Context, uri string) error
	SetRatio(ctx context.Context, lang string, ratio map[string]int) error
}

var (
	_ router = (*balancer.Balancer)(nil)
	_ router = (*balancer.Client)(nil)
)

func newClientEnv(t *testing.T, key string) (*balancer.Balancer, *balancer.Client) {
	t.Helper()
	b, srv := newAdminEnv(t)
	c, err := balancer.NewClient(srv.URL, key, balancer.ClientOptions{HTTPClient: srv.Client()})
	require.NoError(t, err)
	return b, c
}

// TestRouterImplementations drives the in-process Balancer and a remote
// one through Client with the same calls and expects the same results.
func TestRouterImplementations(t *testing.T) {
	impls := map[string]func(t *testing.T) (router, *balancer.Balancer){
		"Balancer": func(t *testing.T) (router, *balancer.Balancer) {
			b := newBalancer(t, balancer.Options{})
			return b, b
		},
		"Client": func(t *testing.T) (router, *balancer.Balancer) {
			b, c := newClientEnv(t, secret)
			return c, b
		},
	}
	for name, newImpl := range impls {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			r, b := newImpl(t)
			require.NoError(t, r.AddBackend(ctx, "python", "1.0", "http://127.0.0.1:30001"))
			require.NoError(t, r.AddBackend(ctx, "python", "1.0", "http://127.0.0.1:30001"))
			require.NoError(t, r.AddBackend(ctx, "python", "2.0", "http://127.0.0.1:30002"))
			require.NoError(t, r.SetRatio(ctx, "python", map[string]int{"1.0": 99, "2.0": 1}))
			_, perVersion := pickN(t, b, "python", 100)
			assert.Equal(t, map[string]int{"1.0": 99, "2.0": 1}, perVersion)

			err := r.SetRatio(ctx, "python", map[string]int{"1.0": 99})
			assert.ErrorIs(t, err, balancer.ErrInvalidRatio)
			assert.ErrorContains(t, err, "sum to 99, want 100")
			assert.ErrorIs(t, r.AddBackend(ctx, "python", "1.0", "not a uri"), balancer.ErrInvalidBackend)
			assert.ErrorIs(t, r.RemoveBackend(ctx, "http://127.0.0.1:39999"), balancer.ErrUnknownBackend)
			require.NoError(t, r.RemoveBackend(ctx, "http://127.0.0.1:30002"))
			_, perVersion = pickN(t, b, "python", 10)
			assert.Equal(t, map[string]int{"1.0": 10}, perVersion)
		})
	}
}

func TestClientReads(t *testing.T) {
	ctx := context.Background()
	b, c := newClientEnv(t, secret)
	require.NoError(t, c.AddBackend(ctx, "python", "1.0", "http://127.0.0.1:30001"))
	require.NoError(t, c.SetRatio(ctx, "python", map[string]int{"1.0": 95, "2.0": 5}))

	h, err := c.Health(ctx)
	require.NoError(t, err)
	assert.Equal(t, "ok", h.Status)
	assert.Equal(t, map[string]map[string][]string{"python": {"1.0": {"http://127.0.0.1:30001"}}}, h.Backends)

	got, err := c.Backends(ctx)
	require.NoError(t, err)
	want, err := b.Backends(ctx)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, 95, got.Languages["python"].Versions["1.0"].Weight)
}

func TestClientErrors(t *testing.T) {
	ctx := context.Background()
	_, c := newClientEnv(t, "wrong")
	err := c.AddBackend(ctx, "python", "1.0", "http://127.0.0.1:30001")
	require.ErrorIs(t, err, balancer.ErrForbidden)
	var se *balancer.StatusError
	require.True(t, errors.As(err, &se))
	assert.Equal(t, http.StatusForbidden, se.StatusCode)
	assert.Equal(t, "wrong or missing secret", se.Message)
	assert.Equal(t, http.StatusForbidden, balancer.StatusOfError(err))
	_, err = c.Backends(ctx)
	assert.ErrorIs(t, err, balancer.ErrForbidden)

	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	c, err = balancer.NewClient(down.URL, secret, balancer.ClientOptions{})
	require.NoError(t, err)
	err = c.RemoveBackend(ctx, "http://127.0.0.1:1")
	require.Error(t, err)
	assert.NotErrorIs(t, err, balancer.ErrUnknownBackend)

	_, err = balancer.NewClient("127.0.0.1:8080", secret, balancer.ClientOptions{})
	assert.Error(t, err)
	_, err = balancer.NewClient("http://127.0.0.1:8080", "", balancer.ClientOptions{})
	assert.Error(t, err)
}
