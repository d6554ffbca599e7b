// Command fleet-manager runs a managed-service fleet manager for one kind
// of resource: the REST API of the original kas-fleet-manager
// (/api/<kind>s_mgmt/v1/...) and its workers, on SQLite by default or
// PostgreSQL.
//
//	fleet-manager [-addr 127.0.0.1:8000] [-kind dinosaur|kafka] [-database-url URL | -database-url-file FILE] [-config FILE]
//	              [-provider process|docker|memory] [-instance-image IMAGE] [-name NAME] [-data-plane machines|agent]
//	fleet-manager token -user U [-org O]
//	fleet-manager cluster-token -config FILE -kind K -cluster ID
//	fleet-manager instance -addr HOST:PORT -id ID -kind K -name N
//
// A database URL carrying a password is better given in the environment
// (FLEETKIT_DATABASE_URL) or a file (-database-url-file) than on the
// command line, where ps shows it.
//
// The config file (an example: testdata/fleet.yaml) sets cloud providers,
// regions and their limits, clusters, capacity units, the quota and deny
// list files, trial lifetimes, per-status timeouts, auth (HS256 secret
// file, RS256 key file, JWKS URL, claim names) and leader election. With
// no config it offers cloud provider aws, region us-east-1, on one local
// cluster.
//
// Every instance runs as a machine (package fleet/dataplane), one machine
// provider per cluster: by default a local process of this same binary's
// instance subcommand, a small service that answers GET /health, GET /
// (the instance's id, kind and name) and GET /metrics (its own Prometheus
// metrics, which the API's metrics calls answer) on the instance's host. With
// -provider docker it is a container of -instance-image (this binary FROM
// scratch, built by scripts/build-images.sh); -provider memory keeps
// instances in memory. On shutdown process machines stop with the manager
// and are started again by the next one; Docker containers keep running and
// the next manager with the same -name adopts them.
//
// With -data-plane agent (or data_plane: agent in the config) the manager
// runs no instance itself: an agent on each configured cluster
// (examples/fleet-agent) pulls the instances placed there from the agent
// API (package fleet/agentapi, under /api/<kind>s_mgmt/v1/agent-clusters/,
// on the same server) and reports them back (package fleet/agentplane).
// Each agent authenticates with its cluster's token, which cluster-token
// prints, signed with the key of the config's agent.token_secret_file.
//
// The token subcommand prints a bearer token signed with the local
// development key (created on first use in the cache directory), so curl
// works at once:
//
//	TOKEN=$(go run ./examples/fleet-manager token -user alice)
//	curl -H "Authorization: Bearer $TOKEN" -d '{"name":"rex"}' \
//	  'localhost:8000/api/dinosaurs_mgmt/v1/dinosaurs?async=true'
package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/agentapi"
	"github.com/fleetkit/fleetkit/fleet/auth"
	"github.com/fleetkit/fleetkit/fleet/httpapi"
	"github.com/fleetkit/fleetkit/fleet/postgres"
	"github.com/fleetkit/fleetkit/fleet/sqlite"
	"github.com/fleetkit/fleetkit/internal/httpserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); errors.Is(err, flag.ErrHelp) {
		return
	} else if err != nil {
		fmt.Fprintln(os.Stderr, "fleet-manager:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "token":
			return token(args[1:], out)
		case "instance":
			return instance(ctx, args[1:], os.Stderr)
		case "cluster-token":
			return clusterToken(args[1:], out)
		}
	}
	fs := flag.NewFlagSet("fleet-manager", flag.ContinueOnError)
	fs.SetOutput(out)
	var (
		addr   = fs.String("addr", "127.0.0.1:8000", "listen address HOST:PORT")
		kind   = fs.String("kind", "dinosaur", "resource kind: dinosaur or kafka")
		dbURL  = fs.String("database-url", "", "postgres://... for PostgreSQL, else a SQLite file path (default: $"+envDatabaseURL+", else <cache>/fleet-manager/<kind>.db).\nA URL with a password shows in ps: give it in $"+envDatabaseURL+" or -database-url-file instead")
		dbFile = fs.String("database-url-file", "", "read -database-url from this file (its first line), so that no password is on the command line")
		holder = fs.String("replica", "", "this replica's name in the leader leases (default: a random ID); leader election is always on with PostgreSQL")
		config = fs.String("config", "", "YAML config: cloud providers, clusters, quota and deny lists, auth (example: examples/fleet-manager/testdata/fleet.yaml)")
		dpOpts dataPlaneOptions
		dpKind = fs.String("data-plane", "", "what runs the instances: machines (local processes or containers, see -provider) or agent (an agent on each cluster; the config's agent section). Default: the config's data_plane, else machines")
	)
	fs.StringVar(&dpOpts.Provider, "provider", providerProcess, "what runs an instance: process (a local process of this binary), docker (a container of -instance-image) or memory")
	fs.StringVar(&dpOpts.Image, "instance-image", DefaultInstanceImage, "image of the per-instance service (-provider docker; scripts/build-images.sh builds it)")
	fs.StringVar(&dpOpts.Name, "name", "fleet-manager", "this manager's name: its machines are labelled with it, and a restarted manager with the same name adopts them (docker)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	url, err := databaseURL(*dbURL, *dbFile)
	if err != nil {
		return err
	}
	k, err := kindOf(*kind)
	if err != nil {
		return err
	}
	cfg := &Config{}
	if *config != "" {
		if cfg, err = LoadConfig(*config); err != nil {
			return err
		}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	st, closeStore, err := openStore(ctx, url, k)
	if err != nil {
		return err
	}
	defer closeStore()

	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	opts, apiOpts, err := cfg.Options(k)
	if err != nil {
		return err
	}
	if *dpKind == "" {
		*dpKind = cmp.Or(cfg.DataPlane, dataPlaneMachines)
	}
	var agentAPI *agentapi.Handler
	switch *dpKind {
	case dataPlaneMachines:
		dp, closeDataPlane, err := newDataPlane(ctx, dpOpts, k, opts.Clusters)
		if err != nil {
			return err
		}
		defer closeDataPlane() // after the workers have stopped: see below
		opts.DataPlane = dp
	case dataPlaneAgent:
		if agentAPI, err = agentPlane(cfg, st, k, log, reg, &opts); err != nil {
			return err
		}
		dpOpts.Provider = dataPlaneAgent // for the banner
	default:
		return fmt.Errorf("unknown -data-plane %q: use %s or %s", *dpKind, dataPlaneMachines, dataPlaneAgent)
	}
	opts.Registerer, opts.Logger = reg, log
	if *holder != "" {
		opts.Holder = *holder
	}
	svc, err := fleet.New(st, opts)
	if err != nil {
		return err
	}
	apiOpts.Registerer = reg
	api, err := httpapi.New(svc, apiOpts)
	if err != nil {
		return err
	}

	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.Handle("/", api)
	if agentAPI != nil {
		mux.Handle(agentAPI.Path(), agentAPI)
	}
	ln, err := httpserver.Listen(*addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "fleet-manager: serving %s on http://%s%s (instances: %s)\n", k.Plural, ln.Addr(), k.BasePath(), dpOpts.Provider)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := make(chan error, 1)
	go func() { workers <- svc.Run(ctx) }()
	err = httpserver.Run(ctx, httpserver.New(mux), ln, 0)
	cancel()
	return errors.Join(err, <-workers)
}

// envDatabaseURL is where -database-url is read from when the flag is not
// given: a password on the command line shows in ps.
const envDatabaseURL = "FLEETKIT_DATABASE_URL"

// databaseURL is the store's URL: the flag, else the file, else the
// environment ("" for the default SQLite file).
func databaseURL(flagValue, file string) (string, error) {
	switch {
	case flagValue != "" && file != "":
		return "", errors.New("give -database-url or -database-url-file, not both")
	case flagValue != "":
		return flagValue, nil
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("-database-url-file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		if line = strings.TrimSpace(line); line == "" {
			return "", fmt.Errorf("-database-url-file %s is empty", file)
		}
		return line, nil
	}
	return os.Getenv(envDatabaseURL), nil
}

func kindOf(name string) (fleet.Kind, error) {
	switch name {
	case "dinosaur":
		return fleet.Dinosaur, nil
	case "kafka":
		return fleet.Kafka, nil
	}
	return fleet.Kind{}, fmt.Errorf("unknown -kind %q: use dinosaur or kafka", name)
}

func openStore(ctx context.Context, url string, k fleet.Kind) (fleet.Store, func(), error) {
	if strings.HasPrefix(url, "postgres://") || strings.HasPrefix(url, "postgresql://") {
		st, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			return nil, nil, err
		}
		return st, func() { _ = st.Close() }, nil
	}
	if url == "" {
		dir, err := cacheDir()
		if err != nil {
			return nil, nil, err
		}
		url = filepath.Join(dir, k.Name+".db")
	}
	st, err := sqlite.Open(ctx, strings.TrimPrefix(url, "sqlite://"))
	if err != nil {
		return nil, nil, err
	}
	return st, func() { _ = st.Close() }, nil
}

