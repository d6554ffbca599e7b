package rollout_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/rollout"
)

func TestStateRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	got, err := rollout.LoadState(path)
	require.NoError(t, err, "a missing file is an empty state")
	assert.Empty(t, got.Phases)
	assert.Empty(t, got.Machines)

	want := rollout.State{Phases: map[string]rollout.Phase{
		"python": {Current: "1.0", Target: "2.0", Step: 2, Changed: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		"java":   {Current: "2.0", Previous: "1.0"},
	}, Machines: map[string]int{"python": 10, "java": 0}}
	require.NoError(t, rollout.SaveState(path, want))
	got, err = rollout.LoadState(path)
	require.NoError(t, err)
	assert.Equal(t, want, got)

	// Overwrite: the file is replaced, no temporary file stays behind.
	want.Phases["python"] = rollout.Phase{Current: "2.0", Previous: "1.0"}
	require.NoError(t, rollout.SaveState(path, want))
	got, err = rollout.LoadState(path)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1)
	assert.Equal(t, "state.json", entries[0].Name())
}

func TestLoadStateErrors(t *testing.T) {
	tests := []struct {
		name, content, err string
	}{
		{"not json", "{", "state file"},
		{"wrong format version", `{"version": 7, "languages": {}}`, "format version 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.json")
			require.NoError(t, os.WriteFile(path, []byte(tt.content), 0o600))
			_, err := rollout.LoadState(path)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func TestSaveStateFailsInMissingDir(t *testing.T) {
	err := rollout.SaveState(filepath.Join(t.TempDir(), "no", "such", "dir", "state.json"), rollout.State{})
	require.Error(t, err)
}
