package rollout

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// Defaults of the automatic mode.
const (
	// DefaultStepAfter is how long a step runs (bakes) before it may pass.
	DefaultStepAfter = 5 * time.Minute
	// DefaultMaxErrorRate is the highest acceptable error rate of the new
	// version.
	DefaultMaxErrorRate = 0.01
	// DefaultMaxLatencyRatio is how many times the stable version's p50 and
	// p99 the new version's may be.
	DefaultMaxLatencyRatio = 2
	// DefaultLatencySlack is a latency difference too small to fail a step
	// on, whatever the ratio: a 2 ms stable p50 against 5 ms, or a p99
	// that a machine starting beside the others pushes up, is noise.
	DefaultLatencySlack = 100 * time.Millisecond
	// DefaultMinRequests is how many requests the new version must have
	// served in a step before its rates and latency are judged.
	DefaultMinRequests = 10
)

// AutoOptions configure the automatic mode, in the manner of Argo Rollouts'
// and Flagger's canary analysis. Every Tick each step in progress is
// judged from the history of the balancer's metrics (Options.Metrics)
// since the step began and from the machines of the new version:
//
//   - it fails at once when more than MaxMachineFailures machines of the
//     new version exited or failed a health check during the step, when
//     the new version's error rate is over MaxErrorRate, or when its p50 or
//     p99 latency is over MaxLatencyRatio times the stable version's (and
//     more than LatencySlack above it) — the update is then aborted: every
//     machine and all traffic go back to the stable version, its full
//     capacity restored before anything is removed;
//   - it passes once it has run for StepAfter with at least MinRequests
//     requests to the new version and nothing failed — the update then
//     advances a step. The last step (100 %) is judged like the others:
//     the update completes only when it passes;
//   - otherwise it waits (baking, or no traffic yet).
//
// The stable version's latency is measured during the same step when it
// still has traffic, else taken from the latest step where it had.
type AutoOptions struct {
	// StepAfter is the bake time of each step; 0 means DefaultStepAfter.
	StepAfter time.Duration
	// MaxErrorRate is a fraction in [0, 1]; 0 means DefaultMaxErrorRate.
	MaxErrorRate float64
	// MaxLatencyRatio bounds the new version's p50 and p99 against the
	// stable version's; 0 means DefaultMaxLatencyRatio, a negative value
	// leaves latency out.
	MaxLatencyRatio float64
	// LatencySlack is added to the stable latency before a latency fails
	// the step; 0 means DefaultLatencySlack.
	LatencySlack time.Duration
	// MinRequests is the new version's requests needed for a verdict on
	// rates and latency; 0 means DefaultMinRequests.
	MinRequests int
	// MaxMachineFailures is how many machines of the new version may exit
	// or fail a health check during a step; 0 means none may, a negative
	// value leaves machine failures out.
	MaxMachineFailures int
	// Tick is how often the steps are judged; 0 means StepAfter/10 (at
	// least 10ms, at most 10s).
	Tick time.Duration
}

func (o *AutoOptions) normalize() error {
	if o.StepAfter < 0 || o.Tick < 0 || o.LatencySlack < 0 || o.MinRequests < 0 ||
		o.MaxErrorRate < 0 || o.MaxErrorRate > 1 {
		return fmt.Errorf("%w: automatic mode: negative duration or count, or error rate outside [0, 1]", ErrInvalidConfig)
	}
	if o.StepAfter == 0 {
		o.StepAfter = DefaultStepAfter
	}
	if o.MaxErrorRate == 0 {
		o.MaxErrorRate = DefaultMaxErrorRate
	}
	if o.MaxLatencyRatio == 0 {
		o.MaxLatencyRatio = DefaultMaxLatencyRatio
	}
	if o.LatencySlack == 0 {
		o.LatencySlack = DefaultLatencySlack
	}
	if o.MinRequests == 0 {
		o.MinRequests = DefaultMinRequests
	}
	if o.Tick == 0 {
		o.Tick = min(max(o.StepAfter/10, 10*time.Millisecond), 10*time.Second)
	}
	return nil
}

