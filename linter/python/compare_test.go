package python_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/linter/python"
)

// stdlibRoot is where Debian installs the Python standard library that
// serves as the agreement corpus.
const stdlibRoot = "/usr/lib/python3.11"

// corpusDirs are the standard-library directories whose *.py files (not
// recursive) make up the corpus, in addition to the top level. They were
// picked so that rare codes (tabs, E1xx on comments, W605, E741...) occur.
var corpusDirs = []string{
	".", "email", "json", "http", "logging", "lib2to3", "lib2to3/pgen2",
	"lib2to3/fixes", "test", "xml/dom", "unittest", "wsgiref", "curses",
}

// corpus returns the corpus files, sorted, and their total line count.
func corpus(tb testing.TB) ([]string, int) {
	tb.Helper()
	if _, err := os.Stat(stdlibRoot); err != nil {
		testenv.Missing(tb, "%s not found (Debian package python3.11)", stdlibRoot)
	}
	var files []string
	for _, d := range corpusDirs {
		m, err := filepath.Glob(filepath.Join(stdlibRoot, d, "*.py"))
		require.NoError(tb, err)
		files = append(files, m...)
	}
	// Hand-written files that make the codes the standard library never
	// triggers (W605, E711, W391, E901...) occur too.
	m, err := filepath.Glob(filepath.Join("testdata", "agree", "*.py"))
	require.NoError(tb, err)
	files = append(files, m...)
	// FLEETKIT_PY_CORPUS replaces the corpus by every *.py file under a
	// directory, for exploring agreement on other code.
	if dir := os.Getenv("FLEETKIT_PY_CORPUS"); dir != "" {
		files = files[:0]
		err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".py") {
				files = append(files, p)
			}
			return nil
		})
		require.NoError(tb, err)
	}
	slices.Sort(files)
	lines := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(tb, err)
		lines += bytes.Count(b, []byte("\n"))
	}
	return files, lines
}

type finding struct {
	file      string
	line, col int
	code, msg string
}

func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }

// agreement is one configuration the agreement test runs both tools with.
type agreement struct {
	name string
	args []string // pycodestyle's options
	cfg  linter.Config
}

// agreements are pycodestyle's default configuration (what users get with
// no options), every code (the default ignore list off, W505 on), and the
// options that change what the checks compute.
var agreements = []agreement{
	{"default", nil, linter.Config{}},
	{"all codes", []string{"--select=E,W", "--max-doc-length=72"},
		linter.Config{Select: []string{"E", "W"}, Options: map[string]string{"max-doc-length": "72"}}},
	{"options", []string{"--select=E1,E5,W5", "--hang-closing", "--indent-size=2", "--max-line-length=100", "--max-doc-length=90"},
		linter.Config{Select: []string{"E1", "E5", "W5"}, MaxLineLength: 100,
			Options: map[string]string{"hang-closing": "true", "indent-size": "2", "max-doc-length": "90"}}},
}

// TestAgreesWithPycodestyle runs pycodestyle and this package on the
// corpus in each configuration of agreements and requires them to agree
// (file, line, column, code and message) on at least 99.5% of the
// findings of every code, both ways.
func TestAgreesWithPycodestyle(t *testing.T) {
	testenv.Short(t)
	bin := testenv.LookPath(t, "pycodestyle")
	files, nlines := corpus(t)
	t.Logf("corpus: %d files, %d lines", len(files), nlines)
	for _, a := range agreements {
		t.Run(a.name, func(t *testing.T) {
			t.Parallel()
			compare(t, bin, a, files)
		})
	}
}

func compare(t *testing.T, bin string, a agreement, files []string) {
	out, err := exec.Command(bin, append(a.args, files...)...).Output()
	var exitErr *exec.ExitError
	if err != nil && !(errors.As(err, &exitErr) && exitErr.ExitCode() == 1) {
		require.NoError(t, err, "pycodestyle failed")
	}
	theirs := map[finding]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f, ok := parseFinding(sc.Text())
		require.True(t, ok, "cannot parse pycodestyle output %q", sc.Text())
		// pycodestyle may print a column before the start of the line for
		// a token that spans lines in broken code; we report 1 instead.
		f.col = max(f.col, 1)
		theirs[f] = true
	}

	l, err := python.New(a.cfg)
	require.NoError(t, err)
	ours := map[finding]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		ds, err := l.Lint(context.Background(), linter.Source{Name: f, Code: src})
		require.NoError(t, err)
		for _, d := range ds {
			ours[finding{f, d.Line, d.Column, d.Code, d.Message}] = true
		}
	}

	type stat struct{ theirs, ours, matched int }
	stats := map[string]*stat{}
	get := func(c string) *stat {
		if stats[c] == nil {
			stats[c] = &stat{}
		}
		return stats[c]
	}
	var missed, extra []finding
	for f := range theirs {
		s := get(f.code)
		s.theirs++
		if ours[f] {
			s.matched++
		} else {
			missed = append(missed, f)
		}
	}
	for f := range ours {
		get(f.code).ours++
		if !theirs[f] {
			extra = append(extra, f)
		}
	}

	t.Logf("pycodestyle %s: %d findings, ours %d", strings.Join(a.args, " "), len(theirs), len(ours))
	t.Logf("%-5s %7s %7s %7s %8s %9s", "code", "theirs", "ours", "matched", "recall%", "precision%")
	var failed []string
	for _, c := range slices.Sorted(maps.Keys(stats)) {
		s := stats[c]
		recall, precision := pct(s.matched, s.theirs), pct(s.matched, s.ours)
		t.Logf("%-5s %7d %7d %7d %8.2f %9.2f", c, s.theirs, s.ours, s.matched, recall, precision)
		if recall < 99.5 || precision < 99.5 {
			failed = append(failed, c)
		}
	}
	sortFindings(missed)
	sortFindings(extra)
	for i, f := range missed {
		if i == 30 {
			break
		}
		t.Logf("missed: %s:%d:%d: %s %s", f.file, f.line, f.col, f.code, f.msg)
	}
	for i, f := range extra {
		if i == 30 {
			break
		}
		t.Logf("extra:  %s:%d:%d: %s %s", f.file, f.line, f.col, f.code, f.msg)
	}
	require.Empty(t, failed, "codes below 99.5%% agreement")
}

func pct(a, b int) float64 {
	if b == 0 {
		return 100
	}
	return 100 * float64(a) / float64(b)
}

func sortFindings(fs []finding) {
	slices.SortFunc(fs, func(a, b finding) int {
		if a.file != b.file {
			return strings.Compare(a.file, b.file)
		}
		if a.line != b.line {
			return a.line - b.line
		}
		return a.col - b.col
	})
}

// parseFinding parses "path:line:col: CODE message".
func parseFinding(s string) (finding, bool) {
	parts := strings.SplitN(s, ":", 4)
	if len(parts) < 4 {
		return finding{}, false
	}
	line, err1 := strconv.Atoi(parts[1])
	col, err2 := strconv.Atoi(parts[2])
	code, msg, ok := strings.Cut(strings.TrimPrefix(parts[3], " "), " ")
	if err1 != nil || err2 != nil || !ok {
		return finding{}, false
	}
	return finding{parts[0], line, col, code, msg}, true
}
