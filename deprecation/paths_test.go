package deprecation

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckPathsReadsWhatPlutoReads: a walk reads every file, hidden ones
// and ones without a .yaml/.yml/.json name included (pluto's detect-files
// does); before, those were skipped without a word. What is not read is
// listed with the reason.
func TestCheckPathsReadsWhatPlutoReads(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}
	cron := func(name string) string {
		return "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: " + name + "}\n"
	}
	write("app.yaml", cron("plain"))
	write(".hidden.yml", cron("hidden-file"))
	write(".github/workflows/deploy.yaml", cron("hidden-dir"))
	write("manifests/cronjob", cron("no-extension"))
	write("manifests/CRONJOB.YAML", cron("upper-case"))
	write("README.md", "# Notes\n\nNothing to see.\n")
	write("image.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	write("utf16.yaml", string(encodeUTF16(cron("utf16"), false, true)))
	require.NoError(t, os.Symlink(filepath.Join(dir, "manifests"), filepath.Join(dir, "link-to-dir")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "app.yaml"), filepath.Join(dir, "link-to-file.yaml")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "broken-link")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))

	rep, err := newChecker(t, "v1.25").CheckPaths(context.Background(), nil, dir)
	require.NoError(t, err)
	var names []string
	for _, f := range rep.Findings {
		names = append(names, f.Name)
	}
	// Walk order is lexical.
	assert.Equal(t, []string{"hidden-dir", "hidden-file", "plain", "plain", "upper-case", "no-extension", "utf16"}, names)
	assert.Empty(t, rep.Errors)
	assert.Empty(t, rep.Invalid)
	reasons := map[string]string{}
	for _, s := range rep.Skipped {
		reasons[strings.TrimPrefix(s.Path, dir+"/")] = s.Reason
	}
	assert.Equal(t, map[string]string{
		"broken-link": "broken symbolic link",
		"fifo":        "not a regular file",
		"image.png":   "binary (NUL bytes in no YAML encoding)",
		"link-to-dir": "symbolic link to a directory (not followed)",
	}, reasons)
	assert.Equal(t, 8, rep.Sources, "README.md is read, and holds no object")

	// Named explicitly, a binary file is invalid, not skipped.
	rep, err = newChecker(t, "v1.25").CheckPaths(context.Background(), nil, filepath.Join(dir, "image.png"))
	require.NoError(t, err)
	require.Len(t, rep.Invalid, 1)
	assert.Contains(t, rep.Invalid[0].Error(), "binary data")
	assert.Equal(t, ExitOK, rep.ExitCode())
}

func TestCheckPathsMaxFileSize(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(big, []byte("apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: big}\n"+strings.Repeat("# padding\n", 100)), 0o644))
	c := newChecker(t, "v1.25")
	rep, err := c.CheckPathsWith(context.Background(), nil, PathOptions{MaxFileSize: 500}, big)
	require.NoError(t, err)
	require.Len(t, rep.Invalid, 1)
	assert.Contains(t, rep.Invalid[0].Error(), "larger than 500 bytes: not read")
	assert.Empty(t, rep.Findings)

	stdin := strings.NewReader(strings.Repeat("# padding\n", 100))
	rep, err = c.CheckPathsWith(context.Background(), stdin, PathOptions{MaxFileSize: 500}, Stdin)
	require.NoError(t, err)
	require.Len(t, rep.Invalid, 1, "stdin is bounded too")

	rep, err = c.CheckPaths(context.Background(), nil, big)
	require.NoError(t, err)
	assert.Len(t, rep.Findings, 1, "the default limit is 64 MiB")
}
