package main

import (
	"context"
	"net"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/fleetkit/fleetkit/balancer"
)

// replicaServer is an in-process balancer replica with its admin API.
func replicaServer(t *testing.T) (*balancer.Balancer, string, int32) {
	t.Helper()
	b, err := balancer.New(balancer.Options{})
	require.NoError(t, err)
	admin, err := balancer.NewAdmin(b, balancer.AdminOptions{Secret: "s"})
	require.NoError(t, err)
	srv := httptest.NewServer(admin)
	t.Cleanup(srv.Close)
	host, port, err := net.SplitHostPort(srv.Listener.Addr().String())
	require.NoError(t, err)
	p, err := strconv.Atoi(port)
	require.NoError(t, err)
	return b, host, int32(p)
}

// endpointSlice is Service lb's slice of one ready endpoint (one slice per
// replica: each in-process replica has its own port).
func endpointSlice(name, ip string, port int32) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: map[string]string{discoveryv1.LabelServiceName: "lb"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{ip}, Conditions: discoveryv1.EndpointConditions{Ready: new(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: new("admin"), Port: new(port)}},
	}
}

// The manager's changes reach every replica behind the Service; Routes
// shows where they differ, so that the reconciler puts them in step; a
// replica that appears changes the Generation.
func TestReplicas(t *testing.T) {
	ctx := t.Context()
	a, aIP, aPort := replicaServer(t)
	b, bIP, bPort := replicaServer(t)
	cs := fake.NewClientset(endpointSlice("lb-a", aIP, aPort), endpointSlice("lb-b", bIP, bPort),
		&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "ns",
			Labels: map[string]string{discoveryv1.LabelServiceName: "other"}}})
	r, err := newReplicas(ctx, cs, "ns", "lb", "admin", "s")
	require.NoError(t, err)
	t.Cleanup(r.Close)

	require.NoError(t, r.AddBackend(ctx, "python", "1.0", "http://10.0.0.1:8080"))
	require.NoError(t, r.AddBackend(ctx, "python", "1.0", "http://10.0.0.2:8080"))
	require.NoError(t, r.SetRatio(ctx, "python", map[string]int{"1.0": 100}))
	for _, bal := range []*balancer.Balancer{a, b} {
		held, ratio, err := bal.Routes(ctx, "python")
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"http://10.0.0.1:8080": "1.0", "http://10.0.0.2:8080": "1.0"}, held)
		assert.Equal(t, map[string]int{"1.0": 100}, ratio)
	}
	held, ratio, err := r.Routes(ctx, "python")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"http://10.0.0.1:8080": "1.0", "http://10.0.0.2:8080": "1.0"}, held, "in step")
	assert.Equal(t, map[string]int{"1.0": 100}, ratio)

	// Replica b lost a backend and has another ratio (restarted, changed by hand).
	require.NoError(t, b.RemoveBackend(ctx, "http://10.0.0.2:8080"))
	require.NoError(t, b.AddBackend(ctx, "python", "2.0", "http://10.0.0.3:8080"))
	require.NoError(t, b.SetRatio(ctx, "python", map[string]int{"1.0": 50, "2.0": 50}))
	held, ratio, err = r.Routes(ctx, "python")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"http://10.0.0.1:8080": "1.0", "http://10.0.0.2:8080": "", "http://10.0.0.3:8080": ""}, held,
		"what a replica lacks or holds alone has no version: the reconciler adds it again or removes it")
	assert.Nil(t, ratio, "the replicas disagree: the reconciler sets it again")

	require.NoError(t, r.RemoveBackend(ctx, "http://10.0.0.3:8080"), "one replica held it")
	require.ErrorIs(t, r.RemoveBackend(ctx, "http://10.0.0.3:8080"), balancer.ErrUnknownBackend, "no replica holds it")

	// A new replica: the Generation changes (the manager reconciles at once).
	gen, err := r.Generation(ctx)
	require.NoError(t, err)
	c, cIP, cPort := replicaServer(t)
	_, err = cs.DiscoveryV1().EndpointSlices("ns").Create(ctx, endpointSlice("lb-c", cIP, cPort), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		g, err := r.Generation(ctx)
		return err == nil && g != gen
	}, 10*time.Second, 10*time.Millisecond)
	held, _, err = r.Routes(ctx, "python")
	require.NoError(t, err)
	assert.Empty(t, held["http://10.0.0.1:8080"], "the new replica holds nothing yet")
	require.NoError(t, r.AddBackend(ctx, "python", "1.0", "http://10.0.0.1:8080"))
	held, _, err = c.Routes(ctx, "python")
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"http://10.0.0.1:8080": "1.0"}, held)

	// No ready replica: an error, not an empty fleet.
	for _, n := range []string{"lb-a", "lb-b", "lb-c"} {
		require.NoError(t, cs.DiscoveryV1().EndpointSlices("ns").Delete(ctx, n, metav1.DeleteOptions{}))
	}
	require.Eventually(t, func() bool {
		_, _, err := r.Routes(context.Background(), "python")
		return err != nil
	}, 10*time.Second, 10*time.Millisecond)
	_, _, err = r.Routes(ctx, "python")
	assert.ErrorIs(t, err, errNoReplica)
}
