package main_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCLI(t *testing.T) {
	testenv.Short(t) // builds and runs the binary
	dir := t.TempDir()
	bin := filepath.Join(dir, "lint")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))

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
		{"missing path", []string{"-language", "python", filepath.Join(dir, "nope")}, 2, ""},
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