// cacheDir is where the default database and the development key live.
func cacheDir() (string, error) {
	base := os.Getenv("FLEETKIT_CACHE")
	if base == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("find a cache directory: %w", err)
		}
		base = filepath.Join(c, "fleetkit")
	}
	dir := filepath.Join(base, "fleet-manager")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return dir, nil
}

// devSecretLen is the length of the development key file's key (hex).
const devSecretLen = 64

// devSecret returns the local development HS256 key, creating a random one
// on first use. The file appears whole (written aside, then linked into
// place), so a concurrent first use reads either nothing or the whole key;
// a file holding less than a key is an error to fix by hand, not retried.
func devSecret() ([]byte, error) {
	dir, err := cacheDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "dev-secret")
	read := func() ([]byte, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if k := strings.TrimSpace(string(b)); len(k) >= 32 {
			return []byte(k), nil
		}
		return nil, fmt.Errorf("development key %s holds %d bytes, want at least 32 (remove it and a new one is made)", path, len(strings.TrimSpace(string(b))))
	}
	b, err := read()
	if !errors.Is(err, os.ErrNotExist) {
		return b, err
	}
	raw := make([]byte, devSecretLen/2)
	_, _ = rand.Read(raw)
	secret := hex.EncodeToString(raw)
	f, err := os.CreateTemp(dir, "dev-secret-*")
	if err != nil {
		return nil, fmt.Errorf("create development key: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := io.WriteString(f, secret+"\n"); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("create development key: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("create development key: %w", err)
	}
	if err := os.Link(f.Name(), path); errors.Is(err, os.ErrExist) {
		return read() // another process made it first
	} else if err != nil {
		return nil, fmt.Errorf("create development key: %w", err)
	}
	return []byte(secret), nil
}

func token(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("token", flag.ContinueOnError)
	var (
		user = fs.String("user", "", "username (required)")
		org  = fs.String("org", "", "organisation ID")
		ttl  = fs.Duration("ttl", 24*time.Hour, "validity")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *user == "" {
		return errors.New("token: -user is required")
	}
	secret, err := devSecret()
	if err != nil {
		return err
	}
	tok, err := auth.NewHS256Token(secret, *user, *org, *ttl)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, tok)
	return err
}
