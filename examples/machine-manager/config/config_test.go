package config_test

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
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/examples/machine-manager/config"
	"github.com/fleetkit/fleetkit/rollout"
)

const goodYAML = `
start_timeout: 20s
remove_timeout: 5s
update_steps: [1, 5, 10, 50, 100]
health:
  interval: 1s
  timeout: 500ms
  threshold: 2
replace_unhealthy: true
state_file: /tmp/state.json
balancer:
  address: http://127.0.0.1:8080
  secret: s3cret
languages:
  python:
    version: 1.0
    versions:
      1.0: {image: "fleetkit/linter:1.0", command: linter}
      2.0: {image: "fleetkit/linter:2.0", command: linter, args: ["-addr", "{addr}"], env: {A: b}}
  java:
    version: "1.0"
    versions:
      "1.0": {command: linter}
`

const goodJSON = `{
  "languages": {"python": {"version": "1.0", "versions": {"1.0": {"command": "linter"}}}}
}`

func TestParse(t *testing.T) {
	c, err := config.Parse([]byte(goodYAML))
	require.NoError(t, err)
	assert.Equal(t, 20*time.Second, c.StartTimeout)
	assert.Equal(t, 500*time.Millisecond, c.Health.Timeout)
	assert.Equal(t, "1.0", c.Languages["python"].Version, "an unquoted 1.0 stays the string 1.0")
	assert.Contains(t, c.Languages["python"].Versions, "2.0")
	assert.Equal(t, []string{"-addr", "{addr}"}, c.Languages["python"].Versions["2.0"].Args)
	require.NoError(t, c.RequireRunnable("process"))
	require.ErrorContains(t, c.RequireRunnable("docker"), "languages.java.versions.1.0 has no image")

	o := c.Options()
	assert.Equal(t, 2, o.HealthThreshold)
	assert.True(t, o.ReplaceUnhealthy)
	assert.Equal(t, "/tmp/state.json", o.StateFile)
	assert.Nil(t, o.Auto)

	c, err = config.Parse([]byte(goodJSON))
	require.NoError(t, err)
	assert.Equal(t, "linter", c.Languages["python"].Versions["1.0"].Command)
}

func TestParseErrors(t *testing.T) {
	lang := "languages: {python: {version: '1.0', versions: {'1.0': {command: linter}}}}\n"
	tests := []struct {
		name, yaml, err string
	}{
		{"empty", "", "empty"},
		{"unknown field", lang + "start_timout: 5s\n", "start_timout"},
		{"bad duration", lang + "start_timeout: soon\n", "soon"},
		{"negative duration", lang + "remove_timeout: -5s\n", "remove_timeout is negative"},
		{"bad steps", lang + "update_steps: [10, 5, 100]\n", "strictly increasing"},
		{"steps not ending at 100", lang + "update_steps: [10, 50]\n", "must be 100"},
		{"no languages", "start_timeout: 5s\n", "no languages"},
		{"no versions", "languages: {python: {version: '1.0'}}\n", "languages.python.versions is empty"},
		{"no version", "languages: {python: {versions: {'1.0': {command: x}}}}\n", "languages.python.version"},
		{"version not listed", "languages: {python: {version: '3.0', versions: {'1.0': {command: x}}}}\n", `"3.0" is not one of its versions (1.0)`},
		{"nothing to run", "languages: {python: {version: '1.0', versions: {'1.0': {}}}}\n", "needs an image (docker) or a command"},
		{"balancer without secret", lang + "balancer: {address: 'http://127.0.0.1:8080'}\n", "balancer.secret is required"},
		{"balancer not a URL", lang + "balancer: {address: '127.0.0.1:8080', secret: x}\n", "must be an http://"},
		{"bad threshold", lang + "health: {threshold: -1}\n", "health.threshold"},
		{"bad error rate", lang + "auto: {enabled: true, metrics_url: 'http://x/metrics', max_error_rate: 2}\n", "max_error_rate"},
		{"auto without metrics", lang + "auto: {enabled: true}\n", "balancer.metrics_url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse([]byte(tt.yaml))
			require.ErrorIs(t, err, rollout.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mm.yaml")
	require.NoError(t, os.WriteFile(path, []byte(goodYAML), 0o600))
	_, err := config.Load(path)
	require.NoError(t, err)

	_, err = config.Load(filepath.Join(dir, "missing.yaml"))
	require.ErrorIs(t, err, rollout.ErrInvalidConfig)

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(strings.Replace(goodYAML, "threshold: 2", "threshold: two", 1)), 0o600))
	_, err = config.Load(bad)
	require.ErrorIs(t, err, rollout.ErrInvalidConfig)
	assert.Contains(t, err.Error(), bad, "the error names the file")
}

// TestSecretFile: the balancer's secret may live in a file of its
// own (relative to the configuration), not in the configuration.
func TestSecretFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secret"), []byte("  from-a-file\n"), 0o600))
	cfg := filepath.Join(dir, "mm.yaml")
	body := "languages: {python: {version: '1.0', versions: {'1.0': {command: linter}}}}\nmax_machines_per_language: 4\nmax_machines: -1\n"
	require.NoError(t, os.WriteFile(cfg, []byte(body+"balancer: {address: 'http://127.0.0.1:8080', secret_file: secret}\n"), 0o600))
	c, err := config.Load(cfg)
	require.NoError(t, err)
	assert.Equal(t, "from-a-file", c.Balancer.Secret)
	assert.Equal(t, 4, c.Options().MaxMachinesPerLanguage)
	assert.Equal(t, -1, c.Options().MaxMachines)

	require.NoError(t, os.WriteFile(cfg, []byte(body+"balancer: {address: 'http://127.0.0.1:8080', secret_file: missing}\n"), 0o600))
	_, err = config.Load(cfg)
	assert.ErrorIs(t, err, rollout.ErrInvalidConfig)
	require.NoError(t, os.WriteFile(cfg, []byte(body+"balancer: {address: 'http://127.0.0.1:8080', secret_file: secret, secret: x}\n"), 0o600))
	_, err = config.Load(cfg)
	assert.ErrorContains(t, err, "both set")
}

// TestScrapesWithTheBalancerSecret: the automatic mode's scrape of
// a balancer's /metrics gives the balancer's secret — to that host only.
func TestScrapesWithTheBalancerSecret(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("X-Secret-Key"))
		if r.Header.Get("X-Secret-Key") != "s3cret" {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		_, _ = io.WriteString(w, "# TYPE fleetkit_balancer_requests_total counter\nfleetkit_balancer_requests_total{language=\"python\",version=\"2.0\",code=\"200\"} 4\n")
	}))
	t.Cleanup(srv.Close)
	lang := "languages: {python: {version: '1.0', versions: {'1.0': {command: linter}, '2.0': {command: linter}}}}\n"
	for _, tt := range []struct {
		balancer string
		ok       bool
	}{
		{srv.URL, true},
		{"http://127.0.0.2:1", false}, // another host: no secret sent
	} {
		c, err := config.Parse([]byte(lang + fmt.Sprintf("balancer: {address: %q, secret: s3cret}\nauto: {enabled: true, metrics_url: %q}\n", tt.balancer, srv.URL+"/metrics")))
		require.NoError(t, err)
		got, err := c.Options().Metrics.Sample(context.Background(), "python")
		if tt.ok {
			require.NoError(t, err)
			assert.Equal(t, 4.0, got["2.0"].Requests)
		} else {
			assert.Error(t, err)
		}
	}
	assert.Equal(t, []string{"s3cret", ""}, seen)
}
