package gitrepo

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Errors returned by Root and Read.
var (
	// ErrNotRepository is returned for a directory outside any git
	// repository.
	ErrNotRepository = errors.New("gitrepo: not in a git repository")
	// ErrRevision is returned for a revision the repository does not
	// have.
	ErrRevision = errors.New("gitrepo: unknown revision")
)

// Root returns the top directory of the git repository holding dir.
func Root(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	repo, err := git.PlainOpenWithOptions(abs, &git.PlainOpenOptions{DetectDotGit: true, EnableDotGitCommonDir: true})
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrNotRepository, dir, err)
	}
	wt, err := repo.Worktree()
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrNotRepository, dir, err)
	}
	return wt.Filesystem.Root(), nil
}

// Read returns the files of revision rev (a branch, tag, commit or any
// revision git rev-parse takes that go-git resolves: "main",
// "origin/main", "HEAD~1", a hash) of the repository at root. Symlinks
// are kept as symlinks (fs.ModeSymlink) and submodules are left out.
func Read(root, rev string) (*Tree, error) {
	repo, err := git.PlainOpenWithOptions(root, &git.PlainOpenOptions{EnableDotGitCommonDir: true})
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNotRepository, root, err)
	}
	hash, err := repo.ResolveRevision(plumbing.Revision(rev))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrRevision, rev, err)
	}
	commit, err := repo.CommitObject(*hash)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrRevision, rev, err)
	}
	tree, err := commit.Tree()
	if err != nil {
		return nil, fmt.Errorf("gitrepo: %s: %w", rev, err)
	}
	t := &Tree{files: make(map[string]*node), when: commit.Committer.When}
	t.files["."] = &node{name: ".", mode: fs.ModeDir | 0o755}
	walker := object.NewTreeWalker(tree, true, nil)
	defer walker.Close()
	for {
		name, entry, err := walker.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("gitrepo: %s: %w", rev, err)
		}
		n := &node{name: path.Base(name)}
		switch entry.Mode {
		case filemode.Dir:
			n.mode = fs.ModeDir | 0o755
		case filemode.Regular, filemode.Executable, filemode.Deprecated:
			n.mode = 0o644
			if n.data, err = blob(repo, entry.Hash); err != nil {
				return nil, fmt.Errorf("gitrepo: %s: %s: %w", rev, name, err)
			}
		case filemode.Symlink:
			n.mode = fs.ModeSymlink | 0o777
			if n.data, err = blob(repo, entry.Hash); err != nil {
				return nil, fmt.Errorf("gitrepo: %s: %s: %w", rev, name, err)
			}
		default:
			continue // submodules
		}
		t.files[name] = n
		parent := t.files[path.Dir(name)]
		parent.children = append(parent.children, n)
	}
	for _, n := range t.files {
		slices.SortFunc(n.children, func(a, b *node) int { return strings.Compare(a.name, b.name) })
	}
	return t, nil
}

func blob(repo *git.Repository, h plumbing.Hash) ([]byte, error) {
	b, err := repo.BlobObject(h)
	if err != nil {
		return nil, err
	}
	r, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// Tree is the content of one revision, in memory. It implements fs.FS,
// fs.ReadDirFS, fs.ReadFileFS and fs.StatFS.
type Tree struct {
	files map[string]*node // by slash path; "." is the root
	when  time.Time        // the commit's time, as every file's
}

var (
	_ fs.ReadDirFS  = (*Tree)(nil)
	_ fs.ReadFileFS = (*Tree)(nil)
	_ fs.StatFS     = (*Tree)(nil)
)

type node struct {
	name     string
	mode     fs.FileMode
	data     []byte
	children []*node
}

func (t *Tree) lookup(op, name string) (*node, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n, ok := t.files[name]
	if !ok {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

// Open opens a file or directory.
func (t *Tree) Open(name string) (fs.File, error) {
	n, err := t.lookup("open", name)
	if err != nil {
		return nil, err
	}
	return &file{info: info{n, t.when}, r: strings.NewReader(string(n.data))}, nil
}

// ReadFile returns a file's content.
func (t *Tree) ReadFile(name string) ([]byte, error) {
	n, err := t.lookup("read", name)
	if err != nil {
		return nil, err
	}
	if n.mode.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errors.New("is a directory")}
	}
	return slices.Clone(n.data), nil
}

// ReadDir lists a directory, sorted by name.
func (t *Tree) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := t.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.mode.IsDir() {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errors.New("not a directory")}
	}
	out := make([]fs.DirEntry, len(n.children))
	for i, c := range n.children {
		out[i] = fs.FileInfoToDirEntry(info{c, t.when})
	}
	return out, nil
}

// Stat describes a file or directory.
func (t *Tree) Stat(name string) (fs.FileInfo, error) {
	n, err := t.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return info{n, t.when}, nil
}

// info is a node's fs.FileInfo.
type info struct {
	n    *node
	when time.Time
}

func (i info) Name() string       { return i.n.name }
func (i info) Size() int64        { return int64(len(i.n.data)) }
func (i info) Mode() fs.FileMode  { return i.n.mode }
func (i info) ModTime() time.Time { return i.when }
func (i info) IsDir() bool        { return i.n.mode.IsDir() }
func (i info) Sys() any           { return nil }

// file is an open file or directory.
type file struct {
	info info
	r    *strings.Reader
	next int // the next child ReadDir returns
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *file) Close() error               { return nil }

// ReadDir reads a directory's entries, as fs.ReadDirFile.
func (f *file) ReadDir(count int) ([]fs.DirEntry, error) {
	kids := f.info.n.children[f.next:]
	if count > 0 && len(kids) > count {
		kids = kids[:count]
	}
	if count > 0 && len(kids) == 0 {
		return nil, io.EOF
	}
	f.next += len(kids)
	out := make([]fs.DirEntry, len(kids))
	for i, c := range kids {
		out[i] = fs.FileInfoToDirEntry(info{c, f.info.when})
	}
	return out, nil
}
