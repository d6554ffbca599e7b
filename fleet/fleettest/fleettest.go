package fleettest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/auth"
)

// Client calls a fleet API as given users. Safe for concurrent use.
type Client struct {
	// BaseURL is the server's root (http://127.0.0.1:port).
	BaseURL string
	Kind    fleet.Kind
	// Secret signs HS256 tokens.
	Secret []byte
	// HTTP is the client used; nil means http.DefaultClient.
	HTTP *http.Client
	// Check, when set, is given every exchange of Do: the request with
	// its body and the response with its body (both already read). It
	// fails t when the exchange breaks a contract, e.g. the served OpenAPI
	// document (package fleet/httpapi/openapitest).
	Check func(t testing.TB, req *http.Request, reqBody []byte, resp *http.Response, respBody []byte)
}

// User is a caller: a username, an optional organisation and whether it
// administers that organisation.
type User struct {
	Name, Org string
	OrgAdmin  bool
}

// Response is a decoded answer.
type Response struct {
	Status int
	// Body is the decoded JSON object (nil for an empty body).
	Body map[string]any
	Raw  []byte
}

// Code returns the error code of an error body ("" otherwise).
func (r Response) Code() string {
	s, _ := r.Body["code"].(string)
	return s
}

// Str returns a string field of the body.
func (r Response) Str(field string) string {
	s, _ := r.Body[field].(string)
	return s
}

// Items returns the items of a list body.
func (r Response) Items() []map[string]any {
	raw, _ := r.Body["items"].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, it := range raw {
		m, _ := it.(map[string]any)
		out = append(out, m)
	}
	return out
}

// Token returns a development token for u.
func (c *Client) Token(t testing.TB, u User) string {
	t.Helper()
	tok, err := auth.NewHS256TokenFor(c.Secret, auth.Principal{Username: u.Name, Organisation: u.Org, OrgAdmin: u.OrgAdmin}, time.Hour)
	require.NoError(t, err)
	return tok
}

// Do sends method path (relative to the kind's base path when it does not
// start with /) with body (JSON-encoded unless nil) as u (no token when
// u.Name is empty).
func (c *Client) Do(t testing.TB, u User, method, path string, body any) Response {
	t.Helper()
	if len(path) == 0 || path[0] != '/' {
		path = c.Kind.BasePath() + "/" + path
	}
	var rd io.Reader
	var reqBody []byte
	if body != nil {
		var err error
		reqBody, err = json.Marshal(body)
		require.NoError(t, err)
		rd = bytes.NewReader(reqBody)
	}
	req, err := http.NewRequest(method, c.BaseURL+path, rd)
	require.NoError(t, err)
	if u.Name != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token(t, u))
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if c.Check != nil {
		c.Check(t, req, reqBody, resp, raw)
	}
	r := Response{Status: resp.StatusCode, Raw: raw}
	if len(bytes.TrimSpace(raw)) > 0 && raw[0] == '{' {
		require.NoError(t, json.Unmarshal(raw, &r.Body), "body: %s", raw)
	}
	return r
}

// WaitStatus polls GET of the instance as u until its status is want (or,
// with want "gone", until it is 404) and returns the last answer. It fails
// the test after timeout.
func (c *Client) WaitStatus(t testing.TB, u User, id, want string, timeout time.Duration) Response {
	t.Helper()
	var last Response
	deadline := time.Now().Add(timeout)
	for {
		last = c.Do(t, u, http.MethodGet, c.Kind.Plural+"/"+id, nil)
		if (want == "gone" && last.Status == http.StatusNotFound) || (last.Status == http.StatusOK && last.Str("status") == want) {
			return last
		}
		if time.Now().After(deadline) {
			require.Failf(t, "instance did not reach status", "%s: want %s after %s, last answer %d %s", id, want, timeout, last.Status, last.Raw)
		}
		time.Sleep(10 * time.Millisecond) // a poll period, not a wait for a condition
	}
}
