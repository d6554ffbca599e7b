package linterbin

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/machines"
)

// Health is the linter's GET /health answer.
type Health struct {
	Version      string `json:"version"`
	Language     string `json:"language"`
	RequestCount int64  `json:"requestCount"`
}

// LintAnswer is the part of the linter's POST /lint answer the provider
// tests read.
type LintAnswer struct {
	Result   bool   `json:"result"`
	Details  string `json:"details"`
	Language string `json:"language"`
	Version  string `json:"version"`
}

// GetHealth asks m for its health and returns the status and the answer.
func GetHealth(t testing.TB, m machines.Machine) (int, Health) {
	t.Helper()
	resp, err := http.Get(m.URL() + "/health")
	require.NoError(t, err)
	defer resp.Body.Close()
	var h Health
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&h))
	return resp.StatusCode, h
}

// Lint sends code to m and returns the status and the answer (zero when
// the body is not a lint answer, as for an error).
func Lint(t testing.TB, m machines.Machine, code string) (int, LintAnswer) {
	t.Helper()
	body, err := json.Marshal(map[string]string{"code": code})
	require.NoError(t, err)
	resp, err := http.Post(m.URL()+"/lint", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var a LintAnswer
	_ = json.Unmarshal(raw, &a)
	return resp.StatusCode, a
}
