package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fleetkit/fleetkit/deprecation/gitops"
)

// errTestsFailed ends a test run with failures: exit code 1, the report
// already printed.
var errTestsFailed = errors.New("tests failed")

// runTest builds every Kustomization (and with --enable-helm every
// HelmRelease) and reports each failure with its node and cause; one
// failure never stops the others. With --validate, every rendered object
// must be of an API the target serves (a built-in API it has not
// removed, a CRD of the repository, or --api-versions).
func runTest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var s selector
	fs := newFlags("test", &s, true, stderr)
	var enableHelm, validate bool
	optional(fs, &enableHelm, "enable-helm", false, "render the HelmReleases too")
	fs.BoolVar(&validate, "validate", false, "fail objects whose apiVersion and kind the target Kubernetes version (--kube-version) does not serve")
	verbosity := 0
	fs.Func("verbose", "list every test (repeatable)", func(string) error { verbosity++; return nil })
	fs.Func("v", "short for --verbose", func(string) error { verbosity++; return nil })
	fs.IntVar(&verbosity, "verbosity", 0, "verbosity `N`")
	for _, name := range []string{"verbose", "v"} {
		f := fs.Lookup(name)
		f.Value = countFlag{f.Value}
	}
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		s.path = pos[0]
	}
	s.all = true
	r, err := start(ctx, &s, "ks", "", func(o *gitops.Options) { o.NoRender = !enableHelm }, stdout)
	if err != nil {
		return err
	}
	defer r.close()
	res, w := r.res, r.w
	cluster := "./" + relPath(s.path)
	if filepath.IsAbs(s.path) {
		cluster = filepath.Clean(s.path)
	}
	ksName := make(map[string]string)
	for _, n := range res.Nodes {
		if n.Kind == "Kustomization" {
			ksName[n.ID] = n.Name
		}
	}
	var (
		passed, failed, skipped int
		failures                []string
	)
	nodes := s.pick(res, "ks", "")
	if enableHelm {
		nodes = append(nodes, s.pick(res, "hr", "")...)
	}
	for _, n := range nodes {
		test := cluster + "::" + n.Name + "::kustomization"
		if n.Kind == "HelmRelease" {
			test = cluster + "::" + ksName[n.Owner] + "::" + n.Namespace + "/" + n.Name
		}
		status, cause := "PASSED", ""
		switch n.Status {
		case gitops.StatusFailed:
			status, cause = "FAILED", n.Error
		case gitops.StatusSkipped:
			status, cause = "SKIPPED", n.Error
		}
		if validate && status == "PASSED" {
			var bad []string
			for _, o := range n.Objects {
				if !res.Served(o.APIVersion, o.Kind) {
					bad = append(bad, fmt.Sprintf("%s %s: %s is not served", o.Kind, strings.TrimPrefix(o.Namespace+"/"+o.Name, "/"), o.APIVersion))
				}
			}
			if len(bad) > 0 {
				status, cause = "FAILED", strings.Join(bad, "; ")
			}
		}
		switch status {
		case "PASSED":
			passed++
		case "FAILED":
			failed++
			failures = append(failures, fmt.Sprintf("FAILED %s - %s", test, firstLine(cause)))
		default:
			skipped++
		}
		if verbosity > 0 {
			fmt.Fprintf(w, "%s %s\n", test, status)
		}
	}
	slices.Sort(failures)
	for _, f := range failures {
		fmt.Fprintln(w, f)
	}
	summary := fmt.Sprintf("%d passed, %d failed", passed, failed)
	if skipped > 0 {
		summary += fmt.Sprintf(", %d skipped", skipped)
	}
	fmt.Fprintln(w, summary)
	if failed > 0 {
		return errTestsFailed
	}
	return nil
}

// countFlag makes a flag.Func a boolean flag (-v, -v -v).
type countFlag struct{ flag.Value }

func (countFlag) IsBoolFlag() bool { return true }

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
