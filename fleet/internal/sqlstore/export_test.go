package sqlstore

// SetBeforeFlush installs a hook called by a flusher with the size of each
// batch before it writes it. Call it before the first update.
func SetBeforeFlush(s *Store, fn func(n int)) { s.up.beforeFlush = fn }

// Queued returns how many updates wait for a flusher.
func Queued(s *Store) int {
	s.up.mu.Lock()
	defer s.up.mu.Unlock()
	return len(s.up.queue)
}

// Flushers returns how many flushers write at once.
func Flushers(s *Store) int { return max(s.d.Flushers, 1) }
