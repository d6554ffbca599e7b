package java

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/fleetkit/fleetkit/linter"
	"github.com/stretchr/testify/require"
)

// jdkSrcZip is where Debian's openjdk-17-source puts the JDK sources.
const jdkSrcZip = "/usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip"

// inCorpus selects the JDK files the agreement test lints: java.util and
// java.io without subpackages, and the part of the old AWT X11 peer (tabs,
// C-like style) whose names sort before "XG".
func inCorpus(name string) bool {
	dir, base := path.Split(name)
	if !strings.HasSuffix(base, ".java") {
		return false
	}
	switch dir {
	case "java.base/java/util/", "java.base/java/io/":
		return true
	case "java.desktop/sun/awt/X11/":
		return !strings.HasPrefix(base, "X") || base < "XG"
	}
	return false
}

// extractCorpus writes the selected JDK files under dir and returns their
// paths, sorted.
func extractCorpus(tb testing.TB, dir string) []string {
	tb.Helper()
	zr, err := zip.OpenReader(jdkSrcZip)
	if err != nil {
		testenv.Missing(tb, "JDK sources %s (apt-get install openjdk-17-source): %v", jdkSrcZip, err)
	}
	defer zr.Close()
	var paths []string
	for _, zf := range zr.File {
		if !inCorpus(zf.Name) {
			continue
		}
		rc, err := zf.Open()
		require.NoError(tb, err)
		b, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(tb, err)
		p := filepath.Join(dir, filepath.FromSlash(zf.Name))
		require.NoError(tb, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(tb, os.WriteFile(p, b, 0o644))
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}

// addCrafted copies testdata/corpus (files written to exercise every check)
// under dir and returns their paths.
func addCrafted(t *testing.T, dir string) []string {
	t.Helper()
	srcs, err := filepath.Glob("testdata/corpus/*.java")
	require.NoError(t, err)
	var paths []string
	for _, s := range srcs {
		b, err := os.ReadFile(s)
		require.NoError(t, err)
		p := filepath.Join(dir, "crafted", filepath.Base(s))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, b, 0o644))
		paths = append(paths, p)
	}
	return paths
}

// runCheckstyle runs checkstyle once over dir. A file its grammar cannot
// parse aborts the whole audit, so such a file is removed and the audit
// run again; the removed files are returned.
func runCheckstyle(t *testing.T, cs, cfg, dir string) (map[finding]bool, map[string]bool) {
	t.Helper()
	excluded := make(map[string]bool)
	for attempt := 0; ; attempt++ {
		out, err := exec.Command(cs, "-c", cfg, dir).CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			t.Fatalf("running checkstyle: %v", err)
		}
		found, failed := parseCheckstyle(out)
		if len(failed) == 0 {
			return found, excluded
		}
		require.Less(t, attempt, 5, "checkstyle keeps failing: %v", failed)
		for f := range failed {
			excluded[f] = true
			require.NoError(t, os.Remove(f))
		}
	}
}

type finding struct {
	file      string
	line, col int
	code, msg string
}

// javadocParseErrors tables checkstyle's Javadoc parse errors.
const javadocParseErrors = "(Javadoc parse errors)"

var (
	javadocParseError = regexp.MustCompile(`^Javadoc comment at column \d+ has parse error\.`)
	warnRe            = regexp.MustCompile(`^\[(?:WARN|ERROR|INFO)\] (.+?):(\d+):(?:(\d+):)? (.*) \[(\w+)\]$`)
	excRe             = regexp.MustCompile(`Exception was thrown while processing (.+\.java)`)
)

// parseCheckstyle reads checkstyle's plain output: findings with their
// messages, and the files it could not process.
func parseCheckstyle(out []byte) (map[finding]bool, map[string]bool) {
	found := make(map[finding]bool)
	failed := make(map[string]bool)
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := excRe.FindStringSubmatch(line); m != nil {
			failed[m[1]] = true
			continue
		}
		m := warnRe.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ln, _ := strconv.Atoi(m[2])
		col, _ := strconv.Atoi(m[3])
		found[finding{m[1], ln, col, m[5], m[4]}] = true
	}
	return found, failed
}

func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }

// agreementConfigs are the configurations the agreement test runs: ours,
// and checkstyle's two built-ins (read from its jar) against our
// renditions of them.
// google_checks runs on java.io and java.util, each on its own (issue 22
// asks for 99.5 % on both), not on the AWT part of the corpus.
var agreementConfigs = []struct {
	name, theirs string
	ours         linter.Config
	sub          string // the part of the corpus linted; "" for all of it
}{
	{"default", "testdata/checkstyle.xml", linter.Config{}, ""},
	{SunChecks, "/sun_checks.xml", linter.Config{Options: map[string]string{OptionConfig: SunChecks}}, ""},
	{GoogleChecks, "/google_checks.xml", linter.Config{Options: map[string]string{OptionConfig: GoogleChecks}}, "java.base/java/io"},
	{GoogleChecks + "_util", "/google_checks.xml", linter.Config{Options: map[string]string{OptionConfig: GoogleChecks}}, "java.base/java/util"},
}

