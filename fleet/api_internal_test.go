package fleet

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet/auth"
)

// nopStore is never called: the requests below stop at authentication or
// need no store.
type nopStore struct{ Store }

func TestOpenAPIMatchesHandler(t *testing.T) {
	for _, kind := range []Kind{Dinosaur, Kafka, {Name: "unicorn"}} {
		t.Run(kind.Name, func(t *testing.T) {
			deny := auth.AuthenticatorFunc(func(*http.Request) (auth.Principal, error) { return auth.Principal{}, auth.ErrUnauthenticated })
			s, err := New(nopStore{}, Options{Kind: kind, Auth: deny})
			require.NoError(t, err)
			kind = s.Kind()

			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, kind.BasePath()+"/openapi", nil))
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
				s.Handler().ServeHTTP(rec, httptest.NewRequest(method, path, nil))
				assert.NotEqual(t, http.StatusMethodNotAllowed, rec.Code, route)
				assert.NotContains(t, rec.Body.String(), "Unable to find the resource", route)
			}
			rec = httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, kind.BasePath()+"/nothing", nil))
			assert.Equal(t, http.StatusNotFound, rec.Code)
			assert.Contains(t, rec.Body.String(), kind.CodePrefix()+"-7")
		})
	}
}

func TestInstanceJSONHostField(t *testing.T) {
	deny := auth.AuthenticatorFunc(func(*http.Request) (auth.Principal, error) { return auth.Principal{}, auth.ErrUnauthenticated })
	for kind, field := range map[string]string{"dinosaur": "host", "kafka": "bootstrap_server_host"} {
		k, _ := Kind{Name: kind}.Normalize()
		s, err := New(nopStore{}, Options{Kind: k, Auth: deny})
		require.NoError(t, err)
		m := s.instanceJSON(Instance{ID: "x", Host: "h:1"})
		assert.Equal(t, "h:1", m[field])
		assert.Equal(t, k.Display, m["kind"])
	}
}
