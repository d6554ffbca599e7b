package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/gitops"
	"github.com/fleetkit/fleetkit/examples/kdave/internal/cli"
)

// checkFlux builds the Flux repository at opts.Path, prints every
// Kustomization and HelmRelease with its status, images and findings, and
// returns the exit code (a failed node counts as an error).
func checkFlux(ctx context.Context, c *deprecation.Checker, opts cli.FluxOptions) (int, error) {
	res, err := gitops.Build(ctx, gitops.Options{
		Path: opts.Path, Only: opts.Only, Sources: opts.Sources, ChartCache: opts.ChartCache,
		IncludeCRDs: opts.IncludeCRDs, IncludeSecrets: opts.IncludeSecrets, APIVersions: opts.APIVersions,
		Checker: c,
	})
	if err != nil {
		return deprecation.ExitError, err
	}
	rep := &deprecation.Report{Target: c.Target(), Targets: c.Targets()}
	for _, n := range res.Nodes {
		rep.Add(deprecation.Result{Source: n.ID, Findings: n.Findings, Documents: n.Documents})
		if n.Status == gitops.StatusFailed {
			rep.AddError(n.ID, errors.New(n.Error))
		}
	}
	if opts.OnlyRemoved {
		rep = rep.OnlyRemoved()
	}
	code := rep.ExitCodeWith(opts.Exit)
	stdout := opts.Stdout
	switch opts.Write.Format {
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
	case deprecation.FormatJSON:
		out := struct {
			Nodes  []*gitops.NodeResult `json:"nodes"`
			Target string               `json:"target"`
			Exit   int                  `json:"exitCode"`
		}{res.Nodes, c.Target().String(), code}
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return deprecation.ExitError, err
		}
		if _, err := stdout.Write(append(b, '\n')); err != nil {
			return deprecation.ExitError, err
		}
	default:
		if err := rep.WriteWith(stdout, opts.Write); err != nil {
			return deprecation.ExitError, err
		}
	}
	return code, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
