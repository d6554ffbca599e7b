package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// With -state-file a restarted balancer starts with the backends and
// ratios the admin API had set (the issue: a restarted balancer answered
// 503 until the machine manager was restarted too).
func TestStateFileOutlivesARestart(t *testing.T) {
	state := filepath.Join(t.TempDir(), "lb.json")
	env := func(k string) string {
		if k == "FLEETKIT_SECRET_KEY" {
			return "k"
		}
		return ""
	}
	start := func() (base string, stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		ready := make(chan listening, 1)
		done := make(chan error, 1)
		go func() {
			done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-admin-addr", "", "-state-file", state}, env, io.Discard, ready)
		}()
		select {
		case l := <-ready:
			return "http://" + l.public, func() { cancel(); require.NoError(t, <-done) }
		case err := <-done:
			t.Fatalf("run: %v", err)
		}
		return "", nil
	}
	post := func(url, body string) {
		resp, err := http.Post(url, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	}
	health := func(base string) balancer.Health {
		req, _ := http.NewRequest(http.MethodGet, base+"/health", nil)
		req.Header.Set(balancer.SecretHeader, "k")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var h balancer.Health
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
		return h
	}

	base, stop := start()
	post(base+"/add", `{"lang":"python","version":"1.0","uri":"http://127.0.0.1:1","secretKey":"k"}`)
	post(base+"/add", `{"lang":"python","version":"2.0","uri":"http://127.0.0.1:2","secretKey":"k"}`)
	post(base+"/ratio", `{"lang":"python","versionRatio":{"1.0":90,"2.0":10},"secretKey":"k"}`)
	before := health(base)
	stop()
	_, err := os.Stat(state)
	require.NoError(t, err, "saved")

	base, stop = start()
	defer stop()
	after := health(base)
	assert.Equal(t, before.Backends, after.Backends)
	assert.Equal(t, before.Ratios, after.Ratios)
	assert.NotEqual(t, before.Generation, after.Generation, "a new balancer: the machine manager sees the restart")

	require.NoError(t, os.WriteFile(state, []byte(`{"version": 9}`), 0o600))
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-state-file", state}, env, io.Discard, nil)
	assert.ErrorContains(t, err, "format version 9")
}
