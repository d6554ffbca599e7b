package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// hostBalancer runs a balancer on the host for tb — its admin API (secret
// "s3cret") and, under /lint/, its proxy — which reaches processes,
// containers and Pod IPs alike. It returns the balancer and its base URL.
func hostBalancer(tb testing.TB) (*balancer.Balancer, string) {
	tb.Helper()
	bal, err := balancer.New(balancer.Options{})
	require.NoError(tb, err)
	admin, err := balancer.NewAdmin(bal, balancer.AdminOptions{Secret: "s3cret"})
	require.NoError(tb, err)
	proxy, err := balancer.NewProxy(bal, balancer.ProxyOptions{})
	require.NoError(tb, err)
	tb.Cleanup(proxy.CloseIdleConnections)
	lb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/lint/") {
			proxy.ServeHTTP(w, r)
			return
		}
		admin.ServeHTTP(w, r)
	}))
	tb.Cleanup(lb.Close)
	return bal, lb.URL
}
