package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDevKeyTooShort: a development key file holding less than a key is a
// clear error naming the file (it used to recurse until the stack
// overflowed).
func TestDevKeyTooShort(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("FLEETKIT_CACHE", cache)
	path := filepath.Join(cache, "fleet-manager", "dev-secret")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o700))
	require.NoError(t, os.WriteFile(path, []byte("short\n"), 0o600))
	_, err := devSecret()
	require.Error(t, err)
	assert.Contains(t, err.Error(), path)
	assert.Contains(t, err.Error(), "remove it")
	assert.Error(t, run(context.Background(), []string{"token", "-user", "alice"}, &bytes.Buffer{}))

	require.NoError(t, os.Remove(path))
	k1, err := devSecret()
	require.NoError(t, err)
	k2, err := devSecret()
	require.NoError(t, err)
	assert.Equal(t, k1, k2, "made once, then read")
	assert.Len(t, k1, devSecretLen)
}

// TestDatabaseURLOffTheCommandLine: the database URL (which may carry a
// password) comes from the environment or a file as well as the flag, and
// -h says so.
func TestDatabaseURLOffTheCommandLine(t *testing.T) {
	var help bytes.Buffer
	require.True(t, errors.Is(run(context.Background(), []string{"-h"}, &help), flag.ErrHelp))
	assert.Contains(t, help.String(), envDatabaseURL)
	assert.Contains(t, help.String(), "-database-url-file")

	t.Setenv("FLEETKIT_CACHE", t.TempDir())
	fromEnv := filepath.Join(t.TempDir(), "env.db")
	t.Setenv(envDatabaseURL, fromEnv)
	start(t, "-provider", "memory").stop()
	assert.FileExists(t, fromEnv, "the store named by the environment")

	fromFile := filepath.Join(t.TempDir(), "file.db")
	urlFile := filepath.Join(t.TempDir(), "database-url")
	require.NoError(t, os.WriteFile(urlFile, []byte(fromFile+"\n"), 0o600))
	start(t, "-provider", "memory", "-database-url-file", urlFile).stop()
	assert.FileExists(t, fromFile, "the store named by the file, over the environment")

	assert.Error(t, run(context.Background(), []string{"-database-url", fromFile, "-database-url-file", urlFile}, &bytes.Buffer{}))
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	assert.Error(t, run(context.Background(), []string{"-database-url-file", empty}, &bytes.Buffer{}))
}
