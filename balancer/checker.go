package balancer

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fleetkit/fleetkit/machines/health"
)

// CheckerOptions configures a Checker. The zero value is usable.
type CheckerOptions struct {
	// Interval between two passes. 0 means 5s.
	Interval time.Duration
	// Timeout of one probe. 0 means 2s.
	Timeout time.Duration
	// Path probed on each backend. "" means "/health".
	Path string
	// HTTPClient sends the probes. nil means a client over NewTransport().
	HTTPClient *http.Client
}

// Checker is the optional active health check: it probes the ejected
// backends of a Balancer and readmits those that answer 200, before their
// ejection time is over (NGINX's health_check beside max_fails and
// fail_timeout). It never ejects (passive health does); it only undoes
// ejections of backends that came back. Without a Checker an ejected
// backend comes back when its ejection time is over (or, with a negative
// Options.BaseEjectionTime, when it is added again).
type Checker struct {
	bal      *Balancer
	interval time.Duration
	timeout  time.Duration
	path     string
	hc       *http.Client
}

// NewChecker returns a Checker for b.
func NewChecker(b *Balancer, opts CheckerOptions) (*Checker, error) {
	if b == nil {
		return nil, errors.New("balancer: NewChecker needs a Balancer")
	}
	c := &Checker{bal: b, interval: opts.Interval, timeout: opts.Timeout, path: opts.Path, hc: opts.HTTPClient}
	if c.interval < 0 || c.timeout < 0 {
		return nil, errors.New("balancer: CheckerOptions durations must not be negative")
	}
	if c.interval == 0 {
		c.interval = 5 * time.Second
	}
	if c.timeout == 0 {
		c.timeout = 2 * time.Second
	}
	if c.path == "" {
		c.path = "/health"
	}
	if !strings.HasPrefix(c.path, "/") {
		c.path = "/" + c.path
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: NewTransport()}
	}
	return c, nil
}

// Run checks every Interval until ctx is done, then returns nil. The probes
// of one pass run concurrently (at most 16 at a time) and all end before
// Run returns.
func (c *Checker) Run(ctx context.Context) error {
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			c.CheckOnce(ctx)
		}
	}
}

// CheckOnce probes every ejected backend once and readmits those that
// answer 200. It returns how many were readmitted.
func (c *Checker) CheckOnce(ctx context.Context) int {
	ejected := c.bal.Ejected()
	ok := make([]bool, len(ejected))
	var g errgroup.Group
	g.SetLimit(16)
	for i, be := range ejected {
		g.Go(func() error {
			ok[i] = c.probe(ctx, be)
			return nil
		})
	}
	_ = g.Wait()
	n := 0
	for i, be := range ejected {
		if ok[i] && c.bal.readmitBackend(be) {
			n++
		}
	}
	return n
}

func (c *Checker) probe(ctx context.Context, be *Backend) bool {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	_, err := health.Probe(ctx, c.hc, strings.TrimSuffix(be.URI, "/")+c.path)
	return err == nil
}
