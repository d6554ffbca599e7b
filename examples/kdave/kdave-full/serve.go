package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
	"github.com/fleetkit/fleetkit/examples/kdave/internal/cli"
	"github.com/fleetkit/fleetkit/internal/httpserver"
	"github.com/fleetkit/fleetkit/internal/kubeconfig"
)

const serveUsage = `usage: kdave serve [flags]

Exports the deprecated and removed Kubernetes APIs used by the cluster's
deployed Helm releases as Prometheus metrics:
  /metrics    the metrics (a scrape of stale data triggers a background scan)
  /health     200 when the last scan is fresh and succeeded, else 503
  /releases   the last scan as JSON

flags:
`

// serveConfig is what the serve flags parse into.
type serveConfig struct {
	addr         string
	kubeconfig   string
	kubeContext  string
	cache        deprecation.CacheOptions
	scan         helm.Options
	kdaveMetrics bool
}

// runServe implements `kdave serve`: it parses args, then serves until ctx
// is done and shuts down gracefully. It returns the exit code.
func runServe(ctx context.Context, args []string, stderr io.Writer) int {
	cfg, err := parseServeFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return deprecation.ExitOK
		}
		fmt.Fprintln(stderr, "kdave:", err)
		return deprecation.ExitError
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg.cache.Logger = log
	err = func() error {
		restCfg, err := restConfig(cfg.kubeconfig, cfg.kubeContext)
		if err != nil {
			return err
		}
		ln, err := httpserver.Listen(cfg.addr)
		if err != nil {
			return err
		}
		log.Info("kdave serve", "addr", ln.Addr().String(), "interval", cfg.cache.Interval, "page-size", cfg.scan.PageSize)
		return serve(ctx, restCfg, cfg, ln)
	}()
	if err != nil {
		fmt.Fprintln(stderr, "kdave:", err)
		return deprecation.ExitError
	}
	return deprecation.ExitOK
}

func parseServeFlags(args []string, stderr io.Writer) (serveConfig, error) {
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.addr, "addr", ":8000", "address to listen on")
	fs.StringVar(&cfg.kubeconfig, "kubeconfig", "", "kubeconfig `file` (default $KUBECONFIG, else ~/.kube/config, else the in-cluster config)")
	fs.StringVar(&cfg.kubeContext, "kube-context", "", "the kubeconfig `context` (default the current one)")
	fs.DurationVar(&cfg.cache.Interval, "interval", deprecation.DefaultCacheInterval, "age after which a scrape triggers a new scan")
	fs.DurationVar(&cfg.cache.Tolerance, "tolerance", 0, "how much older than -interval the data may get before /health fails (default interval/2)")
	fs.StringVar(&cfg.cache.DataFile, "data-file", "", "`file` where each scan is saved and loaded from at start when still fresh")
	fs.Int64Var(&cfg.scan.PageSize, "page-size", helm.DefaultPageSize, "release Secrets per LIST page")
	fs.IntVar(&cfg.scan.Workers, "workers", 0, "releases decoded and checked at once (default GOMAXPROCS)")
	fs.StringVar(&cfg.scan.Namespace, "namespace", "", "scan only this namespace (default all)")
	fs.BoolVar(&cfg.scan.ConfigMaps, "configmaps", false, "also scan releases stored by Helm's configmap driver")
	target := fs.String("target", "", "Kubernetes release to check against (default the cluster's version, read on every scan)")
	rulesFile := fs.String("rules", "", "extra rules `file` in pluto's versions.yaml format")
	fs.BoolVar(&cfg.kdaveMetrics, "kdave-metrics", false, "also export kdave's metrics (wf_k8s_deprecated_versions_info, ...) for existing dashboards")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), serveUsage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return cfg, fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	if *target != "" {
		v, err := deprecation.ParseVersion(*target)
		if err != nil {
			return cfg, err
		}
		cfg.scan.Target = v
	}
	cfg.scan.Rules = deprecation.DefaultRules()
	if *rulesFile != "" {
		extra, err := cli.LoadRules(*rulesFile)
		if err != nil {
			return cfg, err
		}
		cfg.scan.Rules = deprecation.Merge(cfg.scan.Rules, extra)
	}
	return cfg, nil
}

// restConfig loads the client configuration (kubeconfig.Load): the file named,
// else $KUBECONFIG or ~/.kube/config, else the in-cluster configuration;
// kubeContext picks a context of the kubeconfig ("" the current one).
func restConfig(path, kubeContext string) (*rest.Config, error) {
	cfg, _, err := kubeconfig.Load(path, kubeContext)
	return cfg, err
}

// exporter is the serve command's wiring: a cache of scans of the
// cluster's releases, its collector and the HTTP handler.
type exporter struct {
	cache   *deprecation.Cache
	handler http.Handler
}

// newExporter wires the scanner, cache, collector and handler for the
// cluster that restCfg reaches.
func newExporter(restCfg *rest.Config, cfg serveConfig) (*exporter, error) {
	restCfg = rest.CopyConfig(restCfg)
	// Release Secrets are large; protobuf is cheaper to decode than JSON.
	restCfg.ContentType = "application/vnd.kubernetes.protobuf"
	restCfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, err
	}
	scanner, err := helm.New(client, cfg.scan)
	if err != nil {
		return nil, err
	}
	cache, err := deprecation.NewCache(scanner, cfg.cache)
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if _, err := deprecation.NewCollector(cache.Report, deprecation.CollectorOptions{Registerer: reg, Kdave: cfg.kdaveMetrics}); err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.Handle("/health", cache.HealthHandler())
	mux.Handle("/releases", cache.ReleasesHandler())
	return &exporter{cache: cache, handler: mux}, nil
}

// serve runs the exporter on ln until ctx is done: the cache's background
// scans and the HTTP server, both stopped gracefully.
func serve(ctx context.Context, restCfg *rest.Config, cfg serveConfig, ln net.Listener) error {
	exp, err := newExporter(restCfg, cfg)
	if err != nil {
		ln.Close()
		return err
	}
	defer exp.cache.Close()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return exp.cache.Run(gctx) })
	srv := httpserver.NewWithLogger(exp.handler, cfg.cache.Logger)
	g.Go(func() error { return httpserver.Run(gctx, srv, ln, 5*time.Second) })
	return g.Wait()
}
