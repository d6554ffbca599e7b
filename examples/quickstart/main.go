// Command quickstart runs a whole linter fleet on this machine, with no
// Docker and nothing to configure: the load balancer (public API and admin
// API), the machine manager with the process provider (each machine a local
// process of the linter service), and -machines linters per language for
// python and java at version 1.0.
//
//	go run ./examples/quickstart
//
// It prints the URLs and curl commands to try, and on Ctrl-C stops the
// servers and removes every machine.
//
// The machines run the linter binary (examples/linter). It is the
// -linter-bin flag when given; else a "linter" executable next to the
// quickstart's own; else it is built with `go build` into
// $XDG_CACHE_HOME/fleetkit/bin (os.UserCacheDir), which works from the
// fleetkit module, as `go run ./examples/quickstart` does.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/template"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		lbAddr       = flag.String("lb-addr", "127.0.0.1:8080", "load balancer listen address HOST:PORT (public /lint/{language} and the admin API)")
		mmAddr       = flag.String("mm-addr", "127.0.0.1:5000", "machine manager listen address HOST:PORT")
		secret       = flag.String("secret", "", "the balancer's admin secret (default: generated and printed)")
		n            = flag.Int("machines", 2, "linters per language at start (0 allowed)")
		healthEvery  = flag.Duration("health-interval", 5*time.Second, "how often the machine manager checks every machine's /health")
		linterBin    = flag.String("linter-bin", "", "the linter binary (default: next to this program, else built with go build into the user cache dir)")
		stepAfter    = flag.Duration("auto-step-after", 0, "automatic mode: judge each update step after this long (0: off, updates are manual)")
		maxErrorRate = flag.Float64("auto-max-error-rate", 0.01, "automatic mode: highest error rate of the new version that still advances")
		verbose      = flag.Bool("v", false, "log debug messages and the linters' output")
	)
	flag.Parse()
	if *n < 0 {
		return errors.New("-machines must be 0 or more")
	}
	level := slog.LevelInfo
	var machineOut io.Writer
	if *verbose {
		level, machineOut = slog.LevelDebug, os.Stderr
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	if *secret == "" {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		*secret = hex.EncodeToString(b)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bin, how, err := findLinter(ctx, *linterBin)
	if err != nil {
		return err
	}
	log.Info("linter binary", "path", bin, "how", how)

	cfg := stackConfig{
		LBAddr: *lbAddr, MMAddr: *mmAddr, Secret: *secret, Machines: *n,
		HealthInterval: *healthEvery, LinterBin: bin,
		Languages: []string{"python", "java"}, Version: "1.0",
		StepAfter: *stepAfter, MaxErrorRate: *maxErrorRate,
		Logger: log, MachineOutput: machineOut,
	}
	return runStack(ctx, cfg, func(st *stack) { printWelcome(os.Stdout, st, *secret) })
}

var welcome = template.Must(template.New("welcome").Parse(`
fleetkit quickstart is running.

  load balancer    {{.LB}}   (public: POST /lint/{language}; admin: /health /add /remove /ratio; /metrics)
  machine manager  {{.MM}}   (status page: {{.MM}}/ )
  admin secret     {{.Secret}}

Lint through the balancer:
  curl -s -X POST {{.LB}}/lint/python -d '{"code": "print(\"hello world\")\n"}'
  curl -s -X POST {{.LB}}/lint/java -d '{"code": "class A { }\n"}'

Look at the fleet:
  curl -s {{.MM}}/status
  curl -s -H 'X-Secret-Key: {{.Secret}}' {{.LB}}/health

Add and remove a machine:
  curl -s -X POST {{.MM}}/create -d '{"lang": "python"}'
  curl -s -X POST {{.MM}}/remove -d '{"ip": "127.0.0.1:PORT"}'

Roll python out to 2.0 step by step (1, 5, 10, 50, 100 %), or back:
  curl -s -X POST {{.MM}}/init-update -d '{"lang": "python", "version": "2.0"}'
  curl -s -X POST {{.MM}}/update -d '{"lang": "python"}'
  curl -s -X POST {{.MM}}/rollback -d '{"lang": "python"}'

Ctrl-C stops everything and removes the machines.
`))

func printWelcome(w io.Writer, st *stack, secret string) {
	_ = welcome.Execute(w, map[string]string{
		"LB": st.LBURL, "MM": st.MMURL, "Secret": secret,
	})
	_, _ = io.WriteString(w, strings.Repeat("-", 72)+"\n")
}
