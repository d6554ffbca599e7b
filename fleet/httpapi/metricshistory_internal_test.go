package httpapi

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func samples(n int) []sample { return make([]sample, n) }

// TestMetricsHistoryBounded: the history holds at most perInstance
// readings of an instance, at most one per spacing, and at most maxSamples
// samples in all, the oldest reading giving way first.
func TestMetricsHistoryBounded(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	h := newMetricsHistory(3, 10, time.Second)
	for i := range 5 {
		h.record("a", scrape{at: t0.Add(time.Duration(i) * time.Second), samples: samples(1)})
	}
	got := h.since("a", t0)
	require.Len(t, got, 3, "per-instance bound")
	assert.Equal(t, t0.Add(2*time.Second), got[0].at, "the oldest went first")
	assert.Equal(t, 3, h.total)

	h.record("a", scrape{at: t0.Add(4500 * time.Millisecond), samples: samples(1)})
	assert.Len(t, h.since("a", t0), 3, "closer than the spacing: not kept")
	assert.Len(t, h.since("a", t0.Add(3*time.Second)), 2, "since filters by time")

	// b's readings push the total over 10: a's oldest go first.
	h.record("b", scrape{at: t0.Add(10 * time.Second), samples: samples(4)})
	h.record("b", scrape{at: t0.Add(11 * time.Second), samples: samples(4)})
	assert.Equal(t, 10, h.total)
	assert.Len(t, h.since("a", t0), 2)
	h.record("b", scrape{at: t0.Add(12 * time.Second), samples: samples(4)})
	assert.LessOrEqual(t, h.total, 10)
	assert.Empty(t, h.since("a", t0), "a gave way entirely")
	assert.Len(t, h.since("b", t0), 2, "b's own oldest went next")

	h.record("c", scrape{at: t0.Add(13 * time.Second), samples: samples(11)})
	assert.Empty(t, h.since("c", t0), "a reading over the whole budget is not kept")

	h.forget("b")
	assert.Equal(t, 0, h.total)
	assert.Empty(t, h.byID)
}
