package rollout

import (
	"fmt"
	"slices"
)

// defaultSteps are the traffic percentages of the new version at each step
// of an update, as in the seed's config.
var defaultSteps = []int{1, 5, 10, 50, 100}

// DefaultSteps returns a copy of the default update steps: 1, 5, 10, 50, 100.
func DefaultSteps() []int { return slices.Clone(defaultSteps) }

// DefaultRatioTotal is the sum of the weights a Router expects when
// Options.RatioTotal is zero (the balancer's default).
const DefaultRatioTotal = 100

// ValidateSteps checks that steps are strictly increasing percentages in
// 1..100 ending with 100.
func ValidateSteps(steps []int) error {
	if len(steps) == 0 {
		return fmt.Errorf("%w: update steps are empty", ErrInvalidConfig)
	}
	for i, p := range steps {
		if p < 1 || p > 100 {
			return fmt.Errorf("%w: update step %d is %d; steps are percentages in 1..100", ErrInvalidConfig, i+1, p)
		}
		if i > 0 && p <= steps[i-1] {
			return fmt.Errorf("%w: update steps must be strictly increasing (%d after %d)", ErrInvalidConfig, p, steps[i-1])
		}
	}
	if last := steps[len(steps)-1]; last != 100 {
		return fmt.Errorf("%w: the last update step is %d; it must be 100", ErrInvalidConfig, last)
	}
	return nil
}

// MachineSplit returns how many of n machines run the old and the new
// version at step percent p: ceil(n·p/100) new, but while p < 100 and n > 1
// at least one old machine stays. p <= 0 means no update: all old.
func MachineSplit(n, p int) (old, new int) {
	if n <= 0 {
		return 0, 0
	}
	switch {
	case p <= 0:
		return n, 0
	case p >= 100:
		return 0, n
	}
	new = (n*p + 99) / 100
	if new >= n && n > 1 {
		new = n - 1
	}
	return n - new, new
}

// TrafficWeights returns the weights of the old and the new version at step
// percent p for a router whose weights sum to total: the new version gets
// p percent of total (rounded half up, at least 1 when p > 0), the old one
// the rest. p <= 0 gives all to old, p >= 100 all to new.
func TrafficWeights(p, total int) (old, new int) {
	switch {
	case p <= 0:
		return total, 0
	case p >= 100:
		return 0, total
	}
	new = (p*total + 50) / 100
	new = max(new, 1)
	new = min(new, total)
	return total - new, new
}

// Ratio returns the ratio map for a Router: the versions with their
// weights at step percent p. Versions with weight 0 are left out, so a
// finished update routes to the new version only.
func Ratio(oldVersion, newVersion string, p, total int) map[string]int {
	ow, nw := TrafficWeights(p, total)
	if newVersion == "" || newVersion == oldVersion {
		return map[string]int{oldVersion: total}
	}
	r := make(map[string]int, 2)
	if ow > 0 {
		r[oldVersion] = ow
	}
	if nw > 0 {
		r[newVersion] = nw
	}
	return r
}
