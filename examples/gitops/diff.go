package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/fleetkit/fleetkit/deprecation/gitops"
	"github.com/fleetkit/fleetkit/deprecation/gitops/gitrepo"
)

// diffFlags are flux-local's diff flags.
type diffFlags struct {
	output     string
	unified    int
	pathOrig   string
	branchOrig string
	strip      listFlag
	limitBytes int
}

// builds returns the working tree's build and the other version's: the
// directory --path-orig (same layout), or revision --branch-orig (HEAD
// without either) of the git repository, read from git objects in memory.
// Both share one cache: each chart is fetched once, and a HelmRelease
// whose inputs did not change is rendered once.
func builds(ctx context.Context, s *selector, d *diffFlags, kind, name string, noRender bool, stdout io.Writer) (orig, cur *gitops.Result, w io.Writer, done func() error, err error) {
	if orig, cur, err = buildBoth(ctx, s, d, kind, name, noRender); err != nil {
		return nil, nil, nil, nil, err
	}
	if w, done, err = s.output(stdout); err != nil {
		return nil, nil, nil, nil, err
	}
	return orig, cur, w, done, nil
}

func buildBoth(ctx context.Context, s *selector, d *diffFlags, kind, name string, noRender bool) (orig, cur *gitops.Result, err error) {
	opts, err := s.options()
	if err != nil {
		return nil, nil, err
	}
	opts.Cache = gitops.NewCache()
	opts.NoRender = noRender
	opts.Only = s.only(kind, name)
	other := opts
	switch {
	case d.pathOrig != "":
		// --path-orig is the other version's --path; its repository is
		// the git repository holding it or, for a plain copy, the
		// directory that is to it what this repository is to --path.
		rel, err := filepath.Rel(opts.Root, opts.Path)
		if err != nil {
			return nil, nil, err
		}
		if other.Path, err = filepath.Abs(d.pathOrig); err != nil {
			return nil, nil, err
		}
		other.Root = other.Path
		if root, err := gitrepo.Root(other.Path); err == nil {
			other.Root = root
		} else if rel != "." && strings.HasSuffix(other.Path, string(filepath.Separator)+rel) {
			other.Root = strings.TrimSuffix(other.Path, string(filepath.Separator)+rel)
		}
	default:
		rev := d.branchOrig
		if rev == "" {
			rev = "HEAD"
		}
		tree, err := gitrepo.Read(opts.Root, rev)
		if err != nil {
			return nil, nil, err
		}
		other.FS = tree
	}
	cur, err = buildOrMissing(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	orig, err = buildOrMissing(ctx, other)
	if err != nil {
		return nil, nil, err
	}
	return orig, cur, nil
}

// buildOrMissing builds; a name that one side lacks builds nothing
// there.
func buildOrMissing(ctx context.Context, opts gitops.Options) (*gitops.Result, error) {
	res, err := gitops.Build(ctx, opts)
	if errors.Is(err, gitops.ErrUnknownNode) {
		return &gitops.Result{}, nil
	}
	return res, err
}

func addDiffFlags(s *selector, d *diffFlags, name string, stderr io.Writer) *flag.FlagSet {
	fs := newFlags(name, s, true, stderr)
	fs.StringVar(&d.output, "output", "diff", "output format: diff (unified), yaml or json (the changed objects per Kustomization/HelmRelease), object (as diff)")
	fs.StringVar(&d.output, "o", "diff", "short for --output")
	fs.IntVar(&d.unified, "unified", 3, "lines of unified context")
	fs.IntVar(&d.unified, "u", 3, "short for --unified")
	fs.StringVar(&d.pathOrig, "path-orig", "", "the other version: this `directory` (laid out as --path)")
	fs.StringVar(&d.branchOrig, "branch-orig", "", "the other version: this git `revision`, read from git objects in memory (default HEAD)")
	fs.Var(&d.strip, "strip-attrs", "labels or annotations to leave out before diffing (comma-separated), beyond kustomize's index annotations")
	fs.IntVar(&d.limitBytes, "limit-bytes", 0, "cut each object's diff after this many bytes (0: no limit)")
	return fs
}

// runDiff diffs what Kustomizations or HelmReleases render between the
// working tree and another version.
func runDiff(ctx context.Context, kind string, args []string, stdout, stderr io.Writer) error {
	var (
		s selector
		d diffFlags
	)
	fs := addDiffFlags(&s, &d, "diff "+kind, stderr)
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch d.output {
	case "diff", "object", "yaml", "json":
	default:
		return fmt.Errorf("%w: -o %s: want diff, yaml, json or object", errUsage, d.output)
	}
	name := first(pos)
	orig, cur, w, done, err := builds(ctx, &s, &d, kind, name, kind == "ks", stdout)
	if err != nil {
		return err
	}
	defer done()
	a, b := s.pick(orig, kind, name), s.pick(cur, kind, name)
	if len(a) == 0 && len(b) == 0 {
		_, err := fmt.Fprintln(w, s.notFound(kindLabel(kind), name))
		return err
	}
	for _, side := range [][]*gitops.NodeResult{a, b} {
		for i, n := range side {
			if n.Status == gitops.StatusOK {
				c := *n
				c.Objects = s.objects(n)
				side[i] = &c
			}
		}
	}
	diff := gitops.Compare(a, b, gitops.DiffOptions{Context: d.unified, StripAttrs: d.strip, LimitBytes: d.limitBytes})
	failed := 0
	for _, side := range [][]*gitops.NodeResult{b, a} {
		for _, n := range side {
			if n.Status == gitops.StatusFailed {
				fmt.Fprintf(stderr, "%s %s/%s failed: %s\n", n.Kind, n.Namespace, n.Name, n.Error)
				failed++
			}
		}
	}
	switch d.output {
	case "yaml":
		err = diff.WriteYAML(w)
	case "json":
		err = diff.WriteJSON(w)
	default:
		err = diff.WriteUnified(w)
	}
	if err == nil && failed > 0 {
		// The diff leaves those nodes out: say so with the exit code.
		err = fmt.Errorf("%d builds failed; their objects are not in the diff", failed)
	}
	return err
}

// runDiffImages lists the images each Kustomization and HelmRelease
// deploys in one version and not the other.
func runDiffImages(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var (
		s selector
		d diffFlags
	)
	fs := addDiffFlags(&s, &d, "diff images", stderr)
	if _, err := parse(fs, args); err != nil {
		return err
	}
	// Images are everywhere: all namespaces unless -n is given.
	s.all = true
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "n" || f.Name == "namespace" {
			s.all = false
		}
	})
	orig, cur, w, done, err := builds(ctx, &s, &d, "ks", "", false, stdout)
	if err != nil {
		return err
	}
	defer done()
	pick := func(res *gitops.Result) []*gitops.NodeResult {
		return append(s.pick(res, "ks", ""), s.pick(res, "hr", "")...)
	}
	diffs := gitops.CompareImages(pick(orig), pick(cur))
	if d.output == "yaml" || d.output == "json" {
		if diffs == nil {
			diffs = []gitops.ImageDiff{}
		}
		return structured(w, d.output, diffs)
	}
	for _, id := range diffs {
		fmt.Fprintf(w, "%s: %s/%s\n", id.Kind, id.Namespace, id.Name)
		for _, img := range id.Removed {
			fmt.Fprintf(w, "- %s\n", img)
		}
		for _, img := range id.Added {
			fmt.Fprintf(w, "+ %s\n", img)
		}
	}
	return nil
}
