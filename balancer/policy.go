package balancer

import "sync/atomic"

// Policy turns the state of one language into a Picker. The Balancer calls
// Build on every change of that language (a backend added, removed,
// ejected or readmitted, a ratio set), under its lock: Build must not block
// and must not call back into the Balancer. It may be called for many
// languages, one at a time.
type Policy interface {
	Build(s State) Picker
}

// PolicyFunc adapts a function to the Policy interface.
type PolicyFunc func(s State) Picker

// Build calls f(s).
func (f PolicyFunc) Build(s State) Picker { return f(s) }

// Picker picks a backend for one request. A Picker is immutable except for
// its own atomic counters: Pick is called from many goroutines at once,
// must be safe for concurrent use, must not block and should not allocate.
// It returns ErrNoBackend when it has nothing to pick.
type Picker interface {
	Pick() (*Backend, error)
}

// PickerFunc adapts a function to the Picker interface.
type PickerFunc func() (*Backend, error)

// Pick calls f().
func (f PickerFunc) Pick() (*Backend, error) { return f() }

// State is what a Policy sees of one language.
type State struct {
	// Language is the language name.
	Language string
	// RatioSet reports whether SetRatio was called for the language. When
	// false every version present has Weight 1 (they share equally).
	RatioSet bool
	// Versions lists, sorted by version string, the versions that have at
	// least one healthy backend. A version with weight but no healthy
	// backend is left out, so its share goes to the others in proportion.
	Versions []VersionState
}

// VersionState is one version of a State.
type VersionState struct {
	Version string
	// Weight is the version's weight in the ratio (0 when the ratio leaves
	// it out), or 1 when no ratio is set.
	Weight int
	// Backends are the healthy backends of the version, in the order they
	// were added. Never empty.
	Backends []*Backend
}

// SmoothWeighted is the built-in Policy: NGINX's smooth weighted round
// robin between versions, then plain round robin among the backends of the
// chosen version.
//
// The weights are divided by their greatest common divisor and the whole
// SWRR cycle is computed once, when the Picker is built; a Pick is then one
// atomic increment indexing that cycle and one atomic increment of the
// chosen version's round-robin counter. So every window of sum-of-weights
// consecutive picks is split exactly by weight, with no lock, no
// allocation, and the same result whatever the concurrency.
//
// The zero value is ready to use.
type SmoothWeighted struct{}

var _ Policy = SmoothWeighted{}

// Build implements Policy.
func (SmoothWeighted) Build(s State) Picker {
	groups := make([]*rrGroup, 0, len(s.Versions))
	weights := make([]int, 0, len(s.Versions))
	for _, v := range s.Versions {
		if v.Weight <= 0 || len(v.Backends) == 0 {
			continue
		}
		groups = append(groups, &rrGroup{backends: v.Backends})
		weights = append(weights, v.Weight)
	}
	if len(groups) == 0 {
		return noBackendPicker{}
	}
	seq := swrrSequence(weights)
	p := &swrrPicker{seq: make([]*rrGroup, len(seq))}
	for i, g := range seq {
		p.seq[i] = groups[g]
	}
	return p
}

// swrrSequence returns one full cycle of NGINX's smooth weighted round robin
// over weights (all positive), as indexes into weights. The weights are
// first divided by their GCD, so the cycle is as short as it can be.
func swrrSequence(weights []int) []int {
	g := 0
	for _, w := range weights {
		g = gcd(g, w)
	}
	total := 0
	eff := make([]int, len(weights))
	for i, w := range weights {
		eff[i] = w / g
		total += eff[i]
	}
	current := make([]int, len(weights))
	seq := make([]int, total)
	for n := range seq {
		best := -1
		for i, w := range eff {
			current[i] += w
			if best < 0 || current[i] > current[best] {
				best = i
			}
		}
		current[best] -= total
		seq[n] = best
	}
	return seq
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// swrrPicker is the Picker of SmoothWeighted.
type swrrPicker struct {
	seq  []*rrGroup
	_    [64]byte
	next atomic.Uint64
	_    [64]byte
}

func (p *swrrPicker) Pick() (*Backend, error) {
	i := p.next.Add(1) - 1
	return p.seq[i%uint64(len(p.seq))].pick(), nil
}

// rrGroup round-robins over the backends of one version.
type rrGroup struct {
	backends []*Backend
	_        [64]byte
	next     atomic.Uint64
	_        [64]byte
}

func (g *rrGroup) pick() *Backend {
	i := g.next.Add(1) - 1
	return g.backends[i%uint64(len(g.backends))]
}

type noBackendPicker struct{}

func (noBackendPicker) Pick() (*Backend, error) { return nil, ErrNoBackend }
