package balancer

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultRatioTotal is the sum every ratio must have when Options.RatioTotal
// is zero: weights are percentages.
const DefaultRatioTotal = 100

// Outlier detection defaults (those of Envoy's, but for the percentage).
const (
	// DefaultEjectAfter is how many consecutive failures eject a backend
	// when Options.EjectAfter is zero.
	DefaultEjectAfter = 3
	// DefaultBaseEjectionTime is how long a first ejection lasts when
	// Options.BaseEjectionTime is zero.
	DefaultBaseEjectionTime = 30 * time.Second
	// DefaultMaxEjectionTime caps an ejection when Options.MaxEjectionTime
	// is zero.
	DefaultMaxEjectionTime = 5 * time.Minute
	// DefaultMaxEjectionPercent caps the share of a language's backends
	// ejected at once when Options.MaxEjectionPercent is zero.
	DefaultMaxEjectionPercent = 50
)

// maxRatioTotal bounds the precomputed SWRR cycle (at most RatioTotal
// entries per language).
const maxRatioTotal = 1 << 20

// Options configures a Balancer. The zero value is usable.
type Options struct {
	// RatioTotal is the sum every ratio must have. 0 means
	// DefaultRatioTotal; at most 1<<20.
	RatioTotal int
	// EjectAfter is how many consecutive failures (5xx answers and
	// connection failures; see ReportFailure) eject a backend: passive
	// health, in the manner of Envoy's outlier detection. 0 means
	// DefaultEjectAfter; a negative value never ejects.
	EjectAfter int
	// BaseEjectionTime is how long an ejection lasts; then the backend is
	// back in rotation (sooner when a Checker sees it answer /health). The
	// n-th ejection in a row lasts n times as long, up to MaxEjectionTime;
	// every BaseEjectionTime the backend then serves without being ejected
	// takes one off n. 0 means DefaultBaseEjectionTime; a negative value
	// keeps an ejected backend out until a Checker, Readmit or AddBackend
	// brings it back.
	BaseEjectionTime time.Duration
	// MaxEjectionTime caps an ejection. 0 means DefaultMaxEjectionTime.
	MaxEjectionTime time.Duration
	// MaxEjectionPercent caps the share of a language's backends that may
	// be ejected at once (a percentage in 1..100; one backend may always be
	// ejected when the language has two or more). Whatever it is, the last
	// backend of a language in rotation is never ejected: failing requests
	// beat no answer, and no run of failures can empty a language. 0 means
	// DefaultMaxEjectionPercent.
	MaxEjectionPercent int
	// Policy builds the pickers. nil means SmoothWeighted{}.
	Policy Policy
	// Registerer receives the balancer's metrics (ejections, weights).
	// nil means no metrics.
	Registerer prometheus.Registerer
	// Logger logs ejections and readmissions. nil means no logging.
	Logger *slog.Logger
}

// Balancer holds the backends of every language and picks one per request.
//
// Every method is safe for concurrent use. Pick takes no lock: each
// language publishes an immutable Picker, rebuilt and swapped atomically on
// every change, and the languages themselves sit in a copy-on-write map.
// The methods that change state take an internal mutex and never block on
// I/O; the ctx they accept exists so that they share their signatures with
// Client (see Router) and is otherwise ignored.
type Balancer struct {
	total       int
	ejectAfter  int64
	baseEject   time.Duration
	maxEject    time.Duration
	maxEjectPct int
	policy      Policy
	metrics     *balancerMetrics // nil when no Registerer
	logger      *slog.Logger

	// langs is the pick path's view: map language → entry, never mutated
	// once published (a new map is swapped in when a language comes or goes).
	langs atomic.Pointer[map[string]*langEntry]

	// instance names this Balancer value (random, made by New), so that a
	// restarted balancer is told from the old one by its Generation.
	instance string
	// generation counts the changes of backends and ratios; bumped under mu.
	generation atomic.Uint64

	// mu guards state, byURI and removed, and serializes every rebuild
	// and swap.
	mu    sync.Mutex
	state map[string]*language
	byURI map[string]*Backend
	// removed are called, under mu, with each backend that leaves: the
	// Proxies over this Balancer close their connections to it.
	removed []func(*Backend)
}

