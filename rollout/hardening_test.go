package rollout_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/rollout"
)

// machinesOf returns how many machines the provider holds.
func (f *fixture) machines() int {
	f.t.Helper()
	all, err := f.provider.List(context.Background(), nil)
	require.NoError(f.t, err)
	return len(all)
}

// TestHTTPRequiresJSON: a mutating call whose body is not declared JSON is
// 415 and does nothing, so no cross-site form (text/plain, a form
// encoding) can start a machine.
func TestHTTPRequiresJSON(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	api := newAPI(t, f)
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "application/jsonx", "text/json"} {
		t.Run(ct, func(t *testing.T) {
			api.header.Set("Content-Type", ct)
			for _, path := range []string{"/create", "/init-update", "/update", "/rollback", "/remove"} {
				code, ans, raw := api.do("POST", path, `{"lang":"python","version":"2.0","ip":"127.0.0.1:1"}`)
				require.Equal(t, http.StatusUnsupportedMediaType, code, "%s: %s", path, raw)
				assert.Equal(t, "error", ans["status"])
				assert.Contains(t, ans["message"], "Content-Type must be application/json")
			}
			assert.Zero(t, f.machines(), "no machine started")
			ph, _ := f.mgr.Phase("python")
			assert.False(t, ph.Updating(), "no update started")
		})
	}
	api.header.Set("Content-Type", "application/json; charset=utf-8")
	code, _, raw := api.do("POST", "/create", `{"lang":"python"}`)
	require.Equal(t, http.StatusOK, code, raw)
}

// TestHTTPSecret: with a secret, a mutating call without it (or with a
// wrong one) is 403 and does nothing; reads stay open.
func TestHTTPSecret(t *testing.T) {
	const secret = "s3cret-for-the-manager"
	f := newFixture(t, rollout.Options{})
	api := newAPIWith(t, f, rollout.HandlerOptions{Secret: secret})
	for name, h := range map[string][2]string{
		"none":         {"", ""},
		"wrong":        {rollout.SecretHeader, "s3cret"},
		"wrong bearer": {"Authorization", "Bearer nope"},
		"not bearer":   {"Authorization", "Basic " + secret},
	} {
		t.Run(name, func(t *testing.T) {
			api.header = http.Header{}
			if h[0] != "" {
				api.header.Set(h[0], h[1])
			}
			code, ans, raw := api.do("POST", "/create", `{"lang":"python"}`)
			require.Equal(t, http.StatusForbidden, code, raw)
			assert.Contains(t, ans["message"], "wrong or missing secret")
			assert.NotContains(t, raw, secret)
			assert.Zero(t, f.machines())
		})
	}
	api.header = http.Header{}
	code, _, _ := api.do("GET", "/status", "")
	assert.Equal(t, http.StatusOK, code, "reads need no secret")
	api.header.Set(rollout.SecretHeader, secret)
	code, _, raw := api.do("POST", "/create", `{"lang":"python"}`)
	require.Equal(t, http.StatusOK, code, raw)
	api.header = http.Header{"Authorization": {"Bearer " + secret}}
	code, _, raw = api.do("POST", "/create", `{"lang":"java"}`)
	require.Equal(t, http.StatusOK, code, raw)
	assert.Equal(t, 2, f.machines())
}

// TestMachineCaps: Create stops at the per-language and the total cap
// with a 409 naming the setting.
func TestMachineCaps(t *testing.T) {
	f := newFixture(t, rollout.Options{MaxMachinesPerLanguage: 2, MaxMachines: 3})
	api := newAPI(t, f)
	for _, step := range []struct {
		lang string
		code int
		msg  string
	}{
		{"python", 200, ""},
		{"python", 200, ""},
		{"python", 409, "the most allowed per language (max_machines_per_language)"},
		{"java", 200, ""},
		{"java", 409, "the most allowed in all (max_machines)"},
	} {
		code, ans, raw := api.do("POST", "/create", `{"lang":"`+step.lang+`"}`)
		require.Equal(t, step.code, code, raw)
		if step.msg != "" {
			assert.Contains(t, ans["message"], step.msg)
		}
	}
	assert.Equal(t, 3, f.machines())
	// An update replaces machines within the caps.
	require.NoError(t, f.mgr.InitUpdate(context.Background(), "python", "2.0"))
	assert.Equal(t, map[string]int{"1.0": 1, "2.0": 1}, f.count("python"))

	f = newFixture(t, rollout.Options{MaxMachinesPerLanguage: -1, MaxMachines: -1})
	f.create("python", 40)
	assert.Equal(t, 40, f.machines(), "negative: no cap")
	f = newFixture(t, rollout.Options{})
	f.create("python", rollout.DefaultMaxMachinesPerLanguage)
	_, err := f.mgr.Create(context.Background(), "python")
	assert.ErrorIs(t, err, rollout.ErrTooManyMachines, "a default cap")
}

// TestStatusShowsEjected: a machine the balancer ejected is shown as out
// of rotation (with when it comes back) beside the manager's own health,
// which stays as the design says.
func TestStatusShowsEjected(t *testing.T) {
	f := newFixture(t, rollout.Options{})
	api := newAPI(t, f)
	addrs := f.create("python", 2)
	until := time.Date(2026, 11, 25, 12, 0, 30, 0, time.UTC)
	require.True(t, f.router.Eject(uri(addrs[0]), until))

	st, err := f.mgr.Status(context.Background())
	require.NoError(t, err)
	for _, l := range st.Languages {
		for _, m := range l.Machines {
			assert.True(t, m.Healthy, "the manager's health is its own")
			assert.Equal(t, m.Address == addrs[0], m.Ejected, m.Address)
		}
	}
	_, ans, raw := api.do("GET", "/status", "")
	got := map[string]map[string]any{}
	for _, l := range ans["linters"].([]any) {
		for ip, v := range l.(map[string]any) {
			got[ip] = v.(map[string]any)
		}
	}
	assert.Equal(t, false, got[addrs[0]]["in_rotation"], raw)
	assert.Equal(t, "2026-11-25T12:00:30Z", got[addrs[0]]["ejected_until"], raw)
	assert.Equal(t, true, got[addrs[0]]["is_healthy"], raw)
	assert.Equal(t, true, got[addrs[1]]["in_rotation"], raw)
	_, _, page := api.do("GET", "/", "")
	assert.Contains(t, page, "ejected")
	assert.Contains(t, page, "back at 12:00:30 UTC")
}

// TestMetricLabelsBounded: thousands of calls with invented languages,
// paths and methods add no metric series.
func TestMetricLabelsBounded(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newFixture(t, rollout.Options{Registerer: reg})
	api := newAPI(t, f)
	f.create("python", 1)
	series := func() int {
		mfs, err := reg.Gather()
		require.NoError(t, err)
		n := 0
		for _, mf := range mfs {
			n += len(mf.GetMetric())
		}
		return n
	}
	before := series()
	for i := range 2000 {
		code, _, _ := api.do("POST", "/create", fmt.Sprintf(`{"lang":"lang%d"}`, i))
		require.Equal(t, http.StatusNotFound, code)
		code, _, _ = api.do(fmt.Sprintf("X%dX", i), "/"+strings.Repeat("p", i%50), "")
		require.NotEqual(t, http.StatusOK, code)
	}
	assert.Equal(t, before, series())
}
