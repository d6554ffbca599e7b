// Package rollouttest holds an in-memory rollout.Router for tests of code
// that drives a load balancer: it keeps backends and ratios as a balancer
// would, validates like one, records every call and can be made to fail.
package rollouttest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/fleetkit/fleetkit/rollout"
)

var (
	_ rollout.Router           = (*Router)(nil)
	_ rollout.RouterReader     = (*Router)(nil)
	_ rollout.RouterGeneration = (*Router)(nil)
	_ rollout.EjectionReporter = (*Router)(nil)
)

// Errors of the Router, mirroring the balancer's.
var (
	// ErrUnknownBackend is RemoveBackend of a uri the Router does not hold.
	ErrUnknownBackend = errors.New("rollouttest: unknown backend")
	// ErrInvalidRatio is a SetRatio whose weights are negative or do not
	// sum to the total.
	ErrInvalidRatio = errors.New("rollouttest: invalid ratio")
	// ErrInjected is the default error of Fail.
	ErrInjected = errors.New("rollouttest: injected failure")
)

// Ops of Call.
const (
	OpAdd    = "add"
	OpRemove = "remove"
	OpRatio  = "ratio"
)

// Call is one call of the Router.
type Call struct {
	Op      string
	Lang    string
	Version string
	URI     string
	Ratio   map[string]int
	// Err is what the call returned.
	Err error
}

func (c Call) String() string {
	switch c.Op {
	case OpAdd:
		return fmt.Sprintf("router.add %s %s %s", c.Lang, c.Version, c.URI)
	case OpRemove:
		return "router.remove " + c.URI
	}
	return fmt.Sprintf("router.ratio %s %v", c.Lang, c.Ratio)
}

// Backend is a backend the Router holds.
type Backend struct {
	Lang, Version string
}

// Router is an in-memory rollout.Router. The zero value is not usable;
// use NewRouter. It is safe for concurrent use.
type Router struct {
	total  int
	record func(Call)

	// mu guards calls, backends, ratios, fail and ejected.
	mu       sync.Mutex
	calls    []Call
	backends map[string]Backend
	ratios   map[string]map[string]int
	fail     map[string]failure
	ejected  map[string]time.Time
	// restarts and generation make the Generation token.
	restarts, generation int
}

type failure struct {
	n   int
	err error
}

// Options configure a Router.
type Options struct {
	// Total is the sum ratios must have; 0 means 100.
	Total int
	// Record, when set, is called with every call after it is applied (for
	// a log shared with other fakes). It must not call the Router.
	Record func(Call)
}

// NewRouter returns an empty Router.
func NewRouter(opts Options) *Router {
	if opts.Total == 0 {
		opts.Total = 100
	}
	return &Router{total: opts.Total, record: opts.Record, backends: map[string]Backend{},
		ratios: map[string]map[string]int{}, fail: map[string]failure{}, ejected: map[string]time.Time{}}
}

// Fail makes the next n calls of op fail with err (ErrInjected when nil).
func (r *Router) Fail(op string, n int, err error) {
	if err == nil {
		err = ErrInjected
	}
	r.mu.Lock()
	r.fail[op] = failure{n: n, err: err}
	r.mu.Unlock()
}

// AddBackend implements rollout.Router.
func (r *Router) AddBackend(ctx context.Context, lang, version, uri string) error {
	return r.do(Call{Op: OpAdd, Lang: lang, Version: version, URI: uri}, func() error {
		if lang == "" || version == "" || uri == "" {
			return errors.New("rollouttest: empty lang, version or uri")
		}
		if r.backends[uri] != (Backend{Lang: lang, Version: version}) {
			r.generation++
		}
		r.backends[uri] = Backend{Lang: lang, Version: version}
		delete(r.ejected, uri) // adding again readmits, as the balancer does
		return nil
	})
}

// RemoveBackend implements rollout.Router.
func (r *Router) RemoveBackend(ctx context.Context, uri string) error {
	return r.do(Call{Op: OpRemove, URI: uri}, func() error {
		if _, ok := r.backends[uri]; !ok {
			return fmt.Errorf("%w: %s", ErrUnknownBackend, uri)
		}
		delete(r.backends, uri)
		delete(r.ejected, uri)
		r.generation++
		return nil
	})
}

// SetRatio implements rollout.Router.
func (r *Router) SetRatio(ctx context.Context, lang string, ratio map[string]int) error {
	return r.do(Call{Op: OpRatio, Lang: lang, Ratio: maps.Clone(ratio)}, func() error {
		sum := 0
		for v, w := range ratio {
			if w < 0 {
				return fmt.Errorf("%w: weight of %s is negative", ErrInvalidRatio, v)
			}
			sum += w
		}
		if sum != r.total {
			return fmt.Errorf("%w: weights sum to %d, want %d", ErrInvalidRatio, sum, r.total)
		}
		// As the balancer: weight only on versions without a backend, while
		// the language has some, is refused.
		has, served := false, false
		for _, b := range r.backends {
			if b.Lang == lang {
				has = true
				served = served || ratio[b.Version] > 0
			}
		}
		if has && !served {
			return fmt.Errorf("%w: no version with weight has a backend", ErrInvalidRatio)
		}
		r.ratios[lang] = maps.Clone(ratio)
		r.generation++
		return nil
	})
}

func (r *Router) do(c Call, apply func() error) error {
	r.mu.Lock()
	if f := r.fail[c.Op]; f.n > 0 {
		f.n--
		r.fail[c.Op] = f
		c.Err = f.err
	} else {
		c.Err = apply()
	}
	r.calls = append(r.calls, c)
	rec := r.record
	r.mu.Unlock()
	if rec != nil {
		rec(c)
	}
	return c.Err
}

// Calls returns every call so far, in order.
func (r *Router) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// Held returns the backends held, by uri.
func (r *Router) Held() map[string]Backend {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.backends)
}

// Routes implements rollout.RouterReader. It is not recorded as a call.
func (r *Router) Routes(ctx context.Context, lang string) (map[string]string, map[string]int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]string{}
	for u, b := range r.backends {
		if b.Lang == lang {
			out[u] = b.Version
		}
	}
	return out, maps.Clone(r.ratios[lang]), nil
}

// Generation implements rollout.RouterGeneration. It is not recorded as a
// call.
func (r *Router) Generation(context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return fmt.Sprintf("%d.%d", r.restarts, r.generation), nil
}

// Restart forgets every backend and ratio, as a balancer that restarted
// without state; its Generation changes.
func (r *Router) Restart() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.restarts++
	r.generation = 0
	r.backends = map[string]Backend{}
	r.ratios = map[string]map[string]int{}
	r.ejected = map[string]time.Time{}
}

// Eject takes uri out of rotation until until, as a balancer's passive
// health would; false when the Router does not hold uri.
func (r *Router) Eject(uri string, until time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.backends[uri]; !ok {
		return false
	}
	r.ejected[uri] = until
	return true
}

// EjectedBackends implements rollout.EjectionReporter. It is not recorded
// as a call.
func (r *Router) EjectedBackends(context.Context) (map[string]time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return maps.Clone(r.ejected), nil
}

// Ratio returns lang's ratio and whether one was set.
func (r *Router) Ratio(lang string) (map[string]int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.ratios[lang]
	return maps.Clone(v), ok
}

// IsNotFound reports whether err is ErrUnknownBackend; use it as
// rollout.Options.IsNotFound.
func IsNotFound(err error) bool { return errors.Is(err, ErrUnknownBackend) }
