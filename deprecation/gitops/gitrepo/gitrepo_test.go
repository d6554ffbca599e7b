package gitrepo_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/deprecation/gitops/gitrepo"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }

// git runs git in dir.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
}

func write(t *testing.T, dir, name, data string) {
	t.Helper()
	p := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
}

// Read returns a revision's files from git objects: the working tree and
// later commits do not show, and nothing is written.
func TestRead(t *testing.T) {
	testenv.LookPath(t, "git")
	dir := t.TempDir()
	git(t, dir, "init", "-q")
	write(t, dir, "clusters/prod/ks.yaml", "v: 1\n")
	write(t, dir, "apps/web/deploy.yaml", "image: nginx:1.25\n")
	require.NoError(t, os.Symlink("deploy.yaml", filepath.Join(dir, "apps/web/link.yaml")))
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "one")
	git(t, dir, "branch", "base")
	write(t, dir, "apps/web/deploy.yaml", "image: nginx:1.27\n")
	write(t, dir, "apps/new.yaml", "new: true\n")
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-qm", "two")
	write(t, dir, "apps/web/deploy.yaml", "image: nginx:9 # not committed\n")

	root, err := gitrepo.Root(filepath.Join(dir, "clusters/prod"))
	require.NoError(t, err)
	want, _ := filepath.EvalSymlinks(dir)
	got, _ := filepath.EvalSymlinks(root)
	assert.Equal(t, want, got)

	for _, rev := range []string{"base", "HEAD~1"} {
		tree, err := gitrepo.Read(root, rev)
		require.NoError(t, err)
		require.NoError(t, fstest.TestFS(tree, "clusters/prod/ks.yaml", "apps/web/deploy.yaml"))
		data, err := fs.ReadFile(tree, "apps/web/deploy.yaml")
		require.NoError(t, err)
		assert.Equal(t, "image: nginx:1.25\n", string(data))
		_, err = fs.Stat(tree, "apps/new.yaml")
		assert.ErrorIs(t, err, fs.ErrNotExist)
		fi, err := fs.Stat(tree, "apps/web/link.yaml")
		require.NoError(t, err)
		assert.Equal(t, fs.ModeSymlink, fi.Mode().Type())
	}
	head, err := gitrepo.Read(root, "main")
	require.NoError(t, err)
	data, err := fs.ReadFile(head, "apps/web/deploy.yaml")
	require.NoError(t, err)
	assert.Equal(t, "image: nginx:1.27\n", string(data))

	// A linked worktree (git worktree add) reads the objects of the
	// repository it belongs to.
	linked := filepath.Join(t.TempDir(), "linked")
	git(t, dir, "worktree", "add", "-q", linked, "base")
	lroot, err := gitrepo.Root(filepath.Join(linked, "apps"))
	require.NoError(t, err)
	lhead, err := gitrepo.Read(lroot, "HEAD")
	require.NoError(t, err)
	data, err = fs.ReadFile(lhead, "apps/web/deploy.yaml")
	require.NoError(t, err)
	assert.Equal(t, "image: nginx:1.25\n", string(data))

	_, err = gitrepo.Read(root, "nope")
	assert.ErrorIs(t, err, gitrepo.ErrRevision)
	_, err = gitrepo.Root(t.TempDir())
	assert.ErrorIs(t, err, gitrepo.ErrNotRepository)
	out, err := exec.Command("git", "-C", dir, "status", "--porcelain").Output()
	require.NoError(t, err)
	assert.Equal(t, " M apps/web/deploy.yaml\n", string(out), "nothing written into the repository")
}
