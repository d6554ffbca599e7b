package fleet_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/sqlite"
)

func ExampleParseSearch() {
	e, err := fleet.ParseSearch("name like 'rex%' and (region = us-east-1 or status in (ready, failed))")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", e)
	_, err = fleet.ParseSearch("name = x; color = red")
	fmt.Println(err)
	// Output:
	// [{Field:name Op:LIKE Values:[rex%]} [{Field:region Op:= Values:[us-east-1]} {Field:status Op:IN Values:[ready failed]}]]
	// fleet: bad search: unexpected "color"
}

func ExampleNew() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, err := sqlite.Open(ctx, ":memory:")
	if err != nil {
		panic(err)
	}
	defer st.Close()
	secret := []byte("dev-secret")
	auth, err := fleet.NewJWTAuthenticator(fleet.JWTOptions{HS256Secret: secret})
	if err != nil {
		panic(err)
	}
	svc, err := fleet.New(st, fleet.Options{Kind: fleet.Dinosaur, Auth: auth, Clusters: fleet.DefaultClusters()})
	if err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- svc.Run(ctx) }()

	token, _ := fleet.NewHS256Token(secret, "alice", "", time.Hour)
	req := httptest.NewRequest(http.MethodPost, "/api/dinosaurs_mgmt/v1/dinosaurs?async=true", strings.NewReader(`{"name":"rex"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	svc.Handler().ServeHTTP(rec, req)
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), `"status":"accepted"`))

	req = httptest.NewRequest(http.MethodPost, "/api/dinosaurs_mgmt/v1/dinosaurs", strings.NewReader(`{"name":"rex"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	rec = httptest.NewRecorder()
	svc.Handler().ServeHTTP(rec, req)
	fmt.Println(rec.Code, strings.Contains(rec.Body.String(), `"code":"DINOSAURS-MGMT-103"`))
	cancel()
	<-done
	// Output:
	// 202 true
	// 400 true
}
