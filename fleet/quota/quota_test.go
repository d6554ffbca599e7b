package quota_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet/quota"
)

func TestQuotaList(t *testing.T) {
	q, err := quota.ParseList([]byte(`
organisations:
  - id: acme
    max_allowed_instances: 3
    instance_types: [standard]
registered_users:
  - username: alice
    max_allowed_instances: 1
`))
	require.NoError(t, err)
	tests := []struct {
		name string
		req  quota.Request
		want error
	}{
		{"user under max", quota.Request{Owner: "alice", InstanceType: "developer", Live: 0}, nil},
		{"user at max", quota.Request{Owner: "alice", InstanceType: "developer", Live: 1}, quota.ErrMaxInstances},
		{"org member", quota.Request{Owner: "bob", Organisation: "acme", InstanceType: "standard", Live: 2}, nil},
		{"org at max", quota.Request{Owner: "bob", Organisation: "acme", InstanceType: "standard", Live: 3}, quota.ErrMaxInstances},
		{"org: a 2-unit size fits the last 2 units", quota.Request{Owner: "bob", Organisation: "acme", InstanceType: "standard", Live: 1, Units: 2}, nil},
		{"org: a 2-unit size over the last unit", quota.Request{Owner: "bob", Organisation: "acme", InstanceType: "standard", Live: 2, Units: 2}, quota.ErrMaxInstances},
		{"org type not allowed", quota.Request{Owner: "bob", Organisation: "acme", InstanceType: "developer"}, quota.ErrInsufficient},
		{"unknown user, no default", quota.Request{Owner: "eve", InstanceType: "standard"}, quota.ErrInsufficient},
		{"registered user in an unknown org", quota.Request{Owner: "alice", Organisation: "other", InstanceType: "standard"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := q.CheckQuota(context.Background(), tt.req)
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.want)
		})
	}
	_, err = quota.ParseList([]byte("organisations: [{id: x, max_allowed: 1}]"))
	assert.ErrorIs(t, err, quota.ErrInvalid, "unknown fields are refused")
}

func TestDenyList(t *testing.T) {
	path := filepath.Join(t.TempDir(), "deny.yaml")
	require.NoError(t, os.WriteFile(path, []byte("users: [mallory]\norganisations: [evil]\n"), 0o600))
	d, err := quota.LoadDenyList(path)
	require.NoError(t, err)
	assert.True(t, d.Denied("mallory", ""))
	assert.True(t, d.Denied("bob", "evil"))
	assert.False(t, d.Denied("bob", "acme"))
	assert.False(t, d.Denied("bob", ""))
}
