package balancer_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
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

// TestClientNeverSendsTheSecretAcrossHosts: an admin API that redirects to
// another host gets an error back; the other host never sees the secret,
// in a header or a body. Redirects within the admin API's host are
// followed.
func TestClientNeverSendsTheSecretAcrossHosts(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		leaked = append(leaked, r.Header.Get(balancer.SecretHeader)+string(body))
		mu.Unlock()
		_, _ = io.WriteString(w, `{"status":"ok"}`)
	}))
	t.Cleanup(elsewhere.Close)
	b := newBalancer(t, balancer.Options{})
	admin, err := balancer.NewAdmin(b, balancer.AdminOptions{Secret: secret})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/v1/", http.StripPrefix("/v1", admin))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		target := elsewhere.URL + r.URL.Path
		if r.URL.Query().Get("local") != "" || r.Header.Get("X-Local") != "" {
			target = "/v1" + r.URL.Path
		}
		http.Redirect(w, r, target, http.StatusTemporaryRedirect)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	c, err := balancer.NewClient(srv.URL, secret, balancer.ClientOptions{})
	require.NoError(t, err)
	ctx := context.Background()
	assert.Error(t, c.AddBackend(ctx, "python", "1.0", "http://127.0.0.1:30001"), "POST redirected to another host")
	_, err = c.Health(ctx)
	assert.Error(t, err, "GET redirected to another host")
	mu.Lock()
	assert.Empty(t, leaked, "the other host was never called")
	mu.Unlock()

	// Same host: followed (the caller's own client too, its policy kept).
	var followed atomic.Int64
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { followed.Add(1); return nil },
		Transport: roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			r.Header.Set("X-Local", "1")
			return http.DefaultTransport.RoundTrip(r)
		})}
	c, err = balancer.NewClient(srv.URL, secret, balancer.ClientOptions{HTTPClient: hc})
	require.NoError(t, err)
	require.NoError(t, c.AddBackend(ctx, "python", "1.0", "http://127.0.0.1:30001"))
	assert.Equal(t, int64(1), followed.Load())
	assert.Nil(t, hc.CheckRedirect(nil, nil), "the caller's client is not changed")
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestClientEjectedBackends: the admin /health with the secret lists the
// ejected backends, and Client reads them as Balancer reports them.
func TestClientEjectedBackends(t *testing.T) {
	ctx := context.Background()
	b, c := newClientEnv(t, secret)
	uris := fleet(t, b, "python", map[string]int{"1.0": 2})
	require.True(t, ejectNow(t, b, "python", uris["1.0"][1], balancer.DefaultEjectAfter))
	want, err := b.EjectedBackends(ctx)
	require.NoError(t, err)
	require.Len(t, want, 1)
	got, err := c.EjectedBackends(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.True(t, want[uris["1.0"][1]].Equal(got[uris["1.0"][1]]), "due back at the same time")
	h, err := c.Health(ctx)
	require.NoError(t, err)
	require.Len(t, h.Ejected, 1)
	assert.Equal(t, balancer.EjectedBackend{URI: uris["1.0"][1], Language: "python", Version: "1.0", Until: h.Ejected[0].Until, Ejections: 1}, h.Ejected[0])
}
