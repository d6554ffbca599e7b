// Command loadbalancer is fleetkit's weighted load balancer for linter
// fleets: the public API (POST /lint/{language}) and the admin API
// (/health, /add, /remove, /ratio, /backends) of package balancer on the
// public listener, as the wire contract has them; and the admin API with
// /metrics on a separate admin listener (127.0.0.1:8081 by default).
//
//	FLEETKIT_SECRET_KEY=... loadbalancer -addr 127.0.0.1:8080 [-admin-addr 127.0.0.1:8081] [-ratio-total 100]
//	loadbalancer -secret-file /etc/fleetkit/secret -addr :8080
//
// With -admin-addr "" there is one listener, and /metrics there answers
// only callers that give the admin secret (X-Secret-Key, or
// "Authorization: Bearer" as a Prometheus scrape config sends it).
//
// A restart loses no request when the listening sockets outlive the
// process — passed by a supervisor that holds them (systemd's socket
// activation: LISTEN_FDS, LISTEN_FDNAMES=public:admin) — and the state
// outlives it too (-state-file): on SIGTERM the balancer stops accepting,
// answers each kept-alive connection's next request with Connection: close
// (-lame-duck), drains, and the next process accepts the connections that
// queued meanwhile with the backends and ratios it had.
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
	"github.com/fleetkit/fleetkit/internal/secret"
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

// listening are the addresses run listens on.
type listening struct {
	public, admin string // admin is "" without a separate admin listener
}

