// Command netcheck checks a test cluster's networking from inside a Pod;
// kubetest's tests run it as a static binary FROM scratch:
//
//	netcheck serve ADDR   # answers GET /health with 200 until SIGTERM
//	netcheck get URL...   # GETs each URL, exits 0 if all answer 200
//
// get sends https requests with the Pod's ServiceAccount token and
// verifies the server with the cluster's CA, as in-cluster clients do.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "netcheck:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) < 2 {
		return errors.New("usage: netcheck serve ADDR, or netcheck get URL [URL]")
	}
	switch args[0] {
	case "serve":
		return serve(args[1])
	case "get":
		return get(args[1:])
	default:
		return fmt.Errorf("unknown command %q", args[0])
	}
}

func serve(addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		host, _ := os.Hostname()
		fmt.Fprintf(w, "ok %s\n", host)
	})
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return srv.Close()
	}
}

func get(urls []string) error {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca, err := os.ReadFile(saDir + "/ca.crt"); err == nil {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		tlsCfg.RootCAs = pool
	}
	token, _ := os.ReadFile(saDir + "/token")
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	var errs []error
	for _, u := range urls {
		req, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if strings.HasPrefix(u, "https://") && len(token) > 0 {
			req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(token)))
		}
		resp, err := client.Do(req)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		fmt.Printf("%s: %s %s\n", u, resp.Status, strings.TrimSpace(string(body)))
		if resp.StatusCode != http.StatusOK {
			errs = append(errs, fmt.Errorf("%s: %s", u, resp.Status))
		}
	}
	return errors.Join(errs...)
}
