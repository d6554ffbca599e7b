package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// TestLargeAnswersKeepLintersInRotation is the case on the real
// fleet: six lints of a 400 KB Python file of 100,000 "x=1" lines (each
// answer over the balancer's 8 MiB buffer), then twenty ordinary lints.
// Every answer is a whole 200, and both linters stay in rotation and
// healthy in the manager's view.
func TestLargeAnswersKeepLintersInRotation(t *testing.T) {
	st := startFleet(t, 2, 100*time.Millisecond, nil, "")
	body, _ := json.Marshal(map[string]string{"code": strings.Repeat("x=1\n", 100_000)})
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			resp, err := httpClient.Post(st.LBURL+"/lint/python", "application/json", bytes.NewReader(body))
			if !assert.NoError(t, err) {
				return
			}
			defer resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			data, err := io.ReadAll(resp.Body)
			assert.NoError(t, err)
			assert.Greater(t, len(data), balancer.DefaultMaxResponseBody, "an answer over the buffer")
			var ans struct {
				Diagnostics []json.RawMessage `json:"diagnostics"`
			}
			assert.NoError(t, json.Unmarshal(data, &ans), "a whole answer")
			assert.GreaterOrEqual(t, len(ans.Diagnostics), 100_000, "one finding per line at least")
		})
	}
	wg.Wait()
	assert.Equal(t, map[int]int{200: 20}, lintN(t, st, "python", "print('hello world')\n", 20))
	ej, err := st.Balancer.EjectedBackends(context.Background())
	require.NoError(t, err)
	assert.Empty(t, ej, "no linter ejected")
	for ip, l := range status(t, st) {
		assert.True(t, l.IsHealthy, ip)
	}
}

// TestStatusShowsTheBalancersEjections: a linter the balancer's passive
// health ejected is shown out of rotation on the manager's /status (and
// page), while the manager's own health of it stays.
func TestStatusShowsTheBalancersEjections(t *testing.T) {
	st := startFleet(t, 2, 100*time.Millisecond, nil, "")
	var victim *balancer.Backend
	for victim == nil {
		be, err := st.Balancer.Pick("java")
		require.NoError(t, err)
		victim = be
	}
	for range balancer.DefaultEjectAfter {
		st.Balancer.ReportFailure(victim)
	}
	resp, err := httpClient.Get(st.MMURL + "/status")
	require.NoError(t, err)
	defer resp.Body.Close()
	var ans struct {
		Linters []map[string]struct {
			IsHealthy    bool    `json:"is_healthy"`
			InRotation   bool    `json:"in_rotation"`
			EjectedUntil *string `json:"ejected_until"`
		} `json:"linters"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ans))
	seen := 0
	for _, l := range ans.Linters {
		for ip, m := range l {
			assert.True(t, m.IsHealthy, ip)
			if "http://"+ip == victim.URI {
				seen++
				assert.False(t, m.InRotation, "ejected")
				assert.NotNil(t, m.EjectedUntil)
			} else {
				assert.True(t, m.InRotation, ip)
			}
		}
	}
	assert.Equal(t, 1, seen)
	page, err := httpClient.Get(st.MMURL + "/")
	require.NoError(t, err)
	defer page.Body.Close()
	b, _ := io.ReadAll(page.Body)
	assert.Contains(t, string(b), "passive health")
}

// TestMachineManagerRefusesCrossSite: the quickstart's manager (open on
// loopback, as the wire contract has it) refuses a text/plain body, which a
// cross-site form could send, and starts no machine.
func TestMachineManagerRefusesCrossSite(t *testing.T) {
	st := startFleet(t, 0, 100*time.Millisecond, nil, "")
	resp, err := httpClient.Post(st.MMURL+"/create", "text/plain", strings.NewReader(`{"lang":"python"}`))
	require.NoError(t, err)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)
	assert.Empty(t, status(t, st))
}
