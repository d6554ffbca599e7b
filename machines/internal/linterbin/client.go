package linterbin

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/machines"
)

// Spec returns what every provider's linter machine of language and
// version has in common, as rollout builds it: its name, the linter's
// command line and the linter's labels. The caller adds the provider's
// part (Command, Image) and the rest.
func Spec(language, version string) machines.Spec {
	return machines.Spec{
		Name:   language + "-" + version,
		Args:   linter.Args(language, version, "{addr}"),
		Labels: map[string]string{linter.LabelLanguage: language, linter.LabelVersion: version},
	}
}

// LanguageVersion returns the language and version m's labels say it serves.
func LanguageVersion(m machines.Machine) (language, version string) {
	return m.Labels[linter.LabelLanguage], m.Labels[linter.LabelVersion]
}

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

// client asks the machines without keeping connections: a container
// removed behind a NAT sends no FIN, and an idle connection to it would
// outlive the tests (the goroutine leak check sees it).
var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}

// GetHealth asks m for its health and returns the status and the answer.
func GetHealth(t testing.TB, m machines.Machine) (int, Health) {
	t.Helper()
	resp, err := client.Get(m.URL() + "/health")
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
	resp, err := client.Post(m.URL()+"/lint", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var a LintAnswer
	_ = json.Unmarshal(raw, &a)
	return resp.StatusCode, a
}
