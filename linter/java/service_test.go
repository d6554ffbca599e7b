package java

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fleetkit/fleetkit/linter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServiceConfig serves Java through linter.Service: the checkstyle
// configuration is chosen per machine (ServiceOptions.Config) or per
// request ("options": {"config": ...}), and what it names that is not
// implemented comes back in "unsupported".
func TestServiceConfig(t *testing.T) {
	lang := Language()
	serve := func(t *testing.T, machine linter.Config) *httptest.Server {
		l, err := lang.New(machine)
		require.NoError(t, err)
		svc, err := linter.NewService(linter.ServiceOptions{Language: "java", Version: linter.Version20, Linter: l, Config: machine, New: lang.New})
		require.NoError(t, err)
		srv := httptest.NewServer(svc)
		t.Cleanup(srv.Close)
		return srv
	}
	post := func(t *testing.T, srv *httptest.Server, body any) (int, linter.LintResponse) {
		b, err := json.Marshal(body)
		require.NoError(t, err)
		resp, err := http.Post(srv.URL+"/lint", "application/json", bytes.NewReader(b))
		require.NoError(t, err)
		defer resp.Body.Close()
		var lr linter.LintResponse
		if resp.StatusCode == http.StatusOK {
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&lr))
		}
		return resp.StatusCode, lr
	}
	// A file of 2,001 lines: FileLength is in sun_checks, not in the default.
	long := "class A {\n" + string(bytes.Repeat([]byte("\n"), 1999)) + "}\n"
	codes := func(lr linter.LintResponse) []string {
		var cs []string
		for _, d := range lr.Diagnostics {
			cs = append(cs, d.Code)
		}
		return cs
	}

	t.Run("per request", func(t *testing.T) {
		srv := serve(t, linter.Config{})
		status, lr := post(t, srv, map[string]any{"code": long})
		require.Equal(t, http.StatusOK, status)
		assert.NotContains(t, codes(lr), FileLength)
		assert.Empty(t, lr.Unsupported)

		status, lr = post(t, srv, map[string]any{"code": long, "config": map[string]any{"options": map[string]string{OptionConfig: SunChecks}}})
		require.Equal(t, http.StatusOK, status)
		assert.Contains(t, codes(lr), FileLength)
		assert.Contains(t, lr.Unsupported, "module JavadocPackage is not implemented")

		status, _ = post(t, srv, map[string]any{"code": long, "config": map[string]any{"options": map[string]string{OptionConfig: "<module name="}}})
		assert.Equal(t, http.StatusBadRequest, status, "a configuration that does not parse is the client's error")
	})
	t.Run("per machine", func(t *testing.T) {
		srv := serve(t, linter.Config{Options: map[string]string{OptionConfig: SunChecks}})
		status, lr := post(t, srv, map[string]any{"code": long})
		require.Equal(t, http.StatusOK, status)
		assert.Contains(t, codes(lr), FileLength)
		// A request's select applies over the machine's configuration.
		status, lr = post(t, srv, map[string]any{"code": long, "config": map[string]any{"select": []string{"RegexpSingleline"}}})
		require.Equal(t, http.StatusOK, status)
		assert.Empty(t, lr.Diagnostics)
	})
}
