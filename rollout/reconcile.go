package rollout

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fleetkit/fleetkit/internal/reconcile"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/health"
)

// actual is what observe found of one language.
type actual struct {
	// live are the machines that serve: running and not unhealthy, oldest
	// first.
	live []machines.Machine
	// dead are the machines that exited or failed a health check.
	dead []machines.Machine
	// kept are the dead machines that keep their place (ReplaceUnhealthy
	// off and their version still in the rollout); the other dead ones
	// are removed and replaced.
	kept []machines.Machine
	// byVersion groups live by version; keptByVersion groups kept.
	byVersion, keptByVersion map[string][]machines.Machine
}

// slots is how many places version v takes: its live and kept machines.
func (a actual) slots(v string) int { return len(a.byVersion[v]) + len(a.keptByVersion[v]) }

// observe reads lang's machines from the provider and classifies them. A
// machine seen for the first time (a new one, or one a previous manager
// created) starts being health-checked.
func (m *Manager) observe(ctx context.Context, l *lang) (actual, error) {
	all, err := m.list(ctx, l.name)
	if err != nil {
		return actual{}, err
	}
	old, new, _ := m.versions(l.name)
	a := actual{byVersion: map[string][]machines.Machine{}, keptByVersion: map[string][]machines.Machine{}}
	present := map[string]bool{}
	for _, mc := range all {
		present[mc.ID] = true
		m.track(mc)
		if mc.State != machines.StateRunning {
			why := "not running (" + string(mc.State) + ")"
			if mc.Reason != "" {
				why += ": " + mc.Reason
			}
			m.setDead(mc.ID, why)
		}
		if m.isDead(mc.ID) {
			a.dead = append(a.dead, mc)
			if v := machineVersion(mc); !m.opts.ReplaceUnhealthy && (v == old || (new != "" && v == new)) {
				a.kept = append(a.kept, mc)
				a.keptByVersion[v] = append(a.keptByVersion[v], mc)
			}
			continue
		}
		a.live = append(a.live, mc)
		a.byVersion[machineVersion(mc)] = append(a.byVersion[machineVersion(mc)], mc)
	}
	if err := m.forgetGone(ctx, l.name, present); err != nil {
		return actual{}, err
	}
	return a, nil
}

// forgetGone takes the machines of lang that vanished from the provider
// without the manager removing them (removed by hand, a container deleted)
// out of the router, and stops tracking them.
func (m *Manager) forgetGone(ctx context.Context, lang string, present map[string]bool) error {
	type gone struct{ id, uri string }
	var gs []gone
	m.mu.Lock()
	for id, owner := range m.owners {
		if owner == lang && !present[id] {
			gs = append(gs, gone{id: id, uri: m.routed[id]})
		}
	}
	m.mu.Unlock()
	for _, g := range gs {
		if g.uri != "" {
			if err := m.router.RemoveBackend(ctx, g.uri); err != nil && !m.opts.IsNotFound(err) {
				return fmt.Errorf("%w: removing vanished machine %s from the router: %w", ErrRouter, g.uri, err)
			}
		}
		m.checker.Remove(g.id)
		m.mu.Lock()
		delete(m.owners, g.id)
		delete(m.versionOf, g.id)
		delete(m.served, g.id)
		delete(m.routed, g.id)
		delete(m.dead, g.id)
		m.mu.Unlock()
		m.log.Warn("machine vanished from the provider; forgotten", "lang", lang, "id", g.id, "uri", g.uri)
	}
	return nil
}

// track records mc's language and version and health-checks it.
func (m *Manager) track(mc machines.Machine) {
	m.mu.Lock()
	m.owners[mc.ID] = machineLang(mc)
	m.versionOf[mc.ID] = machineVersion(mc)
	m.mu.Unlock()
	if _, ok := m.checker.Status(mc.ID); !ok && mc.State == machines.StateRunning && mc.Address != "" {
		m.checker.Add(health.Target{ID: mc.ID, Address: mc.Address})
	}
}

