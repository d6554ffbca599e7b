package rollout

import (
	"context"
	"fmt"
	"time"
)

// ErrorRateSource measures how often each version of a language fails.
//
// ErrorRates returns the error rate (failed requests / requests, in [0, 1])
// of lang's old and new version over the period since its previous call for
// lang, or over a recent window; NaN when a version had no requests.
// Implementations are safe for concurrent use and may block on I/O.
type ErrorRateSource interface {
	ErrorRates(ctx context.Context, lang, oldVersion, newVersion string) (old, new float64, err error)
}

// ErrorRateFunc adapts a function to ErrorRateSource.
type ErrorRateFunc func(ctx context.Context, lang, oldVersion, newVersion string) (old, new float64, err error)

// ErrorRates implements ErrorRateSource.
func (f ErrorRateFunc) ErrorRates(ctx context.Context, lang, oldVersion, newVersion string) (float64, float64, error) {
	return f(ctx, lang, oldVersion, newVersion)
}

// Defaults of the automatic mode.
const (
	// DefaultStepAfter is how long a step runs before it is judged.
	DefaultStepAfter = 5 * time.Minute
	// DefaultMaxErrorRate is the highest acceptable error rate of the new
	// version.
	DefaultMaxErrorRate = 0.01
)

// AutoOptions configure the automatic mode, in the manner of Argo Rollouts
// and Flagger canary analysis: once a step has run for StepAfter, the new
// version's error rate is measured; at or under MaxErrorRate the update
// advances one step, above it the update is aborted (every machine and all
// traffic go back to the current version). A new version with no requests
// at all is neither advanced nor aborted: the step waits for traffic.
type AutoOptions struct {
	// Source measures error rates. Required.
	Source ErrorRateSource
	// StepAfter is the dwell time of each step; 0 means DefaultStepAfter.
	StepAfter time.Duration
	// MaxErrorRate is a fraction in [0, 1]; 0 means DefaultMaxErrorRate.
	MaxErrorRate float64
	// Tick is how often the phases are looked at; 0 means StepAfter/10
	// (at least 10ms).
	Tick time.Duration
}

func (o *AutoOptions) normalize() error {
	if o.Source == nil {
		return fmt.Errorf("%w: the automatic mode needs an error rate source", ErrInvalidConfig)
	}
	if o.StepAfter < 0 || o.Tick < 0 || o.MaxErrorRate < 0 || o.MaxErrorRate > 1 {
		return fmt.Errorf("%w: automatic mode: negative duration or error rate outside [0, 1]", ErrInvalidConfig)
	}
	if o.StepAfter == 0 {
		o.StepAfter = DefaultStepAfter
	}
	if o.MaxErrorRate == 0 {
		o.MaxErrorRate = DefaultMaxErrorRate
	}
	if o.Tick == 0 {
		o.Tick = max(o.StepAfter/10, 10*time.Millisecond)
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
	AutoAdvanced AutoDecision = "advance" // moved to the next step
	AutoAborted  AutoDecision = "abort"   // cancelled the update
)

// AutoStep judges lang's current step once: when an update is in progress
// and its step has run for StepAfter, it advances or aborts it. Run calls
// it every Tick when the automatic mode is on; tests call it directly.
func (m *Manager) AutoStep(ctx context.Context, lang string) (AutoDecision, error) {
	if m.opts.Auto == nil {
		return AutoNone, fmt.Errorf("%w: the automatic mode is off", ErrInvalidConfig)
	}
	ph, err := m.Phase(lang)
	if err != nil {
		return AutoNone, err
	}
	if !ph.Updating() || m.opts.Now().Sub(ph.Changed) < m.opts.Auto.StepAfter {
		return AutoNone, nil
	}
	_, rate, err := m.opts.Auto.Source.ErrorRates(ctx, lang, ph.Current, ph.Target)
	if err != nil {
		return AutoNone, fmt.Errorf("measuring error rates: %w", err)
	}
	if rate != rate { // NaN: no traffic to judge
		return AutoNone, nil
	}
	// The phase may have moved while measuring; act only on the one judged.
	if cur, _ := m.Phase(lang); cur != ph {
		return AutoNone, nil
	}
	if rate > m.opts.Auto.MaxErrorRate {
		m.log.Warn("automatic rollout: error rate too high, aborting", "lang", lang, "version", ph.Target,
			"rate", rate, "max", m.opts.Auto.MaxErrorRate)
		return AutoAborted, m.Abort(ctx, lang)
	}
	m.log.Info("automatic rollout: advancing", "lang", lang, "version", ph.Target, "rate", rate)
	return AutoAdvanced, m.Update(ctx, lang)
}