// Router is the part of the balancer a machine manager drives. Both the
// in-process *Balancer and the remote *Client satisfy it; a consumer such
// as rollout declares its own copy of this interface rather than importing
// it. Implementations are safe for concurrent use; Client's methods do
// network I/O and honour ctx.
type Router interface {
	// AddBackend adds uri to lang's set under version. Adding a URI twice
	// is not an error; it readmits an ejected backend, and moves a URI that
	// was added under another language or version.
	AddBackend(ctx context.Context, lang, version, uri string) error
	// RemoveBackend removes uri; ErrUnknownBackend if it is not held.
	RemoveBackend(ctx context.Context, uri string) error
	// SetRatio sets lang's version weights and restarts its sequence;
	// ErrInvalidRatio if a weight is negative or the sum is not the total.
	SetRatio(ctx context.Context, lang string, ratio map[string]int) error
}

var _ Router = (*Balancer)(nil)

// langEntry is what the pick path finds for a language.
type langEntry struct {
	picker atomic.Pointer[pickerBox]
}

// pickerBox is one published snapshot of a language.
type pickerBox struct {
	p Picker
	// eligible are the healthy backends of the versions with weight, for
	// PickOther's fallback when the picker keeps returning the one to avoid.
	eligible []*Backend
	_        [64]byte
	next     atomic.Uint64
}

// language is the mutable state of one language; guarded by Balancer.mu.
type language struct {
	name     string
	ratio    map[string]int // nil until SetRatio
	backends []*Backend     // in the order they were added
	entry    *langEntry
	gauged   map[string]bool // versions that have weight gauges set
}

// New returns an empty Balancer.
func New(opts Options) (*Balancer, error) {
	total := opts.RatioTotal
	switch {
	case total == 0:
		total = DefaultRatioTotal
	case total < 0 || total > maxRatioTotal:
		return nil, fmt.Errorf("balancer: RatioTotal %d out of range 1..%d", total, maxRatioTotal)
	}
	eject := int64(cmp.Or(opts.EjectAfter, DefaultEjectAfter))
	if opts.MaxEjectionTime < 0 || opts.MaxEjectionPercent < 0 || opts.MaxEjectionPercent > 100 {
		return nil, fmt.Errorf("balancer: MaxEjectionTime %s must not be negative and MaxEjectionPercent %d must be in 0..100",
			opts.MaxEjectionTime, opts.MaxEjectionPercent)
	}
	policy := opts.Policy
	if policy == nil {
		policy = SmoothWeighted{}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	b := &Balancer{
		instance:    hex.EncodeToString(id[:]),
		total:       total,
		ejectAfter:  eject,
		baseEject:   cmp.Or(opts.BaseEjectionTime, DefaultBaseEjectionTime),
		maxEject:    cmp.Or(opts.MaxEjectionTime, DefaultMaxEjectionTime),
		maxEjectPct: cmp.Or(opts.MaxEjectionPercent, DefaultMaxEjectionPercent),
		policy:      policy,
		logger:      logger,
		state:       map[string]*language{},
		byURI:       map[string]*Backend{},
	}
	if opts.Registerer != nil {
		m, err := newBalancerMetrics(opts.Registerer)
		if err != nil {
			return nil, err
		}
		b.metrics = m
	}
	empty := map[string]*langEntry{}
	b.langs.Store(&empty)
	return b, nil
}

// holds reports whether lang has backends or a ratio. It takes no lock.
func (b *Balancer) holds(lang string) bool {
	_, ok := (*b.langs.Load())[lang]
	return ok
}

// held reports whether be is still one of the Balancer's backends.
func (b *Balancer) held(be *Backend) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.byURI[be.URI] == be
}

// onRemove has fn called, under the Balancer's lock, with each backend
// that leaves from now on. fn must not block or call the Balancer.
func (b *Balancer) onRemove(fn func(*Backend)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.removed = append(b.removed, fn)
}

// RatioTotal returns the sum every ratio must have.
func (b *Balancer) RatioTotal() int { return b.total }

// Pick returns the next backend for lang, or ErrNoBackend. It takes no
// lock and does not allocate.
func (b *Balancer) Pick(lang string) (*Backend, error) {
	e := (*b.langs.Load())[lang]
	if e == nil {
		return nil, ErrNoBackend
	}
	return e.picker.Load().p.Pick()
}