// TestAgreesWithCheckstyle lints a slice of the JDK with checkstyle 8.36
// and with this package, for each configuration, and requires 99.5%
// agreement per check both ways on every check we run. Checks of the
// configuration we do not implement are tabled, not asserted.
func TestAgreesWithCheckstyle(t *testing.T) {
	testenv.Short(t)
	cs := testenv.LookPath(t, "checkstyle")
	dir := t.TempDir()
	paths := append(extractCorpus(t, dir), addCrafted(t, dir)...)
	for _, c := range agreementConfigs {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.theirs
			if !strings.HasPrefix(cfg, "/") {
				var err error
				cfg, err = filepath.Abs(cfg)
				require.NoError(t, err)
			}
			l, err := New(c.ours)
			require.NoError(t, err)
			root, in := dir, paths
			if c.sub != "" {
				root, in = filepath.Join(dir, filepath.FromSlash(c.sub)), nil
				for _, p := range paths {
					if strings.HasPrefix(p, root+string(filepath.Separator)) {
						in = append(in, p)
					}
				}
			}
			agree(t, l, in, dir, func() (map[finding]bool, map[string]bool) { return runCheckstyle(t, cs, cfg, root) })
		})
	}
}

// agree compares our findings over paths with checkstyle's.
func agree(t *testing.T, l *Linter, paths []string, dir string, checkstyle func() (map[finding]bool, map[string]bool)) {
	theirs, failed := checkstyle()
	// A Javadoc comment checkstyle cannot parse is reported once, under
	// whichever of its Javadoc modules logs it first, which varies from
	// run to run; we do not print these, so they are tabled apart.
	for f := range theirs {
		if javadocParseError.MatchString(f.msg) {
			delete(theirs, f)
			f.code = javadocParseErrors
			theirs[f] = true
		}
	}
	ours := make(map[finding]bool)
	lines := 0
	for _, p := range paths {
		if failed[p] {
			continue
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		lines += bytes.Count(b, []byte{'\n'})
		ds, err := l.Lint(context.Background(), linter.Source{Name: p, Code: b})
		require.NoError(t, err)
		for _, d := range ds {
			ours[finding{p, d.Line, d.Column, d.Code, d.Message}] = true
		}
	}

	type tally struct{ theirs, ours, matched int }
	per := make(map[string]*tally)
	for _, c := range codes {
		if l.enabled[c] {
			per[c] = &tally{}
		}
	}
	get := func(c string) *tally {
		if per[c] == nil {
			per[c] = &tally{}
		}
		return per[c]
	}
	var missed, extra []finding
	for f := range theirs {
		get(f.code).theirs++
		if ours[f] {
			get(f.code).matched++
		} else if l.enabled[f.code] {
			missed = append(missed, f)
		}
	}
	for f := range ours {
		get(f.code).ours++
		if !theirs[f] {
			extra = append(extra, f)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "corpus: %d files, %d lines; %d files excluded (checkstyle failed to parse them)\n",
		len(paths)-len(failed), lines, len(failed))
	fmt.Fprintf(&b, "%-30s %7s %7s %7s %8s %8s\n", "check", "theirs", "ours", "matched", "matched/theirs", "matched/ours")
	names := make([]string, 0, len(per))
	for c := range per {
		names = append(names, c)
	}
	slices.Sort(names)
	var low []string
	sum := tally{}
	for _, c := range names {
		s := per[c]
		recall, precision := pct(s.matched, s.theirs), pct(s.matched, s.ours)
		note := ""
		if !l.enabled[c] {
			note = "  (not implemented)"
		} else if recall < 99.5 || precision < 99.5 {
			low = append(low, c)
		}
		sum.theirs, sum.ours, sum.matched = sum.theirs+s.theirs, sum.ours+s.ours, sum.matched+s.matched
		fmt.Fprintf(&b, "%-30s %7d %7d %7d %13.2f%% %11.2f%%%s\n", c, s.theirs, s.ours, s.matched, recall, precision, note)
	}
	fmt.Fprintf(&b, "%-30s %7d %7d %7d %13.2f%% %11.2f%%\n", "all", sum.theirs, sum.ours, sum.matched, pct(sum.matched, sum.theirs), pct(sum.matched, sum.ours))
	t.Log("\n" + b.String())
	logSample(t, "missed (checkstyle only)", missed, dir)
	logSample(t, "extra (ours only)", extra, dir)
	require.Empty(t, low, "checks below 99.5%% agreement")
}

func pct(n, d int) float64 {
	if d == 0 {
		if n == 0 {
			return 100
		}
		return 0
	}
	return 100 * float64(n) / float64(d)
}

func logSample(t *testing.T, what string, fs []finding, dir string) {
	slices.SortFunc(fs, func(a, b finding) int {
		return strings.Compare(fmt.Sprint(a.code, a.file, a.line, a.col), fmt.Sprint(b.code, b.file, b.line, b.col))
	})
	var b strings.Builder
	perCode := make(map[string]int)
	for _, f := range fs {
		if perCode[f.code]++; perCode[f.code] > 5 {
			continue
		}
		rel, _ := filepath.Rel(dir, f.file)
		fmt.Fprintf(&b, "  %s %s:%d:%d\n", f.code, rel, f.line, f.col)
	}
	if b.Len() > 0 {
		t.Logf("%s, first 5 per check:\n%s", what, b.String())
	}
}
