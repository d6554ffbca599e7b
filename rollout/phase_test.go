package rollout_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/rollout"
)

func TestPhaseTransitions(t *testing.T) {
	steps := rollout.DefaultSteps()
	now := time.Unix(100, 0)
	idle := rollout.Phase{Current: "1.0"}
	at := func(step int) rollout.Phase {
		return rollout.Phase{Current: "1.0", Target: "2.0", Step: step, Changed: now}
	}
	done := rollout.Phase{Current: "2.0", Previous: "1.0", Changed: now}
	tests := []struct {
		name string
		from rollout.Phase
		op   func(rollout.Phase) (rollout.Phase, error)
		want rollout.Phase
		err  error
	}{
		{"init", idle, initTo("2.0", steps, now), at(0), nil},
		{"init same version", idle, initTo("1.0", steps, now), idle, rollout.ErrSameVersion},
		{"init empty version", idle, initTo("", steps, now), idle, rollout.ErrInvalidRequest},
		{"init while updating", at(2), initTo("3.0", steps, now), at(2), rollout.ErrUpdateInProgress},
		{"init after completion", done, initTo("3.0", steps, now),
			rollout.Phase{Current: "2.0", Target: "3.0", Changed: now}, nil},
		{"update", at(0), update(steps, now), at(1), nil},
		{"update to the last step completes", at(3), update(steps, now), done, nil},
		{"update after completion", done, update(steps, now), done, rollout.ErrLastStep},
		{"update without update", idle, update(steps, now), idle, rollout.ErrNoUpdate},
		{"rollback", at(3), rollback(steps, now), at(2), nil},
		{"rollback from the first step cancels", at(0), rollback(steps, now), rollout.Phase{Current: "1.0", Changed: now}, nil},
		{"rollback after completion undoes the last step", done, rollback(steps, now), at(3), nil},
		{"rollback without update", idle, rollback(steps, now), idle, rollout.ErrNoUpdate},
		{"single step: init completes", idle, initTo("2.0", []int{100}, now), done, nil},
		{"single step: rollback after completion cancels", done, rollback([]int{100}, now),
			rollout.Phase{Current: "1.0", Changed: now}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.op(tt.from)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				assert.Equal(t, tt.from, got, "a refused transition leaves the phase")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func initTo(v string, steps []int, now time.Time) func(rollout.Phase) (rollout.Phase, error) {
	return func(p rollout.Phase) (rollout.Phase, error) { return p.InitUpdate(v, steps, now) }
}

func update(steps []int, now time.Time) func(rollout.Phase) (rollout.Phase, error) {
	return func(p rollout.Phase) (rollout.Phase, error) { return p.Update(steps, now) }
}

func rollback(steps []int, now time.Time) func(rollout.Phase) (rollout.Phase, error) {
	return func(p rollout.Phase) (rollout.Phase, error) { return p.Rollback(steps, now) }
}
