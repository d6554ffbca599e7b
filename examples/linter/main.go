// Command linter is the linter service of the linter fleet: one language,
// one of the four versions, on one address.
//
//	linter -language python -version 1.0 -addr 127.0.0.1:8081
//	       [-select E,W] [-ignore E501] [-extend-ignore W6] [-max-line-length 99]
//	       [-option max-doc-length=72 -option hang-closing=true]
//
// The rule flags are the machine's configuration (a team's own); each
// request may override it with a "config" in its body (see
// linter.RequestConfig). Version 1.2 exits with status 3 after answering a
// lint of empty code.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
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

	"github.com/fleetkit/fleetkit/internal/httpserver"
	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/linter/java"
	"github.com/fleetkit/fleetkit/linter/python"
)

// exitCrashed is the exit status after version 1.2's fault injection fired.
const exitCrashed = 3

var errCrashed = errors.New("crashed: fault injection fired")

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "linter:", err)
		if errors.Is(err, errCrashed) {
			os.Exit(exitCrashed)
		}
		os.Exit(1)
	}
}

// envOr returns the environment variable key, or def when it is unset. The
// images set the version this way: one image per version.
func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}

func run() error {
	var (
		language  = flag.String("language", "python", "language to lint (python, java)")
		version   = flag.String("version", envOr("FLEETKIT_LINTER_VERSION", linter.Version10), "service version: 1.0, 1.1 (slow), 1.2 (crashes on empty code), 2.0 (one more rule); default $FLEETKIT_LINTER_VERSION or 1.0")
		addr      = flag.String("addr", "127.0.0.1:8081", "listen address HOST:PORT")
		delay     = flag.Duration("delay", linter.DefaultDelay, "extra latency of version 1.1")
		crashRate = flag.Float64("crash-rate", 0, "version 1.2: probability that any lint crashes the service")
		maxLine   = flag.Int("max-line-length", 0, "longest allowed line (0: the language's default)")
		maxBody   = flag.Int64("max-body", 1<<20, "request body limit in bytes")
		sel       = flag.String("select", "", "comma-separated code prefixes to report (default: the language's default selection)")
		ignore    = flag.String("ignore", "", "comma-separated code prefixes to leave out (replaces the default ignore list)")
		extend    = flag.String("extend-ignore", "", "comma-separated code prefixes to leave out as well, keeping the default ignore list")
		configs   = flag.Int("max-configs", 0, "linters kept for the configurations requests carry (0: 32)")
		options   = optionFlag{}
	)
	flag.Var(options, "option", "a language option as NAME=VALUE, named as the peer tool names it (python: max-doc-length, hang-closing, indent-size); repeatable")
	flag.Parse()

	reg, err := linter.NewRegistry(python.Language(), java.Language())
	if err != nil {
		return err
	}
	lang, err := reg.Lookup(*language)
	if err != nil {
		return err
	}
	cfg, faults, err := linter.VersionProfile(lang, *version)
	if err != nil {
		return err
	}
	cfg.MaxLineLength = *maxLine
	cfg.Select, cfg.Ignore = python.SplitCodes(*sel), python.SplitCodes(*ignore)
	cfg.ExtendIgnore = append(cfg.ExtendIgnore, python.SplitCodes(*extend)...)
	if len(options) > 0 {
		cfg.Options = options
	}
	if faults.Delay > 0 {
		faults.Delay = *delay
	}
	if faults.CrashOnEmpty {
		faults.CrashRate = *crashRate
	}
	l, err := lang.New(cfg)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	crashCtx, crash := context.WithCancelCause(ctx)
	defer crash(nil)

	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	svc, err := linter.NewService(linter.ServiceOptions{
		Language: lang.Name, Version: *version, Linter: l, Faults: faults, MaxBody: *maxBody,
		Config: cfg, New: lang.New, MaxConfigs: *configs,
		Registerer: metrics,
		OnCrash:    func() { crash(errCrashed) },
	})
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(metrics, promhttp.HandlerOpts{}))
	mux.Handle("/", svc)

	ln, err := httpserver.Listen(*addr)
	if err != nil {
		return err
	}
	slog.Info("linter serving", "language", lang.Name, "version", *version, "addr", ln.Addr().String())
	// A crash drains quickly: the crashing request is already answered.
	if err := httpserver.Run(crashCtx, httpserver.New(mux), ln, 2*time.Second); err != nil {
		return err
	}
	if cause := context.Cause(crashCtx); errors.Is(cause, errCrashed) {
		return cause
	}
	return nil
}

// optionFlag collects -option NAME=VALUE flags.
type optionFlag map[string]string

func (o optionFlag) String() string { return "" }

func (o optionFlag) Set(v string) error {
	name, value, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=VALUE, not %q", v)
	}
	o[name] = value
	return nil
}
