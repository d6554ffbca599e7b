package balancer

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Backend is one linter machine the balancer may pick. Its identity is URI;
// Language and Version never change once it is built (re-adding the URI
// under another language or version replaces the Backend). The counters
// are atomics, so a *Backend is safe for concurrent use.
type Backend struct {
	// URI is the base URL, as added: "http://127.0.0.1:34567".
	URI string
	// Language and Version are the ones the backend was added with.
	Language string
	Version  string

	// lintURL is URI + "/lint", parsed once; shared read-only by requests.
	lintURL *url.URL
	// requestPath is lintURL's path as sent on the request line.
	requestPath string
	// dialAddr is lintURL's host:port.
	dialAddr string
	// loopAddr is dialAddr for an http:// backend named by IP address,
	// which Server's event loop dials itself; invalid otherwise.
	loopAddr netip.AddrPort

	// The outlier detection state, guarded by the Balancer's mu: how many
	// ejections in a row the next one follows (each lasts longer), since
	// when the backend has been in rotation (which wears that count down),
	// until when it is out, and the timer that brings it back.
	ejections    int
	inRotation   time.Time
	ejectedUntil time.Time
	readmitTimer *time.Timer

	// Hot counters sit on their own cache line so picks of neighbours in a
	// slice do not bounce it.
	_        [64]byte
	requests atomic.Uint64 // answers reported, success or failure
	failures atomic.Int64  // consecutive failures; reset on success
	ejected  atomic.Bool   // set by passive health, cleared by readmission
	_        [64]byte
}

func newBackend(lang, version, uri string) (*Backend, error) {
	if !ValidLanguage(lang) {
		return nil, fmt.Errorf("%w: language %q must be non-empty valid UTF-8 with no '/', space or control character", ErrInvalidBackend, lang)
	}
	if version == "" {
		return nil, fmt.Errorf("%w: version must be non-empty", ErrInvalidBackend)
	}
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("%w: uri %q must be an absolute http(s) URL like http://127.0.0.1:34567: %v", ErrInvalidBackend, uri, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: uri %q must be an absolute http(s) URL like http://127.0.0.1:34567", ErrInvalidBackend, uri)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("%w: uri %q must have no query, fragment or user info", ErrInvalidBackend, uri)
	}
	lint := *u
	lint.Path = strings.TrimSuffix(u.Path, "/") + "/lint"
	lint.RawPath = ""
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	be := &Backend{
		URI: uri, Language: lang, Version: version,
		lintURL:     &lint,
		requestPath: lint.EscapedPath(),
		dialAddr:    net.JoinHostPort(u.Hostname(), port),
	}
	if u.Scheme == "http" {
		be.loopAddr, _ = netip.ParseAddrPort(be.dialAddr)
	}
	return be, nil
}

// ValidLanguage reports whether lang can name a language: non-empty,
// valid UTF-8, with no '/', space or control character. Any such name
// works (none is hard-coded); a request for another is answered 404.
func ValidLanguage(lang string) bool {
	if lang == "" || !utf8.ValidString(lang) {
		return false
	}
	for _, r := range lang {
		if r <= ' ' || r == '/' || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

// Healthy reports whether passive health has not ejected the backend.
func (b *Backend) Healthy() bool { return !b.ejected.Load() }

// Requests returns how many answers (successful or not) were reported for
// the backend since it was added.
func (b *Backend) Requests() uint64 { return b.requests.Load() }

// ConsecutiveFailures returns the failures reported since the last success.
func (b *Backend) ConsecutiveFailures() int { return int(b.failures.Load()) }

// LintURL returns the URL requests are forwarded to: URI + "/lint".
func (b *Backend) LintURL() string { return b.lintURL.String() }
