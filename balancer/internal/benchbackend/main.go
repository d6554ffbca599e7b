// Command benchbackend is the minimal linter stand-in of
// scripts/bench-balancer.sh: one process serving several loopback
// listeners, each answering POST /lint with a small fixed JSON body and
// GET /health with its request count, so the benchmark measures the
// balancer in front of it and not a linter.
//
//	benchbackend -backend 127.0.0.1:19101=1.0 -backend 127.0.0.1:19102=2.0
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchbackend:", err)
		os.Exit(1)
	}
}

type backend struct {
	addr, version string
}

func run() error {
	var backends []backend
	flag.Func("backend", "ADDR=VERSION of one listener (repeatable)", func(s string) error {
		addr, version, ok := strings.Cut(s, "=")
		if !ok || addr == "" || version == "" {
			return errors.New("want ADDR=VERSION")
		}
		backends = append(backends, backend{addr, version})
		return nil
	})
	lang := flag.String("language", "python", "language reported in answers")
	flag.Parse()
	if len(backends) == 0 {
		return errors.New("no -backend given")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	g, ctx := errgroup.WithContext(ctx)
	for _, be := range backends {
		ln, err := net.Listen("tcp", be.addr)
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: handler(*lang, be.version), ReadHeaderTimeout: 10 * time.Second}
		g.Go(func() error {
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		})
		g.Go(func() error {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return srv.Shutdown(sctx)
		})
	}
	return g.Wait()
}

func handler(lang, version string) http.Handler {
	var count atomic.Int64
	answer := []byte(`{"result":true,"details":"no problem found","diagnostics":[],"language":"` + lang + `","version":"` + version + `"}`)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /lint", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		count.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		_, _ = w.Write(answer)
	})
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"version":%q,"language":%q,"requestCount":%d}`, version, lang, count.Load())
	})
	return mux
}
