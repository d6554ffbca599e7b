package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/auth"
)

// TestConformsToOriginal checks the served kafka document against the facts
// of kas-fleet-manager's public document (testdata/original-api.yaml): every
// path and method we claim exists, and every claimed schema has the
// original's fields with their types and at least its required list.
func TestConformsToOriginal(t *testing.T) {
	raw, err := os.ReadFile("testdata/original-api.yaml")
	require.NoError(t, err)
	var facts struct {
		Paths   map[string][]string `json:"paths"`
		Schemas map[string]struct {
			Required []string          `json:"required"`
			Fields   map[string]string `json:"fields"`
		} `json:"schemas"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &facts))

	deny := auth.AuthenticatorFunc(func(*http.Request) (auth.Principal, error) { return auth.Principal{}, auth.ErrUnauthenticated })
	s := newHandler(t, fleet.Kafka, deny)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, fleet.Kafka.BasePath()+"/openapi", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	var doc struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Required   []string `json:"required"`
				Properties map[string]struct {
					Type string `json:"type"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))

	for path, methods := range facts.Paths {
		for _, m := range methods {
			assert.Contains(t, doc.Paths[path], m, "%s %s", m, path)
		}
	}
	for name, want := range facts.Schemas {
		t.Run(name, func(t *testing.T) {
			got, ok := doc.Components.Schemas[name]
			require.True(t, ok, "schema %s is served", name)
			for field, typ := range want.Fields {
				if assert.Contains(t, got.Properties, field) {
					assert.Equal(t, typ, got.Properties[field].Type, "type of %s", field)
				}
			}
			for _, r := range want.Required {
				assert.True(t, slices.Contains(got.Required, r), "%s is required", r)
			}
		})
	}
}
