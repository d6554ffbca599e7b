package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// linterPackage is the linter service the machines run.
const linterPackage = "github.com/fleetkit/fleetkit/examples/linter"

// findLinter returns the linter binary the process provider runs:
//
//  1. the -linter-bin flag, when given;
//  2. a "linter" executable next to the quickstart's own executable (an
//     installed pair: go build -o bin/ ./examples/...);
//  3. otherwise it builds examples/linter with the go tool into the user's
//     cache directory (os.UserCacheDir()/fleetkit/bin/linter), which needs
//     the fleetkit module at hand, as with `go run ./examples/quickstart`.
//     The go build cache makes later starts quick.
func findLinter(ctx context.Context, flagValue string) (path, how string, err error) {
	exe := "linter"
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	if flagValue != "" {
		p, err := exec.LookPath(flagValue)
		if err != nil {
			return "", "", fmt.Errorf("-linter-bin: %w", err)
		}
		return p, "given by -linter-bin", nil
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), exe)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, "found next to the quickstart", nil
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "fleetkit", "bin")
	p, err := buildLinter(ctx, dir, exe)
	if err != nil {
		return "", "", err
	}
	return p, "built into " + dir, nil
}

// buildLinter runs go build for the linter into dir/exe, atomically.
func buildLinter(ctx context.Context, dir, exe string) (string, error) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("the linter binary is needed: pass -linter-bin, put a linter next to the quickstart, or install the go tool to build it")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, ".linter-*")
	if err != nil {
		return "", err
	}
	_ = tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", tmp.Name(), linterPackage)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s (run from the fleetkit module, or pass -linter-bin): %v\n%s",
			linterPackage, err, strings.TrimSpace(string(out)))
	}
	dst := filepath.Join(dir, exe)
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", err
	}
	return dst, nil
}
