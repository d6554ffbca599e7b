package openapitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet/fleettest"
)

// Validator holds a loaded document and its router.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
}

// Fetch loads the document c's server serves at <base>/openapi, checks that
// it is a valid OpenAPI 3 document, and returns a Validator for it.
func Fetch(t testing.TB, c *fleettest.Client) *Validator {
	t.Helper()
	r := c.Do(t, fleettest.User{}, http.MethodGet, "openapi", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	return Load(t, r.Raw)
}

// Load parses doc (JSON or YAML) and returns a Validator for it. Object
// schemas are made strict (no properties beyond the documented ones), so
// that a field the server sends but the document does not name fails the
// check; the served document itself stays open, as the original's is.
func Load(t testing.TB, doc []byte) *Validator {
	t.Helper()
	d, err := openapi3.NewLoader().LoadFromData(doc)
	require.NoError(t, err)
	require.NoError(t, d.Validate(context.Background()), "the served document is a valid OpenAPI 3 document")
	strict := false
	seen := map[*openapi3.Schema]bool{}
	var walk func(s *openapi3.SchemaRef)
	walk = func(s *openapi3.SchemaRef) {
		if s == nil || s.Value == nil || seen[s.Value] {
			return
		}
		seen[s.Value] = true
		if len(s.Value.Properties) > 0 && s.Value.AdditionalProperties.Schema == nil && s.Value.AdditionalProperties.Has == nil {
			s.Value.AdditionalProperties.Has = &strict
		}
		for _, p := range s.Value.Properties {
			walk(p)
		}
		walk(s.Value.Items)
	}
	for _, s := range d.Components.Schemas {
		walk(s)
	}
	// The server answers on whatever host the test gave it.
	d.Servers = openapi3.Servers{{URL: "http://localhost/"}}
	router, err := legacy.NewRouter(d)
	require.NoError(t, err)
	return &Validator{doc: d, router: router}
}

// Check is a fleettest.Client Check: the response must be one the document
// allows for the request (status and body); a request the document refuses
// must be refused by the server with a 4xx; a path or method the document
// does not have must be answered with the documented Error body.
func (v *Validator) Check(t testing.TB, req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) {
	t.Helper()
	ctx := context.Background()
	// Route on a copy whose host matches the document's server.
	u := *req.URL
	u.Scheme, u.Host = "http", "localhost"
	rr := req.Clone(ctx)
	// The API serves a path with a trailing slash as the path without it,
	// as the original does: the document's paths hold for both.
	if len(u.Path) > 1 {
		u.Path = strings.TrimRight(u.Path, "/")
	}
	rr.URL = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawQuery: u.RawQuery}
	rr.Body = io.NopCloser(bytes.NewReader(reqBody))
	route, params, err := v.router.FindRoute(rr)
	// The routers answer fresh RouteErrors, not the sentinels themselves.
	if re := (*routers.RouteError)(nil); errors.As(err, &re) {
		assert.GreaterOrEqual(t, resp.StatusCode, 400, "%s %s is not in the document", req.Method, u.Path)
		v.checkSchema(t, "Error", respBody, req)
		return
	}
	require.NoError(t, err, "route %s %s", req.Method, u.Path)
	opts := &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true,
		MultiError:            true,
	}
	in := &openapi3filter.RequestValidationInput{Request: rr, PathParams: params, Route: route, Options: opts}
	if reqErr := openapi3filter.ValidateRequest(ctx, in); reqErr != nil {
		assert.True(t, resp.StatusCode >= 400 && resp.StatusCode < 500,
			"%s %s breaks the document (%v) yet was answered %d", req.Method, u.String(), reqErr, resp.StatusCode)
	}
	err = openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Body: io.NopCloser(bytes.NewReader(respBody)), Options: opts,
	})
	assert.NoError(t, err, "%s %s answered %d %s", req.Method, u.String(), resp.StatusCode, respBody)
}

func (v *Validator) checkSchema(t testing.TB, name string, body []byte, req *http.Request) {
	t.Helper()
	s, ok := v.doc.Components.Schemas[name]
	require.True(t, ok, "the document has no %s schema", name)
	var val any
	if err := json.Unmarshal(body, &val); err != nil {
		assert.NoError(t, err, "%s %s: body %s", req.Method, req.URL.Path, body)
		return
	}
	assert.NoError(t, s.Value.VisitJSON(val), "%s %s: body %s", req.Method, req.URL.Path, body)
}
