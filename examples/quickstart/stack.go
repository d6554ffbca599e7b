package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/errgroup"

	"github.com/fleetkit/fleetkit/balancer"
	"github.com/fleetkit/fleetkit/internal/httpserver"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/process"
	"github.com/fleetkit/fleetkit/rollout"
)

// versions are the linter versions every language may run.
var versions = []string{"1.0", "1.1", "1.2", "2.0"}

// stackConfig is what the flags set.
type stackConfig struct {
	LBAddr, MMAddr string
	Secret         string // the balancer's admin secret
	MMSecret       string // the machine manager's API secret; "" for none
	// MaxMachinesPerLanguage and MaxMachines are rollout.Options'.
	MaxMachinesPerLanguage, MaxMachines int
	Machines                            int
	HealthInterval                      time.Duration
	LBTimeout                           time.Duration // the Proxy's Timeout; 0 is its default
	LinterBin                           string        // the linter binary (resolved)
	Languages                           []string
	Version                             string
	StepAfter                           time.Duration // automatic mode; 0 is off
	MaxErrorRate                        float64
	ReplaceUnhealthy                    bool
	Logger                              *slog.Logger
	MachineOutput                       io.Writer
	// Provider, when set, replaces the process provider (tests run the
	// same fleet on Docker); Image is then the image prefix of each
	// version ("fleetkit/linter" → fleetkit/linter:1.0).
	Provider machines.Provider
	Image    string
}

// stack is the running fleet.
type stack struct {
	LBURL, MMURL string
	Balancer     *balancer.Balancer
	Manager      *rollout.Manager
}

// runStack starts the balancer, the machine manager and the first machines,
// calls ready once they are up, and blocks until ctx is done; then it shuts
// the servers down and removes every machine.
func runStack(ctx context.Context, cfg stackConfig, ready func(*stack)) error {
	log := cfg.Logger
	reg := prometheus.NewRegistry()
	bal, err := balancer.New(balancer.Options{Registerer: reg, Logger: log})
	if err != nil {
		return err
	}
	proxy, err := balancer.NewProxy(bal, balancer.ProxyOptions{Registerer: reg, Logger: log, Timeout: cfg.LBTimeout})
	if err != nil {
		return err
	}
	defer proxy.CloseIdleConnections()
	// /metrics is part of the admin API here: the listener serves the
	// public API too.
	admin, err := balancer.NewAdmin(bal, balancer.AdminOptions{Secret: cfg.Secret,
		Metrics: promhttp.HandlerFor(reg, promhttp.HandlerOpts{})})
	if err != nil {
		return err
	}
	lbMux := http.NewServeMux()
	lbMux.Handle("/lint/", proxy)
	lbMux.Handle("/", admin)

	provider := cfg.Provider
	if provider == nil {
		pp, err := process.New(process.Options{Name: "quickstart", StopTimeout: 5 * time.Second, Output: cfg.MachineOutput})
		if err != nil {
			return err
		}
		defer pp.Close() // graceful shutdown: every machine is stopped
		provider = pp
	}

	langs := map[string]rollout.Language{}
	for _, l := range cfg.Languages {
		vs := map[string]rollout.VersionSpec{}
		for _, v := range versions {
			vs[v] = rollout.VersionSpec{Command: cfg.LinterBin}
			if cfg.Image != "" {
				vs[v] = rollout.VersionSpec{Image: cfg.Image + ":" + v}
			}
		}
		langs[l] = rollout.Language{Version: cfg.Version, Versions: vs}
	}
	opts := rollout.Options{
		Languages:              langs,
		HealthInterval:         cfg.HealthInterval,
		StartTimeout:           30 * time.Second,
		RemoveTimeout:          5 * time.Second,
		Name:                   "quickstart",
		MaxMachinesPerLanguage: cfg.MaxMachinesPerLanguage,
		MaxMachines:            cfg.MaxMachines,
		IsNotFound:             func(err error) bool { return errors.Is(err, balancer.ErrUnknownBackend) },
		Registerer:             reg, // served with the balancer's at the balancer's /metrics
		Logger:                 log,
		ReplaceUnhealthy:       cfg.ReplaceUnhealthy,
		// The in-process balancer's counters: the page's charts, and what
		// the automatic mode judges.
		Metrics: rollout.NewBalancerMetrics(reg, rollout.CounterOptions{}),
	}
	if cfg.StepAfter > 0 {
		opts.Auto = &rollout.AutoOptions{
			StepAfter:    cfg.StepAfter,
			MaxErrorRate: cfg.MaxErrorRate,
		}
	}
	// The in-process balancer is the Router: no admin round trip needed.
	mgr, err := rollout.New(provider, bal, opts)
	if err != nil {
		return err
	}
	mmMux := http.NewServeMux()
	mmMux.Handle("/", rollout.NewHandler(mgr, rollout.HandlerOptions{Logger: log, Secret: cfg.MMSecret}))

	lbLn, err := httpserver.Listen(cfg.LBAddr)
	if err != nil {
		return err
	}
	mmLn, err := httpserver.Listen(cfg.MMAddr)
	if err != nil {
		_ = lbLn.Close()
		return err
	}
	st := &stack{
		LBURL:    "http://" + lbLn.Addr().String(),
		MMURL:    "http://" + mmLn.Addr().String(),
		Balancer: bal,
		Manager:  mgr,
	}

	// The balancer's lint requests take balancer.Server's fast path, as in
	// examples/loadbalancer; the rest of lbMux is served by net/http.
	lbFront, err := balancer.NewServer(proxy, balancer.ServerOptions{Fallback: lbMux, HTTP: httpserver.New(nil), Logger: log,
		EventLoop: true})
	if err != nil {
		_ = lbLn.Close()
		_ = mmLn.Close()
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return httpserver.Run(gctx, lbFront, lbLn, 5*time.Second) })
	g.Go(func() error { return httpserver.Run(gctx, httpserver.New(mmMux), mmLn, 5*time.Second) })
	g.Go(func() error { return mgr.Run(gctx) })
	g.Go(func() error {
		start := time.Now()
		var cg errgroup.Group
		for _, l := range cfg.Languages {
			cg.Go(func() error {
				for range cfg.Machines {
					if _, err := mgr.Create(gctx, l); err != nil {
						return fmt.Errorf("starting the first %s machines: %w", l, err)
					}
				}
				return nil
			})
		}
		if err := cg.Wait(); err != nil {
			return err
		}
		log.Info("fleet ready", "machines per language", cfg.Machines, "took", time.Since(start).Round(time.Millisecond))
		if ready != nil {
			ready(st)
		}
		return nil
	})
	err = g.Wait()
	log.Info("shutting down: removing every machine")
	if rerr := removeAll(provider); err == nil {
		err = rerr
	}
	return err
}

// removeAll removes every machine of the provider (the process provider's
// Close would stop them too; a Docker one would leave them running).
func removeAll(p machines.Provider) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	all, err := p.List(ctx, nil)
	if err != nil {
		return err
	}
	var g errgroup.Group
	for _, m := range all {
		g.Go(func() error {
			if err := p.Remove(ctx, m.ID); err != nil && !errors.Is(err, machines.ErrNotFound) {
				return fmt.Errorf("removing machine %s: %w", m.Address, err)
			}
			return nil
		})
	}
	return g.Wait()
}
