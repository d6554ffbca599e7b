// Command loadbalancer is fleetkit's weighted load balancer for linter
// fleets: the public API (POST /lint/{language}) and the admin API
// (/health, /add, /remove, /ratio, /backends) of package balancer, plus
// /metrics, on one listener or two.
//
//	FLEETKIT_SECRET_KEY=... loadbalancer -addr 127.0.0.1:8080 [-admin-addr 127.0.0.1:8081] [-ratio-total 100]
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

	"github.com/fleetkit/fleetkit/balancer"
	"github.com/fleetkit/fleetkit/internal/httpserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil); err != nil {
		fmt.Fprintln(os.Stderr, "loadbalancer:", err)
		stop()
		os.Exit(1)
	}
}

// run serves until ctx is done, then drains. ready, when not nil, receives
// the public listener's address once it listens.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready chan<- string) error {
	fs := flag.NewFlagSet("loadbalancer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address of the public API (and of the admin API without -admin-addr)")
	adminAddr := fs.String("admin-addr", "", "separate listen address of the admin API and /metrics (default: the -addr listener)")
	secret := fs.String("secret", "", "admin secret (default: $FLEETKIT_SECRET_KEY); required")
	ratioTotal := fs.Int("ratio-total", balancer.DefaultRatioTotal, "sum every version ratio must have")
	timeout := fs.Duration("timeout", balancer.DefaultProxyTimeout, "bound of one upstream attempt (504 after it)")
	ejectAfter := fs.Int("eject-after", balancer.DefaultEjectAfter, "consecutive failures that eject a backend (negative: never)")
	checkInterval := fs.Duration("check-interval", 0, "probe ejected backends' /health this often and readmit those that answer (0: off)")
	drain := fs.Duration("drain-timeout", 30*time.Second, "how long shutdown waits for in-flight requests")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if *secret == "" {
		*secret = getenv("FLEETKIT_SECRET_KEY")
	}
	if *secret == "" {
		return errors.New("an admin secret is required: pass -secret or set FLEETKIT_SECRET_KEY")
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	bal, err := balancer.New(balancer.Options{RatioTotal: *ratioTotal, EjectAfter: *ejectAfter, Registerer: reg})
	if err != nil {
		return err
	}
	proxy, err := balancer.NewProxy(bal, balancer.ProxyOptions{Timeout: *timeout, Registerer: reg, Logger: logger})
	if err != nil {
		return err
	}
	admin, err := balancer.NewAdmin(bal, balancer.AdminOptions{Secret: *secret})
	if err != nil {
		return err
	}

	public := http.NewServeMux()
	public.Handle("/lint/", proxy)
	internal := public
	if *adminAddr != "" && *adminAddr != *addr {
		internal = http.NewServeMux()
	}
	internal.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	internal.Handle("/", admin)

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	g, ctx := errgroup.WithContext(ctx)
	serve := func(name, addr string, srv httpserver.Server) (string, error) {
		ln, err := httpserver.Listen(addr)
		if err != nil {
			return "", fmt.Errorf("%s listener: %w", name, err)
		}
		logger.Info("listening", "api", name, "addr", ln.Addr().String())
		// Run drains in-flight requests when ctx ends.
		g.Go(func() error { return httpserver.Run(ctx, srv, ln, *drain) })
		return ln.Addr().String(), nil
	}
	name := "public+admin"
	if internal != public {
		name = "public"
	}
	var root http.Handler = public
	if internal == public {
		// One listener: /lint/ straight to the proxy, the rest to the mux.
		root = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/lint/") {
				proxy.ServeHTTP(w, r)
				return
			}
			public.ServeHTTP(w, r)
		})
	}
	// The public listener's lint requests take balancer.Server's fast
	// path; everything else there (and the admin API) goes to net/http.
	front, err := balancer.NewServer(proxy, balancer.ServerOptions{Fallback: root, HTTP: httpserver.New(nil)})
	if err != nil {
		stop()
		return errors.Join(err, g.Wait())
	}
	publicAddr, err := serve(name, *addr, front)
	if err != nil {
		stop()
		return errors.Join(err, g.Wait())
	}
	if internal != public {
		if _, err := serve("admin", *adminAddr, httpserver.New(internal)); err != nil {
			stop()
			return errors.Join(err, g.Wait())
		}
	}
	if ready != nil {
		ready <- publicAddr
	}
	if *checkInterval > 0 {
		checker, err := balancer.NewChecker(bal, balancer.CheckerOptions{Interval: *checkInterval})
		if err != nil {
			stop()
			return errors.Join(err, g.Wait())
		}
		g.Go(func() error { return checker.Run(ctx) })
	}
	err = g.Wait()
	proxy.CloseIdleConnections()
	return err
}
