package health_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/machines/health"
)

func TestProbe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			_, _ = w.Write([]byte(strings.Repeat("x", health.MaxBody+10)))
		case "/moved":
			http.Redirect(w, r, "/ok", http.StatusFound)
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	body, err := health.Probe(context.Background(), srv.Client(), srv.URL+"/ok")
	require.NoError(t, err)
	assert.Len(t, body, health.MaxBody, "the body is bounded")

	_, err = health.Probe(context.Background(), srv.Client(), srv.URL+"/down")
	assert.EqualError(t, err, "GET /down: status 503")

	// A Checker's own client does not follow a redirect to a healthy page.
	c, err := health.New(health.Options{Path: "/moved"})
	require.NoError(t, err)
	c.Add(health.Target{ID: "m", Address: strings.TrimPrefix(srv.URL, "http://")})
	ev := c.Check(context.Background())
	require.Len(t, ev, 1)
	assert.Equal(t, health.Unhealthy, ev[0].State)
	assert.ErrorContains(t, ev[0].LastErr, "status 302")
}