func (m *Manager) isDead(id string) bool {
	m.mu.Lock()
	_, dead := m.dead[id]
	m.mu.Unlock()
	if dead {
		return true
	}
	if st, ok := m.checker.Status(id); ok && st.State == health.Unhealthy {
		m.setDead(id, fmt.Sprintf("health check failed: %v", st.LastErr))
		return true
	}
	return false
}

// Reconcile converges lang's machines and the router to lang's phase.
func (m *Manager) Reconcile(ctx context.Context, lang string) error {
	l, err := m.lang(lang)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return m.reconcileLocked(ctx, l)
}

// Sync reconciles every language and sets every ratio again, even one the
// manager believes set: it re-syncs a router that restarted or a manager
// that did.
func (m *Manager) Sync(ctx context.Context) error {
	var errs []error
	for _, name := range m.Languages() {
		m.mu.Lock()
		delete(m.ratios, name)
		m.mu.Unlock()
		if err := m.Reconcile(ctx, name); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// createParallel bounds the machines a backward move creates at once.
const createParallel = 4

// errPreempted ends a reconcile pass that gave way to a transition; the
// transition reconciles to its own phase.
var errPreempted = errors.New("rollout: reconcile gave way to a phase change")

// preempted reports whether a transition of l waits for its lock.
func preempted(l *lang) error {
	if l.pending.Load() > 0 {
		return errPreempted
	}
	return nil
}

// reconcileLocked is one level-based pass over lang; l.mu is held.
//
//  1. Unhealthy machines leave the router; those that do not keep their
//     place (ReplaceUnhealthy, or their version left the rollout) are
//     removed, to be replaced.
//  2. The router is made to hold exactly the live machines: read from it
//     when it is a RouterReader (what a restarted balancer lost, or a hand
//     changed, is put back), else from what the manager remembers.
//  3. The desired split of the language's desired count at the phase's
//     percent is computed, unhealthy machines that keep their place
//     counting for their version. Moving forward, surplus machines (other
//     versions first, then the oldest of a version with too many) are
//     replaced one at a time by machines of the version that is short:
//     create, wait until healthy, add to the router, take the surplus one
//     out of the router, remove it; then the ratio follows. Moving back
//     (a rollback, an abort), every missing machine is created first (a
//     few at once), then the ratio moves, then the surplus goes: the
//     previous version's full capacity is back before anything is
//     removed. Capacity never drops either way.
func (m *Manager) reconcileLocked(ctx context.Context, l *lang) error {
	a, err := m.observe(ctx, l)
	if err != nil {
		return err
	}
	var errs []error
	kept := map[string]bool{}
	for _, mc := range a.kept {
		kept[mc.ID] = true
	}
	for _, mc := range a.dead {
		if err := m.unrouteDead(ctx, mc); err != nil {
			errs = append(errs, err)
			continue
		}
		if !kept[mc.ID] {
			if err := m.removeMachine(ctx, mc); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := m.routeLive(ctx, l.name, a.live); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}

	n := m.desiredCount(l.name, a)
	if _, known := m.Desired(l.name); !known {
		if err := m.setDesired(l.name, n); err != nil {
			return err
		}
	}
	old, new, p := m.versions(l.name)
	oldWant, newWant := MachineSplit(n, p)
	var surplus []machines.Machine
	for _, v := range slices.Sorted(maps.Keys(a.byVersion)) {
		if v != old && v != new {
			surplus = append(surplus, a.byVersion[v]...)
		}
	}
	// Live machines beyond what a version wants go, oldest first; its kept
	// unhealthy ones hold their places.
	extra := func(v string, want int) {
		if n := min(a.slots(v)-want, len(a.byVersion[v])); n > 0 {
			surplus = append(surplus, a.byVersion[v][:n]...)
		}
	}
	extra(old, oldWant)
	var create []string
	if new != "" {
		extra(new, newWant)
		for range newWant - a.slots(new) {
			create = append(create, new)
		}
	}
	for range oldWant - a.slots(old) {
		create = append(create, old)
	}

	m.mu.Lock()
	backward := m.backward[l.name]
	m.mu.Unlock()
	if backward {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(createParallel)
		for _, v := range create {
			g.Go(func() error {
				if err := preempted(l); err != nil {
					return err
				}
				_, err := m.createLocked(gctx, l, v)
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		if err := m.setRatio(ctx, l.name, false); err != nil {
			return err
		}
		for _, mc := range surplus {
			if err := m.retire(ctx, mc); err != nil {
				return err
			}
		}
		return nil
	}
	for i := range max(len(create), len(surplus)) {
		if err := preempted(l); err != nil {
			return err
		}
		if i < len(create) {
			if _, err := m.createLocked(ctx, l, create[i]); err != nil {
				return err
			}
		}
		if i < len(surplus) {
			if err := m.retire(ctx, surplus[i]); err != nil {
				return err
			}
		}
	}
	return m.setRatio(ctx, l.name, false)
}

// routeLive makes the router hold exactly lang's live machines. With a
// RouterReader it reads what the router holds and adds what is missing
// (or held under another version), removes what matches no live machine,
// and forgets a ratio that differs from the one set, so that it is set
// again; without one it adds the live machines it has not added.
func (m *Manager) routeLive(ctx context.Context, lang string, live []machines.Machine) error {
	rr, ok := m.router.(RouterReader)
	if !ok {
		var errs []error
		for _, mc := range live {
			if !m.isRouted(mc.ID) {
				if err := m.route(ctx, mc); err != nil {
					errs = append(errs, err)
				}
			}
		}
		return errors.Join(errs...)
	}
	held, ratio, err := rr.Routes(ctx, lang)
	if err != nil {
		return fmt.Errorf("%w: reading the backends of %s: %w", ErrRouter, lang, err)
	}
	keep := map[string]bool{}
	var errs []error
	for _, mc := range live {
		keep[mc.URL()] = true
		if v, ok := held[mc.URL()]; ok && v == machineVersion(mc) {
			m.mu.Lock()
			m.routed[mc.ID] = mc.URL()
			m.mu.Unlock()
			continue
		}
		if m.isRouted(mc.ID) {
			m.log.Warn("the router lost a backend; adding it again", "lang", lang, "uri", mc.URL())
		}
		if err := m.route(ctx, mc); err != nil {
			errs = append(errs, err)
		}
	}
	for _, u := range slices.Sorted(maps.Keys(held)) {
		if keep[u] {
			continue
		}
		if err := m.router.RemoveBackend(ctx, u); err != nil && !m.opts.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("%w: removing stale backend %s: %w", ErrRouter, u, err))
			continue
		}
		m.log.Info("stale backend removed from the router", "lang", lang, "uri", u)
	}
	m.mu.Lock()
	if !maps.Equal(m.ratios[lang], ratio) {
		delete(m.ratios, lang)
	}
	m.mu.Unlock()
	return errors.Join(errs...)
}

// createLocked creates a machine of version, waits until it answers
// /health, and adds it to the router; on failure nothing is left behind.
func (m *Manager) createLocked(ctx context.Context, l *lang, version string) (machines.Machine, error) {
	spec, err := m.spec(l, version)
	if err != nil {
		return machines.Machine{}, err
	}
	start := time.Now()
	mc, err := m.provider.Create(ctx, spec)
	if err != nil {
		return machines.Machine{}, fmt.Errorf("%w: creating a %s %s machine: %w", ErrMachines, l.name, version, err)
	}
	m.track(mc)
	m.mu.Lock()
	m.served[mc.ID] = true // Create returned once it answered /health
	m.mu.Unlock()
	if err := m.route(ctx, mc); err != nil {
		if rerr := m.removeMachine(context.WithoutCancel(ctx), mc); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return machines.Machine{}, err
	}
	took := time.Since(start)
	if m.metrics != nil {
		m.metrics.createTime.WithLabelValues(l.name).Observe(took.Seconds())
	}
	m.log.Info("machine created", "lang", l.name, "version", version, "id", mc.ID, "addr", mc.Address,
		"took", took.Round(time.Millisecond))
	return mc, nil
}

// retire takes mc out of the router, then removes it.
func (m *Manager) retire(ctx context.Context, mc machines.Machine) error {
	if err := m.unroute(ctx, mc); err != nil {
		return err
	}
	return m.removeMachine(ctx, mc)
}

func (m *Manager) isRouted(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.routed[id]
	return ok
}

// route adds mc to the router.
func (m *Manager) route(ctx context.Context, mc machines.Machine) error {
	if err := m.router.AddBackend(ctx, machineLang(mc), machineVersion(mc), mc.URL()); err != nil {
		return fmt.Errorf("%w: adding %s to the router: %w", ErrRouter, mc.Address, err)
	}
	m.mu.Lock()
	m.routed[mc.ID] = mc.URL()
	m.mu.Unlock()
	return nil
}

// unroute takes mc out of the router if it was added.
func (m *Manager) unroute(ctx context.Context, mc machines.Machine) error {
	m.mu.Lock()
	uri, ok := m.routed[mc.ID]
	m.mu.Unlock()
	if !ok {
		return nil
	}
	if err := m.router.RemoveBackend(ctx, uri); err != nil && !m.opts.IsNotFound(err) {
		return fmt.Errorf("%w: removing %s from the router: %w", ErrRouter, mc.Address, err)
	}
	m.mu.Lock()
	delete(m.routed, mc.ID)
	m.mu.Unlock()
	return nil
}

// unrouteDead takes an unhealthy machine out of the router, once. A machine
// found dead at start may be in the router from a previous manager, so it
// is removed even when this manager did not add it.
func (m *Manager) unrouteDead(ctx context.Context, mc machines.Machine) error {
	m.mu.Lock()
	d := m.dead[mc.ID]
	_, routed := m.routed[mc.ID]
	done := d != nil && d.out
	m.mu.Unlock()
	if done {
		return nil
	}
	if routed {
		if err := m.unroute(ctx, mc); err != nil {
			return err
		}
	} else if mc.Address != "" {
		if err := m.router.RemoveBackend(ctx, mc.URL()); err != nil && !m.opts.IsNotFound(err) {
			m.log.Debug("removing a dead machine the manager had not routed", "addr", mc.Address, "err", err)
		}
	}
	m.mu.Lock()
	if d := m.dead[mc.ID]; d != nil {
		d.out = true
	}
	m.mu.Unlock()
	m.log.Info("unhealthy machine removed from the router", "lang", machineLang(mc), "id", mc.ID, "addr", mc.Address)
	return nil
}

// removeMachine removes mc from the provider (bounded by RemoveTimeout)
// and forgets it.
func (m *Manager) removeMachine(ctx context.Context, mc machines.Machine) error {
	// Stop checking first: a machine that is stopping fails its checks,
	// and that is no news. If the removal fails, the next observe tracks
	// it again.
	m.checker.Remove(mc.ID)
	m.mu.Lock()
	delete(m.owners, mc.ID)
	delete(m.versionOf, mc.ID)
	delete(m.served, mc.ID)
	m.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, m.opts.RemoveTimeout)
	defer cancel()
	if err := m.provider.Remove(rctx, mc.ID); err != nil && !errors.Is(err, machines.ErrNotFound) {
		return fmt.Errorf("%w: removing %s: %w", ErrMachines, mc.Address, err)
	}
	m.mu.Lock()
	delete(m.dead, mc.ID)
	delete(m.routed, mc.ID)
	m.mu.Unlock()
	m.log.Info("machine removed", "lang", machineLang(mc), "version", machineVersion(mc), "id", mc.ID, "addr", mc.Address)
	return nil
}

// desiredRatio returns lang's ratio at its phase.
func (m *Manager) desiredRatio(lang string) map[string]int {
	old, new, p := m.versions(lang)
	return Ratio(old, new, p, m.opts.RatioTotal)
}

// setRatio sets lang's ratio at its phase unless it was set already (or
// force).
func (m *Manager) setRatio(ctx context.Context, lang string, force bool) error {
	want := m.desiredRatio(lang)
	m.mu.Lock()
	same := maps.Equal(m.ratios[lang], want)
	m.mu.Unlock()
	if same && !force {
		return nil
	}
	if err := m.router.SetRatio(ctx, lang, want); err != nil {
		return fmt.Errorf("%w: setting the ratio of %s to %v: %w", ErrRouter, lang, want, err)
	}
	m.mu.Lock()
	m.ratios[lang] = want
	m.mu.Unlock()
	return nil
}

// Run runs the health checker, watches machine exits (when the provider
// is a machines.Watcher), runs the reconcile engine (every language at
// once, whenever woken and every ResyncInterval, failures retried with a
// per-language backoff), and runs the automatic mode when enabled. It
// blocks until ctx is done and returns nil then. Run may be called once.
func (m *Manager) Run(ctx context.Context) error {
	m.mu.Lock()
	clear(m.ratios) // set every ratio again at start
	m.mu.Unlock()
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		_ = m.checker.Run(ctx)
		return nil
	})
	if w, ok := m.provider.(machines.Watcher); ok {
		g.Go(func() error {
			for {
				err := w.Watch(ctx, m.onExit)
				if ctx.Err() != nil {
					return nil
				}
				m.log.Warn("watching machine exits failed; retrying", "err", err)
				if !reconcile.Sleep(ctx, time.Second) {
					return nil
				}
			}
		})
	}
	// The engine lists the languages when it starts and every
	// ResyncInterval; Kick enqueues one.
	g.Go(func() error { return m.engine.Run(ctx) })
	if rg, ok := m.router.(RouterGeneration); ok {
		g.Go(func() error {
			m.watchRouter(ctx, rg)
			return nil
		})
	}
	if m.opts.Metrics != nil {
		g.Go(func() error {
			m.sampleLoop(ctx)
			return nil
		})
	}
	if m.opts.Auto != nil {
		g.Go(func() error {
			m.autoLoop(ctx)
			return nil
		})
	}
	return g.Wait()
}

// Backoff of a language whose reconcile failed, in the engine.
const (
	retryBase = 500 * time.Millisecond
	retryMax  = 30 * time.Second
)

// newEngine returns the engine that runs Reconcile for each language.
func (m *Manager) newEngine() (*reconcile.Engine, error) {
	e, err := reconcile.New(reconcile.Func(m.reconcileKey), reconcile.Options{
		Name:        "rollout",
		Concurrency: len(m.langs), // languages proceed in parallel
		BaseBackoff: retryBase,
		MaxBackoff:  retryMax,
		List:        func(context.Context) ([]string, error) { return m.Languages(), nil },
		Resync:      m.opts.ResyncInterval,
		Registerer:  m.opts.Registerer,
		Logger:      m.log,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return e, nil
}

// reconcileKey is the engine's Reconciler: one pass over a language.
func (m *Manager) reconcileKey(ctx context.Context, lang string) (reconcile.Result, error) {
	err := m.Reconcile(ctx, lang)
	if err == nil || errors.Is(err, errPreempted) {
		return reconcile.Result{}, nil // a preempting transition reconciles
	}
	if ctx.Err() == nil && m.metrics != nil {
		m.metrics.reconcileErr.WithLabelValues(lang).Inc()
	}
	return reconcile.Result{}, err
}

// watchRouter reads the router's generation every RouterCheckInterval and
// wakes every language's reconciler when it changed: the router restarted,
// or someone else changed it. The manager's own changes wake them too,
// for one pass that finds nothing to do.
func (m *Manager) watchRouter(ctx context.Context, rg RouterGeneration) {
	t := time.NewTicker(m.opts.RouterCheckInterval)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		gen, err := rg.Generation(ctx)
		if err != nil {
			if ctx.Err() == nil && last != "" {
				m.log.Warn("the router does not answer", "err", err)
			}
			last = "" // whatever answers next is news
			continue
		}
		if gen == last {
			continue
		}
		if last != "" {
			m.log.Debug("the router changed; reconciling", "generation", gen)
		}
		last = gen
		for _, name := range m.Languages() {
			m.Kick(name)
		}
	}
}
