package health

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// Defaults used when an Options field is zero.
const (
	DefaultInterval         = 5 * time.Second
	DefaultTimeout          = 2 * time.Second
	DefaultFailureThreshold = 1
	DefaultPath             = "/health"
	DefaultConcurrency      = 32
	// MaxBody is how much of a health answer is kept in Event.Body.
	MaxBody = 64 << 10
)

// ErrInvalidOptions is returned by New for options it cannot use.
var ErrInvalidOptions = errors.New("health: invalid options")

// Options configure a Checker. The zero value means every default.
type Options struct {
	// Interval between two checks of a target; 0 means DefaultInterval.
	Interval time.Duration
	// Timeout of one check; 0 means DefaultTimeout.
	Timeout time.Duration
	// FailureThreshold is how many consecutive failures make a target
	// unhealthy; 0 means DefaultFailureThreshold (one failure, as the seed
	// says).
	FailureThreshold int
	// Path is requested on every target; "" means DefaultPath.
	Path string
	// Concurrency bounds the checks in flight; 0 means DefaultConcurrency.
	Concurrency int
	// Client makes the requests; nil means a client of its own. Its Timeout
	// should be zero or above Timeout, which the Checker enforces itself.
	Client *http.Client
	// Notify receives every check's result, one at a time, from the
	// goroutine running Run. It must not block for long: the next pass
	// waits for it. nil drops events (Status still answers).
	Notify func(Event)
}

// State of a target.
type State int

// States of a target. A new (or re-added) target is Unknown until its first
// check. Unhealthy is final: the target is not checked again until it is
// added again.
const (
	Unknown State = iota
	Healthy
	Unhealthy
)

func (s State) String() string {
	switch s {
	case Unknown:
		return "unknown"
	case Healthy:
		return "healthy"
	case Unhealthy:
		return "unhealthy"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Target is what a Checker checks.
type Target struct {
	// ID names the target (a machine ID); it is the key of Add and Remove.
	ID string
	// Address is "host:port"; the check is GET http://Address+Path.
	Address string
}

// Status is what the Checker knows about a target.
type Status struct {
	Target Target
	State  State
	// Failures counts consecutive failed checks.
	Failures int
	// LastCheck is the time of the last check; zero before the first.
	LastCheck time.Time
	// LastErr is the error of the last check; nil when it succeeded.
	LastErr error
	// Body is the last successful answer, at most MaxBody bytes.
	Body []byte
}

// Event is the result of one check.
type Event struct {
	Status
	// Changed says the check moved the target to a new State.
	Changed bool
	// Paused, when set, is how long this process could not run during a
	// check that timed out: the timeout says nothing of the target, so it
	// was not counted and Status is as before the check.
	Paused time.Duration
}

// Checker polls the health endpoint of a set of targets.
//
// A Checker is safe for concurrent use: Add, Remove, Status and Targets may
// be called from any goroutine while Run is running. Only one Run may run
// at a time.
type Checker struct {
	opts   Options
	client *http.Client
	kick   chan struct{}
	// watch measures this process's pauses during a pass; a test may
	// replace it.
	watch func(every time.Duration) (stop func() time.Duration)

	// passMu serialises passes (Run and Check).
	passMu sync.Mutex

	// mu guards targets and gen.
	mu      sync.Mutex
	targets map[string]*entry
	gen     uint64
}

type entry struct {
	gen    uint64 // changes when the target is added again
	status Status
}

// New returns a Checker with opts, or an error wrapping ErrInvalidOptions.
func New(opts Options) (*Checker, error) {
	if opts.Interval < 0 || opts.Timeout < 0 || opts.FailureThreshold < 0 || opts.Concurrency < 0 {
		return nil, fmt.Errorf("%w: negative interval, timeout, threshold or concurrency", ErrInvalidOptions)
	}
	if opts.Path != "" && !strings.HasPrefix(opts.Path, "/") {
		return nil, fmt.Errorf("%w: path %q must start with /", ErrInvalidOptions, opts.Path)
	}
	opts.Interval = cmpOr(opts.Interval, DefaultInterval)
	opts.Timeout = cmpOr(opts.Timeout, DefaultTimeout)
	opts.FailureThreshold = cmpOr(opts.FailureThreshold, DefaultFailureThreshold)
	opts.Path = cmpOr(opts.Path, DefaultPath)
	opts.Concurrency = cmpOr(opts.Concurrency, DefaultConcurrency)
	client := opts.Client
	if client == nil {
		client = &http.Client{Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConnsPerHost: 1,
			IdleConnTimeout:     2 * opts.Interval,
		}, CheckRedirect: noRedirects}
	}
	return &Checker{
		opts:    opts,
		client:  client,
		kick:    make(chan struct{}, 1),
		watch:   watchPauses,
		targets: make(map[string]*entry),
	}, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Add starts checking t. Adding an ID again replaces its address and
// resets it to Unknown: this is how an unhealthy target is given another
// chance. A running Run checks a new target at once.
func (c *Checker) Add(t Target) {
	c.mu.Lock()
	c.gen++
	c.targets[t.ID] = &entry{gen: c.gen, status: Status{Target: t}}
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// Remove stops checking the target; it reports whether it was there. A
// check in flight for it is discarded.
func (c *Checker) Remove(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.targets[id]
	delete(c.targets, id)
	return ok
}

// Status returns what is known of the target id.
func (c *Checker) Status(id string) (Status, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.targets[id]
	if !ok {
		return Status{}, false
	}
	return e.status, true
}

// Targets returns the status of every target, sorted by ID.
func (c *Checker) Targets() []Status {
	c.mu.Lock()
	out := make([]Status, 0, len(c.targets))
	for _, e := range c.targets {
		out = append(out, e.status)
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b Status) int { return strings.Compare(a.Target.ID, b.Target.ID) })
	return out
}

// Run checks every target at once and then every Interval, and checks a
// target added in between without waiting for the next tick. It calls
// Notify with each result and returns ctx.Err() when ctx is done.
func (c *Checker) Run(ctx context.Context) error {
	tick := time.NewTicker(c.opts.Interval)
	defer tick.Stop()
	c.notify(c.pass(ctx, false))
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			c.notify(c.pass(ctx, false))
		case <-c.kick:
			c.notify(c.pass(ctx, true))
		}
	}
}

