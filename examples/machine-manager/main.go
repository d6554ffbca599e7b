// Command machine-manager is the linter fleet's machine manager: it creates
// linter machines (Docker containers, local processes, or Pods on
// Kubernetes), rolls new
// versions out step by step, and drives a remote load balancer through its
// admin API.
//
//	machine-manager -config machine-manager.yaml -provider process -addr 127.0.0.1:5000
//
// The configuration file (YAML or JSON) is described by config.File;
// example.yaml next to this file is a complete one. The API is the wire
// contract's machine manager (/create, /remove, /delete, /init-update,
// /update, /rollback, /status) plus an HTML status page at / and the
// manager's Prometheus metrics at /metrics.
//
// Mutating calls must be application/json. With a secret (-secret-file, or
// $FLEETKIT_MANAGER_SECRET) they must carry it in the X-Secret-Key header;
// without one the manager refuses to listen beyond loopback.
//
// Stopping the manager (SIGTERM, SIGINT, even SIGKILL) is not stopping the
// fleet: Docker containers keep running, and so do process machines when
// they are recorded in a machines file (-machines-file, by default the
// configuration's state_file + ".machines"); the next manager with the
// same -name adopts them, and the balancer keeps serving them meanwhile.
// The explicit end of a fleet is
//
//	machine-manager teardown -config machine-manager.yaml -provider process
//
// With -provider kubernetes each machine is a Pod in -namespace (default:
// the kubeconfig context's, or the manager's own Pod's), reached through
// -kubeconfig, else $KUBECONFIG or ~/.kube/config, else the in-cluster
// configuration of the manager's Pod (its service account needs get, list,
// watch, create and delete on Pods, and get on pods/log). The manager must
// reach Pod IPs: it runs in the cluster, or on a node. The chart in
// deploy/linter-fleet runs it that way. With -balancer-service the
// balancer is several replicas behind that Service: the manager finds them
// through its EndpointSlices and keeps each one in step (replicas.go).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientset "k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/balancer"
	"github.com/fleetkit/fleetkit/examples/machine-manager/config"
	"github.com/fleetkit/fleetkit/internal/httpserver"
	"github.com/fleetkit/fleetkit/internal/kubeconfig"
	"github.com/fleetkit/fleetkit/internal/secret"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/docker"
	"github.com/fleetkit/fleetkit/machines/kubernetes"
	"github.com/fleetkit/fleetkit/machines/process"
	"github.com/fleetkit/fleetkit/rollout"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "machine-manager:", err)
		os.Exit(1)
	}
}

