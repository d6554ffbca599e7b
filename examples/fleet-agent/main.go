// Command fleet-agent is the agent of the fleet manager's agent data
// plane: it runs in a data-plane cluster, pulls the instances the fleet
// manager (the control plane) placed on its cluster, server-side applies
// their Kubernetes objects in -namespace, and reports their status and its
// heartbeat back (package fleet/agent).
//
//	fleet-agent -control-plane https://fleet.example.com -kind dinosaur -cluster c1 \
//	    -token-file /var/run/fleet-agent/token -namespace dinosaurs
//
// The token is the cluster's (`fleet-manager cluster-token -cluster c1 -kind
// dinosaur`). The cluster is reached through -kubeconfig, else
// $KUBECONFIG or ~/.kube/config, else the in-cluster configuration of the
// agent's Pod; its service account needs get, list, watch, create, patch
// and delete on Secrets, ConfigMaps, Services and Deployments, and get,
// list, watch on Pods, in -namespace. /healthz answers 200 once the agent
// has read the namespace's objects; /metrics serves its Prometheus
// metrics.
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
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/agent"
	"github.com/fleetkit/fleetkit/internal/httpserver"
	"github.com/fleetkit/fleetkit/internal/kubeconfig"
)

// version is reported in heartbeats.
const version = "fleet-agent/1"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); errors.Is(err, flag.ErrHelp) {
		return
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "fleet-agent:", err)
		os.Exit(1)
	}
}

// run runs the agent with args until ctx is done; listening is told the
// address of the health and metrics server once it listens (tests).
func run(ctx context.Context, args []string, stderr io.Writer, listening func(addr string)) error {
	fs := flag.NewFlagSet("fleet-agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		opts      agent.Options
		kind      = fs.String("kind", "dinosaur", "fleet kind: dinosaur, kafka (or another kind's name)")
		tokenFile = fs.String("token-file", "", "file holding the cluster's token (required)")
		kubeFile  = fs.String("kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster)")
		hostMode  = fs.String("host-mode", "dns", "reported address: dns (<service>.<ns>.svc:8080) or clusterip (<ClusterIP>:8080)")
		addr      = fs.String("addr", ":8081", "listen address of /healthz and /metrics")
	)
	fs.StringVar(&opts.ControlPlane, "control-plane", "", "control plane base URL, http(s)://host:port (required)")
	fs.StringVar(&opts.Cluster, "cluster", "", "this cluster's id at the control plane (required)")
	fs.StringVar(&opts.Namespace, "namespace", "", "namespace of the instances' objects (default: the kubeconfig context's, or the agent Pod's)")
	fs.DurationVar(&opts.Resync, "resync", agent.DefaultResync, "longest time between two full looks at the desired instances and their objects")
	fs.DurationVar(&opts.Heartbeat, "heartbeat", agent.DefaultHeartbeat, "period of the heartbeat and of the complete status report")
	fs.IntVar(&opts.Capacity, "capacity", 0, "the cluster's capacity in units (0: unlimited)")
	fs.StringVar(&opts.Image, "image", agent.DefaultImage, "image of the per-instance service")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *tokenFile == "" {
		return errors.New("-token-file is required")
	}
	b, err := os.ReadFile(*tokenFile)
	if err != nil {
		return err
	}
	opts.Token = strings.TrimSpace(string(b))
	switch *kind {
	case fleet.Dinosaur.Name:
		opts.Kind = fleet.Dinosaur
	case fleet.Kafka.Name:
		opts.Kind = fleet.Kafka
	default:
		opts.Kind = fleet.Kind{Name: *kind}
	}
	opts.HostMode = agent.HostMode(*hostMode)
	opts.Version = version

	cfg, ns, err := kubeconfig.Load(*kubeFile, "")
	if err != nil {
		return err
	}
	if opts.Namespace == "" {
		opts.Namespace = ns
	}
	// Hundreds of instances are three objects each: client-go's default
	// 5 requests a second would make the agent the bottleneck.
	cfg.QPS, cfg.Burst = 100, 200
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opts.Registerer = reg
	opts.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	a, err := agent.New(cs, opts)
	if err != nil {
		return err
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if err := a.Healthy(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	ln, err := httpserver.Listen(*addr)
	if err != nil {
		return err
	}
	if listening != nil {
		listening(ln.Addr().String())
	}
	opts.Logger.Info("fleet-agent: serving /healthz and /metrics", "addr", ln.Addr().String(), "control_plane", opts.ControlPlane,
		"kind", opts.Kind.Name, "cluster", opts.Cluster, "namespace", opts.Namespace)
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return httpserver.Run(ctx, httpserver.New(mux), ln, 5*time.Second) })
	g.Go(func() error { return a.Run(ctx) })
	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
