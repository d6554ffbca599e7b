package main_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }

// build builds the command into dir.
func build(t *testing.T, dir string) string {
	t.Helper()
	testenv.Short(t) // builds and runs the binary
	bin := filepath.Join(dir, "lint")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

func TestCLI(t *testing.T) {
	dir := t.TempDir()
	bin := build(t, dir)
	t.Setenv("XDG_CONFIG_HOME", dir) // no user configuration

	src := filepath.Join(dir, "src")
	require.NoError(t, os.MkdirAll(filepath.Join(src, "pkg"), 0o755))
	write := func(name, body string) string {
		p := filepath.Join(src, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		return p
	}
	bad := write("pkg/bad.py", "import os,sys\nx=1\n")
	clean := write("clean.py", "x = 1\n")
	write("notes.txt", "x=1") // not a Python file: directories yield .py only
	java := write("A.java", "class A {\n\tint x;\n}")

	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
	}{
		{"problems in a tree", []string{"-language", "python", src}, 1,
			bad + ":1:10: E231 missing whitespace after ','\n" +
				bad + ":1:10: E401 multiple imports on one line\n" +
				bad + ":2:2: E225 missing whitespace around operator\n"},
		{"select", []string{"-language", "python", "-select", "E4", bad}, 1, bad + ":1:10: E401 multiple imports on one line\n"},
		{"ignore", []string{"-language", "python", "-ignore", "E2,E4", bad}, 0, ""},
		{"clean", []string{"-language", "python", clean}, 0, ""},
		// checkstyle reports a missing final newline on line 1, with no column.
		{"java without column", []string{"-language", "java", "-select", "NewlineAtEndOfFile,FileTabCharacter", java}, 1,
			java + ":1: NewlineAtEndOfFile File does not end with a newline.\n" +
				java + ":2:1: FileTabCharacter File contains tab characters (this is the first instance).\n"},
		{"java sun_checks", []string{"-language", "java", "-config", "sun_checks", "-select", "FileTabCharacter,FileLength", java}, 1,
			java + ":2:1: FileTabCharacter File contains tab characters (this is the first instance).\n"},
		{"java config file", []string{"-language", "java", "-config", write("tabs.xml", `<module name="Checker"><module name="FileTabCharacter"><property name="eachLine" value="true"/></module></module>`), java}, 1,
			java + ":2:1: FileTabCharacter Line contains a tab character.\n"},
		{"java unknown config", []string{"-language", "java", "-config", "sun", java}, 2, ""},
		{"config for python", []string{"-language", "python", "-config", "sun_checks", clean}, 2, ""},
		// pycodestyle reports a file it cannot read as E902; checkstyle stops.
		{"missing path", []string{"-language", "python", filepath.Join(dir, "nope")}, 1,
			filepath.Join(dir, "nope") + ":1:1: E902 FileNotFoundError: [Errno 2] No such file or directory: '" + filepath.Join(dir, "nope") + "'\n"},
		{"missing java path", []string{"-language", "java", filepath.Join(dir, "nope")}, 2, ""},
		{"bad option", []string{"-language", "python", "-indent-size", "0", clean}, 2, ""},
		{"unknown language", []string{"-language", "cobol", clean}, 2, ""},
		{"no paths", []string{"-language", "python"}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := exec.Command(bin, tt.args...).Output()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.wantCode, code)
			assert.Equal(t, tt.wantOut, string(out))
		})
	}
}

// runBoth runs pycodestyle and lint -language python with the same
// arguments in dir and returns their standard outputs and exit codes.
func runBoth(t *testing.T, pycodestyle, bin, dir string, args ...string) (theirs, ours string, theirCode, ourCode int) {
	t.Helper()
	exec1 := func(name string, args ...string) (string, int) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		}
		require.NoError(t, err, stderr.String())
		return string(out), 0
	}
	theirs, theirCode = exec1(pycodestyle, args...)
	ours, ourCode = exec1(bin, append([]string{"-language", "python"}, args...)...)
	return theirs, ours, theirCode, ourCode
}

