package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// hardenedEnv writes a configuration whose balancer is a real admin API
// and returns the config path and the balancer.
func hardenedEnv(t *testing.T) (string, *balancer.Balancer) {
	t.Helper()
	dir := t.TempDir()
	bal, err := balancer.New(balancer.Options{})
	require.NoError(t, err)
	admin, err := balancer.NewAdmin(bal, balancer.AdminOptions{Secret: "lb-secret"})
	require.NoError(t, err)
	lb := httptest.NewServer(admin)
	t.Cleanup(lb.Close)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lb-secret"), []byte("lb-secret\n"), 0o600))
	cfg := filepath.Join(dir, "mm.yaml")
	require.NoError(t, os.WriteFile(cfg, fmt.Appendf(nil, `
balancer: {address: %q, secret_file: lb-secret}
languages:
  python:
    version: "1.0"
    versions:
      "1.0": {command: /nonexistent/linter}
`, lb.URL), 0o600))
	return cfg, bal
}

func call(t *testing.T, method, url, contentType string, header map[string]string, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestRefusesOpenBeyondLoopback: without an API secret the manager listens
// on loopback only.
func TestRefusesOpenBeyondLoopback(t *testing.T) {
	t.Setenv("FLEETKIT_MANAGER_SECRET", "")
	cfg, _ := hardenedEnv(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		err := run(context.Background(), []string{"-provider", "process", "-config", cfg, "-addr", addr}, io.Discard, nil)
		require.Error(t, err, addr)
		assert.Contains(t, err.Error(), "give an API secret")
	}
	var help strings.Builder
	require.NoError(t, run(context.Background(), []string{"-h"}, &help, nil))
	assert.Contains(t, help.String(), "$FLEETKIT_MANAGER_SECRET")
	assert.Contains(t, help.String(), "-secret-file")
}

// TestAPISecretAndJSON: with a secret (from a file or the environment),
// mutating calls without it are 403 and calls not declared JSON are 415;
// neither starts a machine. Reads stay open.
func TestAPISecretAndJSON(t *testing.T) {
	cfg, _ := hardenedEnv(t)
	file := filepath.Join(t.TempDir(), "api-secret")
	require.NoError(t, os.WriteFile(file, []byte("api-secret\n"), 0o600))
	for name, args := range map[string][]string{
		"file":        {"-secret-file", file},
		"environment": nil,
	} {
		t.Run(name, func(t *testing.T) {
			t.Setenv("FLEETKIT_MANAGER_SECRET", map[bool]string{true: "api-secret"}[args == nil])
			// Beyond loopback is allowed with a secret; 127.0.0.1 keeps
			// the test on loopback all the same.
			url, _ := startManager(t, append([]string{"-provider", "process", "-config", cfg, "-addr", "127.0.0.1:0"}, args...)...)
			code, body := call(t, "POST", url+"/create", "application/json", nil, `{"lang":"python"}`)
			assert.Equal(t, http.StatusForbidden, code, body)
			code, body = call(t, "POST", url+"/create", "text/plain", map[string]string{"X-Secret-Key": "api-secret"}, `{"lang":"python"}`)
			assert.Equal(t, http.StatusUnsupportedMediaType, code, body)
			code, body = call(t, "POST", url+"/init-update", "application/json", map[string]string{"X-Secret-Key": "lb-secret"}, `{"lang":"python","version":"1.0"}`)
			assert.Equal(t, http.StatusForbidden, code, body)
			code, body = call(t, "GET", url+"/status", "", nil, "")
			assert.Equal(t, http.StatusOK, code, body)
			assert.Contains(t, body, `"linters":[]`)
			// With the secret, the call goes through to the provider
			// (whose linter command does not exist here: 503).
			code, body = call(t, "POST", url+"/create", "application/json", map[string]string{"X-Secret-Key": "api-secret"}, `{"lang":"python"}`)
			assert.Equal(t, http.StatusServiceUnavailable, code, body)
		})
	}
}
