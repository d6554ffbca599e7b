package gcpolicy_test

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/fleetkit/fleetkit/internal/gcpolicy"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }

func TestBatch(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	restore := gcpolicy.Batch()
	assert.Equal(t, -1, debug.SetGCPercent(-1), "proportional pacing off")
	assert.Equal(t, int64(gcpolicy.BatchLimit), debug.SetMemoryLimit(-1), "collects near the limit")
	restore()
	assert.Equal(t, 100, debug.SetGCPercent(before))
	assert.Equal(t, int64(math.MaxInt64), debug.SetMemoryLimit(-1))
}

func TestBatchLeavesTheUsersSetting(t *testing.T) {
	t.Setenv("GOGC", "200")
	before := debug.SetGCPercent(150)
	defer debug.SetGCPercent(before)
	restore := gcpolicy.Batch()
	defer restore()
	assert.Equal(t, 150, debug.SetGCPercent(150), "GOGC set: untouched")
}
