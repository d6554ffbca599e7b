package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/auth"
)

// nopStore is never called: the requests below stop at authentication or
// need no store.
type nopStore struct{ fleet.Store }

func newHandler(t *testing.T, kind fleet.Kind, a auth.Authenticator) *Handler {
	t.Helper()
	svc, err := fleet.New(nopStore{}, fleet.Options{Kind: kind})
	require.NoError(t, err)
	s, err := New(svc, Options{Auth: a})
	require.NoError(t, err)
	return s
}

func TestOpenAPIMatchesHandler(t *testing.T) {
	for _, kind := range []fleet.Kind{fleet.Dinosaur, fleet.Kafka, {Name: "unicorn"}} {
		t.Run(kind.Name, func(t *testing.T) {
			deny := auth.AuthenticatorFunc(func(*http.Request) (auth.Principal, error) { return auth.Principal{}, auth.ErrUnauthenticated })
			s := newHandler(t, kind, deny)
			kind = s.kind

			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, kind.BasePath()+"/openapi", nil))
			require.Equal(t, http.StatusOK, rec.Code)
			var doc struct {
				OpenAPI string                                `json:"openapi"`
				Paths   map[string]map[string]json.RawMessage `json:"paths"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
			assert.True(t, strings.HasPrefix(doc.OpenAPI, "3."))

			var documented []string
			for path, ops := range doc.Paths {
				for m := range ops {
					switch m {
					case "get", "post", "put", "patch", "delete":
						documented = append(documented, strings.ToUpper(m)+" "+path)
					}
				}
			}
			var served []string
			for _, r := range s.apiRoutes() {
				served = append(served, r.method+" "+r.pattern)
			}
			sort.Strings(documented)
			sort.Strings(served)
			assert.Equal(t, served, documented, "every route documented, every documented route served")

			// And the handler answers each documented route as a route:
			// not the catch-all 404, not 405.
			for _, route := range documented {
				method, path, _ := strings.Cut(route, " ")
				path = strings.ReplaceAll(path, "{id}", "x")
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
				assert.NotEqual(t, http.StatusMethodNotAllowed, rec.Code, route)
				assert.NotContains(t, rec.Body.String(), "Unable to find the resource", route)
			}
			rec = httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, kind.BasePath()+"/nothing", nil))
			assert.Equal(t, http.StatusNotFound, rec.Code)
			assert.Contains(t, rec.Body.String(), kind.CodePrefix()+"-7")
		})
	}
}

func TestValidateName(t *testing.T) {
	for _, ok := range []string{"a", "rex", "rex-2", strings.Repeat("a", 32)} {
		assert.NoError(t, validateName(ok), ok)
	}
	for _, bad := range []string{"", "Rex", "2rex", "rex-", "-rex", "re_x", "re x", strings.Repeat("a", 33)} {
		assert.ErrorIs(t, validateName(bad), fleet.ErrInvalid, bad)
	}
}

func TestInstanceJSONHostField(t *testing.T) {
	deny := auth.AuthenticatorFunc(func(*http.Request) (auth.Principal, error) { return auth.Principal{}, auth.ErrUnauthenticated })
	for kind, field := range map[string]string{"dinosaur": "host", "kafka": "bootstrap_server_host"} {
		k, _ := map[string]fleet.Kind{"dinosaur": fleet.Dinosaur, "kafka": fleet.Kafka}[kind].Normalize()
		s := newHandler(t, k, deny)
		m := s.instanceJSON(fleet.Instance{ID: "x", Host: "h:1"})
		assert.Equal(t, "h:1", m[field])
		assert.Equal(t, k.Display, m["kind"])
	}
}

// racingStore holds one ready instance of alice's whose status swaps are
// lost the first lose times: a worker keeps moving it.
type racingStore struct {
	nopStore
	lose  int
	tries int
}

func (s *racingStore) GetInstance(context.Context, string) (fleet.Instance, error) {
	return fleet.Instance{ID: "x", Kind: "dinosaur", Owner: "alice", Status: fleet.StatusReady}, nil
}

func (s *racingStore) UpdateInstance(_ context.Context, u fleet.Update) (fleet.Instance, error) {
	s.tries++
	if s.tries <= s.lose {
		return fleet.Instance{}, &fleet.ConflictError{ID: u.ID, Expected: string(u.From), Actual: string(fleet.StatusFailed)}
	}
	return fleet.Instance{ID: u.ID, Status: u.To}, nil
}

// TestDeleteRetriesLostSwaps: a delete retries the status swap it loses
// and answers 202 once one is recorded; a delete that never wins answers
// 409, never a 202 for a delete that was not recorded.
func TestDeleteRetriesLostSwaps(t *testing.T) {
	alice := auth.AuthenticatorFunc(func(*http.Request) (auth.Principal, error) { return auth.Principal{Username: "alice"}, nil })
	for _, tt := range []struct {
		lose, code int
	}{{0, http.StatusAccepted}, {5, http.StatusAccepted}, {1000, http.StatusConflict}} {
		st := &racingStore{lose: tt.lose}
		svc, err := fleet.New(st, fleet.Options{Kind: fleet.Dinosaur})
		require.NoError(t, err)
		s, err := New(svc, Options{Auth: alice})
		require.NoError(t, err)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodDelete, fleet.Dinosaur.BasePath()+"/dinosaurs/x?async=true", nil))
		assert.Equal(t, tt.code, rec.Code, "after %d lost swaps: %s", tt.lose, rec.Body)
		assert.Equal(t, min(tt.lose+1, len(fleet.Statuses())+1), st.tries)
	}
}

func TestCORS(t *testing.T) {
	svc, err := fleet.New(nopStore{}, fleet.Options{Kind: fleet.Dinosaur})
	require.NoError(t, err)
	deny := auth.AuthenticatorFunc(func(*http.Request) (auth.Principal, error) { return auth.Principal{}, auth.ErrUnauthenticated })
	tests := []struct {
		name      string
		allowed   []string
		method    string
		origin    string
		preflight bool
		wantAllow string
		wantCode  int
	}{
		{"allowed origin", []string{"https://console.example"}, http.MethodGet, "https://console.example", false, "https://console.example", http.StatusUnauthorized},
		{"allowed preflight", []string{"https://console.example"}, http.MethodOptions, "https://console.example", true, "https://console.example", http.StatusNoContent},
		{"other origin", []string{"https://console.example"}, http.MethodGet, "https://evil.example", false, "", http.StatusUnauthorized},
		{"other origin preflight", []string{"https://console.example"}, http.MethodOptions, "https://evil.example", true, "", http.StatusMethodNotAllowed},
		{"any origin", []string{"*"}, http.MethodGet, "https://any.example", false, "https://any.example", http.StatusUnauthorized},
		{"off by default", nil, http.MethodOptions, "https://console.example", true, "", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(svc, Options{Auth: deny, AllowedOrigins: tt.allowed})
			require.NoError(t, err)
			req := httptest.NewRequest(tt.method, fleet.Dinosaur.BasePath()+"/dinosaurs", nil)
			req.Header.Set("Origin", tt.origin)
			if tt.preflight {
				req.Header.Set("Access-Control-Request-Method", http.MethodPost)
			}
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			assert.Equal(t, tt.wantCode, rec.Code, rec.Body.String())
			assert.Equal(t, tt.wantAllow, rec.Header().Get("Access-Control-Allow-Origin"))
			if tt.wantCode == http.StatusNoContent {
				assert.Contains(t, rec.Header().Get("Access-Control-Allow-Headers"), "Authorization")
				assert.Contains(t, rec.Header().Get("Access-Control-Allow-Methods"), http.MethodDelete)
			}
		})
	}
}

// TestNotImplemented: the original's calls left out answer its "not
// implemented" error, not a 404, for every kind.
func TestNotImplemented(t *testing.T) {
	deny := auth.AuthenticatorFunc(func(*http.Request) (auth.Principal, error) { return auth.Principal{}, auth.ErrUnauthenticated })
	for _, kind := range []fleet.Kind{fleet.Dinosaur, fleet.Kafka} {
		s := newHandler(t, kind, deny)
		for route := range s.notImplemented() {
			method, path, _ := strings.Cut(route, " ")
			path = strings.NewReplacer("{id}", "x", "{provider}", "aws", "{region}", "us-east-1").Replace(path)
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
			assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, route)
			var body errorBody
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
			assert.Equal(t, s.kind.CodePrefix()+"-10", body.Code, route)
			assert.Contains(t, body.Reason, "not implemented", route)
		}
	}
}
