//go:build linux

package h1

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLoopNudge: a loop back from a wait nudges (readies the goroutine
// that makes the runtime wake a thread to poll) only while a peer waits,
// and never holds more than one nudge pending.
func TestLoopNudge(t *testing.T) {
	set := &loopSet{nudge: make(chan struct{}, 1)}
	a, b, c := &evLoop{set: set}, &evLoop{set: set}, &evLoop{set: set}
	a.peers = []*evLoop{b, c}

	a.nudge()
	assert.Empty(t, set.nudge, "no peer waits: no nudge")

	c.parked.Store(true)
	a.nudge()
	assert.Len(t, set.nudge, 1, "a peer waits")
	a.nudge()
	assert.Len(t, set.nudge, 1, "one pending at most")

	<-set.nudge
	c.parked.Store(false)
	a.nudge()
	assert.Empty(t, set.nudge, "the peer runs again")
}