// autoLoop judges every language's step every Tick.
func (m *Manager) autoLoop(ctx context.Context) {
	t := time.NewTicker(m.opts.Auto.Tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, name := range m.Languages() {
			if _, err := m.AutoStep(ctx, name); err != nil && ctx.Err() == nil {
				m.log.Warn("automatic rollout step failed", "lang", name, "err", err)
			}
		}
	}
}

// AutoDecision is what AutoStep did.
type AutoDecision string

// Decisions of AutoStep.
const (
	AutoNone     AutoDecision = ""        // nothing to judge yet
	AutoAdvanced AutoDecision = "advance" // moved to the next step (or completed the last)
	AutoAborted  AutoDecision = "abort"   // cancelled the update
)

// Results of a Verdict.
const (
	VerdictRunning = "running" // the step bakes; nothing failed yet
	VerdictWaiting = "waiting" // baked, but the new version had too few requests
	VerdictPass    = "pass"
	VerdictFail    = "fail"
)

// Verdict is the judgement of one step of an update.
type Verdict struct {
	// At is when the step was last judged; Since when it began.
	At, Since time.Time
	// From and Version are the stable and the new version.
	From, Version string
	// Step is 1-based; Percent the new version's share.
	Step, Percent int
	// Result is VerdictRunning, VerdictWaiting, VerdictPass or VerdictFail;
	// Reason says why.
	Result, Reason string
	// New and Stable are what each version did during the step (Stable's
	// latency may come from an earlier step).
	New, Stable WindowStats
	// MachineFailures counts the new version's machines that exited or
	// failed a health check during the step.
	MachineFailures int
}

// AutoStep judges lang's current step once (see AutoOptions) and advances
// or aborts the update accordingly. Run calls it every Tick when the
// automatic mode is on; tests call it directly.
func (m *Manager) AutoStep(ctx context.Context, lang string) (AutoDecision, error) {
	if m.opts.Auto == nil {
		return AutoNone, fmt.Errorf("%w: the automatic mode is off", ErrInvalidConfig)
	}
	ph, err := m.Phase(lang)
	if err != nil {
		return AutoNone, err
	}
	if !ph.Updating() {
		return AutoNone, nil
	}
	m.sample(ctx, lang) // judge on what the balancer counts now
	v := m.judge(lang, ph)
	// The phase may have moved while judging; act only on the one judged.
	if cur, _ := m.Phase(lang); cur != ph {
		return AutoNone, nil
	}
	m.recordVerdict(lang, v)
	switch v.Result {
	case VerdictFail:
		m.log.Warn("automatic rollout: step failed, aborting", "lang", lang, "version", v.Version,
			"step", v.Step, "reason", v.Reason)
		return AutoAborted, m.Abort(ctx, lang)
	case VerdictPass:
		m.log.Info("automatic rollout: step passed, advancing", "lang", lang, "version", v.Version,
			"step", v.Step, "reason", v.Reason)
		l, _ := m.lang(lang)
		return AutoAdvanced, m.transition(ctx, l, "update", func(p Phase) (Phase, error) {
			return p.advance(m.opts.Steps, m.opts.Now(), true)
		})
	}
	return AutoNone, nil
}