// Check runs one pass over the targets that are not Unhealthy, applies the
// results and returns them sorted by target ID; it does not call Notify. It
// is Run's unit of work, exported for tests and for callers that drive the
// schedule themselves.
func (c *Checker) Check(ctx context.Context) []Event {
	return c.pass(ctx, false)
}

func (c *Checker) notify(events []Event) {
	if c.opts.Notify == nil {
		return
	}
	for _, e := range events {
		c.opts.Notify(e)
	}
}

type job struct {
	target Target
	gen    uint64
	err    error
	body   []byte
	at     time.Time
}

// pass checks the due targets concurrently: all but the unhealthy ones, or
// only those never checked when onlyNew is set.
func (c *Checker) pass(ctx context.Context, onlyNew bool) []Event {
	c.passMu.Lock()
	defer c.passMu.Unlock()

	c.mu.Lock()
	jobs := make([]*job, 0, len(c.targets))
	for _, e := range c.targets {
		if e.status.State == Unhealthy || (onlyNew && !e.status.LastCheck.IsZero()) {
			continue
		}
		jobs = append(jobs, &job{target: e.status.Target, gen: e.gen})
	}
	c.mu.Unlock()
	if len(jobs) == 0 {
		return nil
	}

	stopWatch := c.watch(c.opts.Timeout / 16)
	var g errgroup.Group
	g.SetLimit(c.opts.Concurrency)
	for _, j := range jobs {
		g.Go(func() error {
			j.body, j.err = c.check(ctx, j.target.Address)
			j.at = time.Now()
			return nil
		})
	}
	_ = g.Wait()
	pause := stopWatch()
	if ctx.Err() != nil {
		// Failures caused by our own cancellation say nothing of the targets.
		return nil
	}

	events := make([]Event, 0, len(jobs))
	c.mu.Lock()
	for _, j := range jobs {
		e, ok := c.targets[j.target.ID]
		if !ok || e.gen != j.gen {
			continue // removed or re-added while being checked
		}
		if pause > c.opts.Timeout/4 && isTimeout(j.err) {
			// This process stalled for a good part of the timeout: the
			// check is not counted (see pause.go).
			events = append(events, Event{Status: e.status, Paused: pause})
			continue
		}
		before := e.status.State
		s := &e.status
		s.LastCheck, s.LastErr = j.at, j.err
		if j.err == nil {
			s.Failures, s.State, s.Body = 0, Healthy, j.body
		} else {
			s.Failures++
			if s.Failures >= c.opts.FailureThreshold {
				s.State = Unhealthy
			}
		}
		events = append(events, Event{Status: *s, Changed: s.State != before})
	}
	c.mu.Unlock()
	slices.SortFunc(events, func(a, b Event) int { return strings.Compare(a.Target.ID, b.Target.ID) })
	return events
}

// check makes one health request.
func (c *Checker) check(ctx context.Context, addr string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	return Probe(ctx, c.client, "http://"+addr+c.opts.Path)
}

// Info is the body of a linter's health answer (the fleet's wire contract).
type Info struct {
	Version      string `json:"version"`
	Language     string `json:"language"`
	RequestCount int64  `json:"requestCount"`
}

// Info decodes the last successful answer as a linter health body.
func (s Status) Info() (Info, error) {
	var i Info
	if len(s.Body) == 0 {
		return i, errors.New("health: no successful answer yet")
	}
	if err := json.Unmarshal(s.Body, &i); err != nil {
		return i, fmt.Errorf("health: decoding answer: %w", err)
	}
	return i, nil
}
