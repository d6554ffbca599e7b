package rollout

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetkit/fleetkit/internal/reconcile"
	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/health"
)

// Router is the part of a load balancer the Manager drives: the backends
// of each language and the traffic ratio between versions. The in-process
// *balancer.Balancer and the remote *balancer.Client both satisfy it.
//
// Implementations must be safe for concurrent use; the methods may block
// on network I/O and must honour ctx.
type Router interface {
	// AddBackend adds uri ("http://127.0.0.1:34567") to lang under version.
	// Adding it twice is not an error.
	AddBackend(ctx context.Context, lang, version, uri string) error
	// RemoveBackend removes uri; a uri the router does not hold is an
	// error (see Options.IsNotFound).
	RemoveBackend(ctx context.Context, uri string) error
	// SetRatio sets lang's version weights; they sum to the router's total.
	SetRatio(ctx context.Context, lang string, ratio map[string]int) error
}

// RouterReader is implemented by Routers that report what they hold
// (*balancer.Balancer and *balancer.Client do). With one, every reconcile
// reads the router's backends and ratio of the language and converges
// them to the live machines and the phase: a restarted balancer, a backend
// removed or added by hand, a ratio changed by hand are put right within
// one pass, and backends that match no live machine (left by an earlier
// run) are removed — for its languages the manager owns the router's view.
// Without one the manager trusts what it remembers having set. It may
// block on I/O.
type RouterReader interface {
	// Routes returns lang's backends (URI → version) and its ratio (nil
	// when none is set).
	Routes(ctx context.Context, lang string) (backends map[string]string, ratio map[string]int, err error)
}

// RouterGeneration is implemented by Routers with a token that changes
// whenever their backends or ratios change, restarts included
// (*balancer.Balancer and *balancer.Client). Run reads it every
// RouterCheckInterval and reconciles every language when it changed, so a
// restarted balancer is served again within that interval rather than at
// the next resync. It may block on I/O.
type RouterGeneration interface {
	Generation(ctx context.Context) (string, error)
}

// EjectionReporter is implemented by Routers that take backends out of
// rotation on their own, as the balancer's passive health does. Status
// shows those backends beside the manager's own health, so that the two
// views agree. It may block on I/O.
type EjectionReporter interface {
	// EjectedBackends returns the URIs of the backends out of rotation,
	// each with when it comes back (zero when unknown).
	EjectedBackends(ctx context.Context) (map[string]time.Time, error)
}

// Defaults used when an Options field is zero.
const (
	// DefaultStartTimeout bounds the creation of a machine until healthy.
	DefaultStartTimeout = 30 * time.Second
	// DefaultRemoveTimeout bounds the removal of a machine.
	DefaultRemoveTimeout = 10 * time.Second
	// DefaultResyncInterval is how often Run reconciles every language
	// even when nothing woke it up.
	DefaultResyncInterval = 30 * time.Second
	// DefaultName is the owner label value of the manager's machines.
	DefaultName = "machine-manager"
	// LabelOwner is the machine label naming the Manager that created it
	// (Options.Name); a restarted manager finds its machines by it.
	LabelOwner = "fleetkit-rollout-owner"
	// HealthPath is the machines' health endpoint (the wire contract).
	HealthPath = "/health"
	// DefaultMaxMachinesPerLanguage caps the live machines of a language.
	DefaultMaxMachinesPerLanguage = 32
	// DefaultMaxMachines caps the live machines of all languages.
	DefaultMaxMachines = 128
	// DefaultRouterCheckInterval is how often Run reads the router's
	// Generation.
	DefaultRouterCheckInterval = time.Second
)

// Language is one language of the fleet.
type Language struct {
	// Version is what machines run before any update; a saved state takes
	// precedence.
	Version string
	// Versions maps each version that may run to how to run it.
	Versions map[string]VersionSpec
}

// VersionSpec says how to run one version: Image for the docker and
// kubernetes providers, Command (and Args, Env) for the process provider.
type VersionSpec struct {
	// Image is the container image (docker, kubernetes).
	Image string `json:"image,omitempty"`
	// Command is the program (process): a path, or a name looked up in PATH.
	Command string `json:"command,omitempty"`
	// Args are the arguments; nil means the linter's command line
	// (linter.Args: -language, -version, -addr). {language} and {version}
	// are replaced by the manager, {addr} and {port} by the provider.
	Args []string `json:"args,omitempty"`
	// Env is added to the machine's environment.
	Env map[string]string `json:"env,omitempty"`
}