// run parses args, wires the manager and serves until ctx is done; with
// "teardown" as its first argument it removes the fleet instead. ready,
// when set, gets the API's address once it listens (tests use it).
func run(ctx context.Context, args []string, stderr io.Writer, ready func(addr string)) error {
	teardown := len(args) > 0 && args[0] == "teardown"
	name := "machine-manager"
	if teardown {
		args, name = args[1:], "machine-manager teardown"
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		addr         = fs.String("addr", "127.0.0.1:5000", "listen address HOST:PORT of the API")
		provider     = fs.String("provider", "docker", "what a machine is: docker (containers), process (local processes) or kubernetes (Pods)")
		configFile   = fs.String("config", "", "configuration file, YAML or JSON (required)")
		mgrName      = fs.String("name", rollout.DefaultName, "this manager's name: its machines are labelled with it, and a restarted manager with the same name finds them again")
		verbose      = fs.Bool("v", false, "log debug messages (and, without a machines file, the machines' output)")
		apiFile      = fs.String("secret-file", "", "file holding the API secret that every mutating call must carry in the X-Secret-Key header (default: $FLEETKIT_MANAGER_SECRET); required to listen beyond loopback. The balancer's secret is in the configuration (balancer.secret_file)")
		kubeFile     = fs.String("kubeconfig", "", "-provider kubernetes: the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the in-cluster configuration)")
		kubeContext  = fs.String("kube-context", "", "-provider kubernetes: the kubeconfig context (default: the current one)")
		namespace    = fs.String("namespace", "", "-provider kubernetes: where the machines' Pods run (default: the context's namespace, or in a cluster the manager's own)")
		lbService    = fs.String("balancer-service", "", "-provider kubernetes: the balancer runs as replicas behind this Service of -namespace; every ready endpoint of its EndpointSlices (port -balancer-port) is kept in step, rather than balancer.address alone (needs get, list and watch on endpointslices)")
		lbPort       = fs.String("balancer-port", "admin", "-balancer-service: the name of the Service's port of the balancer's admin API")
		machinesFile = fs.String("machines-file", "", "-provider process: where the machines are recorded (PIDs, start times), so that they outlive the manager and the next one adopts them (default: the configuration's state_file + \".machines\"; without either, machines stop with the manager)")
	)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: machine-manager [flags]           serve the API; stopping it leaves the machines running\n"+
			"       machine-manager teardown [flags]  remove every machine of this manager (and their backends)\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	apiSecret, err := secret.Load(secret.Source{File: *apiFile, Env: "FLEETKIT_MANAGER_SECRET"})
	if err != nil {
		return err
	}
	if !teardown && apiSecret == "" && !secret.Loopback(*addr) {
		return fmt.Errorf("-addr %s is reachable beyond this machine: give an API secret (-secret-file or $FLEETKIT_MANAGER_SECRET), or listen on loopback", *addr)
	}
	if *configFile == "" {
		return errors.New("-config is required (see examples/machine-manager/example.yaml)")
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	cfg, err := config.Load(*configFile)
	if err != nil {
		return err
	}
	if err := cfg.RequireRunnable(*provider); err != nil {
		return err
	}
	if cfg.Balancer.Address == "" {
		return fmt.Errorf("%s: balancer.address is required: the manager drives the balancer's admin API", *configFile)
	}
	client, err := balancer.NewClient(cfg.Balancer.Address, cfg.Balancer.Secret, balancer.ClientOptions{})
	if err != nil {
		return err
	}
	var rtr rollout.Router = router{client}

	var mp machines.Provider
	switch *provider {
	case "process":
		file := *machinesFile
		if file == "" && cfg.StateFile != "" {
			file = cfg.StateFile + ".machines"
		}
		var out io.Writer
		if *verbose && file == "" {
			out = stderr
		}
		// With a machines file the fleet outlives the manager: a restarted
		// manager adopts it, and only teardown removes it.
		p, err := process.New(process.Options{Name: *mgrName, StopTimeout: cfg.RemoveTimeout, Output: out,
			StateFile: file, KeepOnClose: file != ""})
		if err != nil {
			return err
		}
		defer p.Close()
		if file == "" {
			log.Warn("no state_file nor -machines-file: the process machines stop with the manager")
		}
		mp = p
	case "docker":
		p, err := docker.New(docker.Options{Name: *mgrName, StopTimeout: cfg.RemoveTimeout})
		if err != nil {
			return err
		}
		defer p.Close()
		// One call before any concurrent use: it fails fast when the engine
		// is unreachable, and the Docker client negotiates its API version
		// on its first request, which races when two requests are first
		// (the exit watcher's event stream and a List).
		if _, err := p.List(ctx, nil); err != nil {
			return fmt.Errorf("-provider docker: %w", err)
		}
		mp = p
	case "kubernetes":
		restCfg, ns, err := kubeconfig.Load(*kubeFile, *kubeContext)
		if err != nil {
			return fmt.Errorf("-provider kubernetes: %w", err)
		}
		cs, err := clientset.NewForConfig(restCfg)
		if err != nil {
			return fmt.Errorf("-provider kubernetes: %w", err)
		}
		if *namespace != "" {
			ns = *namespace
		}
		// One call before anything else: it fails fast when the API server
		// is unreachable or the manager may not list Pods there (the
		// provider's informer would retry for ever).
		if err := canListPods(ctx, cs, ns); err != nil {
			return fmt.Errorf("-provider kubernetes: %w", err)
		}
		if *lbService != "" {
			r, err := newReplicas(ctx, cs, ns, *lbService, *lbPort, cfg.Balancer.Secret)
			if err != nil {
				return fmt.Errorf("-balancer-service: %w", err)
			}
			defer r.Close()
			rtr = r
		}
		p, err := kubernetes.New(cs, kubernetes.Options{Name: *mgrName, Namespace: ns, StopTimeout: cfg.RemoveTimeout})
		if err != nil {
			return err
		}
		defer p.Close()
		mp = p
	default:
		return fmt.Errorf("-provider %q: want docker, process or kubernetes", *provider)
	}

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opts := cfg.Options()
	opts.Name = *mgrName
	opts.Registerer = reg
	opts.Logger = log
	opts.IsNotFound = func(err error) bool { return errors.Is(err, balancer.ErrUnknownBackend) }
	mgr, err := rollout.New(mp, rtr, opts)
	if err != nil {
		return err
	}
	if teardown {
		if err := mgr.Teardown(ctx); err != nil {
			return fmt.Errorf("teardown: %w", err)
		}
		log.Info("teardown: every machine removed", "provider", *provider, "name", *mgrName)
		return nil
	}
	mux := http.NewServeMux()
	mux.Handle("/", rollout.NewHandler(mgr, rollout.HandlerOptions{Logger: log, Secret: apiSecret}))
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ln, err := httpserver.Listen(*addr)
	if err != nil {
		return err
	}

	log.Info("machine manager listening", "addr", ln.Addr().String(), "provider", *provider, "config", *configFile)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return mgr.Run(ctx) })
	g.Go(func() error { return httpserver.Run(ctx, httpserver.New(mux), ln, 0) })
	if ready != nil {
		ready(ln.Addr().String())
	}
	return g.Wait()
}

// canListPods lists one Pod of ns, within 30 seconds.
func canListPods(ctx context.Context, cs clientset.Interface, ns string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return fmt.Errorf("listing the Pods of namespace %s: %w", ns, err)
	}
	return nil
}

// router is the remote balancer as the manager sees it: *balancer.Client
// reads back what the balancer holds (rollout.RouterReader), its
// Generation (a restarted balancer is noticed at once) and its ejections.
type router struct{ *balancer.Client }

var (
	_ rollout.RouterReader     = router{}
	_ rollout.RouterGeneration = router{}
	_ rollout.EjectionReporter = router{}
)
