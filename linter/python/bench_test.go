package python_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/linter/python"
)

// BenchmarkLint lints the top level of the standard library (or, where it
// is not installed, testdata) once per iteration, with every check on.
func BenchmarkLint(b *testing.B) {
	paths, _ := filepath.Glob(filepath.Join(stdlibRoot, "*.py"))
	if len(paths) == 0 {
		paths, _ = filepath.Glob(filepath.Join("testdata", "agree", "*.py"))
	}
	require.NotEmpty(b, paths)
	var srcs []linter.Source
	lines, size := 0, 0
	for _, p := range paths {
		code, err := os.ReadFile(p)
		require.NoError(b, err)
		srcs = append(srcs, linter.Source{Name: p, Code: code})
		lines += bytes.Count(code, []byte("\n"))
		size += len(code)
	}
	l, err := python.New(linter.Config{})
	require.NoError(b, err)
	ctx := context.Background()
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, src := range srcs {
			if _, err := l.Lint(ctx, src); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
	b.ReportMetric(float64(len(srcs)), "files/op")
}
