package rollout_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/machinestest"
	"github.com/fleetkit/fleetkit/rollout"
	"github.com/fleetkit/fleetkit/rollout/rollouttest"
)

// eventLog is the ordered log of what the provider and the router did.
type eventLog struct {
	mu     sync.Mutex
	events []string // guarded by mu
}

func (l *eventLog) add(format string, args ...any) {
	l.mu.Lock()
	l.events = append(l.events, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

// take returns the events so far and clears the log.
func (l *eventLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.events
	l.events = nil
	return out
}

// recProvider records creations (and the health of the created machine
// right after Create returned) and removals.
type recProvider struct {
	*machinestest.Provider
	log *eventLog
	// delay is added to every Create (nanoseconds), as a slow machine.
	delay atomic.Int64
}

// SetCreateDelay makes every later Create take d longer.
func (p *recProvider) SetCreateDelay(d time.Duration) { p.delay.Store(int64(d)) }

func (p *recProvider) Create(ctx context.Context, spec machines.Spec) (machines.Machine, error) {
	if d := time.Duration(p.delay.Load()); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	mc, err := p.Provider.Create(ctx, spec)
	if err != nil {
		p.log.add("create %s failed", spec.Labels[linter.LabelVersion])
		return mc, err
	}
	p.log.add("create %s %s", spec.Labels[linter.LabelVersion], mc.Address)
	resp, err := http.Get(mc.URL() + "/health")
	if err == nil {
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			p.log.add("healthy %s", mc.Address)
		}
	}
	return mc, nil
}

func (p *recProvider) Remove(ctx context.Context, id string) error {
	addr := id
	if mc, err := p.Provider.Get(ctx, id); err == nil {
		addr = mc.Address
	}
	p.log.add("remove %s", addr)
	return p.Provider.Remove(ctx, id)
}

// linterSpec is the spec of a linter machine of lang at version that a
// manager named owner takes for one of its own.
func linterSpec(lang, version, owner string) machines.Spec {
	return machines.Spec{
		Args:   linter.Args(lang, version, "{addr}"),
		Labels: map[string]string{rollout.LabelOwner: owner, linter.LabelLanguage: lang, linter.LabelVersion: version},
	}
}

// langOf and versionOf are what a machine's labels say it serves.
func langOf(mc machines.Machine) string    { return mc.Labels[linter.LabelLanguage] }
func versionOf(mc machines.Machine) string { return mc.Labels[linter.LabelVersion] }

// fixture is a Manager over machinestest and rollouttest.
type fixture struct {
	t        *testing.T
	provider *recProvider
	router   *rollouttest.Router
	mgr      *rollout.Manager
	log      *eventLog
	opts     rollout.Options
}

func langs(versions ...string) map[string]rollout.Language {
	vs := map[string]rollout.VersionSpec{}
	for _, v := range versions {
		vs[v] = rollout.VersionSpec{Command: "linter"}
	}
	return map[string]rollout.Language{
		"python": {Version: versions[0], Versions: vs},
		"java":   {Version: versions[0], Versions: vs},
	}
}

// newFixture returns a Manager; opts.Languages defaults to python and java
// at 1.0 with 2.0 and 1.2 available.
func newFixture(t *testing.T, opts rollout.Options) *fixture {
	t.Helper()
	f := &fixture{t: t, log: &eventLog{}}
	mp := machinestest.New(machinestest.Options{})
	t.Cleanup(func() { _ = mp.Close() })
	f.provider = &recProvider{Provider: mp, log: f.log}
	f.router = rollouttest.NewRouter(rollouttest.Options{Record: func(c rollouttest.Call) {
		if c.Err != nil {
			f.log.add("%s failed", c)
			return
		}
		f.log.add("%s", c)
	}})
	if opts.Languages == nil {
		opts.Languages = langs("1.0", "2.0", "1.2")
	}
	if opts.IsNotFound == nil {
		opts.IsNotFound = rollouttest.IsNotFound
	}
	f.opts = opts
	f.mgr = f.newManager(f.router)
	return f
}

func (f *fixture) newManager(router rollout.Router) *rollout.Manager {
	m, err := rollout.New(f.provider, router, f.opts)
	require.NoError(f.t, err)
	return m
}

// run runs the manager until the test ends.
func (f *fixture) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.mgr.Run(ctx) }()
	f.t.Cleanup(func() {
		cancel()
		require.NoError(f.t, <-done)
	})
}

// create makes n machines of lang and returns their addresses.
func (f *fixture) create(lang string, n int) []string {
	f.t.Helper()
	var out []string
	for range n {
		mc, err := f.mgr.Create(context.Background(), lang)
		require.NoError(f.t, err)
		out = append(out, mc.Address)
	}
	return out
}

// versions returns the live machines of lang: address → version.
func (f *fixture) versions(lang string) map[string]string {
	f.t.Helper()
	st, err := f.mgr.Status(context.Background())
	require.NoError(f.t, err)
	out := map[string]string{}
	for _, l := range st.Languages {
		if l.Language != lang {
			continue
		}
		for _, m := range l.Machines {
			if m.Healthy {
				out[m.Address] = m.Version
			}
		}
	}
	return out
}

// count returns how many live machines of lang run each version.
func (f *fixture) count(lang string) map[string]int {
	out := map[string]int{}
	for _, v := range f.versions(lang) {
		out[v]++
	}
	return out
}

// eventually polls cond every 10ms until it holds or 10s pass.
func eventually(t *testing.T, cond func() bool, format string, args ...any) {
	t.Helper()
	require.Eventuallyf(t, cond, 10*time.Second, 10*time.Millisecond, "timed out waiting: "+format, args...)
}

// uri is the router's name of a machine address.
func uri(addr string) string { return "http://" + addr }
