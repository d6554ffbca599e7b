// Package gitrepo reads a revision of a git repository into memory, as an
// fs.FS that gitops.Options.FS builds from: `gitops diff --branch-orig`
// compares the working tree with a branch without checking it out. It
// reads git objects only (loose or packed): no worktree is made and
// nothing is written.
//
// A Tree is immutable and safe for concurrent use.
//
// Usage:
//
//	root, _ := gitrepo.Root("clusters/prod")
//	tree, err := gitrepo.Read(root, "main")
//	res, err := gitops.Build(ctx, gitops.Options{Root: root, FS: tree, Path: filepath.Join(root, "clusters/prod")})
package gitrepo
