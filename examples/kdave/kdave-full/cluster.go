package main

import (
	"context"
	"io"
	"log/slog"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
	"github.com/fleetkit/fleetkit/deprecation/kube"
	"github.com/fleetkit/fleetkit/examples/kdave/internal/cli"
)

// checkCluster implements `kdave check -cluster`: the deployed Helm
// releases (one source per release; corrupt ones are errors) and the
// apiVersions the live objects were written with (one source per object),
// checked against the target, or the cluster's version when it is zero.
// A progress line on a terminal stderr counts the releases.
func checkCluster(ctx context.Context, opts cli.ClusterOptions, stderr io.Writer) (*deprecation.Report, error) {
	restCfg, err := restConfig(opts.Kubeconfig, opts.Context)
	if err != nil {
		return nil, err
	}
	// Release Secrets are large; protobuf is cheaper to decode than JSON.
	protoCfg := rest.CopyConfig(restCfg)
	protoCfg.ContentType = "application/vnd.kubernetes.protobuf"
	client, err := kubernetes.NewForConfig(protoCfg)
	if err != nil {
		return nil, err
	}
	line := newProgressLine(stderr)
	releases, err := helm.New(client, helm.Options{Rules: opts.Rules, Target: opts.Target, ComponentTargets: opts.ComponentTargets,
		Namespace: opts.Namespace, Progress: line.update})
	if err != nil {
		return nil, err
	}
	checker, err := releases.Checker(ctx)
	if err != nil {
		return nil, err
	}
	rep := &deprecation.Report{Target: checker.Target(), Targets: checker.Targets()}
	if opts.Helm {
		sr, err := deprecation.ScanReleases(ctx, releases, nil)
		line.done()
		if err != nil {
			return nil, err
		}
		rep.Append(sr.Report())
	}
	if opts.APIResources {
		objects, err := kube.New(restCfg, kube.Options{Namespace: opts.Namespace, Logger: slog.New(slog.NewTextHandler(stderr, nil))})
		if err != nil {
			return nil, err
		}
		live, err := objects.Scan(ctx, checker)
		if err != nil {
			return nil, err
		}
		rep.Append(live)
	}
	return rep, nil
}