// judge returns the verdict on lang's step at ph.
func (m *Manager) judge(lang string, ph Phase) Verdict {
	a := m.opts.Auto
	now := m.opts.Now()
	v := Verdict{At: now, Since: ph.Changed, From: ph.Current, Version: ph.Target, Step: ph.Step + 1,
		Percent: ph.Percent(m.opts.Steps), New: WindowStats{P50: math.NaN(), P99: math.NaN()}}
	v.Stable = v.New
	v.MachineFailures = m.machineFailures(lang, ph.Target, ph.Changed)
	if a.MaxMachineFailures >= 0 && v.MachineFailures > a.MaxMachineFailures {
		v.Result = VerdictFail
		v.Reason = fmt.Sprintf("%d machine(s) of %s exited or failed a health check during the step (at most %d allowed)",
			v.MachineFailures, ph.Target, a.MaxMachineFailures)
		return v
	}
	win, ok := m.history.window(lang, ph.Changed)
	if w, found := win[ph.Target]; ok && found {
		v.New = w
	}
	if w, found := win[ph.Current]; ok && found {
		v.Stable = w
	}
	minReq := float64(a.MinRequests)
	if v.Stable.Requests >= minReq && !math.IsNaN(v.Stable.P99) {
		m.mu.Lock()
		m.baselines[lang] = baseline{version: ph.Current, p50: v.Stable.P50, p99: v.Stable.P99}
		m.mu.Unlock()
	} else {
		m.mu.Lock()
		b, found := m.baselines[lang]
		m.mu.Unlock()
		if found && b.version == ph.Current {
			v.Stable.P50, v.Stable.P99 = b.p50, b.p99
		}
	}
	if v.New.Requests >= minReq {
		if er := v.New.ErrorRate(); er > a.MaxErrorRate {
			v.Result = VerdictFail
			v.Reason = fmt.Sprintf("error rate of %s %.2f%% (%v of %v requests) is over %.2f%%",
				ph.Target, 100*er, v.New.Failures, v.New.Requests, 100*a.MaxErrorRate)
			return v
		}
		if a.MaxLatencyRatio > 0 {
			for _, q := range []struct {
				name        string
				new, stable float64
			}{{"p99", v.New.P99, v.Stable.P99}, {"p50", v.New.P50, v.Stable.P50}} {
				if math.IsNaN(q.new) || math.IsNaN(q.stable) {
					continue
				}
				limit := max(q.stable*a.MaxLatencyRatio, q.stable+a.LatencySlack.Seconds())
				if q.new > limit {
					v.Result = VerdictFail
					v.Reason = fmt.Sprintf("%s latency of %s %s is over %s (%s's %s × %g, or + %s)", q.name, ph.Target,
						seconds(q.new), seconds(limit), ph.Current, seconds(q.stable), a.MaxLatencyRatio, a.LatencySlack)
					return v
				}
			}
		}
	}
	if baked := now.Sub(ph.Changed); baked < a.StepAfter {
		v.Result = VerdictRunning
		v.Reason = fmt.Sprintf("baking: %s of %s", baked.Round(time.Second), a.StepAfter)
		return v
	}
	if v.New.Requests < minReq {
		v.Result = VerdictWaiting
		v.Reason = fmt.Sprintf("waiting for traffic: %v of the %d requests needed", v.New.Requests, a.MinRequests)
		return v
	}
	v.Result = VerdictPass
	v.Reason = fmt.Sprintf("error rate %.2f%%, p50 %s, p99 %s (%s: p50 %s, p99 %s), %d machine failure(s)",
		100*v.New.ErrorRate(), seconds(v.New.P50), seconds(v.New.P99), ph.Current, seconds(v.Stable.P50),
		seconds(v.Stable.P99), v.MachineFailures)
	return v
}

// seconds formats a latency in seconds.
func seconds(s float64) string {
	if math.IsNaN(s) {
		return "n/a"
	}
	return time.Duration(s * float64(time.Second)).Round(100 * time.Microsecond).String()
}

// baseline is the stable version's latency from the latest step where it
// had traffic.
type baseline struct {
	version  string
	p50, p99 float64
}

// maxVerdicts is how many verdicts per language are kept.
const maxVerdicts = 20

// recordVerdict keeps v as the verdict of its step (replacing an earlier
// one of the same step).
func (m *Manager) recordVerdict(lang string, v Verdict) {
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.verdicts[lang]
	if n := len(vs); n > 0 && vs[n-1].Since.Equal(v.Since) && vs[n-1].Step == v.Step && vs[n-1].Version == v.Version {
		vs[n-1] = v
		return
	}
	vs = append(vs, v)
	if len(vs) > maxVerdicts {
		vs = slices.Delete(vs, 0, len(vs)-maxVerdicts)
	}
	m.verdicts[lang] = vs
}

// Verdicts returns the verdicts of lang's latest steps, oldest first.
func (m *Manager) Verdicts(lang string) []Verdict {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.verdicts[lang])
}

// machineFailure is a machine that became unhealthy.
type machineFailure struct {
	lang, version string
	at            time.Time
}

// maxFailures is how many machine failures are remembered.
const maxFailures = 256

// machineFailures counts lang's machines of version that failed since t.
func (m *Manager) machineFailures(lang, version string, since time.Time) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, f := range m.failures {
		if f.lang == lang && f.version == version && !f.at.Before(since) {
			n++
		}
	}
	return n
}