// Validate checks language name's settings; the error wraps
// ErrInvalidConfig and names the setting (languages.<name>.…).
func (l Language) Validate(name string) error {
	if name == "" || strings.ContainsAny(name, "/ \t\n") {
		return fmt.Errorf("%w: language name %q is empty or has a slash or space", ErrInvalidConfig, name)
	}
	if len(l.Versions) == 0 {
		return fmt.Errorf("%w: languages.%s.versions is empty", ErrInvalidConfig, name)
	}
	if l.Version == "" {
		return fmt.Errorf("%w: languages.%s.version (the version to run before any update) is empty", ErrInvalidConfig, name)
	}
	if _, ok := l.Versions[l.Version]; !ok {
		return fmt.Errorf("%w: languages.%s.version %q is not one of its versions (%s)", ErrInvalidConfig, name, l.Version,
			strings.Join(slices.Sorted(maps.Keys(l.Versions)), ", "))
	}
	for _, v := range slices.Sorted(maps.Keys(l.Versions)) {
		s := l.Versions[v]
		if v == "" {
			return fmt.Errorf("%w: languages.%s has an empty version name", ErrInvalidConfig, name)
		}
		if s.Image == "" && s.Command == "" {
			return fmt.Errorf("%w: languages.%s.versions.%s needs an image (docker) or a command (process)", ErrInvalidConfig, name, v)
		}
	}
	return nil
}

// Options configure a Manager. Languages is required; every other zero
// field means its documented default.
type Options struct {
	// Languages of the fleet. Required.
	Languages map[string]Language
	// Steps are the new version's percentages during an update; nil means
	// DefaultSteps. See ValidateSteps.
	Steps []int
	// StartTimeout bounds a machine's creation until it answers /health;
	// 0 means DefaultStartTimeout.
	StartTimeout time.Duration
	// RemoveTimeout bounds a machine's removal; 0 means DefaultRemoveTimeout.
	RemoveTimeout time.Duration
	// HealthInterval, HealthTimeout and HealthThreshold tune the health
	// checker; 0 means the machines/health defaults (5s, 2s, 1 failure).
	HealthInterval  time.Duration
	HealthTimeout   time.Duration
	HealthThreshold int
	// ReplaceUnhealthy removes a machine that became unhealthy and creates
	// a replacement (of the version that is short). Off by default: an
	// unhealthy machine is only taken out of the router and kept in Status,
	// holding its place among the language's machines (the seed's rule),
	// until its version leaves the rollout (a rollback, an abort, a
	// completed update), when it is replaced.
	ReplaceUnhealthy bool
	// StateFile keeps the rollout phases across restarts; "" keeps them in
	// memory only.
	StateFile string
	// RatioTotal is the sum of the weights the Router wants; 0 means
	// DefaultRatioTotal.
	RatioTotal int
	// Name is the value of LabelOwner on the machines this manager
	// creates; "" means DefaultName. Machines with another owner are
	// ignored, so several managers can share a provider.
	Name string
	// ResyncInterval is how often Run reconciles each language without
	// being woken; 0 means DefaultResyncInterval.
	ResyncInterval time.Duration
	// RouterCheckInterval is how often Run reads the Generation of a Router
	// that has one; 0 means DefaultRouterCheckInterval.
	RouterCheckInterval time.Duration
	// MaxMachinesPerLanguage and MaxMachines cap the live machines Create
	// makes, per language and in all (ErrTooManyMachines beyond; a rollout
	// step may still surge one machine over while it replaces one). 0
	// means DefaultMaxMachinesPerLanguage and DefaultMaxMachines; a
	// negative value means no cap.
	MaxMachinesPerLanguage int
	MaxMachines            int
	// IsNotFound reports whether an error of Router.RemoveBackend means
	// the router did not hold the uri (which counts as removed). nil means
	// no error does: wire errors.Is(err, balancer.ErrUnknownBackend).
	IsNotFound func(error) bool
	// Metrics is the balancer's metrics. With it Run samples every
	// SampleInterval the request rate, error rate and latency of every
	// version, keeps the last History samples (Status, the page) and the
	// automatic mode judges steps by them. nil: no charts, no automatic
	// mode.
	Metrics MetricsSource
	// SampleInterval is how often Metrics is sampled for the charts; 0
	// means DefaultSampleInterval (the automatic mode also samples each
	// time it judges).
	SampleInterval time.Duration
	// History is how many samples per language are kept; 0 means
	// DefaultHistory.
	History int
	// Auto enables the automatic mode; nil leaves it off. It needs
	// Metrics.
	Auto *AutoOptions
	// Registerer receives the manager's metrics (fleetkit_rollout_:
	// machines, step_percent, transitions_total, reconcile_errors_total,
	// machine_create_seconds) and those of its reconcile engine
	// (fleetkit_reconcile_*, name "rollout"); nil means no metrics.
	Registerer prometheus.Registerer
	// Logger receives what the manager does; nil discards it.
	Logger *slog.Logger
	// Now returns the time; nil means time.Now (tests set it).
	Now func() time.Time
}

