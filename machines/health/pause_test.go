package health

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPauseWatchRecordsTheLongestLateWakeUp(t *testing.T) {
	start := time.Unix(0, 0)
	w := &pauseWatch{every: 10 * time.Millisecond, last: start}
	w.wake(start.Add(10 * time.Millisecond))  // on time
	w.wake(start.Add(25 * time.Millisecond))  // 5 ms late
	w.wake(start.Add(535 * time.Millisecond)) // 500 ms late
	w.wake(start.Add(550 * time.Millisecond)) // 5 ms late
	assert.Equal(t, 500*time.Millisecond, w.worst)
}

func TestWatchPausesSeesNoPauseOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		stop := watchPauses(10 * time.Millisecond)
		time.Sleep(time.Second) // in the bubble, every wake-up comes on time
		assert.Zero(t, stop())
	})
}

func TestIsTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:1/", nil)
	require.NoError(t, err)
	_, err = http.DefaultClient.Do(req)
	assert.True(t, isTimeout(err), "%v", err)

	var refused error
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	_, refused = http.Get("http://" + addr + "/")
	assert.False(t, isTimeout(refused), "%v", refused)
	assert.False(t, isTimeout(errors.New("GET /health: status 500")))
}

// checkerPausedFor returns a Checker whose pass sees this process paused
// for pause, with one target at url.
func checkerPausedFor(t *testing.T, pause time.Duration, url string) *Checker {
	c, err := New(Options{Timeout: 50 * time.Millisecond})
	require.NoError(t, err)
	c.watch = func(time.Duration) func() time.Duration { return func() time.Duration { return pause } }
	c.Add(Target{ID: "m", Address: strings.TrimPrefix(url, "http://")})
	return c
}

// TestTimeoutDuringAPauseIsNotCounted: a check that timed out while the
// checker's process was paused leaves the target as it was and says so;
// the same timeout without a pause makes it unhealthy.
func TestTimeoutDuringAPauseIsNotCounted(t *testing.T) {
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer slow.Close()
	defer close(release)

	c := checkerPausedFor(t, time.Second, slow.URL)
	ev := c.Check(context.Background())
	require.Len(t, ev, 1)
	assert.Equal(t, time.Second, ev[0].Paused)
	assert.False(t, ev[0].Changed)
	st, _ := c.Status("m")
	assert.Equal(t, Unknown, st.State)
	assert.Zero(t, st.Failures)
	assert.Nil(t, st.LastErr)

	c = checkerPausedFor(t, 0, slow.URL)
	ev = c.Check(context.Background())
	require.Len(t, ev, 1)
	assert.Zero(t, ev[0].Paused)
	assert.Equal(t, Unhealthy, ev[0].State)
}

// TestConclusiveFailuresCountDuringAPause: a wrong answer or a refused
// connection is no timeout; no pause explains it.
func TestConclusiveFailuresCountDuringAPause(t *testing.T) {
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	defer broken.Close()
	ev := checkerPausedFor(t, time.Second, broken.URL).Check(context.Background())
	require.Len(t, ev, 1)
	assert.Equal(t, Unhealthy, ev[0].State)
	assert.Zero(t, ev[0].Paused)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	ev = checkerPausedFor(t, time.Second, "http://"+addr).Check(context.Background())
	require.Len(t, ev, 1)
	assert.Equal(t, Unhealthy, ev[0].State)
}
