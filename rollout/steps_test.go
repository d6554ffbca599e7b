package rollout_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/rollout"
)

// wantNew is the number of new-version machines of N machines (index N-1)
// at each default step 1, 5, 10, 50, 100, worked out by hand from
// ceil(N·p/100) with one old machine kept while p < 100 and N > 1.
var wantNew = [10][5]int{
	{1, 1, 1, 1, 1},  // N=1: no old machine can be kept
	{1, 1, 1, 1, 2},  // N=2: the wire contract's example
	{1, 1, 1, 2, 3},  // N=3: ceil(1.5)
	{1, 1, 1, 2, 4},  // N=4
	{1, 1, 1, 3, 5},  // N=5: ceil(2.5)
	{1, 1, 1, 3, 6},  // N=6
	{1, 1, 1, 4, 7},  // N=7
	{1, 1, 1, 4, 8},  // N=8
	{1, 1, 1, 5, 9},  // N=9
	{1, 1, 1, 5, 10}, // N=10
}

func TestMachineSplitBothDirections(t *testing.T) {
	steps := rollout.DefaultSteps()
	now := time.Unix(0, 0)
	for n := 1; n <= 10; n++ {
		t.Run(fmt.Sprintf("N=%d", n), func(t *testing.T) {
			// Forward: init-update, then update through every step.
			ph, err := rollout.Phase{Current: "1.0"}.InitUpdate("2.0", steps, now)
			require.NoError(t, err)
			var seen []rollout.Phase
			for i := range steps {
				p := ph.Percent(steps)
				old, new := rollout.MachineSplit(n, p)
				if i == len(steps)-1 { // the last step completes the update
					require.False(t, ph.Updating())
					require.Equal(t, "2.0", ph.Current)
					old, new = new, old // all on Current, which is now the new version
				} else {
					require.Equal(t, steps[i], p)
				}
				assert.Equal(t, wantNew[n-1][i], new, "step %d%% forward", steps[i])
				assert.Equal(t, n-wantNew[n-1][i], old, "step %d%% forward", steps[i])
				seen = append(seen, ph)
				if i < len(steps)-1 {
					ph, err = ph.Update(steps, now)
					require.NoError(t, err)
				}
			}
			// Backward: rollback through every step to the first.
			for i := len(steps) - 2; i >= 0; i-- {
				ph, err = ph.Rollback(steps, now)
				require.NoError(t, err)
				require.True(t, ph.Updating())
				require.Equal(t, seen[i].Current, ph.Current)
				require.Equal(t, seen[i].Target, ph.Target)
				require.Equal(t, steps[i], ph.Percent(steps))
				old, new := rollout.MachineSplit(n, ph.Percent(steps))
				assert.Equal(t, wantNew[n-1][i], new, "step %d%% backward", steps[i])
				assert.Equal(t, n-wantNew[n-1][i], old, "step %d%% backward", steps[i])
			}
			// One more rollback cancels: everything on 1.0.
			ph, err = ph.Rollback(steps, now)
			require.NoError(t, err)
			require.False(t, ph.Updating())
			old, new := rollout.MachineSplit(n, ph.Percent(steps))
			assert.Equal(t, [2]int{n, 0}, [2]int{old, new})
		})
	}
}

func TestMachineSplitEdges(t *testing.T) {
	tests := []struct {
		n, p, old, new int
	}{
		{0, 50, 0, 0},
		{-1, 50, 0, 0},
		{3, 0, 3, 0},
		{10, 99, 1, 9}, // ceil(9.9) = 10, but one old machine stays
		{10, 91, 1, 9},
		{10, 90, 1, 9},
		{10, 89, 1, 9},
		{100, 1, 99, 1},
		{100, 99, 1, 99},
		{1000, 1, 990, 10},
		{3, 100, 0, 3},
		{3, 150, 0, 3},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("N=%d,p=%d", tt.n, tt.p), func(t *testing.T) {
			old, new := rollout.MachineSplit(tt.n, tt.p)
			assert.Equal(t, tt.old, old, "old")
			assert.Equal(t, tt.new, new, "new")
		})
	}
}

func TestTrafficRatio(t *testing.T) {
	tests := []struct {
		p, total int
		want     map[string]int
	}{
		{0, 100, map[string]int{"1.0": 100}},
		{1, 100, map[string]int{"1.0": 99, "2.0": 1}},
		{5, 100, map[string]int{"1.0": 95, "2.0": 5}},
		{10, 100, map[string]int{"1.0": 90, "2.0": 10}},
		{50, 100, map[string]int{"1.0": 50, "2.0": 50}},
		{100, 100, map[string]int{"2.0": 100}},
		{1, 1000, map[string]int{"1.0": 990, "2.0": 10}},
		{1, 10, map[string]int{"1.0": 9, "2.0": 1}}, // 0.1 rounds to 0, but a step > 0 gets some traffic
		{50, 3, map[string]int{"1.0": 1, "2.0": 2}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("p=%d,total=%d", tt.p, tt.total), func(t *testing.T) {
			got := rollout.Ratio("1.0", "2.0", tt.p, tt.total)
			assert.Equal(t, tt.want, got)
			sum := 0
			for _, w := range got {
				sum += w
			}
			assert.Equal(t, tt.total, sum)
		})
	}
	assert.Equal(t, map[string]int{"1.0": 100}, rollout.Ratio("1.0", "", 50, 100), "no update: all to the current version")
}

func TestValidateSteps(t *testing.T) {
	tests := []struct {
		name  string
		steps []int
		err   string
	}{
		{"default", rollout.DefaultSteps(), ""},
		{"only 100", []int{100}, ""},
		{"empty", nil, "empty"},
		{"zero", []int{0, 100}, "1..100"},
		{"over 100", []int{50, 101}, "1..100"},
		{"not increasing", []int{5, 5, 100}, "strictly increasing"},
		{"decreasing", []int{50, 10, 100}, "strictly increasing"},
		{"no 100", []int{1, 50}, "must be 100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := rollout.ValidateSteps(tt.steps)
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, rollout.ErrInvalidConfig)
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}