// Manager is the machine manager: it creates and removes machines through
// a machines.Provider, rolls new versions out step by step, and keeps a
// Router (the balancer) in step with the machines.
//
// A Manager is safe for concurrent use. Operations on one language (Create,
// Remove, InitUpdate, Update, Rollback, Reconcile) are serialized; different
// languages proceed in parallel. Every operation may block on I/O for as
// long as machines take to start (bounded by StartTimeout) and honours ctx.
// Run must be running for health checks, exit events, retries and the
// automatic mode; the operations work without it.
type Manager struct {
	provider machines.Provider
	router   Router
	checker  *health.Checker
	metrics  *metrics // nil without a Registerer
	opts     Options
	log      *slog.Logger
	langs    map[string]*lang // fixed at New
	// engine reconciles the languages in Run, keyed by name.
	engine *reconcile.Engine

	// saveMu serializes writes of the state file.
	saveMu sync.Mutex

	history *history

	// mu guards phases, desired, backward, dead, routed, ratios, owners,
	// versionOf, served, creating, failures, verdicts and baselines.
	mu        sync.Mutex
	phases    map[string]Phase
	desired   map[string]int            // language → machines wanted; absent: not known yet
	backward  map[string]bool           // language → last transition moved back
	dead      map[string]*deadInfo      // machine ID → why it is unhealthy
	routed    map[string]string         // machine ID → URI added to the router
	ratios    map[string]map[string]int // language → ratio last set
	owners    map[string]string         // machine ID → language, for events
	versionOf map[string]string         // machine ID → version, for failures
	served    map[string]bool           // machine ID → seen healthy (created, or a health check passed)
	creating  int                       // Creates under way, for MaxMachines
	failures  []machineFailure          // the latest machines that became unhealthy
	verdicts  map[string][]Verdict      // language → the latest steps' verdicts
	baselines map[string]baseline       // language → the stable version's latency
}

// deadInfo records an unhealthy machine.
type deadInfo struct {
	why string
	// out says the machine has been taken out of the router (or found not
	// to be in it).
	out bool
}

// lang is the per-language part of a Manager.
type lang struct {
	name string
	spec Language
	// mu serializes every operation and reconcile of the language.
	mu sync.Mutex
	// pending counts the transitions waiting for mu: a reconcile gives way
	// to them between two machines (an abort must not wait for a pass
	// that replaces crashing machines of the version it aborts).
	pending atomic.Int32
}

