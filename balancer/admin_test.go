package balancer_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

const secret = "s3cret-admin-key"

func newAdminEnv(t *testing.T) (*balancer.Balancer, *httptest.Server) {
	t.Helper()
	b := newBalancer(t, balancer.Options{})
	a, err := balancer.NewAdmin(b, balancer.AdminOptions{Secret: secret, MaxBody: 1024})
	require.NoError(t, err)
	srv := httptest.NewServer(a)
	t.Cleanup(srv.Close)
	return b, srv
}

func call(t *testing.T, srv *httptest.Server, method, path, body string, header map[string]string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, srv.URL+path, rd)
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	return resp.StatusCode, string(data)
}

func TestAdmin(t *testing.T) {
	hdr := map[string]string{balancer.SecretHeader: secret}
	wrongHdr := map[string]string{balancer.SecretHeader: "nope"}
	tests := []struct {
		name   string
		method string
		path   string
		body   string
		header map[string]string
		status int
		want   string // a substring of the answer
	}{
		{"health without secret", "GET", "/health", "", nil, 200, `{"status":"ok"}`},
		{"health with secret lists backends", "GET", "/health", "", hdr, 200, `"backends":{"python":{"1.0":["http://127.0.0.1:30001"]}}`},
		{"health with wrong secret", "GET", "/health", "", wrongHdr, 403, "wrong or missing secret"},
		{"health wrong method", "POST", "/health", "{}", nil, 405, "use GET"},

		{"add", "POST", "/add", `{"lang":"java","version":"1.0","uri":"http://127.0.0.1:30002","secretKey":"` + secret + `"}`, nil, 200, `{"status":"ok"}`},
		{"add twice is not an error", "POST", "/add", `{"lang":"python","version":"1.0","uri":"http://127.0.0.1:30001","secretKey":"` + secret + `"}`, nil, 200, `{"status":"ok"}`},
		{"add with header secret", "POST", "/add", `{"lang":"java","version":"2.0","uri":"http://127.0.0.1:30003"}`, hdr, 200, `{"status":"ok"}`},
		{"add without secret", "POST", "/add", `{"lang":"java","version":"1.0","uri":"http://127.0.0.1:30002"}`, nil, 403, "wrong or missing secret"},
		{"add with wrong secret", "POST", "/add", `{"lang":"java","version":"1.0","uri":"http://127.0.0.1:30002","secretKey":"s3cret-admin-kez"}`, nil, 403, "wrong or missing secret"},
		{"add with a prefix of the secret", "POST", "/add", `{"lang":"java","version":"1.0","uri":"http://127.0.0.1:30002","secretKey":"s3cret"}`, nil, 403, "wrong or missing secret"},
		{"add with wrong header and right body", "POST", "/add", `{"lang":"java","version":"1.0","uri":"http://127.0.0.1:30002","secretKey":"` + secret + `"}`, wrongHdr, 403, "wrong or missing secret"},
		{"add with unknown field", "POST", "/add", `{"lang":"java","version":"1.0","uri":"http://127.0.0.1:30002","ip":"x","secretKey":"` + secret + `"}`, nil, 400, `unknown field \"ip\"`},
		{"add with bad JSON", "POST", "/add", `{"lang":`, nil, 400, "invalid JSON"},
		{"add with two values", "POST", "/add", `{} {}`, nil, 400, "more than one value"},
		{"add with wrong type", "POST", "/add", `{"lang":1}`, nil, 400, `field \"lang\" must be string`},
		{"add with empty body", "POST", "/add", ``, nil, 400, "empty body"},
		{"add too large", "POST", "/add", `{"lang":"` + strings.Repeat("x", 2000) + `"}`, nil, 413, "too large"},
		{"add missing uri", "POST", "/add", `{"lang":"java","version":"1.0"}`, hdr, 400, "missing field uri"},
		{"add bad uri", "POST", "/add", `{"lang":"java","version":"1.0","uri":"127.0.0.1:1"}`, hdr, 400, "absolute http(s) URL"},
		{"add wrong method", "GET", "/add", "", hdr, 405, "use POST"},

		{"remove", "POST", "/remove", `{"uri":"http://127.0.0.1:30001","secretKey":"` + secret + `"}`, nil, 200, `{"status":"ok"}`},
		{"remove unknown", "POST", "/remove", `{"uri":"http://127.0.0.1:39999","secretKey":"` + secret + `"}`, nil, 404, "unknown backend"},
		{"remove in another language", "POST", "/remove", `{"uri":"http://127.0.0.1:30001","lang":"java","secretKey":"` + secret + `"}`, nil, 404, "unknown backend"},
		{"remove in its language", "POST", "/remove", `{"uri":"http://127.0.0.1:30001","lang":"python","secretKey":"` + secret + `"}`, nil, 200, `{"status":"ok"}`},
		{"remove without secret", "POST", "/remove", `{"uri":"http://127.0.0.1:30001"}`, nil, 403, "wrong or missing secret"},
		{"remove missing uri", "POST", "/remove", `{"secretKey":"` + secret + `"}`, nil, 400, "missing field uri"},

		{"ratio", "POST", "/ratio", `{"lang":"python","versionRatio":{"1.0":95,"2.0":5},"secretKey":"` + secret + `"}`, nil, 200, `{"status":"ok"}`},
		{"ratio negative", "POST", "/ratio", `{"lang":"python","versionRatio":{"1.0":105,"2.0":-5},"secretKey":"` + secret + `"}`, nil, 400, "weights must be non-negative"},
		{"ratio wrong total", "POST", "/ratio", `{"lang":"python","versionRatio":{"1.0":95,"2.0":4},"secretKey":"` + secret + `"}`, nil, 400, "weights sum to 99, want 100"},
		{"ratio fractional", "POST", "/ratio", `{"lang":"python","versionRatio":{"1.0":99.5,"2.0":0.5},"secretKey":"` + secret + `"}`, nil, 400, "invalid JSON"},
		{"ratio missing", "POST", "/ratio", `{"lang":"python","secretKey":"` + secret + `"}`, nil, 400, "missing field versionRatio"},
		{"ratio missing lang", "POST", "/ratio", `{"versionRatio":{"1.0":100},"secretKey":"` + secret + `"}`, nil, 400, "missing field lang"},
		{"ratio wrong secret", "POST", "/ratio", `{"lang":"python","versionRatio":{"1.0":100},"secretKey":"x"}`, nil, 403, "wrong or missing secret"},

		{"backends", "GET", "/backends", "", hdr, 200, `"languages":{"python":{"ratio":{"1.0":60,"2.0":40},"versions":{"1.0":{"weight":60,"effectiveWeight":100,"backends":[{"uri":"http://127.0.0.1:30001","healthy":true,"requestCount":0,"consecutiveFailures":0}]},"2.0":{"weight":40,"effectiveWeight":0,"backends":[]}}}}`},
		{"backends without secret", "GET", "/backends", "", nil, 403, "wrong or missing secret"},
		{"backends wrong method", "POST", "/backends", "{}", hdr, 405, "use GET"},
		{"unknown path", "GET", "/nope", "", hdr, 404, "no such endpoint /nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, srv := newAdminEnv(t)
			require.NoError(t, b.AddBackend(context.Background(), "python", "1.0", "http://127.0.0.1:30001"))
			require.NoError(t, b.SetRatio(context.Background(), "python", map[string]int{"1.0": 60, "2.0": 40}))
			status, body := call(t, srv, tt.method, tt.path, tt.body, tt.header)
			assert.Equal(t, tt.status, status, body)
			assert.Contains(t, body, tt.want)
			assert.NotContains(t, body, secret, "the secret is never echoed")
			if status != 200 {
				var eb struct{ Status, Message string }
				require.NoError(t, json.Unmarshal([]byte(body), &eb))
				assert.Equal(t, "error", eb.Status)
			}
		})
	}
}

