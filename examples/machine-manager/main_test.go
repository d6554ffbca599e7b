package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/examples/machine-manager/config"
)

// The shipped example configuration is valid for both providers.
func TestExampleConfig(t *testing.T) {
	cfg, err := config.Load("example.yaml")
	require.NoError(t, err)
	require.NoError(t, cfg.RequireRunnable("docker"))
	require.NoError(t, cfg.RequireRunnable("process"))
	require.Len(t, cfg.Languages, 2)
}
