// Package dockertest gives tests a client of the local Docker Engine, or
// reports the engine missing through internal/testenv (a skip with the
// reason, a failure under CI=true).
package dockertest

import (
	"context"
	"testing"
	"time"

	"github.com/docker/docker/client"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/internal/testenv"
)

// Engine returns a client of the engine the environment names (DOCKER_HOST
// and friends), closed when the test ends. The ping also settles the API
// version before the client is used concurrently.
func Engine(t testing.TB) *client.Client {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		_ = cli.Close()
		testenv.Missing(t, "the Docker Engine is unreachable (%v)", err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}
