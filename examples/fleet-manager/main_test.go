package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
)

// lines is a concurrency-safe writer that hands the first line over.
type lines struct {
	once sync.Once
	c    chan string
}

func (l *lines) Write(p []byte) (int, error) {
	l.once.Do(func() { l.c <- string(p) })
	return len(p), nil
}

func TestServeCreateReady(t *testing.T) {
	t.Setenv("FLEETKIT_CACHE", t.TempDir())
	var tok bytes.Buffer
	require.NoError(t, run(context.Background(), []string{"token", "-user", "alice"}, &tok))
	token := strings.TrimSpace(tok.String())
	require.NotEmpty(t, token)

	ctx, cancel := context.WithCancel(context.Background())
	out := &lines{c: make(chan string, 1)}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, out) }()
	var banner string
	select {
	case banner = <-out.c:
	case err := <-done:
		t.Fatalf("run returned early: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no banner")
	}
	m := regexp.MustCompile(`http://(\S+?)/api`).FindStringSubmatch(banner)
	require.Len(t, m, 2, banner)
	base := "http://" + m[1] + "/api/dinosaurs_mgmt/v1/dinosaurs"

	do := func(method, url, body string) (int, map[string]any) {
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var v map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v
	}
	code, body := do(http.MethodPost, base+"?async=true", `{"name":"rex"}`)
	require.Equal(t, http.StatusAccepted, code, "%v", body)
	id, _ := body["id"].(string)
	require.Eventually(t, func() bool {
		_, b := do(http.MethodGet, base+"/"+id, "")
		return b["status"] == "ready"
	}, 20*time.Second, 20*time.Millisecond, "the instance becomes ready")

	resp, err := http.Get("http://" + m[1] + "/metrics")
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("did not stop")
	}
}

func TestBadFlags(t *testing.T) {
	t.Setenv("FLEETKIT_CACHE", t.TempDir())
	tests := []struct {
		name string
		args []string
	}{
		{"unknown kind", []string{"-kind", "unicorn"}},
		{"token without user", []string{"token"}},
		{"missing config", []string{"-config", "/nonexistent/fleet.yaml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Error(t, run(context.Background(), tt.args, &bytes.Buffer{}))
		})
	}
}

func TestExampleConfig(t *testing.T) {
	t.Setenv("FLEETKIT_CACHE", t.TempDir())
	cfg, err := LoadConfig("testdata/fleet.yaml")
	require.NoError(t, err)
	opts, cleanup, err := cfg.Options(fleet.Kafka)
	require.NoError(t, err)
	defer cleanup()
	require.Len(t, opts.CloudProviders, 1)
	assert.Len(t, opts.CloudProviders[0].Regions, 2)
	assert.Equal(t, 100, opts.CloudProviders[0].Regions[0].Limits["standard"])
	require.Len(t, opts.Clusters, 2)
	assert.Equal(t, 50, opts.Clusters[0].Capacity)
	assert.Equal(t, 48*time.Hour, opts.Trials["developer"])
	assert.Equal(t, 5*time.Minute, opts.Timeouts[fleet.StatusPreparing])
	require.NotNil(t, opts.Quota)
	require.NotNil(t, opts.DenyList)
	assert.True(t, opts.DenyList.Denied("mallory", ""))
	_, err = fleet.New(noStore{}, opts)
	require.NoError(t, err, "the options are valid")
}

// noStore is never called: New only validates.
type noStore struct{ fleet.Store }
