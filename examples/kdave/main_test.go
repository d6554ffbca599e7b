package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }

// TestLinksOnlyDeprecation: the kdave binary must not link Helm, client-go
// or kustomize; they are what made a check start at 70 MB of resident
// memory.
func TestLinksOnlyDeprecation(t *testing.T) {
	goBin := testenv.LookPath(t, "go")
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	require.NoError(t, err)
	for _, dep := range strings.Fields(string(out)) {
		for _, heavy := range []string{"helm.sh/", "k8s.io/client-go", "k8s.io/apimachinery", "sigs.k8s.io/kustomize", "github.com/docker"} {
			assert.False(t, strings.HasPrefix(dep, heavy), "kdave links %s", dep)
		}
	}
}

// TestDelegatesToFull builds both binaries and runs kdave for what only
// kdave-full can do: found next to kdave, through $KDAVE_FULL, or not at
// all (a clear error).
func TestDelegatesToFull(t *testing.T) {
	testenv.Short(t)
	goBin := testenv.LookPath(t, "go")
	dir := t.TempDir()
	for name, pkg := range map[string]string{"kdave": ".", "kdave-full": "./kdave-full"} {
		out, err := exec.Command(goBin, "build", "-o", filepath.Join(dir, name), pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	kdave := filepath.Join(dir, "kdave")
	const repo = "../../deprecation/gitops/testdata/fleet"
	runBin := func(bin string, env []string, args ...string) (int, string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), append([]string{"KDAVE_FULL=", "PATH=/nonexistent"}, env...)...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else {
			require.NoError(t, err)
		}
		return code, out.String(), errOut.String()
	}

	code, out, errOut := runBin(kdave, nil, "check", "-flux", repo, "-o", "wide")
	assert.Equal(t, 4, code, "stderr: %s", errOut)
	assert.Contains(t, out, "PodSecurityPolicy", "kdave-full next to kdave built the repository")

	code, _, errOut = runBin(kdave, nil, "serve", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, errOut, "usage: kdave serve")

	// Alone, kdave says what it needs; with $KDAVE_FULL it finds it.
	alone := t.TempDir()
	data, err := os.ReadFile(kdave)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(alone, "kdave"), data, 0o755))
	code, _, errOut = runBin(filepath.Join(alone, "kdave"), nil, "check", "-cluster")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "kdave: check needs kdave-full (go build ./examples/kdave/kdave-full)")
	code, out, _ = runBin(filepath.Join(alone, "kdave"), []string{"KDAVE_FULL=" + filepath.Join(dir, "kdave-full")}, "check", "-flux", repo, "-o", "csv", "-columns", "KIND")
	assert.Equal(t, 4, code)
	assert.True(t, strings.HasPrefix(out, "KIND\n"), out)

	// Manifests never leave kdave.
	code, out, _ = runBin(filepath.Join(alone, "kdave"), nil, "check", "-target", "v1.25", "../../deprecation/testdata/manifests/legacy-app.yaml")
	assert.Equal(t, 4, code)
	assert.Contains(t, out, "shop-restricted")
}