// PickOther returns a backend of lang other than avoid, for a retry,
// preferring one that is not already failing (see PickRetry).
// ErrNoBackend when avoid is the only one.
func (b *Balancer) PickOther(lang string, avoid *Backend) (*Backend, error) {
	return b.PickRetry(lang, []*Backend{avoid})
}

// PickRetry returns a backend of lang that is not in tried, for a retry.
// It prefers, in this order, what the picker gives (so the ratio holds
// for retries too) and then any eligible backend, among those not already
// failing (no consecutive failure since their last success): after many
// backends die at once, a retry lands on one that still answers rather
// than on another dead one. Only when every untried backend is failing
// does it return one of those. ErrNoBackend when none is left.
func (b *Balancer) PickRetry(lang string, tried []*Backend) (*Backend, error) {
	e := (*b.langs.Load())[lang]
	if e == nil {
		return nil, ErrNoBackend
	}
	box := e.picker.Load()
	for range 4 {
		be, err := box.p.Pick()
		if err != nil {
			return nil, err
		}
		if !slices.Contains(tried, be) && be.failures.Load() == 0 {
			return be, nil
		}
	}
	n := uint64(len(box.eligible))
	start := box.next.Add(1)
	var failing *Backend
	for i := range n {
		be := box.eligible[(start+i)%n]
		if slices.Contains(tried, be) {
			continue
		}
		if be.failures.Load() == 0 {
			return be, nil
		}
		if failing == nil {
			failing = be
		}
	}
	if failing != nil {
		return failing, nil
	}
	return nil, ErrNoBackend
}

// Generation returns a token that changes whenever a backend is added or
// removed or a ratio is set, and differs between two Balancer values
// (a restarted balancer never gives an old token): a machine manager that
// remembers the token it saw after converging knows cheaply whether the
// balancer still holds what it set. Ejections and readmissions do not
// change it.
func (b *Balancer) Generation(context.Context) (string, error) {
	return fmt.Sprintf("%s.%d", b.instance, b.generation.Load()), nil
}

// Routes returns lang's backends (URI → version) and its ratio (nil when
// none was set): what a machine manager compares with what it wants.
func (b *Balancer) Routes(_ context.Context, lang string) (backends map[string]string, ratio map[string]int, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	backends = map[string]string{}
	l := b.state[lang]
	if l == nil {
		return backends, nil, nil
	}
	for _, be := range l.backends {
		backends[be.URI] = be.Version
	}
	return backends, maps.Clone(l.ratio), nil
}

// AddBackend implements Router.
func (b *Balancer) AddBackend(_ context.Context, lang, version, uri string) error {
	nb, err := newBackend(lang, version, uri)
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if old := b.byURI[uri]; old != nil {
		if old.Language == lang && old.Version == version {
			old.failures.Store(0)
			b.readmitLocked(old, "added again")
			return nil
		}
		b.removeLocked(old)
	}
	l := b.state[lang]
	if l == nil {
		l = b.addLanguageLocked(lang)
	}
	nb.inRotation = time.Now()
	l.backends = append(l.backends, nb)
	b.byURI[uri] = nb
	b.generation.Add(1)
	b.rebuildLocked(l)
	return nil
}

// RemoveBackend implements Router.
func (b *Balancer) RemoveBackend(ctx context.Context, uri string) error {
	return b.removeBackend(ctx, "", uri)
}

// removeBackend removes uri; when lang is not empty the backend must belong
// to it.
func (b *Balancer) removeBackend(_ context.Context, lang, uri string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	old := b.byURI[uri]
	if old == nil || (lang != "" && old.Language != lang) {
		if lang != "" {
			return fmt.Errorf("%w: %s in language %q", ErrUnknownBackend, uri, lang)
		}
		return fmt.Errorf("%w: %s", ErrUnknownBackend, uri)
	}
	b.removeLocked(old)
	return nil
}

