package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
)

// checkPaths checks manifests with the checker, and renders the charts
// among paths (client-side, for the checker's target) before checking
// them. A chart that fails to render is an error entry, not the end of the
// run.
func checkPaths(ctx context.Context, c *deprecation.Checker, stdin io.Reader, valuesFile, namespace string, paths []string) (*deprecation.Report, error) {
	var charts, plain []string
	for _, p := range paths {
		if p != deprecation.Stdin && helm.IsChart(p) {
			charts = append(charts, p)
		} else {
			plain = append(plain, p)
		}
	}
	rep := &deprecation.Report{Target: c.Target()}
	if len(plain) > 0 {
		var err error
		if rep, err = c.CheckPaths(ctx, stdin, plain...); err != nil {
			return nil, err
		}
	}
	if len(charts) == 0 {
		return rep, nil
	}
	values, err := readValues(valuesFile)
	if err != nil {
		return nil, err
	}
	for _, chart := range charts {
		out, err := helm.RenderChart(ctx, chart, helm.RenderOptions{Target: c.Target(), Namespace: namespace, Values: values})
		if err != nil {
			rep.AddError(chart, err)
			continue
		}
		res, err := c.Check(ctx, chart, out)
		if err != nil {
			return nil, err
		}
		rep.Add(res)
	}
	return rep, nil
}

func readValues(path string) (map[string]any, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
