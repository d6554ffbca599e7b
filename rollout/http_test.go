package rollout_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/rollout"
)

type apiClient struct {
	t      *testing.T
	url    string
	header http.Header // sent with every call, over the defaults
}

func newAPI(t *testing.T, f *fixture) *apiClient {
	return newAPIWith(t, f, rollout.HandlerOptions{MaxBody: 1024})
}

func newAPIWith(t *testing.T, f *fixture, opts rollout.HandlerOptions) *apiClient {
	srv := httptest.NewServer(rollout.NewHandler(f.mgr, opts))
	t.Cleanup(srv.Close)
	return &apiClient{t: t, url: srv.URL, header: http.Header{}}
}

// do sends body to path (with Content-Type: application/json and the
// client's headers) and returns the status and the decoded JSON answer.
func (c *apiClient) do(method, path, body string) (int, map[string]any, string) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.url+path, strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	for k, v := range c.header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(c.t, err)
	var ans map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		require.NoError(c.t, json.Unmarshal(raw, &ans), "%s", raw)
	}
	return resp.StatusCode, ans, string(raw)
}

func TestHTTPContract(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	api := newAPI(t, f)

	// POST /create answers the address once the machine is healthy.
	code, ans, raw := api.do("POST", "/create", `{"lang":"python"}`)
	require.Equal(t, 200, code, raw)
	assert.Equal(t, "ok", ans["status"])
	ip1, _ := ans["ip"].(string)
	assert.Regexp(t, `^127\.0\.0\.1:\d+$`, ip1)
	resp, err := http.Get("http://" + ip1 + "/health")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	_, ans, _ = api.do("POST", "/create", `{"lang":"python"}`)
	ip2 := ans["ip"].(string)

	// GET /status lists both.
	code, _, raw = api.do("GET", "/status", "")
	require.Equal(t, 200, code, raw)
	var st struct {
		Linters []map[string]struct {
			Version      string `json:"version"`
			Lang         string `json:"lang"`
			RequestCount *int64 `json:"request_count"`
			IsHealthy    *bool  `json:"is_healthy"`
		} `json:"linters"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &st))
	require.Len(t, st.Linters, 2)
	for i, ip := range []string{ip1, ip2} {
		l, ok := st.Linters[i][ip]
		require.True(t, ok, "linter %d is keyed by its ip: %s", i, raw)
		assert.Equal(t, "1.0", l.Version)
		assert.Equal(t, "python", l.Lang)
		require.NotNil(t, l.RequestCount)
		require.NotNil(t, l.IsHealthy)
		assert.True(t, *l.IsHealthy)
	}

	// The rollout walks forward; /update past the last step is 400.
	code, ans, raw = api.do("POST", "/init-update", `{"lang":"python","version":"2.0"}`)
	require.Equal(t, 200, code, raw)
	assert.Equal(t, "ok", ans["status"])
	for range 4 {
		code, _, raw = api.do("POST", "/update", `{"lang":"python"}`)
		require.Equal(t, 200, code, raw)
	}
	code, ans, raw = api.do("POST", "/update", `{"lang":"python"}`)
	require.Equal(t, 400, code, raw)
	assert.Equal(t, "error", ans["status"])
	assert.Contains(t, ans["message"], "last step")

	code, _, raw = api.do("POST", "/rollback", `{"lang":"python"}`)
	require.Equal(t, 200, code, raw)

	// /remove and /delete; unknown ip is 404.
	_, ans, _ = api.do("POST", "/create", `{"lang":"java"}`)
	ip3 := ans["ip"].(string)
	code, ans, raw = api.do("POST", "/remove", `{"ip":"`+ip3+`"}`)
	require.Equal(t, 200, code, raw)
	assert.Equal(t, map[string]any{"status": "ok"}, ans)
	_, ans, _ = api.do("POST", "/create", `{"lang":"java"}`)
	code, _, raw = api.do("POST", "/delete", `{"ip":"`+ans["ip"].(string)+`"}`)
	require.Equal(t, 200, code, raw)
	code, ans, _ = api.do("POST", "/delete", `{"ip":"`+ip3+`"}`)
	require.Equal(t, 404, code)
	assert.Equal(t, "error", ans["status"])

	// The HTML page.
	code, _, raw = api.do("GET", "/", "")
	require.Equal(t, 200, code)
	assert.Contains(t, raw, "<h2>python</h2>")
	assert.Contains(t, raw, "<td>127.0.0.1:")
	assert.Contains(t, raw, "step 4 of 5")
	assert.Equal(t, 1, strings.Count(raw, "<script"), "the page's own script only")
	assert.Contains(t, raw, `data-op="update"`, "promote during an update")
}

func TestHTTPErrors(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	api := newAPI(t, f)
	tests := []struct {
		name, method, path, body string
		code                     int
		msg                      string
	}{
		{"create: unknown language", "POST", "/create", `{"lang":"cobol"}`, 404, "unknown language"},
		{"create: no lang", "POST", "/create", `{}`, 400, "lang is empty"},
		{"create: unknown field", "POST", "/create", `{"lang":"python","size":3}`, 400, "size"},
		{"create: not JSON", "POST", "/create", `lang=python`, 400, "invalid JSON"},
		{"create: empty body", "POST", "/create", ``, 400, "empty body"},
		{"create: two values", "POST", "/create", `{"lang":"python"}{}`, 400, "more than one value"},
		{"create: wrong type", "POST", "/create", `{"lang":7}`, 400, "lang"},
		{"create: too large", "POST", "/create", `{"lang":"` + strings.Repeat("x", 2000) + `"}`, 413, "too large"},
		{"create: GET", "GET", "/create", ``, 405, "not allowed"},
		{"remove: unknown ip", "POST", "/remove", `{"ip":"127.0.0.1:1"}`, 404, "unknown machine"},
		{"remove: no ip", "POST", "/remove", `{}`, 400, "ip is empty"},
		{"init-update: unknown version", "POST", "/init-update", `{"lang":"python","version":"9.9"}`, 400, "unknown version"},
		{"init-update: no version", "POST", "/init-update", `{"lang":"python"}`, 400, "version is empty"},
		{"init-update: same version", "POST", "/init-update", `{"lang":"python","version":"1.0"}`, 400, "already the current"},
		{"init-update: unknown language", "POST", "/init-update", `{"lang":"cobol","version":"2.0"}`, 404, "unknown language"},
		{"update: no update", "POST", "/update", `{"lang":"python"}`, 400, "no update in progress"},
		{"rollback: no update", "POST", "/rollback", `{"lang":"python"}`, 400, "no update in progress"},
		{"status: POST", "POST", "/status", `{}`, 405, "not allowed"},
		{"unknown path", "GET", "/nope", ``, 404, "no such endpoint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, ans, raw := api.do(tt.method, tt.path, tt.body)
			require.Equal(t, tt.code, code, raw)
			assert.Equal(t, "error", ans["status"], raw)
			assert.Contains(t, ans["message"], tt.msg)
		})
	}

	// A provider that fails is 503.
	f.provider.FailCreates(1, nil)
	code, ans, _ := api.do("POST", "/create", `{"lang":"python"}`)
	require.Equal(t, 503, code)
	assert.Equal(t, "error", ans["status"])
}

func TestHTTPStatusReportsUnhealthy(t *testing.T) {
	f := newFixture(t, rollout.Options{HealthInterval: 20 * time.Millisecond})
	api := newAPI(t, f)
	f.create("python", 2)
	f.run()
	all, err := f.provider.List(t.Context(), nil)
	require.NoError(t, err)
	require.NoError(t, f.provider.Kill(all[0].ID))
	eventually(t, func() bool {
		_, ans, _ := api.do("GET", "/status", "")
		l := ans["linters"].([]any)[0].(map[string]any)[all[0].Address].(map[string]any)
		return l["is_healthy"] == false
	}, "the killed machine is reported unhealthy")
	_, _, raw := api.do("GET", "/", "")
	assert.Contains(t, raw, "unhealthy")
}
