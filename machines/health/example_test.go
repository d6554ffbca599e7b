package health_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/fleetkit/fleetkit/machines/health"
)

// A Checker marks a target unhealthy at its first failure (the default
// threshold) and never checks it again until it is added again.
func Example() {
	var healthy = true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !healthy {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, `{"version":"1.0","language":"python","requestCount":3}`)
	}))
	defer srv.Close()

	c, err := health.New(health.Options{})
	if err != nil {
		panic(err)
	}
	c.Add(health.Target{ID: "linter-1", Address: strings.TrimPrefix(srv.URL, "http://")})
	ctx := context.Background()

	for _, e := range c.Check(ctx) {
		info, _ := e.Info()
		fmt.Println(e.Target.ID, e.State, e.Changed, info.RequestCount)
	}
	healthy = false
	for _, e := range c.Check(ctx) {
		fmt.Println(e.Target.ID, e.State, e.Changed, e.LastErr)
	}
	healthy = true
	fmt.Println("checked again:", len(c.Check(ctx)))
	// Output:
	// linter-1 healthy true 3
	// linter-1 unhealthy true GET /health: status 503
	// checked again: 0
}
