package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/auth"
	"github.com/fleetkit/fleetkit/fleet/httpapi"
)

// series counts the metric series reg holds.
func series(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	n := 0
	for _, mf := range mfs {
		n += len(mf.GetMetric())
	}
	return n
}

// TestMetricLabelsClosedSet: the method label is taken from the request
// before authentication, so a client choosing methods must not choose
// series. Thousands of invented methods (and paths) leave the series count
// where the first one put it.
func TestMetricLabelsClosedSet(t *testing.T) {
	reg := prometheus.NewRegistry()
	deny := auth.AuthenticatorFunc(func(*http.Request) (auth.Principal, error) { return auth.Principal{}, auth.ErrUnauthenticated })
	svc, err := fleet.New(nopStore{}, fleet.Options{Kind: fleet.Dinosaur})
	require.NoError(t, err)
	s, err := httpapi.New(svc, httpapi.Options{Auth: deny, Registerer: reg})
	require.NoError(t, err)
	col := fleet.Dinosaur.BasePath() + "/dinosaurs"
	send := func(method, path string) int {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec.Code
	}
	// One of each kind first: a known method, an unknown one, on each
	// route shape, and a path no route has.
	send(http.MethodGet, col)
	send("INVENTED", col)
	send(http.MethodPut, col+"/x")
	send("INVENTED", col+"/x")
	send(http.MethodGet, fleet.Dinosaur.BasePath()+"/nothing")
	before := series(t, reg)
	for i := range 3000 {
		assert.Equal(t, http.StatusMethodNotAllowed, send(fmt.Sprintf("M%d", i), col))
		send(fmt.Sprintf("X%d", i), col+fmt.Sprintf("/id%d", i))
		send(http.MethodGet, fmt.Sprintf("%s/random/%d", fleet.Dinosaur.BasePath(), i))
	}
	assert.Equal(t, before, series(t, reg), "9,000 requests with invented methods and paths add no series")
}

// nopStore is never called: the requests of these tests stop before the
// store.
type nopStore struct{ fleet.Store }

// TestHandlerRecoversPanics: a panic anywhere under the API (here the
// Authenticator) is answered 500 with the original's error body and
// logged, not a dropped connection.
func TestHandlerRecoversPanics(t *testing.T) {
	var logs bytes.Buffer
	boom := auth.AuthenticatorFunc(func(*http.Request) (auth.Principal, error) { panic("authenticator bug") })
	svc, err := fleet.New(nopStore{}, fleet.Options{Kind: fleet.Dinosaur, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	s, err := httpapi.New(svc, httpapi.Options{Auth: boom})
	require.NoError(t, err)
	srv := httptest.NewServer(s)
	defer srv.Close()
	resp, err := http.Get(srv.URL + fleet.Dinosaur.BasePath() + "/dinosaurs")
	require.NoError(t, err, "answered, not a dropped connection")
	defer resp.Body.Close()
	assert.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	assert.Equal(t, "DINOSAURS-MGMT-9", body["code"])
	assert.Contains(t, logs.String(), "authenticator bug")
}
