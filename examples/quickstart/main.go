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
// The machine manager's API has no secret by default (the wire contract
// has none), so it listens on loopback only; to serve it further, give it
// one (-mm-secret-file or $FLEETKIT_MANAGER_SECRET). The balancer's admin
// secret comes from -secret-file or $FLEETKIT_SECRET_KEY (or is generated
// and printed).
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

	"github.com/fleetkit/fleetkit/balancer"
	"github.com/fleetkit/fleetkit/internal/secret"
	"github.com/fleetkit/fleetkit/rollout"
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
		secretFlag   = flag.String("secret", "", "the balancer's admin secret; shows in ps: prefer -secret-file or $FLEETKIT_SECRET_KEY (default: generated and printed)")
		secretFile   = flag.String("secret-file", "", "file holding the balancer's admin secret (default: $FLEETKIT_SECRET_KEY, else generated)")
		mmSecretFile = flag.String("mm-secret-file", "", "file holding the machine manager's API secret, required on its mutating calls (default: $FLEETKIT_MANAGER_SECRET, else none: loopback only)")
		maxPerLang   = flag.Int("max-machines-per-language", rollout.DefaultMaxMachinesPerLanguage, "most live machines per language (/create beyond is 409; negative: no cap)")
		maxMachines  = flag.Int("max-machines", rollout.DefaultMaxMachines, "most live machines in all (negative: no cap)")
		n            = flag.Int("machines", 2, "linters per language at start (0 allowed)")
		healthEvery  = flag.Duration("health-interval", 5*time.Second, "how often the machine manager checks every machine's /health")
		lbTimeout    = flag.Duration("lb-timeout", balancer.DefaultProxyTimeout, "the balancer's bound on one lint (504 after it; not counted against the linter)")
		linterBin    = flag.String("linter-bin", "", "the linter binary (default: next to this program, else built with go build into the user cache dir)")
		stepAfter    = flag.Duration("auto-step-after", 0, "automatic mode: judge each update step after this long (0: off, updates are manual)")
		maxErrorRate = flag.Float64("auto-max-error-rate", 0.01, "automatic mode: highest error rate of the new version that still advances")
		replace      = flag.Bool("replace-unhealthy", true, "replace a machine that crashes or fails its health check (false: keep it, out of the balancer, as the design says)")
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
	lbSecret, err := secret.Load(secret.Source{Flag: *secretFlag, File: *secretFile, Env: "FLEETKIT_SECRET_KEY"})
	if err != nil {
		return err
	}
	if lbSecret == "" {
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		lbSecret = hex.EncodeToString(b)
	}
	mmSecret, err := secret.Load(secret.Source{File: *mmSecretFile, Env: "FLEETKIT_MANAGER_SECRET"})
	if err != nil {
		return err
	}
	if mmSecret == "" && !secret.Loopback(*mmAddr) {
		return fmt.Errorf("-mm-addr %s is reachable beyond this machine: give the machine manager a secret (-mm-secret-file or $FLEETKIT_MANAGER_SECRET), or listen on loopback", *mmAddr)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	bin, how, err := findLinter(ctx, *linterBin)
	if err != nil {
		return err
	}
	log.Info("linter binary", "path", bin, "how", how)

	cfg := stackConfig{
		LBAddr: *lbAddr, MMAddr: *mmAddr, Secret: lbSecret, MMSecret: mmSecret, Machines: *n,
		MaxMachinesPerLanguage: *maxPerLang, MaxMachines: *maxMachines,
		HealthInterval: *healthEvery, LinterBin: bin, LBTimeout: *lbTimeout,
		Languages: []string{"python", "java"}, Version: "1.0",
		StepAfter: *stepAfter, MaxErrorRate: *maxErrorRate, ReplaceUnhealthy: *replace,
		Logger: log, MachineOutput: machineOut,
	}
	return runStack(ctx, cfg, func(st *stack) { printWelcome(os.Stdout, st, lbSecret, mmSecret != "") })
}

var welcome = template.Must(template.New("welcome").Parse(`
fleetkit quickstart is running.

  load balancer    {{.LB}}   (public: POST /lint/{language}; admin: /health /add /remove /ratio /backends /metrics, with the secret)
  machine manager  {{.MM}}   (status page: {{.MM}}/ )
  admin secret     {{.Secret}}

Lint through the balancer:
  curl -s -X POST {{.LB}}/lint/python -d '{"code": "print(\"hello world\")\n"}'
  curl -s -X POST {{.LB}}/lint/java -d '{"code": "class A { }\n"}'

Look at the fleet (ejected backends too):
  curl -s {{.MM}}/status
  curl -s -H 'X-Secret-Key: {{.Secret}}' {{.LB}}/health

The machine manager's mutating calls must be JSON{{if .MMSecret}} and carry its secret ({{.J}} -H 'X-Secret-Key: ...'){{end}}.
Add and remove a machine:
  curl -s -X POST {{.MM}}/create {{.J}} -d '{"lang": "python"}'
  curl -s -X POST {{.MM}}/remove {{.J}} -d '{"ip": "127.0.0.1:PORT"}'

Roll python out to 2.0 step by step (1, 5, 10, 50, 100 %), or back:
  curl -s -X POST {{.MM}}/init-update {{.J}} -d '{"lang": "python", "version": "2.0"}'
  curl -s -X POST {{.MM}}/update {{.J}} -d '{"lang": "python"}'
  curl -s -X POST {{.MM}}/rollback {{.J}} -d '{"lang": "python"}'

Ctrl-C stops everything and removes the machines.
`))

func printWelcome(w io.Writer, st *stack, lbSecret string, mmSecret bool) {
	_ = welcome.Execute(w, map[string]any{
		"LB": st.LBURL, "MM": st.MMURL, "Secret": lbSecret, "MMSecret": mmSecret,
		"J": "-H 'Content-Type: application/json'",
	})
	_, _ = io.WriteString(w, strings.Repeat("-", 72)+"\n")
}
