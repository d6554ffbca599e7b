package rollout

import (
	"fmt"
	"time"
)

// Phase is the rollout state of one language. The zero value of Target
// means no update is in progress: every machine runs Current.
//
// An update from Current to Target walks the configured steps. When it
// reaches the last step (100%) it completes: Current becomes the new
// version, Target is cleared and Previous remembers the old one, so a
// rollback can still undo the last step. In the automatic mode the last
// step is held (Target set at 100 %) until it is judged, then completes.
type Phase struct {
	// Current is the stable version: the one every machine runs when no
	// update is in progress, and the old side of an update.
	Current string `json:"current"`
	// Target is the version being rolled out; "" when none.
	Target string `json:"target,omitempty"`
	// Step indexes the configured steps while Target is set.
	Step int `json:"step"`
	// Previous is the version a completed update replaced; "" otherwise.
	Previous string `json:"previous,omitempty"`
	// Changed is when the phase last changed (the automatic mode measures
	// its dwell time from it).
	Changed time.Time `json:"changed,omitzero"`
}

// Updating reports whether an update is in progress.
func (p Phase) Updating() bool { return p.Target != "" }

// Percent returns the new version's share at the phase with the given
// steps: 0 when no update is in progress.
func (p Phase) Percent(steps []int) int {
	if !p.Updating() || p.Step < 0 || p.Step >= len(steps) {
		return 0
	}
	return steps[p.Step]
}

// Versions returns the old and the new version of the phase; new is ""
// when no update is in progress.
func (p Phase) Versions() (old, new string) { return p.Current, p.Target }

// InitUpdate starts an update to version at the first step. With a
// single step (100) the update completes at once.
func (p Phase) InitUpdate(version string, steps []int, now time.Time) (Phase, error) {
	return p.initUpdate(version, steps, now, false)
}

// initUpdate is InitUpdate; with hold a single step (100) stays in
// progress, to be judged before it completes.
func (p Phase) initUpdate(version string, steps []int, now time.Time, hold bool) (Phase, error) {
	switch {
	case version == "":
		return p, fmt.Errorf("%w: version is empty", ErrInvalidRequest)
	case p.Updating():
		return p, fmt.Errorf("%w: %s → %s at step %d of %d; finish it or roll it back first",
			ErrUpdateInProgress, p.Current, p.Target, p.Step+1, len(steps))
	case version == p.Current:
		return p, fmt.Errorf("%w: %s", ErrSameVersion, version)
	}
	n := Phase{Current: p.Current, Target: version, Step: 0, Changed: now}
	if hold {
		return n, nil
	}
	return n.complete(steps), nil
}

// Update moves to the next step; reaching the last step completes the
// update. An update held at the last step (the automatic mode judges it
// there) completes; a completed one is ErrLastStep.
func (p Phase) Update(steps []int, now time.Time) (Phase, error) {
	return p.advance(steps, now, false)
}

// advance is Update; with hold the last step stays in progress (Target
// set at 100 %) until advanced once more.
func (p Phase) advance(steps []int, now time.Time, hold bool) (Phase, error) {
	if !p.Updating() {
		if p.Previous != "" {
			return p, fmt.Errorf("%w: the update %s → %s is complete", ErrLastStep, p.Previous, p.Current)
		}
		return p, ErrNoUpdate
	}
	if p.Step >= len(steps)-1 {
		return Phase{Current: p.Target, Previous: p.Current, Changed: now}, nil
	}
	p.Step++
	p.Changed = now
	if hold {
		return p, nil
	}
	return p.complete(steps), nil
}

// Rollback moves back one step; from the first step it cancels the update.
// Right after an update completed, it undoes the last step.
func (p Phase) Rollback(steps []int, now time.Time) (Phase, error) {
	switch {
	case p.Updating() && p.Step > 0:
		p.Step--
	case p.Updating():
		p = Phase{Current: p.Current}
	case p.Previous != "" && len(steps) > 1:
		p = Phase{Current: p.Previous, Target: p.Current, Step: len(steps) - 2}
	case p.Previous != "":
		p = Phase{Current: p.Previous}
	default:
		return p, ErrNoUpdate
	}
	p.Changed = now
	return p, nil
}

// complete turns a phase at the last step into a finished update.
func (p Phase) complete(steps []int) Phase {
	if p.Updating() && p.Step >= len(steps)-1 {
		return Phase{Current: p.Target, Previous: p.Current, Changed: p.Changed}
	}
	return p
}
