package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/gitops"
)

// sourcesFlag collects -sources name=path mappings.
type sourcesFlag map[string]string

func (s sourcesFlag) String() string { return fmt.Sprint(map[string]string(s)) }

func (s sourcesFlag) Set(v string) error {
	for _, kv := range strings.Split(v, ",") {
		name, path, ok := strings.Cut(kv, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("want name=path, got %q", kv)
		}
		s[name] = path
	}
	return nil
}

// checkFlux builds the Flux repository at path, prints every Kustomization
// and HelmRelease with its status, images and findings, and returns the
// checker's exit code (a failed node counts as an error).
func checkFlux(ctx context.Context, c *deprecation.Checker, opts gitops.Options, format deprecation.Format, stdout io.Writer) (int, error) {
	opts.Checker = c
	res, err := gitops.Build(ctx, opts)
	if err != nil {
		return deprecation.ExitError, err
	}
	rep := &deprecation.Report{Target: c.Target()}
	for _, n := range res.Nodes {
		rep.Add(deprecation.Result{Source: n.ID, Findings: n.Findings, Documents: n.Documents})
		if n.Status == gitops.StatusFailed {
			rep.AddError(n.ID, errors.New(n.Error))
		}
	}
	switch format {
	case deprecation.FormatTable:
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NODE\tKIND\tSTATUS\tOBJECTS\tFINDINGS\tIMAGES\tERROR")
		for _, n := range res.Nodes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\n", n.ID, n.Kind, n.Status, len(n.Objects), len(n.Findings),
				strings.Join(n.Images, ","), firstLine(n.Error))
		}
		if err := tw.Flush(); err != nil {
			return deprecation.ExitError, err
		}
		fmt.Fprintln(stdout)
		if err := rep.WriteTable(stdout); err != nil {
			return deprecation.ExitError, err
		}
	default:
		out := struct {
			Nodes  []*gitops.NodeResult `json:"nodes"`
			Target string               `json:"target"`
			Exit   int                  `json:"exitCode"`
		}{res.Nodes, c.Target().String(), rep.ExitCode()}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return deprecation.ExitError, err
		}
		if _, err := stdout.Write(append(b, '\n')); err != nil {
			return deprecation.ExitError, err
		}
	}
	return rep.ExitCode(), nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