// SetRatio implements Router. The weights must be non-negative and sum to
// RatioTotal; versions left out get no traffic. A ratio that gives weight
// only to versions without a backend, while the language has backends, is
// refused (ErrInvalidRatio): it would leave the language answering 503 for
// good. A version with weight but no backend beside one with backends is
// accepted: its share goes to the others until its backends come. The new sequence starts
// from its beginning, so the next RatioTotal picks are split exactly.
func (b *Balancer) SetRatio(_ context.Context, lang string, ratio map[string]int) error {
	if lang == "" {
		return fmt.Errorf("%w: language must be non-empty", ErrInvalidRatio)
	}
	versions := slices.Sorted(maps.Keys(ratio))
	for _, v := range versions {
		if v == "" {
			return fmt.Errorf("%w: version names must be non-empty", ErrInvalidRatio)
		}
		if w := ratio[v]; w < 0 {
			return fmt.Errorf("%w: weight of version %q is %d; weights must be non-negative", ErrInvalidRatio, v, w)
		}
	}
	sum := 0
	for _, v := range versions {
		w := ratio[v]
		if w > b.total {
			return fmt.Errorf("%w: weight of version %q is %d, more than the total %d", ErrInvalidRatio, v, w, b.total)
		}
		sum += w
	}
	if sum != b.total {
		return fmt.Errorf("%w: weights sum to %d, want %d", ErrInvalidRatio, sum, b.total)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.state[lang]
	if l != nil && len(l.backends) > 0 {
		// A ratio that weighs only versions without a backend would leave
		// the language 503 while its backends sit idle.
		present := map[string]bool{}
		served := false
		for _, be := range l.backends {
			present[be.Version] = true
			served = served || ratio[be.Version] > 0
		}
		if !served {
			return fmt.Errorf("%w: no version with weight has a backend in %q (its backends run %v): add them first",
				ErrInvalidRatio, lang, slices.Sorted(maps.Keys(present)))
		}
	}
	if l == nil {
		l = b.addLanguageLocked(lang)
	}
	l.ratio = maps.Clone(ratio)
	b.generation.Add(1)
	b.rebuildLocked(l)
	return nil
}

// Ratio returns lang's ratio and whether one was set.
func (b *Balancer) Ratio(lang string) (map[string]int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	l := b.state[lang]
	if l == nil || l.ratio == nil {
		return nil, false
	}
	return maps.Clone(l.ratio), true
}

// ReportSuccess records that be answered. It resets be's consecutive
// failures. It takes no lock.
func (b *Balancer) ReportSuccess(be *Backend) {
	be.requests.Add(1)
	if be.failures.Load() != 0 {
		be.failures.Store(0)
	}
}

// ReportFailure records that be failed: it answered 5xx, or the
// connection to it failed (refused, reset, closed before or during the
// answer). Outcomes a request causes — an answer too large to pass, a lint
// that outlasts the timeout, a client that goes away — are not failures
// of the backend and must not be reported. After EjectAfter consecutive
// failures be is ejected (no picker returns it) for its ejection time,
// unless MaxEjectionPercent of its language is already out or it is the
// language's last backend in rotation (then it stays, and its next failure
// asks again). It reports whether this call ejected be.
func (b *Balancer) ReportFailure(be *Backend) (ejected bool) {
	be.requests.Add(1)
	n := be.failures.Add(1)
	if b.ejectAfter < 0 || n < b.ejectAfter || be.ejected.Load() {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byURI[be.URI] != be || be.ejected.Load() || !b.mayEjectLocked(be) {
		return false
	}
	b.ejectLocked(be)
	return true
}

// reportNeutral records an answer, or its absence, that says nothing of
// be's health (see ReportFailure): it counts the request only.
func (b *Balancer) reportNeutral(be *Backend) { be.requests.Add(1) }

// mayEjectLocked reports whether ejecting be keeps its language within
// MaxEjectionPercent and leaves a backend in rotation.
func (b *Balancer) mayEjectLocked(be *Backend) bool {
	l := b.state[be.Language]
	if l == nil {
		return false
	}
	total, out := len(l.backends), 0
	for _, x := range l.backends {
		if x.ejected.Load() {
			out++
		}
	}
	if out+1 >= total {
		return false // the last one in rotation stays
	}
	return out == 0 || (out+1)*100 <= b.maxEjectPct*total
}

// ejectLocked takes be out of rotation and, with a base ejection time,
// arms the timer that brings it back.
func (b *Balancer) ejectLocked(be *Backend) {
	now := time.Now()
	if b.baseEject > 0 && !be.inRotation.IsZero() {
		// Time served in rotation wears the count of ejections down.
		be.ejections = max(be.ejections-int(now.Sub(be.inRotation)/b.baseEject), 0)
	}
	be.ejections++
	be.ejected.Store(true)
	be.ejectedUntil = time.Time{}
	if b.baseEject > 0 {
		d := min(b.baseEject*time.Duration(be.ejections), b.maxEject)
		be.ejectedUntil = now.Add(d)
		be.readmitTimer = time.AfterFunc(d, func() { b.readmitExpired(be) })
	}
	b.rebuildLocked(b.state[be.Language])
	if b.metrics != nil {
		b.metrics.ejections.WithLabelValues(be.Language, be.Version).Inc()
	}
	b.logger.Warn("balancer: backend ejected", "language", be.Language, "version", be.Version,
		"backend", be.URI, "ejections", be.ejections, "until", be.ejectedUntil)
}

// readmitExpired brings be back when its ejection time is over.
func (b *Balancer) readmitExpired(be *Backend) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byURI[be.URI] == be && be.ejected.Load() && !time.Now().Before(be.ejectedUntil) {
		be.failures.Store(0)
		b.readmitLocked(be, "ejection time over")
	}
}

// readmitLocked brings an ejected be back into rotation; it reports
// whether be was ejected.
func (b *Balancer) readmitLocked(be *Backend, why string) bool {
	if be.readmitTimer != nil {
		be.readmitTimer.Stop()
		be.readmitTimer = nil
	}
	if !be.ejected.CompareAndSwap(true, false) {
		return false
	}
	be.inRotation = time.Now()
	be.ejectedUntil = time.Time{}
	b.rebuildLocked(b.state[be.Language])
	b.logger.Info("balancer: backend readmitted", "language", be.Language, "version", be.Version,
		"backend", be.URI, "why", why)
	return true
}

// Readmit brings an ejected backend back into rotation and resets its
// failures; ErrUnknownBackend if uri is not held.
func (b *Balancer) Readmit(_ context.Context, uri string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	be := b.byURI[uri]
	if be == nil {
		return fmt.Errorf("%w: %s", ErrUnknownBackend, uri)
	}
	be.failures.Store(0)
	b.readmitLocked(be, "readmitted")
	return nil
}

// readmitBackend readmits be if it is still held and ejected.
func (b *Balancer) readmitBackend(be *Backend) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.byURI[be.URI] != be {
		return false
	}
	be.failures.Store(0)
	return b.readmitLocked(be, "answered its health check")
}

