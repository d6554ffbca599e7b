package dataplane_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/dataplane"
	"github.com/fleetkit/fleetkit/fleet/fleettest"
	"github.com/fleetkit/fleetkit/fleet/sqlite"
	"github.com/fleetkit/fleetkit/fleet/storetest"
	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/machinestest"
)

func spec(i fleet.Instance) machines.Spec {
	// machinestest's fake linter needs a language: an empty kind is a spec
	// the data plane refuses.
	return machines.Spec{Args: linter.Args(i.Kind, "1.0", "{addr}"), Labels: map[string]string{"fleet.name": i.Name}}
}

func TestLifecycleOnMachines(t *testing.T) {
	p := machinestest.New(machinestest.Options{})
	t.Cleanup(func() { _ = p.Close() })
	dp, err := dataplane.New(dataplane.Options{Providers: map[string]machines.Provider{"local": p}, Spec: spec})
	require.NoError(t, err)
	st, err := sqlite.Open(context.Background(), ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	h := storetest.NewHarness(t, st, func(o *storetest.HarnessOptions) { o.DataPlane = dp })
	alice := fleettest.User{Name: "alice"}

	r := h.Client.Do(t, alice, http.MethodPost, "dinosaurs?async=true", map[string]any{"name": "rex"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	id := r.Str("id")
	host := h.Client.WaitStatus(t, alice, id, "ready", 20*time.Second).Str("host")
	health := func(host string) int {
		resp, err := http.Get("http://" + host + "/health")
		if err != nil {
			return 0
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, health(host), "a ready instance is a running machine")
	ms, err := p.List(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	assert.Equal(t, id, ms[0].Labels[dataplane.LabelInstance])
	assert.Equal(t, "rex", ms[0].Labels["fleet.name"])

	// The machine dies: the ready worker runs a new one.
	require.NoError(t, p.Kill(ms[0].ID))
	var newHost string
	require.Eventually(t, func() bool {
		newHost = h.Client.Do(t, alice, http.MethodGet, "dinosaurs/"+id, nil).Str("host")
		return newHost != host && health(newHost) == http.StatusOK
	}, 20*time.Second, 10*time.Millisecond)

	require.Equal(t, http.StatusAccepted, h.Client.Do(t, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil).Status)
	h.Client.WaitStatus(t, alice, id, "gone", 20*time.Second)
	ms, err = p.List(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, ms, "deleting removes the machines")
}

func TestApply(t *testing.T) {
	p := machinestest.New(machinestest.Options{})
	t.Cleanup(func() { _ = p.Close() })
	dp, err := dataplane.New(dataplane.Options{Providers: map[string]machines.Provider{"local": p}, Spec: spec})
	require.NoError(t, err)
	ctx := context.Background()
	inst := fleet.Instance{ID: "i1", Kind: "dinosaur", Name: "rex", ClusterID: "local"}

	first, err := dp.Apply(ctx, inst)
	require.NoError(t, err)
	require.True(t, first.Ready)
	again, err := dp.Apply(ctx, inst)
	require.NoError(t, err)
	assert.Equal(t, first.Host, again.Host, "idempotent: one machine per instance")
	ms, err := p.List(ctx, nil)
	require.NoError(t, err)
	assert.Len(t, ms, 1)

	s, err := dp.Apply(ctx, fleet.Instance{ID: "i2", ClusterID: "elsewhere"})
	require.NoError(t, err)
	assert.Contains(t, s.FailedReason, "no machine provider")

	s, err = dp.Apply(ctx, fleet.Instance{ID: "i3", Kind: "", ClusterID: "local"}) // empty language: invalid spec
	require.NoError(t, err)
	assert.Contains(t, s.FailedReason, "refused")

	p.FailCreates(1, nil)
	_, err = dp.Apply(ctx, fleet.Instance{ID: "i4", Kind: "dinosaur", ClusterID: "local"})
	require.ErrorIs(t, err, machines.ErrStartTimeout, "a failed start is retried, not terminal")

	require.NoError(t, dp.Remove(ctx, inst))
	require.NoError(t, dp.Remove(ctx, inst), "idempotent")
	ms, err = p.List(ctx, nil)
	require.NoError(t, err)
	assert.Empty(t, ms)

	_, err = dataplane.New(dataplane.Options{Spec: spec})
	assert.ErrorIs(t, err, fleet.ErrInvalid)
	_, err = dataplane.New(dataplane.Options{Providers: map[string]machines.Provider{"local": p}})
	assert.ErrorIs(t, err, fleet.ErrInvalid)
}
