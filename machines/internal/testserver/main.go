// Command testserver is a stand-in for the linter service (examples/linter)
// with the same command line and wire contract, for working on the
// providers' integration tests while the linter does not build:
//
//	FLEETKIT_TEST_LINTER=github.com/fleetkit/fleetkit/machines/internal/testserver go test ./machines/...
//
// It answers GET /health and POST /lint (result true unless version 2.0
// sees code without a trailing newline), and version 1.2 exits with status
// 3 after answering a lint of empty code, as the linter does.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "testserver:", err)
		os.Exit(1)
	}
}

func run() error {
	def := os.Getenv("FLEETKIT_LINTER_VERSION")
	if def == "" {
		def = "1.0"
	}
	language := flag.String("language", "python", "language")
	version := flag.String("version", def, "version")
	addr := flag.String("addr", "127.0.0.1:8081", "listen address")
	flag.Parse()
	if *language != "python" && *language != "java" {
		return fmt.Errorf("unknown language %q", *language)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	crashed := make(chan struct{})
	var lints atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"version": *version, "language": *language, "requestCount": lints.Load()})
	})
	mux.HandleFunc("POST /lint", func(w http.ResponseWriter, r *http.Request) {
		lints.Add(1)
		var req struct {
			Code string `json:"code"`
		}
		if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
			http.Error(w, `{"status":"error","message":"invalid JSON"}`, http.StatusBadRequest)
			return
		}
		if *version == "1.2" && req.Code == "" {
			http.Error(w, `{"status":"error","message":"crashed"}`, http.StatusInternalServerError)
			close(crashed)
			return
		}
		ok := *version != "2.0" || strings.HasSuffix(req.Code, "\n")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"result": ok, "details": "", "diagnostics": []any{},
			"language": *language, "version": *version})
	})
	srv := &http.Server{Addr: *addr, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return srv.Close()
	case <-crashed:
		time.Sleep(50 * time.Millisecond) // let the answer go out
		os.Exit(3)
	}
	return nil
}
