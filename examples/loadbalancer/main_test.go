package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
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
	release := make(chan struct{})
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if strings.Contains(r.URL.RawQuery, "slow") {
			<-release
		}
		_, _ = io.WriteString(w, `{"result":true,"details":"ok"}`)
	}))
	defer backend.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	env := func(k string) string {
		if k == "FLEETKIT_SECRET_KEY" {
			return "k"
		}
		return ""
	}
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, env, io.Discard, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("run: %v", err)
	}
	base := "http://" + addr

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
	resp, err := http.Get(base + "/metrics")
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
	time.Sleep(100 * time.Millisecond)
	cancel()
	time.Sleep(100 * time.Millisecond)
	close(release)
	assert.Equal(t, http.StatusOK, <-inflight)
	require.NoError(t, <-done)
}
