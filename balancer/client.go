package balancer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DefaultClientTimeout bounds one admin call when ClientOptions.HTTPClient
// is nil.
const DefaultClientTimeout = 10 * time.Second

// ClientOptions configures a Client. The zero value is usable.
type ClientOptions struct {
	// HTTPClient sends the calls. nil means a client with a keep-alive
	// transport and DefaultClientTimeout.
	HTTPClient *http.Client
}

// Client drives a remote load balancer through its admin API. It satisfies
// Router, as *Balancer does, so a machine manager can drive either. Every
// method does one HTTP call bounded by ctx; an answer other than 200 is a
// *StatusError, which errors.Is matches against this package's sentinels
// (ErrUnknownBackend for 404, ErrForbidden for 403, ErrNoBackend for 503,
// ErrInvalidBackend or ErrInvalidRatio for a 400 of AddBackend or
// SetRatio). A Client is safe for concurrent use.
type Client struct {
	base   string
	secret string
	hc     *http.Client
}

var _ Router = (*Client)(nil)

// NewClient returns a Client for the admin API at baseURL
// ("http://127.0.0.1:8080") with the admin secret.
func NewClient(baseURL, secret string, opts ClientOptions) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("balancer: client base URL %q must be an absolute http(s) URL", baseURL)
	}
	if secret == "" {
		return nil, errors.New("balancer: client needs the admin secret")
	}
	hc := &http.Client{Transport: NewTransport(), Timeout: DefaultClientTimeout}
	if opts.HTTPClient != nil {
		c := *opts.HTTPClient // a copy: the caller's client keeps its own redirect policy
		hc = &c
	}
	// The secret travels in a header or in the body, which net/http's
	// client would send again to wherever a redirect points. Redirects are
	// followed only within the admin API's own scheme and host.
	next := hc.CheckRedirect
	hc.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != u.Scheme || req.URL.Host != u.Host {
			return fmt.Errorf("%w: %s", errCrossHostRedirect, req.URL.Redacted())
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &Client{base: strings.TrimSuffix(baseURL, "/"), secret: secret, hc: hc}, nil
}

// errCrossHostRedirect refuses a redirect that would carry the secret to
// another host.
var errCrossHostRedirect = errors.New("balancer: refusing to follow a redirect to another host with the admin secret")

// StatusError is an admin API answer other than 200.
type StatusError struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is the server's "message".
	Message string
	// kind is the sentinel a 400 stands for in the call that got it.
	kind error
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("balancer: admin API answered %d: %s", e.StatusCode, e.Message)
}

// Is matches the sentinel errors of this package by status.
func (e *StatusError) Is(target error) bool {
	switch e.StatusCode {
	case http.StatusNotFound:
		return target == ErrUnknownBackend
	case http.StatusForbidden:
		return target == ErrForbidden
	case http.StatusServiceUnavailable:
		return target == ErrNoBackend
	case http.StatusBadRequest:
		return e.kind != nil && target == e.kind
	}
	return false
}

// AddBackend implements Router: POST /add.
func (c *Client) AddBackend(ctx context.Context, lang, version, uri string) error {
	return c.post(ctx, "/add", addRequest{Lang: lang, Version: version, URI: uri, SecretKey: c.secret}, ErrInvalidBackend)
}

// RemoveBackend implements Router: POST /remove.
func (c *Client) RemoveBackend(ctx context.Context, uri string) error {
	return c.post(ctx, "/remove", removeRequest{URI: uri, SecretKey: c.secret}, ErrInvalidBackend)
}

// SetRatio implements Router: POST /ratio.
func (c *Client) SetRatio(ctx context.Context, lang string, ratio map[string]int) error {
	if ratio == nil {
		ratio = map[string]int{}
	}
	return c.post(ctx, "/ratio", ratioRequest{Lang: lang, VersionRatio: ratio, SecretKey: c.secret}, ErrInvalidRatio)
}

// Backends returns the remote balancer's Status: GET /backends.
func (c *Client) Backends(ctx context.Context) (Status, error) {
	var st Status
	err := c.do(ctx, http.MethodGet, "/backends", nil, &st, nil)
	return st, err
}

// Health returns the remote balancer's backends per language and version,
// and those it has ejected: GET /health with the secret.
func (c *Client) Health(ctx context.Context) (Health, error) {
	var h Health
	err := c.do(ctx, http.MethodGet, "/health", nil, &h, nil)
	return h, err
}

// EjectedBackends returns the backends the remote balancer has ejected, by
// URI, with when each comes back (zero: when a health check passes), as
// Balancer.EjectedBackends does: GET /health with the secret.
func (c *Client) EjectedBackends(ctx context.Context) (map[string]time.Time, error) {
	h, err := c.Health(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]time.Time, len(h.Ejected))
	for _, e := range h.Ejected {
		var until time.Time
		if e.Until != nil {
			until = *e.Until
		}
		out[e.URI] = until
	}
	return out, nil
}

// Generation returns the remote balancer's Generation token: GET /health
// with the secret.
func (c *Client) Generation(ctx context.Context) (string, error) {
	h, err := c.Health(ctx)
	return h.Generation, err
}

// Routes returns lang's backends (URI → version) and ratio (nil when none
// is set) on the remote balancer, as Balancer.Routes does: GET /health
// with the secret.
func (c *Client) Routes(ctx context.Context, lang string) (map[string]string, map[string]int, error) {
	h, err := c.Health(ctx)
	if err != nil {
		return nil, nil, err
	}
	backends := map[string]string{}
	for v, uris := range h.Backends[lang] {
		for _, u := range uris {
			backends[u] = v
		}
	}
	return backends, h.Ratios[lang], nil
}

func (c *Client) post(ctx context.Context, path string, body any, kind error) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("balancer: encoding %s request: %w", path, err)
	}
	return c.do(ctx, http.MethodPost, path, b, nil, kind)
}

func (c *Client) do(ctx context.Context, method, path string, body []byte, out any, kind error) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("balancer: %s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	} else {
		req.Header.Set(SecretHeader, c.secret)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("balancer: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("balancer: %s %s: reading answer: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var eb struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(data, &eb) != nil || eb.Message == "" {
			eb.Message = strings.TrimSpace(string(data))
		}
		return &StatusError{StatusCode: resp.StatusCode, Message: eb.Message, kind: kind}
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("balancer: %s %s: decoding answer: %w", method, path, err)
		}
	}
	return nil
}
