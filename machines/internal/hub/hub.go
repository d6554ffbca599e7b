// Package hub fans events out to the Watch calls of a provider. Publish
// never blocks: each subscriber has its own unbounded queue, drained by the
// goroutine of its Watch call.
package hub

import (
	"context"
	"sync"
)

// Hub delivers every published value to every running Watch. The zero
// value is ready to use; a Hub is safe for concurrent use.
type Hub[T any] struct {
	// mu guards subs.
	mu   sync.Mutex
	subs map[*sub[T]]struct{}
}

type sub[T any] struct {
	wake chan struct{}
	// mu guards queue.
	mu    sync.Mutex
	queue []T
}

// Publish queues v for every current subscriber.
func (h *Hub[T]) Publish(v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		s.mu.Lock()
		s.queue = append(s.queue, v)
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// Watch calls fn with each value published from now on, one at a time,
// until ctx is done, and returns ctx.Err().
func (h *Hub[T]) Watch(ctx context.Context, fn func(T)) error {
	s := &sub[T]{wake: make(chan struct{}, 1)}
	h.mu.Lock()
	if h.subs == nil {
		h.subs = make(map[*sub[T]]struct{})
	}
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.subs, s)
		h.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.wake:
		}
		s.mu.Lock()
		batch := s.queue
		s.queue = nil
		s.mu.Unlock()
		for _, v := range batch {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fn(v)
		}
	}
}

// Watchers returns how many Watch calls are subscribed.
func (h *Hub[T]) Watchers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
