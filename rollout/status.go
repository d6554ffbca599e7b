package rollout

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/health"
)

// MachineStatus is what the manager knows of one machine.
type MachineStatus struct {
	ID       string
	Address  string
	Language string
	Version  string
	// Healthy is false for good once the machine failed a health check or
	// exited.
	Healthy bool
	// Reason says why the machine is unhealthy.
	Reason string
	// RequestCount is the machine's lint count from its last successful
	// health answer.
	RequestCount int64
	// Routed says the machine is in the router.
	Routed bool
	// Ejected says the router has taken the machine out of rotation on
	// its own (the balancer's passive health), until EjectedUntil (zero
	// when unknown). It is the router's view, apart from Healthy: an
	// ejection is temporary, and the machine stays the manager's.
	Ejected      bool
	EjectedUntil time.Time
	CreatedAt    time.Time
}

// LanguageStatus is the state of one language.
type LanguageStatus struct {
	Language string
	Phase    Phase
	// Step is the 1-based step of an update in progress; 0 when none.
	Step int
	// Percent is the new version's share at the phase.
	Percent int
	// Steps are the configured steps.
	Steps []int
	// Ratio is the traffic ratio of the phase.
	Ratio map[string]int
	// Machines are the language's machines, oldest first.
	Machines []MachineStatus
	// Desired is how many machines the language should have (its live
	// ones when not recorded yet).
	Desired int
	// Verdicts are the automatic mode's judgements of the latest steps,
	// oldest first.
	Verdicts []Verdict
	// Series are the charts of each version's request rate, error rate
	// and latency over the last minutes (with Options.Metrics).
	Series []Series
}

// Versions returns the machines grouped by version, versions sorted.
func (s LanguageStatus) Versions() []VersionGroup {
	by := map[string][]MachineStatus{}
	for _, m := range s.Machines {
		by[m.Version] = append(by[m.Version], m)
	}
	out := make([]VersionGroup, 0, len(by))
	for _, v := range slices.Sorted(maps.Keys(by)) {
		out = append(out, VersionGroup{Version: v, Weight: s.Ratio[v], Machines: by[v]})
	}
	return out
}

// VersionGroup is the machines of one version.
type VersionGroup struct {
	Version  string
	Weight   int
	Machines []MachineStatus
}

// Status is the state of the fleet.
type Status struct {
	Languages []LanguageStatus
}

// Status reports every language's phase and machines.
func (m *Manager) Status(ctx context.Context) (Status, error) {
	all, err := m.list(ctx, "")
	if err != nil {
		return Status{}, err
	}
	ejected := m.ejected(ctx)
	byLang := map[string][]MachineStatus{}
	for _, mc := range all {
		ms := m.machineStatus(mc)
		if until, ok := ejected[mc.URL()]; ok && ms.Routed {
			ms.Ejected, ms.EjectedUntil = true, until
		}
		byLang[ms.Language] = append(byLang[ms.Language], ms)
	}
	var st Status
	for _, name := range slices.Sorted(maps.Keys(byLang)) {
		if _, ok := m.langs[name]; !ok {
			st.Languages = append(st.Languages, LanguageStatus{Language: name, Machines: byLang[name]})
		}
	}
	for _, name := range m.Languages() {
		m.mu.Lock()
		ph := m.phases[name]
		m.mu.Unlock()
		ls := LanguageStatus{
			Language: name,
			Phase:    ph,
			Percent:  ph.Percent(m.opts.Steps),
			Steps:    slices.Clone(m.opts.Steps),
			Ratio:    m.desiredRatio(name),
			Machines: byLang[name],
			Verdicts: m.Verdicts(name),
			Series:   m.history.series(name),
		}
		if n, ok := m.Desired(name); ok {
			ls.Desired = n
		} else {
			for _, mc := range byLang[name] {
				if mc.Healthy {
					ls.Desired++
				}
			}
		}
		if ph.Updating() {
			ls.Step = ph.Step + 1
		}
		st.Languages = append(st.Languages, ls)
	}
	slices.SortStableFunc(st.Languages, func(a, b LanguageStatus) int { return strings.Compare(a.Language, b.Language) })
	return st, nil
}

// ejected returns the router's ejected backends when it reports them; a
// router that fails to answer leaves them out (the status is still
// served).
func (m *Manager) ejected(ctx context.Context) map[string]time.Time {
	er, ok := m.router.(EjectionReporter)
	if !ok {
		return nil
	}
	ej, err := er.EjectedBackends(ctx)
	if err != nil {
		m.log.Warn("reading the router's ejected backends failed", "err", err)
		return nil
	}
	return ej
}

func (m *Manager) machineStatus(mc machines.Machine) MachineStatus {
	s := MachineStatus{
		ID: mc.ID, Address: mc.Address, Language: machineLang(mc), Version: machineVersion(mc),
		Healthy: mc.State == machines.StateRunning, CreatedAt: mc.CreatedAt,
	}
	if !s.Healthy {
		s.Reason = "not running (" + string(mc.State) + ")"
	}
	m.mu.Lock()
	if d := m.dead[mc.ID]; d != nil {
		s.Healthy, s.Reason = false, d.why
	}
	_, s.Routed = m.routed[mc.ID]
	m.mu.Unlock()
	if hs, ok := m.checker.Status(mc.ID); ok {
		if info, err := hs.Info(); err == nil {
			s.RequestCount = info.RequestCount
		}
		if hs.State == health.Unhealthy && s.Healthy {
			s.Healthy, s.Reason = false, "health check failed"
			if hs.LastErr != nil {
				s.Reason += ": " + hs.LastErr.Error()
			}
		}
	}
	return s
}
