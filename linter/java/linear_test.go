package java

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/fleetkit/fleetkit/linter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// linearInputs generate sources of n repetitions of a pattern that once
// cost quadratic time (issue 13): many tokens and findings on one line of
// non-ASCII text (columns were measured from the line's start for each
// token), on one line with tabs, and thousands of imports (duplicates were
// looked for pairwise).
var linearInputs = []struct {
	name     string
	gen      func(n int) string
	noGoogle bool // google_checks runs no check that finds anything in it
}{
	{"one long non-ASCII line", func(n int) string {
		return "class A { void f() { String[] x={" + strings.Repeat(`"é",a=1;`, n) + "}; } }\n"
	}, false},
	{"the same in short lines", func(n int) string {
		return "class A { void f() { String[] x={\n" + strings.Repeat("\"é\",a=1;\n", n) + "}; } }\n"
	}, false},
	{"one long line with tabs", func(n int) string {
		return "class A {\tvoid f() {" + strings.Repeat("\ta=1;b=c+d*e;int x\t= 2;", n) + "} }\n"
	}, false},
	{"nested statements (Indentation)", func(n int) string {
		return "class A {\n    void f() {\n" + strings.Repeat("      if (a) {\n  b();\n      } else if (c) {\n  switch (d) {\n case 1: e(); }\n}\n"+
			strings.Repeat("{ if (a)\n", 4)+strings.Repeat("}", 4)+"\n", n) + "\n    }\n}\n"
	}, false},
	{"Javadoc (JavadocParagraph and friends)", func(n int) string {
		return "class A {\n" + strings.Repeat("  /**\n   * S.\n   *\n   * Text.\n   * <p>\n   * <ul><li>a<li><p> b</ul>\n   * @param x one\n   *  two\n   */\n  void f(int x) {}\n\n", n) +
			"  /**\n   * S.\n" + strings.Repeat("   * <li>x <p> y\n", n) + "   */\n  void g() {}\n}\n"
	}, false},
	{"locals and case groups (VariableDeclarationUsageDistance, FallThrough, CommentsIndentation)", func(n int) string {
		var b strings.Builder
		b.WriteString("class A {\n  int f(int n) {\n    int")
		for i := range n {
			fmt.Fprintf(&b, " d%d = %d,", i, i)
		}
		b.WriteString(" z = 0;\n")
		for i := range n {
			fmt.Fprintf(&b, "    int v%d = n;\n", i)
		}
		b.WriteString(strings.Repeat("    x.f();\n", n))
		for i := range n {
			fmt.Fprintf(&b, "    n += v%d + d%d;\n", i, i)
		}
		b.WriteString("    switch (n) {\n")
		for i := range n {
			fmt.Fprintf(&b, "      case %d:\n        n++; \n   // c\n", i)
		}
		return b.String() + "    }\n    return n;\n  }\n}\n"
	}, false},
	{"many imports", func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "import a.b.C%d;\nimport a.b.C%d;\n", i%(n/2+1), i)
		}
		return b.String() + "class A {}\n"
	}, true},
}

// work lints src and returns the bytes measured for columns and the bytes
// allocated: both grow in proportion to the work done, without the noise
// of wall time on a shared machine.
func work(t *testing.T, l *Linter, src string) (steps int, alloc uint64, diags int) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := l.check(context.Background(), src)
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	return f.steps + f.lx.steps, after.TotalAlloc - before.TotalAlloc, len(f.out)
}

// TestLinearInInputSize lints inputs of size N and 4N and requires the
// work to grow at most 4.5 times, and the bytes allocated at most 8 times
// (issue 13: linting is linear in input size).
// Each input runs at the default configuration, at sun_checks and at
// google_checks, which between them run every check implemented.
func TestLinearInInputSize(t *testing.T) {
	def, err := New(linter.Config{})
	require.NoError(t, err)
	sun, err := New(linter.Config{Options: map[string]string{OptionConfig: SunChecks}})
	require.NoError(t, err)
	google, err := New(linter.Config{Options: map[string]string{OptionConfig: GoogleChecks}})
	require.NoError(t, err)
	const n = 2000
	for _, in := range linearInputs {
		for _, cfg := range []struct {
			name string
			l    *Linter
		}{{"default", def}, {SunChecks, sun}, {GoogleChecks, google}} {
			l := cfg.l
			if in.noGoogle && l == google {
				continue
			}
			t.Run(in.name+"/"+cfg.name, func(t *testing.T) {
				s1, a1, d1 := work(t, l, in.gen(n))
				s4, a4, d4 := work(t, l, in.gen(4*n))
				require.NotZero(t, d1, "the input must produce findings")
				assert.GreaterOrEqual(t, d4, 3*d1, "findings grow with the input")
				assert.LessOrEqual(t, float64(s4), 4.5*float64(max(s1, 1)), "column work: %d for N, %d for 4N", s1, s4)
				// Bytes allocated by a linear algorithm grow 4 to 8 times
				// (a slice or map that doubles may land just under a size
				// at N and just over it at 4N); a quadratic one grows 16.
				assert.LessOrEqual(t, float64(a4), 8*float64(a1), "allocated bytes: %d for N, %d for 4N", a1, a4)
				t.Logf("N: %d steps, %d B, %d findings; 4N: %d steps, %d B, %d findings", s1, a1, d1, s4, a4, d4)
			})
		}
	}
}

// BenchmarkLongLine lints the same code on one line and in short lines:
// the ratio of their times is in BENCHMARKS.md (issue 13 wants ≤ 2×).
func BenchmarkLongLine(b *testing.B) {
	l, err := New(linter.Config{})
	require.NoError(b, err)
	for _, in := range linearInputs[:2] {
		src := linter.Source{Code: []byte(in.gen(40000))}
		b.Run(strings.ReplaceAll(in.name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(len(src.Code)))
			for b.Loop() {
				l.run(string(src.Code))
			}
		})
	}
}
