package python

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/linter"
)

// The expected values below are what Python 3.11 answers (fnmatch.fnmatch,
// repr, configparser.RawConfigParser) for the same input.

func TestFnmatch(t *testing.T) {
	for _, tc := range []struct {
		name, pat string
		want      bool
	}{
		{"a.py", "*.py", true}, {"a/b.py", "*.py", true}, {"x", "[!a]", true}, {"a", "[!a]", false},
		{"b", "[a-c]", true}, {"[", "[", true}, {"a]", "[]a]", false}, {".git", ".git", true},
		{"/x/build/y", "*/build/*", true}, {"ab", "a?", true}, {"a", "a?", false},
	} {
		assert.Equal(t, tc.want, fnmatch(tc.name, tc.pat), "%q %q", tc.name, tc.pat)
	}
}

func TestPyRepr(t *testing.T) {
	for in, want := range map[string]string{
		"x.py": `'x.py'`, "it's.py": `"it's.py"`, `a"b'c`: `'a"b\'c'`, "tab\t": `'tab\t'`, "é.py": `'é.py'`, "\x7f": `'\x7f'`,
	} {
		assert.Equal(t, want, pyRepr(in))
	}
}

func TestIniFile(t *testing.T) {
	ini := newIniFile()
	require.NoError(t, ini.parse("setup.cfg", []byte("[DEFAULT]\nshared = 1\n[pycodestyle]\nSelect = E1,\n\n  W2\nignore: E501  ; not a comment\n")))
	var got [][2]string
	for _, o := range ini.options(ini.sections["pycodestyle"]) {
		got = append(got, [2]string{o.name, o.value})
	}
	assert.Equal(t, [][2]string{{"select", "E1,\n\nW2"}, {"ignore", "E501  ; not a comment"}, {"shared", "1"}}, got)

	for name, bad := range map[string]string{
		"no section":        "x = 1\n",
		"duplicate section": "[a]\n[a]\n",
		"duplicate option":  "[a]\nx = 1\nX = 2\n",
		"not an option":     "[a]\njust words\n",
	} {
		assert.ErrorIs(t, newIniFile().parse("f", []byte(bad)), ErrConfigFile, name)
	}
}

func TestReadConfig(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	proj := filepath.Join(dir, "proj")
	require.NoError(t, os.MkdirAll(filepath.Join(proj, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(proj, "tox.ini"), []byte("[pep8]\nmax-line-length = 1_00\nhang_closing = on\nexclude = build,docs/\nstatistics = true\ncolour = blue\n"), 0o644))

	cf, err := ReadConfig([]string{filepath.Join(proj, "src", "a.py"), filepath.Join(proj, "src", "b.py")}, "")
	require.NoError(t, err)
	assert.Equal(t, "pep8", cf.Section, "the deprecated section, when no file has [pycodestyle]")
	assert.Equal(t, linter.Config{MaxLineLength: 100, Options: map[string]string{"hang-closing": "true"}}, cf.Config)
	assert.Equal(t, []string{"build", filepath.Join(proj, "docs")}, cf.Exclude)
	assert.Equal(t, []string{"statistics"}, cf.Unsupported)
	assert.Equal(t, []string{"colour"}, cf.Unknown)

	// The user's configuration is read first and overridden by the
	// project's; --config comes last.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "xdg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "xdg", "pycodestyle"), []byte("[pycodestyle]\nmax-line-length = 120\nindent-size = 2\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(proj, "setup.cfg"), []byte("[pycodestyle]\nselect = E, W6\n"), 0o644))
	extra := filepath.Join(dir, "extra.cfg")
	require.NoError(t, os.WriteFile(extra, []byte("[pycodestyle]\nignore = E501\n"), 0o644))
	cf, err = ReadConfig([]string{filepath.Join(proj, "src")}, extra)
	require.NoError(t, err)
	assert.Equal(t, "pycodestyle", cf.Section)
	assert.Equal(t, linter.Config{Select: []string{"E", "W6"}, Ignore: []string{"E501"}, MaxLineLength: 120, Options: map[string]string{"indent-size": "2"}}, cf.Config)
	assert.Len(t, cf.Files, 4)

	require.NoError(t, os.WriteFile(extra, []byte("[pycodestyle]\nmax-doc-length = long\n"), 0o644))
	_, err = ReadConfig([]string{proj}, extra)
	assert.ErrorIs(t, err, ErrConfigFile)
}

func TestFileError(t *testing.T) {
	l, err := New(linter.Config{})
	require.NoError(t, err)
	_, err = os.ReadFile("/nonexistent/x.py")
	assert.Equal(t, []linter.Diagnostic{{Line: 1, Column: 1, Code: "E902", Message: "FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/x.py'"}},
		l.FileError("/nonexistent/x.py", err))
	perm := &fs.PathError{Op: "open", Path: "x.py", Err: syscall.EACCES}
	assert.Equal(t, "PermissionError: [Errno 13] Permission denied: 'x.py'", l.FileError("x.py", perm)[0].Message)
	assert.Equal(t, "OSError: Boom: 'x.py'", l.FileError("x.py", errors.New("boom"))[0].Message)
	l, err = New(linter.Config{Ignore: []string{"E9"}})
	require.NoError(t, err)
	assert.Empty(t, l.FileError("x.py", perm))
}
