package machines

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/fleetkit/fleetkit/machines/health"
)

// WaitOptions tunes WaitReady. The zero value is ready to use.
type WaitOptions struct {
	// Path is the health path; empty means "accepts a TCP connection".
	Path string
	// Client performs the health requests; nil means a client without
	// keep-alives whose requests time out after one second.
	Client *http.Client
	// Alive, when set, is called between attempts; an error stops the wait
	// at once and is returned (the process exited, the container died).
	Alive func(ctx context.Context) error
}

// WaitReady polls addr until it is ready, ctx is done, or opts.Alive fails.
// Ready means GET http://addr+opts.Path answers 200, or, without a path,
// that addr accepts a TCP connection. Polls start 10ms apart and back off
// to 200ms. When ctx is done it returns ctx's error wrapped with the last
// failure seen.
func WaitReady(ctx context.Context, addr string, opts WaitOptions) error {
	client := opts.Client
	if client == nil {
		client = &http.Client{
			Timeout:   time.Second,
			Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil},
		}
		defer client.CloseIdleConnections()
	}
	delay := 2 * time.Millisecond
	var last error
	for {
		if opts.Alive != nil {
			if err := opts.Alive(ctx); err != nil {
				return err
			}
		}
		last = probe(ctx, client, addr, opts.Path)
		if last == nil {
			return nil
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (last attempt: %v)", context.Cause(ctx), last)
		case <-t.C:
		}
		delay = min(delay*3/2, 100*time.Millisecond)
	}
}

// probe makes one readiness attempt.
func probe(ctx context.Context, client *http.Client, addr, path string) error {
	if path == "" {
		var d net.Dialer
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		c, err := d.DialContext(dctx, "tcp", addr)
		if err != nil {
			return err
		}
		return c.Close()
	}
	_, err := health.Probe(ctx, client, "http://"+addr+path)
	return err
}
