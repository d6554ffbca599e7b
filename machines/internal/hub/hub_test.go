package hub_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/machines/internal/hub"
)

func TestFanOutInOrderWithoutBlocking(t *testing.T) {
	var h hub.Hub[int]
	h.Publish(0) // nobody watches: dropped, and does not block
	ctx, cancel := context.WithCancel(t.Context())
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		got  = map[int][]int{}
		slow = make(chan struct{})
	)
	for w := range 2 {
		wg.Go(func() {
			err := h.Watch(ctx, func(v int) {
				if w == 1 {
					<-slow // a slow watcher must not hold the other back
				}
				mu.Lock()
				got[w] = append(got[w], v)
				mu.Unlock()
			})
			assert.ErrorIs(t, err, context.Canceled)
		})
	}
	require.Eventually(t, func() bool { return h.Watchers() == 2 }, 5*time.Second, time.Millisecond)
	for i := 1; i <= 100; i++ {
		h.Publish(i)
	}
	count := func(w int) int { mu.Lock(); defer mu.Unlock(); return len(got[w]) }
	require.Eventually(t, func() bool { return count(0) == 100 }, 5*time.Second, time.Millisecond)
	close(slow)
	require.Eventually(t, func() bool { return count(1) == 100 }, 5*time.Second, time.Millisecond)
	cancel()
	wg.Wait()
	assert.Zero(t, h.Watchers())
	for w := range 2 {
		for i, v := range got[w] {
			require.Equal(t, i+1, v)
		}
	}
}