// Ejected returns the backends that passive health has ejected.
func (b *Balancer) Ejected() []*Backend {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*Backend
	for _, be := range b.byURI {
		if be.ejected.Load() {
			out = append(out, be)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].URI < out[j].URI })
	return out
}

// Backends returns the state of every language: ratio, versions, weights,
// backends with their health and counts.
func (b *Balancer) Backends(context.Context) (Status, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := Status{RatioTotal: b.total, Languages: make(map[string]LanguageStatus, len(b.state))}
	for name, l := range b.state {
		ls := LanguageStatus{Ratio: maps.Clone(l.ratio), Versions: map[string]VersionStatus{}}
		eff := b.effectiveWeights(b.stateOf(l))
		for v, w := range l.ratio {
			ls.Versions[v] = VersionStatus{Weight: w, EffectiveWeight: eff[v], Backends: []BackendStatus{}}
		}
		for _, be := range l.backends {
			vs, ok := ls.Versions[be.Version]
			if !ok {
				vs = VersionStatus{EffectiveWeight: eff[be.Version], Backends: []BackendStatus{}}
				if l.ratio == nil {
					vs.Weight = 1
				}
			}
			vs.Backends = append(vs.Backends, BackendStatus{
				URI:                 be.URI,
				Healthy:             be.Healthy(),
				Requests:            be.Requests(),
				ConsecutiveFailures: be.ConsecutiveFailures(),
				Ejections:           be.ejections,
				EjectedUntil:        timePtr(be.ejectedUntil),
			})
			ls.Versions[be.Version] = vs
		}
		st.Languages[name] = ls
	}
	return st, nil
}

