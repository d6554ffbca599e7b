package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
	"github.com/fleetkit/fleetkit/examples/kdave/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], cli.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
	stop()
	os.Exit(code)
}

// features are what this binary adds to kdave's command line.
var features = cli.Features{
	RenderChart: func(ctx context.Context, path string, rules *deprecation.RuleSet, target deprecation.Version, namespace string, values map[string]any) ([]byte, error) {
		return helm.RenderChart(ctx, path, helm.RenderOptions{Rules: rules, Target: target, Namespace: namespace, Values: values})
	},
	Cluster: checkCluster,
	Flux:    checkFlux,
	Serve: func(ctx context.Context, args []string, stdio cli.IO) int {
		return runServe(ctx, args, stdio.Stderr)
	},
}

func run(ctx context.Context, args []string, stdio cli.IO) int {
	return cli.Run(ctx, args, stdio, features)
}