func TestAdminChangesTheBalancer(t *testing.T) {
	b, srv := newAdminEnv(t)
	body := func(s string) string { return strings.TrimSuffix(s, "}") + `,"secretKey":"` + secret + `"}` }
	for _, u := range []string{"http://127.0.0.1:30001", "http://127.0.0.1:30002"} {
		status, got := call(t, srv, "POST", "/add", body(`{"lang":"python","version":"1.0","uri":"`+u+`"}`), nil)
		require.Equal(t, 200, status, got)
	}
	for _, u := range []string{"http://127.0.0.1:30003", "http://127.0.0.1:30004"} {
		status, got := call(t, srv, "POST", "/add", body(`{"lang":"python","version":"2.0","uri":"`+u+`"}`), nil)
		require.Equal(t, 200, status, got)
	}
	status, got := call(t, srv, "POST", "/ratio", body(`{"lang":"python","versionRatio":{"1.0":60,"2.0":40}}`), nil)
	require.Equal(t, 200, status, got)
	perURI, _ := pickN(t, b, "python", 100)
	assert.Equal(t, map[string]int{"http://127.0.0.1:30001": 30, "http://127.0.0.1:30002": 30, "http://127.0.0.1:30003": 20, "http://127.0.0.1:30004": 20}, perURI)
}

func TestNewAdminValidation(t *testing.T) {
	_, err := balancer.NewAdmin(nil, balancer.AdminOptions{Secret: "x"})
	assert.Error(t, err)
	_, err = balancer.NewAdmin(newBalancer(t, balancer.Options{}), balancer.AdminOptions{})
	assert.ErrorContains(t, err, "Secret is required")
}

// TestAdminMetrics: /metrics through Admin is for callers with the secret.
func TestAdminMetrics(t *testing.T) {
	b := newBalancer(t, balancer.Options{})
	admin, err := balancer.NewAdmin(b, balancer.AdminOptions{Secret: secret,
		Metrics: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json") // what call expects
			_, _ = io.WriteString(w, `{"metric":1}`)
		})})
	require.NoError(t, err)
	srv := httptest.NewServer(admin)
	t.Cleanup(srv.Close)
	for _, tt := range []struct {
		header map[string]string
		code   int
	}{
		{nil, http.StatusForbidden},
		{map[string]string{balancer.SecretHeader: "wrong"}, http.StatusForbidden},
		{map[string]string{"Authorization": "Bearer wrong"}, http.StatusForbidden},
		{map[string]string{balancer.SecretHeader: secret}, http.StatusOK},
		{map[string]string{"Authorization": "Bearer " + secret}, http.StatusOK},
	} {
		code, body := call(t, srv, http.MethodGet, "/metrics", "", tt.header)
		assert.Equal(t, tt.code, code, "%v: %s", tt.header, body)
	}
	withoutMetrics, err := balancer.NewAdmin(b, balancer.AdminOptions{Secret: secret})
	require.NoError(t, err)
	srv = httptest.NewServer(withoutMetrics)
	t.Cleanup(srv.Close)
	code, _ := call(t, srv, http.MethodGet, "/metrics", "", map[string]string{balancer.SecretHeader: secret})
	assert.Equal(t, http.StatusNotFound, code)
}