// Health returns the backends per language and version, the ratios, the
// Generation token and the backends that passive health has ejected, as
// the admin /health call reports them to a caller that gave the secret.
func (b *Balancer) Health(context.Context) (Health, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h := Health{Status: "ok", Backends: make(map[string]map[string][]string, len(b.state)), Ejected: []EjectedBackend{},
		Ratios: map[string]map[string]int{}, Generation: fmt.Sprintf("%s.%d", b.instance, b.generation.Load())}
	for name, l := range b.state {
		if l.ratio != nil {
			h.Ratios[name] = maps.Clone(l.ratio)
		}
		vs := map[string][]string{}
		for _, be := range l.backends {
			vs[be.Version] = append(vs[be.Version], be.URI)
			if be.ejected.Load() {
				h.Ejected = append(h.Ejected, EjectedBackend{URI: be.URI, Language: be.Language, Version: be.Version,
					Until: timePtr(be.ejectedUntil), Ejections: be.ejections})
			}
		}
		h.Backends[name] = vs
	}
	sort.Slice(h.Ejected, func(i, j int) bool { return h.Ejected[i].URI < h.Ejected[j].URI })
	return h, nil
}

// EjectedBackends returns the backends passive health has taken out of
// rotation, by URI, with the time each comes back (zero when only a
// Checker, Readmit or AddBackend brings it back). A machine manager shows
// them beside its own view of the machines (see rollout.EjectionReporter).
func (b *Balancer) EjectedBackends(context.Context) (map[string]time.Time, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]time.Time{}
	for _, be := range b.byURI {
		if be.ejected.Load() {
			out[be.URI] = be.ejectedUntil
		}
	}
	return out, nil
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// Status is the state of a Balancer, as GET /backends reports it.
type Status struct {
	// RatioTotal is the sum every ratio must have.
	RatioTotal int `json:"ratioTotal"`
	// Languages maps each language to its state.
	Languages map[string]LanguageStatus `json:"languages"`
}

// LanguageStatus is the state of one language.
type LanguageStatus struct {
	// Ratio is the ratio set for the language; nil when none is set (every
	// version present then has weight 1).
	Ratio map[string]int `json:"ratio,omitempty"`
	// Versions maps each version with a backend or a weight to its state.
	Versions map[string]VersionStatus `json:"versions"`
}

// VersionStatus is the state of one version of a language.
type VersionStatus struct {
	// Weight is the configured weight (1 when no ratio is set).
	Weight int `json:"weight"`
	// EffectiveWeight is the share of traffic the version gets now, in
	// units of RatioTotal, once the weight of versions with no healthy
	// backend has been handed to the others.
	EffectiveWeight float64 `json:"effectiveWeight"`
	// Backends lists the version's backends in the order they were added.
	Backends []BackendStatus `json:"backends"`
}

// BackendStatus is the state of one backend.
type BackendStatus struct {
	URI string `json:"uri"`
	// Healthy is false while passive health has the backend ejected.
	Healthy             bool   `json:"healthy"`
	Requests            uint64 `json:"requestCount"`
	ConsecutiveFailures int    `json:"consecutiveFailures"`
	// Ejections counts the backend's recent ejections in a row (the
	// multiplier of the next ejection time).
	Ejections int `json:"ejections,omitempty"`
	// EjectedUntil is when an ejected backend comes back; nil when it is
	// in rotation or waits for a health check.
	EjectedUntil *time.Time `json:"ejectedUntil,omitempty"`
}

// Health is the answer of the admin /health call. Backends maps language →
// version → URIs, and Ejected lists the backends out of rotation; both are
// filled only for a caller that gave the secret.
type Health struct {
	Status   string                         `json:"status"`
	Backends map[string]map[string][]string `json:"backends,omitempty"`
	Ejected  []EjectedBackend               `json:"ejected,omitempty"`
	// Ratios maps each language with a ratio set to it.
	Ratios map[string]map[string]int `json:"ratios,omitempty"`
	// Generation is the Balancer's Generation token.
	Generation string `json:"generation,omitempty"`
}

