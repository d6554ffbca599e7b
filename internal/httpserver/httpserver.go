package httpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/fleetkit/fleetkit/internal/httpjson"
)

// defaultDrain is how long Run waits for in-flight requests at shutdown
// when its drain is 0.
const defaultDrain = 10 * time.Second

// New is NewWithLogger(h, nil).
func New(h http.Handler) *http.Server { return NewWithLogger(h, nil) }

// NewWithLogger returns a server for h with timeouts that protect it from
// slow clients but leave room for slow handlers (write timeout is left to
// the handlers, which know their own deadlines). A panic in h is answered
// 500 with the JSON error body and logged to logger (httpjson.Recover; nil
// means slog.Default()), not a dropped connection.
func NewWithLogger(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           httpjson.Recover(h, logger),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
}

// Listen opens a TCP listener on addr ("127.0.0.1:0" picks a free port).
func Listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Server is what Run runs: an *http.Server, or a server with the same
// Serve and Shutdown contract (balancer.Server).
type Server interface {
	Serve(net.Listener) error
	Shutdown(context.Context) error
}

// Run serves srv on ln until ctx is done, then shuts down gracefully:
// new connections are refused and in-flight requests get up to drain (10s
// when drain is 0) to finish. It returns nil after a clean shutdown.
func Run(ctx context.Context, srv Server, ln net.Listener, drain time.Duration) error {
	if drain <= 0 {
		drain = defaultDrain
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), drain)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