// New returns a Manager over provider and router. It validates opts and
// loads the state file; it does not touch machines or the router until an
// operation, Sync or Run.
func New(provider machines.Provider, router Router, opts Options) (*Manager, error) {
	if provider == nil || router == nil {
		return nil, fmt.Errorf("%w: New needs a provider and a router", ErrInvalidConfig)
	}
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	m := &Manager{
		provider: provider,
		router:   router,
		opts:     opts,
		log:      opts.Logger,
		langs:    make(map[string]*lang, len(opts.Languages)),
		phases:   make(map[string]Phase, len(opts.Languages)),
		backward: map[string]bool{},
		dead:     map[string]*deadInfo{},
		routed:   map[string]string{},
		ratios:   map[string]map[string]int{},
		owners:   map[string]string{},

		desired:   map[string]int{},
		versionOf: map[string]string{},
		served:    map[string]bool{},
		verdicts:  map[string][]Verdict{},
		baselines: map[string]baseline{},
		history:   newHistory(opts.History),
	}
	var err error
	m.checker, err = health.New(health.Options{
		Interval:         opts.HealthInterval,
		Timeout:          opts.HealthTimeout,
		FailureThreshold: opts.HealthThreshold,
		Path:             HealthPath,
		Notify:           m.onHealth,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	if opts.Registerer != nil {
		if m.metrics, err = newMetrics(opts.Registerer, m); err != nil {
			return nil, err
		}
	}
	for name, l := range opts.Languages {
		m.langs[name] = &lang{name: name, spec: l}
		m.phases[name] = Phase{Current: l.Version}
	}
	if m.engine, err = m.newEngine(); err != nil {
		return nil, err
	}
	if opts.StateFile != "" {
		saved, err := LoadState(opts.StateFile)
		if err != nil {
			return nil, err
		}
		for name, n := range saved.Machines {
			if _, ok := m.langs[name]; ok {
				m.desired[name] = n
			}
		}
		for name, p := range saved.Phases {
			l, ok := m.langs[name]
			if !ok {
				m.log.Warn("state file names a language the configuration does not; ignoring it", "lang", name)
				continue
			}
			for _, v := range []string{p.Current, p.Target} {
				if _, ok := l.spec.Versions[v]; v != "" && !ok {
					return nil, fmt.Errorf("%w: state file %s: %s is at version %q, which the configuration does not define",
						ErrInvalidConfig, opts.StateFile, name, v)
				}
			}
			if p.Current == "" || (p.Updating() && (p.Step < 0 || p.Step > len(opts.Steps)-1)) {
				return nil, fmt.Errorf("%w: state file %s: %s has step %d, outside the %d configured steps",
					ErrInvalidConfig, opts.StateFile, name, p.Step+1, len(opts.Steps))
			}
			m.phases[name] = p
		}
	}
	return m, nil
}

func (o *Options) normalize() error {
	if len(o.Languages) == 0 {
		return fmt.Errorf("%w: no languages", ErrInvalidConfig)
	}
	for name, l := range o.Languages {
		if err := l.Validate(name); err != nil {
			return err
		}
	}
	if o.Steps == nil {
		o.Steps = DefaultSteps()
	}
	o.Steps = slices.Clone(o.Steps)
	if err := ValidateSteps(o.Steps); err != nil {
		return err
	}
	if o.StartTimeout < 0 || o.RemoveTimeout < 0 || o.ResyncInterval < 0 || o.RatioTotal < 0 ||
		o.RouterCheckInterval < 0 || o.SampleInterval < 0 || o.History < 0 {
		return fmt.Errorf("%w: negative timeout, interval, history or ratio total", ErrInvalidConfig)
	}
	o.RouterCheckInterval = cmp.Or(o.RouterCheckInterval, DefaultRouterCheckInterval)
	o.SampleInterval = cmp.Or(o.SampleInterval, DefaultSampleInterval)
	o.History = cmp.Or(o.History, DefaultHistory)
	o.StartTimeout = cmp.Or(o.StartTimeout, DefaultStartTimeout)
	o.RemoveTimeout = cmp.Or(o.RemoveTimeout, DefaultRemoveTimeout)
	o.ResyncInterval = cmp.Or(o.ResyncInterval, DefaultResyncInterval)
	o.RatioTotal = cmp.Or(o.RatioTotal, DefaultRatioTotal)
	o.Name = cmp.Or(o.Name, DefaultName)
	o.MaxMachinesPerLanguage = cmp.Or(o.MaxMachinesPerLanguage, DefaultMaxMachinesPerLanguage)
	o.MaxMachines = cmp.Or(o.MaxMachines, DefaultMaxMachines)
	if o.IsNotFound == nil {
		o.IsNotFound = func(error) bool { return false }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Auto != nil {
		if o.Metrics == nil {
			return fmt.Errorf("%w: the automatic mode needs the balancer's metrics (Options.Metrics)", ErrInvalidConfig)
		}
		if err := o.Auto.normalize(); err != nil {
			return err
		}
	}
	return nil
}

// Steps returns the configured update steps.
func (m *Manager) Steps() []int { return slices.Clone(m.opts.Steps) }

// Languages returns the configured languages, sorted.
func (m *Manager) Languages() []string { return slices.Sorted(maps.Keys(m.langs)) }

// Phase returns the rollout phase of lang.
func (m *Manager) Phase(lang string) (Phase, error) {
	if _, err := m.lang(lang); err != nil {
		return Phase{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.phases[lang], nil
}

func (m *Manager) lang(name string) (*lang, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: lang is empty", ErrInvalidRequest)
	}
	l, ok := m.langs[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q (configured: %v)", ErrUnknownLanguage, name, m.Languages())
	}
	return l, nil
}

// Create creates one machine of lang, of the version whose count is short
// at the current phase, waits until it answers /health, and adds it to the
// router. It returns the machine.
func (m *Manager) Create(ctx context.Context, lang string) (machines.Machine, error) {
	l, err := m.lang(lang)
	if err != nil {
		return machines.Machine{}, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	a, err := m.observe(ctx, l)
	if err != nil {
		return machines.Machine{}, err
	}
	if limit := m.opts.MaxMachinesPerLanguage; limit >= 0 && len(a.live) >= limit {
		return machines.Machine{}, fmt.Errorf("%w: %s has %d live machines, the most allowed per language (max_machines_per_language)",
			ErrTooManyMachines, lang, len(a.live))
	}
	release, err := m.reserve(ctx)
	if err != nil {
		return machines.Machine{}, err
	}
	defer release()
	old, new, p := m.versions(lang)
	n := m.desiredCount(lang, a)
	_, newWant := MachineSplit(n+1, p)
	version := old
	if new != "" && a.slots(new) < newWant {
		version = new
	}
	// The new count is saved first: a manager that dies while the machine
	// starts creates it again after its restart.
	if err := m.setDesired(lang, n+1); err != nil {
		return machines.Machine{}, err
	}
	mc, err := m.createLocked(ctx, l, version)
	if err != nil {
		if serr := m.setDesired(lang, n); serr != nil {
			err = errors.Join(err, serr)
		}
		return machines.Machine{}, err
	}
	if err := m.setRatio(ctx, lang, false); err != nil {
		return mc, err
	}
	return mc, nil
}

// desiredCount returns how many machines lang should have: the recorded
// count, else (first start, or a state file from before counts were kept)
// the machines it has, live or kept unhealthy.
func (m *Manager) desiredCount(lang string, a actual) int {
	m.mu.Lock()
	n, ok := m.desired[lang]
	m.mu.Unlock()
	if ok {
		return n
	}
	return len(a.live) + len(a.kept)
}

// setDesired records and saves lang's desired count.
func (m *Manager) setDesired(lang string, n int) error {
	m.saveMu.Lock()
	defer m.saveMu.Unlock()
	m.mu.Lock()
	st := State{Phases: maps.Clone(m.phases), Machines: maps.Clone(m.desired)}
	m.mu.Unlock()
	st.Machines[lang] = max(n, 0)
	if m.opts.StateFile != "" {
		if err := SaveState(m.opts.StateFile, st); err != nil {
			return err
		}
	}
	m.mu.Lock()
	m.desired[lang] = max(n, 0)
	m.mu.Unlock()
	return nil
}

// Desired returns how many machines lang should have, and whether that is
// recorded yet.
func (m *Manager) Desired(lang string) (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.desired[lang]
	return n, ok
}

// reserve counts a Create under way against MaxMachines, or fails with
// ErrTooManyMachines when the live machines and the Creates under way
// reach it. release undoes the count.
func (m *Manager) reserve(ctx context.Context) (release func(), err error) {
	limit := m.opts.MaxMachines
	if limit < 0 {
		return func() {}, nil
	}
	all, err := m.list(ctx, "")
	if err != nil {
		return nil, err
	}
	live := 0
	for _, mc := range all {
		if mc.State == machines.StateRunning && !m.isDead(mc.ID) {
			live++
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if live+m.creating >= limit {
		return nil, fmt.Errorf("%w: %d live machines and %d being created, the most allowed in all (max_machines)",
			ErrTooManyMachines, live, m.creating)
	}
	m.creating++
	return func() {
		m.mu.Lock()
		m.creating--
		m.mu.Unlock()
	}, nil
}

// Remove takes the machine at addr ("127.0.0.1:34567") out of the router
// and removes it. ErrUnknownMachine when the manager owns no machine there.
// The language is reconciled afterwards (in Run), so the split of versions
// is kept.
func (m *Manager) Remove(ctx context.Context, addr string) error {
	if addr == "" {
		return fmt.Errorf("%w: ip is empty", ErrInvalidRequest)
	}
	mc, err := m.find(ctx, addr)
	if err != nil {
		return err
	}
	l, err := m.lang(machineLang(mc))
	if err != nil {
		return fmt.Errorf("%w: %s runs language %q, which is not configured", ErrUnknownMachine, addr, machineLang(mc))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// The machine found may have gone meanwhile; this one, of the language
	// locked, is the one to remove.
	if mc, err = m.provider.Get(ctx, mc.ID); errors.Is(err, machines.ErrNotFound) {
		return fmt.Errorf("%w: %s", ErrUnknownMachine, addr)
	} else if err != nil {
		return fmt.Errorf("%w: getting machine %s: %w", ErrMachines, addr, err)
	}
	a, err := m.observe(ctx, l)
	if err != nil {
		return err
	}
	if err := m.setDesired(l.name, m.desiredCount(l.name, a)-1); err != nil {
		return err
	}
	if err := m.retire(ctx, mc); err != nil {
		return err
	}
	m.Kick(l.name)
	return nil
}

// Teardown removes every machine of every language, unhealthy ones too,
// with their backends, and records that each language wants none: the
// explicit end of a fleet, which stopping the manager is not (machines
// outlive it). Rollout phases are kept.
func (m *Manager) Teardown(ctx context.Context) error {
	var errs []error
	for _, name := range m.Languages() {
		l := m.langs[name]
		l.mu.Lock()
		err := m.setDesired(name, 0)
		if err == nil {
			var a actual
			if a, err = m.observe(ctx, l); err == nil {
				for _, mc := range slices.Concat(a.live, a.dead) {
					// Out of the router whether or not this manager added it.
					if rerr := m.router.RemoveBackend(ctx, mc.URL()); rerr != nil && !m.opts.IsNotFound(rerr) {
						errs = append(errs, fmt.Errorf("%w: removing %s: %w", ErrRouter, mc.URL(), rerr))
						continue
					}
					if rerr := m.removeMachine(ctx, mc); rerr != nil {
						errs = append(errs, rerr)
					}
				}
				err = m.routeLive(ctx, name, nil)
			}
		}
		l.mu.Unlock()
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// find returns the owned machine at addr.
func (m *Manager) find(ctx context.Context, addr string) (machines.Machine, error) {
	all, err := m.list(ctx, "")
	if err != nil {
		return machines.Machine{}, err
	}
	// A port may be reused: prefer the machine that serves at addr over an
	// exited or unhealthy one that once did.
	var found *machines.Machine
	for i, mc := range all {
		if mc.Address != addr {
			continue
		}
		if found == nil || (mc.State == machines.StateRunning && !m.isDead(mc.ID)) {
			found = &all[i]
		}
	}
	if found == nil {
		return machines.Machine{}, fmt.Errorf("%w: %s", ErrUnknownMachine, addr)
	}
	return *found, nil
}

// InitUpdate starts the update of lang to version at the first step and
// converges machines and router to it.
func (m *Manager) InitUpdate(ctx context.Context, lang, version string) error {
	l, err := m.lang(lang)
	if err != nil {
		return err
	}
	if _, ok := l.spec.Versions[version]; !ok && version != "" {
		return fmt.Errorf("%w: %s has no version %q (configured: %v)", ErrUnknownVersion, lang, version,
			slices.Sorted(maps.Keys(l.spec.Versions)))
	}
	return m.transition(ctx, l, "init", func(p Phase) (Phase, error) {
		return p.initUpdate(version, m.opts.Steps, m.opts.Now(), m.opts.Auto != nil)
	})
}

// Update moves lang's update to the next step and converges to it (the
// page's "promote"); ErrLastStep once the update is complete, ErrNoUpdate
// when none is in progress. In the automatic mode the last step is held
// until judged; Update there completes the update at once.
func (m *Manager) Update(ctx context.Context, lang string) error {
	l, err := m.lang(lang)
	if err != nil {
		return err
	}
	return m.transition(ctx, l, "update", func(p Phase) (Phase, error) {
		return p.advance(m.opts.Steps, m.opts.Now(), m.opts.Auto != nil)
	})
}

// Rollback moves lang's update back one step (traffic first, machines
// second); from the first step it cancels the update. Right after an update
// completed it undoes its last step.
func (m *Manager) Rollback(ctx context.Context, lang string) error {
	l, err := m.lang(lang)
	if err != nil {
		return err
	}
	return m.transition(ctx, l, "rollback", func(p Phase) (Phase, error) { return p.Rollback(m.opts.Steps, m.opts.Now()) })
}

// Abort cancels lang's update at once: every machine goes back to the
// current version, traffic first. ErrNoUpdate when none is in progress.
func (m *Manager) Abort(ctx context.Context, lang string) error {
	l, err := m.lang(lang)
	if err != nil {
		return err
	}
	return m.transition(ctx, l, "abort", func(p Phase) (Phase, error) {
		if !p.Updating() {
			return p, ErrNoUpdate
		}
		return Phase{Current: p.Current, Changed: m.opts.Now()}, nil
	})
}

// transition applies f to lang's phase, saves the result and reconciles.
// The new phase stands even when reconciling fails: Run retries. kind is
// init, update, rollback or abort; the last two move back, so traffic moves
// before machines.
func (m *Manager) transition(ctx context.Context, l *lang, kind string, f func(Phase) (Phase, error)) error {
	backward := kind == "rollback" || kind == "abort"
	l.pending.Add(1)
	l.mu.Lock()
	l.pending.Add(-1)
	defer l.mu.Unlock()
	m.mu.Lock()
	cur := m.phases[l.name]
	m.mu.Unlock()
	next, err := f(cur)
	if err != nil {
		return fmt.Errorf("%s: %w", l.name, err)
	}
	if err := m.save(l.name, next); err != nil {
		return err
	}
	m.mu.Lock()
	m.backward[l.name] = backward
	m.mu.Unlock()
	if m.metrics != nil {
		m.metrics.transitions.WithLabelValues(l.name, kind).Inc()
	}
	m.log.Info("rollout phase changed", "lang", l.name, "from", describe(cur, m.opts.Steps), "to", describe(next, m.opts.Steps))
	if err := m.reconcileLocked(ctx, l); err != nil && !errors.Is(err, errPreempted) {
		m.Kick(l.name)
		return fmt.Errorf("%s: phase changed to %s, but converging failed (will retry): %w", l.name, describe(next, m.opts.Steps), err)
	}
	return nil
}

// save records lang's phase and writes the state file.
func (m *Manager) save(lang string, p Phase) error {
	m.saveMu.Lock()
	defer m.saveMu.Unlock()
	m.mu.Lock()
	st := State{Phases: maps.Clone(m.phases), Machines: maps.Clone(m.desired)}
	m.mu.Unlock()
	st.Phases[lang] = p
	if m.opts.StateFile != "" {
		if err := SaveState(m.opts.StateFile, st); err != nil {
			return err
		}
	}
	m.mu.Lock()
	m.phases[lang] = p
	m.mu.Unlock()
	return nil
}

// versions returns lang's old and new version and the new one's percent.
func (m *Manager) versions(lang string) (old, new string, p int) {
	m.mu.Lock()
	ph := m.phases[lang]
	m.mu.Unlock()
	return ph.Current, ph.Target, ph.Percent(m.opts.Steps)
}

// describe formats a phase for logs and errors.
func describe(p Phase, steps []int) string {
	switch {
	case p.Updating():
		return fmt.Sprintf("%s → %s at step %d/%d (%d%%)", p.Current, p.Target, p.Step+1, len(steps), p.Percent(steps))
	case p.Previous != "":
		return fmt.Sprintf("%s (update from %s complete)", p.Current, p.Previous)
	}
	return p.Current
}

// list returns the machines this manager owns, oldest first; of one
// language when lang is not "".
func (m *Manager) list(ctx context.Context, lang string) ([]machines.Machine, error) {
	sel := machines.Selector{LabelOwner: m.opts.Name}
	if lang != "" {
		sel[linter.LabelLanguage] = lang
	}
	all, err := m.provider.List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("%w: listing machines: %w", ErrMachines, err)
	}
	return all, nil
}

// spec returns the machines.Spec of a linter of lang at version: the
// version's image or command, the linter's command line unless the
// version has its own (where {language} and {version} are replaced), and
// the labels by which a restarted manager knows the machine for its own
// and sees its language and version.
func (m *Manager) spec(l *lang, version string) (machines.Spec, error) {
	vs, ok := l.spec.Versions[version]
	if !ok {
		return machines.Spec{}, fmt.Errorf("%w: %s has no version %q", ErrUnknownVersion, l.name, version)
	}
	r := strings.NewReplacer("{language}", l.name, "{version}", version)
	args := linter.Args(l.name, version, "{addr}")
	if vs.Args != nil {
		args = make([]string, len(vs.Args))
		for i, a := range vs.Args {
			args[i] = r.Replace(a)
		}
	}
	env := make(map[string]string, len(vs.Env))
	for k, v := range vs.Env {
		env[k] = r.Replace(v)
	}
	return machines.Spec{
		Name:    l.name + "-" + version,
		Image:   vs.Image,
		Command: vs.Command,
		Args:    args,
		Env:     env,
		Labels: map[string]string{
			LabelOwner:           m.opts.Name,
			linter.LabelLanguage: l.name,
			linter.LabelVersion:  version,
		},
		StartTimeout: m.opts.StartTimeout,
		HealthPath:   HealthPath,
	}, nil
}

// machineLang and machineVersion return the language and version mc
// serves, as its labels say.
func machineLang(mc machines.Machine) string    { return mc.Labels[linter.LabelLanguage] }
func machineVersion(mc machines.Machine) string { return mc.Labels[linter.LabelVersion] }

// Kick wakes Run's reconciler of lang; it never blocks. Kicks before
// Run wait for it.
func (m *Manager) Kick(lang string) {
	if _, ok := m.langs[lang]; ok {
		m.engine.Enqueue(lang)
	}
}

// onHealth is the checker's Notify: a machine that turned unhealthy is
// recorded and its language reconciled (taken out of the router).
func (m *Manager) onHealth(ev health.Event) {
	if ev.Paused > 0 {
		m.log.Info("health check timed out while the manager was paused; not counted", "id", ev.Target.ID, "pause", ev.Paused)
		return
	}
	if ev.State == health.Healthy {
		m.mu.Lock()
		if _, ok := m.owners[ev.Target.ID]; ok {
			m.served[ev.Target.ID] = true
		}
		m.mu.Unlock()
	}
	if !ev.Changed || ev.State != health.Unhealthy {
		return
	}
	m.markDead(ev.Target.ID, fmt.Sprintf("health check failed: %v", ev.LastErr))
}

// onExit handles a provider exit event.
func (m *Manager) onExit(ev machines.Event) {
	m.markDead(ev.Machine.ID, fmt.Sprintf("exited: %v", ev.Err))
}

func (m *Manager) markDead(id, why string) {
	m.mu.Lock()
	lang, ok := m.owners[id]
	m.mu.Unlock()
	if ok && m.setDead(id, why) {
		m.Kick(lang)
	}
}

// setDead records that machine id is unhealthy for good; it reports
// whether this is news.
func (m *Manager) setDead(id, why string) bool {
	m.mu.Lock()
	_, already := m.dead[id]
	lang := m.owners[id]
	if !already {
		m.dead[id] = &deadInfo{why: why}
	}
	// Only a machine seen serving can fail: one that never answered (what
	// an interrupted create left, a container created but never started)
	// says nothing of its version.
	if !already && m.served[id] {
		m.failures = append(m.failures, machineFailure{lang: lang, version: m.versionOf[id], at: m.opts.Now()})
		if len(m.failures) > maxFailures {
			m.failures = slices.Delete(m.failures, 0, len(m.failures)-maxFailures)
		}
	}
	m.mu.Unlock()
	if !already {
		m.log.Warn("machine unhealthy", "id", id, "lang", lang, "reason", why)
	}
	return !already
}