// EjectedBackend is a backend passive health has taken out of rotation.
type EjectedBackend struct {
	URI      string `json:"uri"`
	Language string `json:"lang"`
	Version  string `json:"version"`
	// Until is when it comes back; nil when only a health check, Readmit
	// or AddBackend brings it back.
	Until *time.Time `json:"until,omitempty"`
	// Ejections is how many times in a row it was ejected.
	Ejections int `json:"ejections"`
}

func (b *Balancer) addLanguageLocked(name string) *language {
	l := &language{name: name, entry: &langEntry{}, gauged: map[string]bool{}}
	l.entry.picker.Store(&pickerBox{p: noBackendPicker{}})
	b.state[name] = l
	old := *b.langs.Load()
	next := make(map[string]*langEntry, len(old)+1)
	maps.Copy(next, old)
	next[name] = l.entry
	b.langs.Store(&next)
	return l
}

func (b *Balancer) removeLocked(be *Backend) {
	delete(b.byURI, be.URI)
	b.generation.Add(1)
	if be.readmitTimer != nil {
		be.readmitTimer.Stop()
		be.readmitTimer = nil
	}
	for _, fn := range b.removed {
		fn(be)
	}
	l := b.state[be.Language]
	l.backends = slices.DeleteFunc(l.backends, func(x *Backend) bool { return x == be })
	if len(l.backends) == 0 && l.ratio == nil {
		delete(b.state, l.name)
		old := *b.langs.Load()
		next := make(map[string]*langEntry, len(old))
		for k, v := range old {
			if k != l.name {
				next[k] = v
			}
		}
		b.langs.Store(&next)
		b.setGaugesLocked(l, nil, nil)
		return
	}
	b.rebuildLocked(l)
}

// stateOf returns what the Policy sees of l.
func (b *Balancer) stateOf(l *language) State {
	byVersion := map[string][]*Backend{}
	for _, be := range l.backends {
		if be.Healthy() {
			byVersion[be.Version] = append(byVersion[be.Version], be)
		}
	}
	s := State{Language: l.name, RatioSet: l.ratio != nil}
	for _, v := range slices.Sorted(maps.Keys(byVersion)) {
		w := 1
		if l.ratio != nil {
			w = l.ratio[v]
		}
		s.Versions = append(s.Versions, VersionState{Version: v, Weight: w, Backends: byVersion[v]})
	}
	return s
}

// effectiveWeights returns each version's share of traffic in units of the
// ratio total.
func (b *Balancer) effectiveWeights(s State) map[string]float64 {
	sum := 0
	for _, v := range s.Versions {
		sum += v.Weight
	}
	out := map[string]float64{}
	for _, v := range s.Versions {
		if sum > 0 {
			out[v.Version] = float64(v.Weight) * float64(b.total) / float64(sum)
		}
	}
	return out
}

// rebuildLocked builds and publishes a new Picker for l: its sequence
// starts over.
func (b *Balancer) rebuildLocked(l *language) {
	if l == nil {
		return
	}
	s := b.stateOf(l)
	p := b.policy.Build(s)
	if p == nil {
		p = noBackendPicker{}
	}
	box := &pickerBox{p: p}
	for _, v := range s.Versions {
		if v.Weight > 0 {
			box.eligible = append(box.eligible, v.Backends...)
		}
	}
	l.entry.picker.Store(box)
	if b.metrics != nil {
		weights := map[string]int{}
		for _, be := range l.backends {
			if l.ratio == nil {
				weights[be.Version] = 1
			}
		}
		maps.Copy(weights, l.ratio)
		b.setGaugesLocked(l, weights, b.effectiveWeights(s))
	}
}

// setGaugesLocked publishes l's weights and deletes the gauges of versions
// that are gone.
func (b *Balancer) setGaugesLocked(l *language, weights map[string]int, eff map[string]float64) {
	if b.metrics == nil {
		return
	}
	for v := range l.gauged {
		if _, ok := weights[v]; !ok {
			b.metrics.weight.DeleteLabelValues(l.name, v)
			b.metrics.effectiveWeight.DeleteLabelValues(l.name, v)
			delete(l.gauged, v)
		}
	}
	for v, w := range weights {
		b.metrics.weight.WithLabelValues(l.name, v).Set(float64(w))
		b.metrics.effectiveWeight.WithLabelValues(l.name, v).Set(eff[v])
		l.gauged[v] = true
	}
}
