package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/auth"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/httpapi"
	"github.com/fleetkit/fleetkit/fleet/sqlite"
)

func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := sqlite.Open(ctx, ":memory:")
	if err != nil {
		panic(err)
	}
	defer st.Close()
	secret := []byte("dev-secret")
	authn, err := auth.NewJWTAuthenticator(auth.JWTOptions{HS256Secret: secret})
	if err != nil {
		panic(err)
	}
	svc, err := fleet.New(st, fleet.Options{Kind: fleet.Dinosaur, Clusters: cluster.Defaults()})
	if err != nil {
		panic(err)
	}
	api, err := httpapi.New(svc, httpapi.Options{Auth: authn})
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()

	token, _ := auth.NewHS256Token(secret, "alice", "", time.Hour)
	req := httptest.NewRequest(http.MethodPost, "/api/dinosaurs_mgmt/v1/dinosaurs?async=true", strings.NewReader(`{"name":"rex"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), `"status":"accepted"`))

	req = httptest.NewRequest(http.MethodPost, "/api/dinosaurs_mgmt/v1/dinosaurs", strings.NewReader(`{"name":"rex"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	rec = httptest.NewRecorder()
	api.ServeHTTP(rec, req)
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), `"code":"DINOSAURS-MGMT-103"`))
	cancel()
	<-done
	// Output:
	// 202 true
	// 400 true
}
