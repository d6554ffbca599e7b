package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func noEnv(string) string { return "" }

func TestRefusesToStartWithoutSecret(t *testing.T) {
	err := run(context.Background(), []string{"-addr", "127.0.0.1:0"}, noEnv, io.Discard, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "admin secret is required")
}

func TestServesAndDrains(t *testing.T) {
	release, arrived := make(chan struct{}), make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if strings.Contains(r.URL.RawQuery, "slow") {
			close(arrived)
			<-release
		}
		_, _ = io.WriteString(w, `{"result":true,"details":"ok"}`)
	}))
	defer backend.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan listening, 1)
	done := make(chan error, 1)
	env := func(k string) string {
		if k == "FLEETKIT_SECRET_KEY" {
			return "k"
		}
		return ""
	}
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0"}, env, io.Discard, ready)
	}()
	var addrs listening
	select {
	case addrs = <-ready:
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	base := "http://" + addrs.public

	post := func(path, body string) (int, string) {
		resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := post("/add", `{"lang":"python","version":"1.0","uri":"`+backend.URL+`","secretKey":"k"}`)
	require.Equal(t, http.StatusOK, code, body)
	code, body = post("/lint/python", `{"code":"x"}`)
	require.Equal(t, http.StatusOK, code, body)
	// /metrics is on the admin listener (not the public one).
	resp, err := http.Get("http://" + addrs.admin + "/metrics")
	require.NoError(t, err)
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(metrics), `fleetkit_balancer_requests_total{backend="`+backend.URL+`",code="200",language="python",version="1.0"} 1`)

	// An in-flight request survives the shutdown.
	inflight := make(chan int, 1)
	go func() {
		code, _ := post("/lint/python?slow", `{"code":"x"}`)
		inflight <- code
	}()
	<-arrived
	cancel()
	// Shutting down: new connections are refused, the request is still held.
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addrs.public)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 10*time.Second, 5*time.Millisecond)
	close(release)
	assert.Equal(t, http.StatusOK, <-inflight)
	require.NoError(t, <-done)
}

// startLB runs the binary with args until the test ends.
func startLB(t *testing.T, getenv func(string) string, args ...string) listening {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan listening, 1)
	done := make(chan error, 1)
	go func() { done <- run(ctx, args, getenv, io.Discard, ready) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-done)
	})
	select {
	case a := <-ready:
		return a
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	return listening{}
}

// get GETs url with header and returns the status.
func get(t *testing.T, url string, header map[string]string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

// TestMetricsNotPublic: /metrics is served on the admin listener; the
// public one does not serve it, or (with one listener) only with the
// secret. The admin API stays on the public listener (the wire contract).
func TestMetricsNotPublic(t *testing.T) {
	env := func(k string) string { return map[string]string{"FLEETKIT_SECRET_KEY": "k"}[k] }
	two := startLB(t, env, "-addr", "127.0.0.1:0", "-admin-addr", "127.0.0.1:0")
	assert.Equal(t, http.StatusNotFound, get(t, "http://"+two.public+"/metrics", nil))
	assert.Equal(t, http.StatusNotFound, get(t, "http://"+two.public+"/metrics", map[string]string{"X-Secret-Key": "k"}))
	assert.Equal(t, http.StatusOK, get(t, "http://"+two.admin+"/metrics", nil))
	assert.Equal(t, http.StatusOK, get(t, "http://"+two.public+"/health", nil), "the admin API on the public listener")

	one := startLB(t, env, "-addr", "127.0.0.1:0", "-admin-addr", "")
	assert.Empty(t, one.admin)
	assert.Equal(t, http.StatusForbidden, get(t, "http://"+one.public+"/metrics", nil))
	assert.Equal(t, http.StatusOK, get(t, "http://"+one.public+"/metrics", map[string]string{"X-Secret-Key": "k"}))
	assert.Equal(t, http.StatusOK, get(t, "http://"+one.public+"/metrics", map[string]string{"Authorization": "Bearer k"}))
}

// TestSecretSources: the secret comes from a file or the environment (the
// flag works, and -h says to prefer the others).
func TestSecretSources(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(file, []byte("from-file\n"), 0o600))
	lb := startLB(t, noEnv, "-addr", "127.0.0.1:0", "-admin-addr", "", "-secret-file", file)
	assert.Equal(t, http.StatusOK, get(t, "http://"+lb.public+"/metrics", map[string]string{"X-Secret-Key": "from-file"}))
	assert.Equal(t, http.StatusForbidden, get(t, "http://"+lb.public+"/metrics", map[string]string{"X-Secret-Key": "k"}))

	err := run(context.Background(), []string{"-secret", "a", "-secret-file", file}, noEnv, io.Discard, nil)
	assert.ErrorContains(t, err, "not both")

	var help strings.Builder
	require.NoError(t, run(context.Background(), []string{"-h"}, noEnv, &help, nil))
	for _, want := range []string{"-secret-file", "$FLEETKIT_SECRET_KEY", "shows in ps"} {
		assert.Contains(t, help.String(), want)
	}
}
