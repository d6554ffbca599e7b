package java

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/fleetkit/fleetkit/linter"
)

// BenchmarkLint lints the JDK corpus of the agreement test (or, without
// the JDK sources, the files in testdata/corpus) and reports lines/s.
func BenchmarkLint(b *testing.B) {
	var srcs [][]byte
	if _, err := os.Stat(jdkSrcZip); err == nil {
		for _, p := range extractCorpus(b, b.TempDir()) {
			src, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			srcs = append(srcs, src)
		}
	}
	if len(srcs) == 0 {
		paths, _ := filepath.Glob("testdata/corpus/*.java")
		for _, p := range paths {
			src, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			srcs = append(srcs, src)
		}
	}
	lines := 0
	size := 0
	for _, s := range srcs {
		lines += countLines(s)
		size += len(s)
	}
	l, err := New(linter.Config{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.SetBytes(int64(size))
	b.ResetTimer()
	for b.Loop() {
		for _, s := range srcs {
			if _, err := l.Lint(ctx, linter.Source{Code: s}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

func countLines(s []byte) int {
	n := 0
	for _, c := range s {
		if c == '\n' {
			n++
		}
	}
	return n
}
