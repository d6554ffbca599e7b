package python_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// longLine is the input of the report that found the linter quadratic: a
// list of non-ASCII strings without a space after the commas, each comma
// an E231, on one line of about size bytes, or (short) the same tokens
// one per line.
func longLine(size int, short bool) []byte {
	sep := ","
	if short {
		sep = ",\n"
	}
	n := size / len(",'é'")
	return []byte("x=['é'" + strings.Repeat(sep+"'é'", n) + "]\n")
}

// BenchmarkLongLine compares one long line with many findings against the
// same code over short lines: the time per byte must be of the same order
// (it was 25 times and growing with the length before columns were
// computed in constant time).
func BenchmarkLongLine(b *testing.B) {
	l, err := python.New(linter.Config{})
	require.NoError(b, err)
	for _, size := range []int{160 << 10, 320 << 10} {
		for _, short := range []bool{false, true} {
			src := longLine(size, short)
			name := fmt.Sprintf("%dKB/one-line", size>>10)
			if short {
				name = fmt.Sprintf("%dKB/short-lines", size>>10)
			}
			b.Run(name, func(b *testing.B) {
				benchLint(b, l, src)
			})
		}
	}
}

// hostile are inputs that made some check do work proportional to the
// square of a line's length (or of the file's), each a function of the
// input's size in bytes.
var hostile = map[string]func(n int) string{
	"non-ASCII-findings": func(n int) string { return string(longLine(n, false)) },
	"spaces-before-==":   func(n int) string { return "x ==" + strings.Repeat(" ", n) + "y\n" },
	"spaces-no-keyword":  func(n int) string { return "a" + strings.Repeat(" ", n) + "b  c\n" },
	"spaces-before-op":   func(n int) string { return "x" + strings.Repeat(" ", n) + "= 1\n" },
	"type-no-paren":      func(n int) string { return strings.Repeat("== type(", n/8) + "\n" },
	"escapes":            func(n int) string { return "'" + strings.Repeat("\\q", n/2) + "'\n" },
	"escapes-multiline":  func(n int) string { return "'''" + strings.Repeat("\\q\n", n/3) + "'''\n" },
	"colons":             func(n int) string { return "x" + strings.Repeat(":x", n/2) + "\n" },
	"long-word-colons":   func(n int) string { return strings.Repeat("x", n/2) + strings.Repeat(":x", n/4) + "\n" },
	"decorators":         func(n int) string { return strings.Repeat("@d\n", n/3) + "def f():\n    pass\n" },
	"methods": func(n int) string {
		return "class A:\n    x = 1\n" + strings.Repeat("    def f(self):\n        pass\n", n/30)
	},
	"decorated-lines":   func(n int) string { return strings.Repeat("@d\nx = 1\n", n/8) + "def f():\n    pass\n" },
	"deep-brackets":     func(n int) string { return "x = " + strings.Repeat("(", n/2) + "\n" + strings.Repeat(")", n/2) + "\n" },
	"open-then-close":   func(n int) string { return "x = " + strings.Repeat("[", n/4) + "\n" + strings.Repeat("x]\n", n/4) },
	"rows-in-brackets":  func(n int) string { return "x = [\n" + strings.Repeat("    1,\n", n/7) + "]\n" },
	"brackets-on-a-row": func(n int) string { return "x = [1,\n" + strings.Repeat("(1),", n/4) + "\n 2]\n" },
	"sibling-brackets":  func(n int) string { return "f(\n" + strings.Repeat("  g(\n", n/5) + ")\n" },
	"sibling-open-rows": func(n int) string { return "x = [\n" + strings.Repeat("    (1,\n     2),\n", n/18) + "]\n" },
	"close-far-chances": func(n int) string {
		return "x = [1,\n" + strings.Repeat("a, ", n/6) + strings.Repeat("(", n/12) + "\n" + strings.Repeat(")", n/12) + "]\n"
	},
	"tab-hangs":  func(n int) string { return "if x:\n\ty = f(\n" + strings.Repeat("\t\t\t1,\n", n/5) + "\t)\n" },
	"colon-rows": func(n int) string { return "x = {\n" + strings.Repeat("    1:\n        2,\n", n/18) + "}\n" },
}

// BenchmarkHostile lints each hostile input at two sizes, 8 times apart:
// linear work shows as the same MB/s at both.
func BenchmarkHostile(b *testing.B) {
	l, err := python.New(linter.Config{})
	require.NoError(b, err)
	names := slices.Sorted(maps.Keys(hostile))
	for _, name := range names {
		for _, size := range []int{40 << 10, 320 << 10} {
			src := []byte(hostile[name](size))
			b.Run(fmt.Sprintf("%s/%dKB", name, size>>10), func(b *testing.B) {
				benchLint(b, l, src)
			})
		}
	}
}

func benchLint(b *testing.B, l *python.Linter, src []byte) {
	ctx := context.Background()
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if _, err := l.Lint(ctx, linter.Source{Code: src}); err != nil {
			b.Fatal(err)
		}
	}
}
