package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/fleetkit/fleetkit/deprecation/gitops"
)

// runBuild prints what Kustomizations (build ks), HelmReleases (build hr)
// or both (build all; HelmReleases with --enable-helm) render, as one
// YAML stream. A node that fails to build is reported on stderr and the
// exit code is 1; the others are still printed.
func runBuild(ctx context.Context, kind string, args []string, stdout, stderr io.Writer) error {
	var s selector
	fs := newFlags("build "+kind, &s, true, stderr)
	var enableHelm bool
	if kind == "all" {
		optional(fs, &enableHelm, "enable-helm", false, "render the HelmReleases too")
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	name := ""
	if kind == "all" {
		// flux-local takes the path as build all's argument.
		if len(pos) > 0 {
			s.path = pos[0]
		}
		s.all = true
	} else {
		name = first(pos)
	}
	r, err := start(ctx, &s, kind, name, func(o *gitops.Options) {
		o.NoRender = kind == "ks" || (kind == "all" && !enableHelm)
	}, stdout)
	if err != nil {
		return err
	}
	defer r.close()
	var nodes []*gitops.NodeResult
	if r.found {
		switch kind {
		case "all":
			nodes = s.pick(r.res, "ks", "")
			if enableHelm {
				nodes = append(nodes, s.pick(r.res, "hr", "")...)
			}
		default:
			nodes = s.pick(r.res, kind, name)
		}
	}
	if len(nodes) == 0 && kind != "all" {
		fmt.Fprintln(stderr, s.notFound(kindLabel(kind), name))
		return nil
	}
	var objs []gitops.Object
	failed := 0
	for _, n := range nodes {
		switch n.Status {
		case gitops.StatusFailed:
			fmt.Fprintf(stderr, "%s %s/%s failed: %s\n", n.Kind, n.Namespace, n.Name, n.Error)
			failed++
			continue
		case gitops.StatusSkipped:
			if !errors.Is(n.Err, gitops.ErrNotRendered) {
				fmt.Fprintf(stderr, "%s %s/%s skipped: %s\n", n.Kind, n.Namespace, n.Name, n.Error)
			}
			continue
		}
		objs = append(objs, s.objects(n)...)
	}
	if err := writeObjects(r.w, objs); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d failed to build", failed, len(nodes))
	}
	return nil
}

// relPath is how a cluster's path is shown: as given, cleaned.
func relPath(p string) string {
	return strings.TrimPrefix(filepath.ToSlash(filepath.Clean(p)), "./")
}