// TestSameOutputAsPycodestyle runs pycodestyle and lint side by side, with
// the same arguments and configuration files, and requires the same
// output, byte for byte, and the same exit code: on part of the standard
// library given as directories (walk order, default configuration, every
// default code), and on a project that exercises configuration files,
// exclusions and the options.
func TestSameOutputAsPycodestyle(t *testing.T) {
	pycodestyle := testenv.LookPath(t, "pycodestyle")
	dir := t.TempDir()
	bin := build(t, dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))

	t.Run("stdlib", func(t *testing.T) {
		const root = "/usr/lib/python3.11"
		if _, err := os.Stat(root); err != nil {
			testenv.Missing(t, "%s not found (Debian package python3.11)", root)
		}
		args := []string{"email", "json", "logging", "wsgiref", "argparse.py", "ast.py", "tarfile.py"}
		for _, extra := range [][]string{nil, {"--select=E,W", "--max-doc-length=72"}, {"--ignore=E501", "--hang-closing"}} {
			theirs, ours, tc, oc := runBoth(t, pycodestyle, bin, root, append(extra, args...)...)
			require.NotEmpty(t, theirs)
			assert.Equal(t, tc, oc)
			assertSameLines(t, theirs, ours, extra)
		}
	})

	t.Run("project", func(t *testing.T) {
		proj := filepath.Join(dir, "proj")
		write := func(name, body string) {
			p := filepath.Join(proj, name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
		}
		code := "import os,sys\nx=1+2\ny = (1,\n  2)\n# " + strings.Repeat("word ", 18) + "\nz = '" + strings.Repeat("a", 85) + "'\n"
		write("a.py", code)
		write("pkg/b.py", code)
		write("pkg/sub/c.py", code)
		write("pkg/.git/d.py", code) // excluded by default
		write("build/e.py", code)    // excluded by the project's configuration
		write("pkg/notes.txt", code) // not *.py
		write("pkg/sub/f.pyi", code) // not *.py unless filename says so
		write("setup.cfg", "[metadata]\nname = proj\n\n[pycodestyle]\n# a comment\nmax-line-length = 90\nexclude = build,.git\nselect =\n    E1,\n    E2,W5\nunknown_thing = 1\n")
		write("tox.ini", "[pycodestyle]\nmax_doc_length = 72\n")
		for _, args := range [][]string{
			{"."},
			{"a.py", "pkg"},
			{"--max-line-length=80", "--select=E,W", "."},
			{"--ignore=E2", "."},
			{"--indent-size=2", "--hang-closing", "pkg"},
			{"--filename=*.py,*.pyi", "--exclude=sub", "."},
			{"a.py", "missing.py"},
		} {
			theirs, ours, tc, oc := runBoth(t, pycodestyle, bin, proj, args...)
			assert.Equal(t, tc, oc, "%v", args)
			assertSameLines(t, theirs, ours, args)
		}
		// The user's configuration, read first; the project's overrides it.
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "xdg"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "xdg", "pycodestyle"), []byte("[pycodestyle]\nindent-size = 2\nmax-line-length = 120\n"), 0o644))
		theirs, ours, tc, oc := runBoth(t, pycodestyle, bin, proj, ".")
		assert.Equal(t, tc, oc)
		assertSameLines(t, theirs, ours, "user configuration")
	})
}

func assertSameLines(t *testing.T, theirs, ours string, what any) {
	t.Helper()
	if theirs == ours {
		return
	}
	a, b := strings.Split(theirs, "\n"), strings.Split(ours, "\n")
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			t.Errorf("%v: output differs from line %d of %d/%d:\npycodestyle: %q\nlint:        %q", what, i+1, len(a), len(b), x, y)
			return
		}
	}
}