// run serves until ctx is done, then drains. ready, when not nil, receives
// the listeners' addresses once they listen.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready chan<- listening) error {
	fs := flag.NewFlagSet("loadbalancer", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:8080", "listen address of the public API (which also serves the admin API, as the wire contract has it)")
	adminAddr := fs.String("admin-addr", "127.0.0.1:8081", `listen address of the admin API and /metrics; "" serves /metrics on -addr, to callers with the secret only`)
	secretFlag := fs.String("secret", "", "admin secret; shows in ps: prefer -secret-file or $FLEETKIT_SECRET_KEY")
	secretFile := fs.String("secret-file", "", "file holding the admin secret (default: $FLEETKIT_SECRET_KEY); a secret is required")
	ratioTotal := fs.Int("ratio-total", balancer.DefaultRatioTotal, "sum every version ratio must have")
	timeout := fs.Duration("timeout", balancer.DefaultProxyTimeout, "bound of one upstream attempt (504 after it; not counted against the backend)")
	maxAnswer := fs.Int64("max-response-body", balancer.DefaultMaxResponseBody, "answers up to this size are buffered; larger ones stream when they have a Content-Length, else are a 502")
	ejectAfter := fs.Int("eject-after", balancer.DefaultEjectAfter, "consecutive 5xx or connection failures that eject a backend (negative: never)")
	baseEjection := fs.Duration("base-ejection-time", balancer.DefaultBaseEjectionTime, "how long a first ejection lasts (n times as long for the n-th in a row, up to -max-ejection-time); negative: until a health check readmits")
	maxEjection := fs.Duration("max-ejection-time", balancer.DefaultMaxEjectionTime, "the longest ejection")
	maxEjectionPct := fs.Int("max-ejection-percent", balancer.DefaultMaxEjectionPercent, "most of a language's backends ejected at once, in percent (never its last one)")
	checkInterval := fs.Duration("check-interval", 0, "probe ejected backends' /health this often and readmit those that answer before their ejection time is over (0: off)")
	drain := fs.Duration("drain-timeout", 30*time.Second, "how long shutdown waits for in-flight requests")
	lameDuck := fs.Duration("lame-duck", time.Second, "after a stop signal, how long a kept-alive client connection may still bring one request (answered with Connection: close) before it is closed: a restart under load fails no request")
	eventLoop := fs.Bool("event-loop", true, "serve lint requests from one epoll event loop per core (Linux), client and upstream connections on the same loop, as NGINX's workers do; false: a goroutine per connection (about 1.5x the CPU per request). Anything unusual takes the goroutine path either way")
	stateFile := fs.String("state-file", "", "keep the backends and ratios set through the admin API in this file, and start from it: a restarted balancer serves at once (the machine manager re-asserts them too, within a second)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	adminSecret, err := secret.Load(secret.Source{Flag: *secretFlag, File: *secretFile, Env: "FLEETKIT_SECRET_KEY", Getenv: getenv})
	if err != nil {
		return err
	}
	if adminSecret == "" {
		return errors.New("an admin secret is required: pass -secret-file or set FLEETKIT_SECRET_KEY")
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	bal, err := balancer.New(balancer.Options{RatioTotal: *ratioTotal, EjectAfter: *ejectAfter, BaseEjectionTime: *baseEjection,
		MaxEjectionTime: *maxEjection, MaxEjectionPercent: *maxEjectionPct, Registerer: reg, Logger: logger})
	if err != nil {
		return err
	}
	proxy, err := balancer.NewProxy(bal, balancer.ProxyOptions{Timeout: *timeout, MaxResponseBody: *maxAnswer, Registerer: reg, Logger: logger})
	if err != nil {
		return err
	}
	if *stateFile != "" {
		if err := loadState(ctx, bal, *stateFile); err != nil {
			return err
		}
	}
	sockets, err := inherited(getenv)
	if err != nil {
		return err
	}
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg})
	separate := *adminAddr != ""
	publicAdminOpts := balancer.AdminOptions{Secret: adminSecret}
	if !separate {
		publicAdminOpts.Metrics = metrics // behind the secret
	}
	publicAdmin, err := balancer.NewAdmin(bal, publicAdminOpts)
	if err != nil {
		return err
	}

	// The public listener: /lint/ straight to the proxy, the rest to the
	// admin API (the wire contract serves both on one address).
	public := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/lint/") {
			proxy.ServeHTTP(w, r)
			return
		}
		publicAdmin.ServeHTTP(w, r)
	})
	var internal *http.ServeMux
	if separate {
		// The admin listener is the private one: /metrics open there.
		admin, err := balancer.NewAdmin(bal, balancer.AdminOptions{Secret: adminSecret})
		if err != nil {
			return err
		}
		internal = http.NewServeMux()
		internal.Handle("/metrics", metrics)
		internal.Handle("/", admin)
	}

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	g, ctx := errgroup.WithContext(ctx)
	serve := func(name, socket, addr string, srv httpserver.Server) (string, error) {
		ln := sockets[socket]
		if ln == nil {
			var err error
			if ln, err = httpserver.Listen(addr); err != nil {
				return "", fmt.Errorf("%s listener: %w", name, err)
			}
		}
		logger.Info("listening", "api", name, "addr", ln.Addr().String())
		// Run drains in-flight requests when ctx ends.
		g.Go(func() error { return httpserver.Run(ctx, srv, ln, *drain) })
		return ln.Addr().String(), nil
	}
	// The public listener's lint requests take balancer.Server's fast
	// path; everything else there (and the admin API) goes to net/http.
	front, err := balancer.NewServer(proxy, balancer.ServerOptions{Fallback: public, HTTP: httpserver.New(nil), Logger: logger,
		LameDuck: *lameDuck, EventLoop: *eventLoop})
	if err != nil {
		stop()
		return errors.Join(err, g.Wait())
	}
	publicAddr, err := serve("public+admin", "public", *addr, front)
	if err != nil {
		stop()
		return errors.Join(err, g.Wait())
	}
	var adminListen string
	if internal != nil {
		if adminListen, err = serve("admin", "admin", *adminAddr, httpserver.New(internal)); err != nil {
			stop()
			return errors.Join(err, g.Wait())
		}
	}
	if ready != nil {
		ready <- listening{public: publicAddr, admin: adminListen}
	}
	if *stateFile != "" {
		g.Go(func() error {
			keepState(ctx, bal, *stateFile, logger)
			return nil
		})
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
