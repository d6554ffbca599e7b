package openapitest_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/auth"
	"github.com/fleetkit/fleetkit/fleet/httpapi"
	"github.com/fleetkit/fleetkit/fleet/httpapi/openapitest"
	"github.com/fleetkit/fleetkit/fleet/inmem"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

// TestCheckCatchesDrift: an answer with a field the document does not name,
// or without one it requires, fails the check; a documented answer passes.
func TestCheckCatchesDrift(t *testing.T) {
	svc, err := fleet.New(inmem.NewStore(), fleet.Options{Kind: fleet.Kafka})
	require.NoError(t, err)
	api, err := httpapi.New(svc, httpapi.Options{Auth: auth.AuthenticatorFunc(func(*http.Request) (auth.Principal, error) { return auth.Principal{}, nil })})
	require.NoError(t, err)
	rec := httptest.NewRecorder()
	api.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, fleet.Kafka.BasePath()+"/openapi", nil))
	require.Equal(t, http.StatusOK, rec.Code)
	v := openapitest.Load(t, rec.Body.Bytes())

	valid := `"id":"x","kind":"Kafka","href":"/api/kafkas_mgmt/v1/kafkas/x","status":"ready","name":"a","owner":"o",` +
		`"cloud_provider":"aws","region":"us-east-1","multi_az":true,"reauthentication_enabled":true,"instance_type":"standard",` +
		`"created_at":"2026-01-01T00:00:00Z","updated_at":"2026-01-01T00:00:00Z"`
	tests := []struct {
		name, body string
		fails      string
	}{
		{"documented", `{` + valid + `,"bootstrap_server_host":"h:1"}`, ""},
		{"undocumented field", `{` + valid + `,"host":"h:1"}`, `"host"`},
		{"missing required", `{` + strings.Replace(valid, `"multi_az":true,`, "", 1) + `}`, "multi_az"},
		{"status outside the enum", `{` + strings.Replace(valid, `"ready"`, `"sleeping"`, 1) + `}`, "sleeping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:1"+fleet.Kafka.BasePath()+"/kafkas/x", nil)
			resp := &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}}}
			r := &recorder{TB: t}
			v.Check(r, req, nil, resp, []byte(tt.body))
			if tt.fails == "" {
				assert.Empty(t, r.errs)
				return
			}
			require.NotEmpty(t, r.errs)
			assert.Contains(t, strings.Join(r.errs, "\n"), tt.fails)
		})
	}
}
