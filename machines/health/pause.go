package health

import (
	"context"
	"errors"
	"net"
	"time"
)

// A pause is a stretch in which this process could not run: the host's
// CPUs were taken, by other processes or by this one's own work (a
// balancer streaming large answers, its garbage collector), for a good
// part of a check's Timeout. A check that timed out across a pause says
// nothing of its target: the answer may have sat in a socket the checker
// could not read. So a pass keeps such timeouts out of the targets'
// records, as it does failures its own cancellation caused; otherwise a
// client that loads the checker's host could get a whole healthy fleet
// marked unhealthy (and, unhealthy being final, removed for good). Failure
// detectors that discard heartbeats across a process pause (Akka's,
// Cassandra's) do the same.

// pauseWatch measures the longest pause while it runs: it wakes every
// `every` and records by how much a wake-up came late.
type pauseWatch struct {
	every time.Duration
	last  time.Time
	worst time.Duration
}

// wake records a wake-up at now.
func (w *pauseWatch) wake(now time.Time) {
	if late := now.Sub(w.last) - w.every; late > w.worst {
		w.worst = late
	}
	w.last = now
}

// watchPauses runs a pauseWatch waking every `every` until stop is called;
// stop returns the longest pause seen, the time to stop included.
func watchPauses(every time.Duration) (stop func() time.Duration) {
	w := &pauseWatch{every: every, last: time.Now()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTimer(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				w.wake(time.Now())
				t.Reset(every)
			}
		}
	}()
	return func() time.Duration {
		cancel()
		<-done
		// The last stretch, from the last wake-up to now, counts too.
		if late := time.Since(w.last) - w.every; late > w.worst {
			w.worst = late
		}
		return w.worst
	}
}

// isTimeout reports whether err is a check that ran out of time (rather
// than a refused connection or a wrong answer, which no pause explains).
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
