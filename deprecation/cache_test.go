package deprecation

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cacheClock is a fake clock: it moves only when told.
type cacheClock struct {
	mu  sync.Mutex
	now time.Time // guarded by mu
}

func newCacheClock() *cacheClock {
	return &cacheClock{now: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)}
}

func (c *cacheClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *cacheClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// cacheScanner counts scans; each scan blocks until released when gate is
// set, and fails while fail is set.
type cacheScanner struct {
	scans   atomic.Int32
	running atomic.Int32
	maxRun  atomic.Int32
	fail    atomic.Bool
	gate    chan struct{} // nil: scans do not block
	started chan struct{} // receives once per scan start when non-nil
}

func (s *cacheScanner) Scan(ctx context.Context, fn func(Release) error) (Version, error) {
	n := s.running.Add(1)
	defer s.running.Add(-1)
	for {
		m := s.maxRun.Load()
		if n <= m || s.maxRun.CompareAndSwap(m, n) {
			break
		}
	}
	i := s.scans.Add(1)
	if s.started != nil {
		s.started <- struct{}{}
	}
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return Version{}, ctx.Err()
		}
	}
	if s.fail.Load() {
		return Version{}, errors.New("apiserver down")
	}
	if err := fn(Release{Name: "r", Namespace: "ns", Revision: int(i)}); err != nil {
		return Version{}, err
	}
	return MustParseVersion("v1.30"), nil
}

// cacheRun runs c.Run in the background until the test ends.
func cacheRun(t *testing.T, c *Cache) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		require.NoError(t, <-errc)
	})
}

// The cache tests run in a synctest bubble: synctest.Wait returns once
// Run and the scans are blocked, so a test sees exactly the scans that
// were started, with no polling and no grace period.

func TestCacheStalenessTriggersOneBackgroundScan(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := newCacheClock()
		s := &cacheScanner{gate: make(chan struct{})}
		c, err := NewCache(s, CacheOptions{Interval: time.Hour, Now: clock.Now})
		require.NoError(t, err)
		assert.Nil(t, c.Report(), "no data before the first scan")
		cacheRun(t, c)

		synctest.Wait() // the start-up scan waits at the gate
		assert.EqualValues(t, 1, s.scans.Load())
		// Reads during a scan are answered at once and trigger nothing more.
		for range 50 {
			assert.Nil(t, c.Report())
			assert.True(t, c.Status().Scanning)
		}
		s.gate <- struct{}{}
		synctest.Wait()
		first := c.Report()
		require.NotNil(t, first)
		assert.Equal(t, 1, first.Releases[0].Revision)

		// Fresh data: no scan, even 59m59s later (whole durations compared:
		// kdave compared only the seconds part).
		clock.Add(time.Hour - time.Second)
		for range 10 {
			assert.Same(t, first, c.Report())
		}
		synctest.Wait()
		assert.EqualValues(t, 1, s.scans.Load())

		// Stale: many concurrent reads get the old data and start one scan.
		clock.Add(time.Second)
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() { assert.Same(t, first, c.Report()) })
		}
		wg.Wait()
		synctest.Wait()
		assert.EqualValues(t, 2, s.scans.Load())
		assert.Same(t, first, c.Report(), "answered with the data it has while scanning")
		s.gate <- struct{}{}
		synctest.Wait()
		assert.Equal(t, 2, c.Report().Releases[0].Revision)
		assert.EqualValues(t, 2, s.scans.Load())
		assert.EqualValues(t, 1, s.maxRun.Load(), "never two scans at once")
	})
}

func TestCacheRefreshIsSingleflight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &cacheScanner{gate: make(chan struct{})}
		c, err := NewCache(s, CacheOptions{})
		require.NoError(t, err)
		var wg sync.WaitGroup
		reps := make([]*ScanReport, 8)
		for i := range reps {
			wg.Go(func() {
				r, err := c.Refresh(context.Background())
				assert.NoError(t, err)
				reps[i] = r
			})
		}
		synctest.Wait() // one caller scans, at the gate; the others wait for it
		close(s.gate)
		wg.Wait()
		assert.EqualValues(t, 1, s.scans.Load(), "callers share the scan in flight")
		for _, r := range reps {
			assert.Same(t, reps[0], r)
		}
		assert.Same(t, reps[0], c.Report())
	})
}

func TestCacheHealth(t *testing.T) {
	clock := newCacheClock()
	s := &cacheScanner{}
	c, err := NewCache(s, CacheOptions{Interval: time.Hour, Tolerance: 10 * time.Minute, RetryDelay: time.Minute, Now: clock.Now})
	require.NoError(t, err)

	require.NoError(t, c.Health(), "no scan yet, but not for long")
	clock.Add(71 * time.Minute)
	require.ErrorIs(t, c.Health(), ErrStale)

	_, err = c.Refresh(context.Background())
	require.NoError(t, err)
	require.NoError(t, c.Health())

	clock.Add(70 * time.Minute) // exactly interval + tolerance: still healthy
	require.NoError(t, c.Health())
	clock.Add(time.Second)
	require.ErrorIs(t, c.Health(), ErrStale)

	s.fail.Store(true)
	_, err = c.Refresh(context.Background())
	require.Error(t, err)
	require.ErrorIs(t, c.Health(), ErrScanFailed)
	assert.NotNil(t, c.Report(), "a failed scan keeps the old data")

	s.fail.Store(false)
	_, err = c.Refresh(context.Background())
	require.NoError(t, err)
	require.NoError(t, c.Health())
}

func TestCacheRetryDelayAfterFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clock := newCacheClock()
		s := &cacheScanner{}
		s.fail.Store(true)
		c, err := NewCache(s, CacheOptions{Interval: time.Hour, RetryDelay: time.Minute, Now: clock.Now})
		require.NoError(t, err)
		cacheRun(t, c)
		synctest.Wait()
		require.Error(t, c.Status().LastError)
		for range 20 {
			c.Report()
		}
		synctest.Wait()
		assert.EqualValues(t, 1, s.scans.Load(), "reads do not hammer a failing cluster")
		clock.Add(time.Minute)
		s.fail.Store(false)
		c.Report()
		synctest.Wait()
		assert.NotNil(t, c.Report())
		assert.EqualValues(t, 2, s.scans.Load())
	})
}

func TestCacheDataFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "kdave.json")
	clock := newCacheClock()
	rel := rsRelease(t, "v1.25", "shop", "web", 3, rsManifest)
	rel.Errors = append(rel.Errors, &DocumentError{Source: "s", Index: 1, Line: 2, Err: errors.New("bad doc")})
	s := rsStatic("v1.25", rel)

	c, err := NewCache(s, CacheOptions{Interval: time.Hour, DataFile: file, Now: clock.Now})
	require.NoError(t, err)
	want, err := c.Refresh(context.Background())
	require.NoError(t, err)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left behind")

	tests := []struct {
		name  string
		after time.Duration
		fresh bool
	}{
		{"just saved", 0, true},
		{"59m later", 59 * time.Minute, true},
		{"1h later", time.Hour, false},
		{"1d and 1s later (kdave's seconds-only compare said fresh)", 24*time.Hour + time.Second, false},
		{"from the future", -time.Minute, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := newCacheClock()
			at.now = want.Finished.Add(tt.after)
			never := ReleaseScannerFunc(func(context.Context, func(Release) error) (Version, error) {
				return Version{}, errors.New("not called")
			})
			c2, err := NewCache(never, CacheOptions{Interval: time.Hour, DataFile: file, Now: at.Now})
			require.NoError(t, err)
			got := c2.Status().Report
			if !tt.fresh {
				assert.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, want.Target, got.Target)
			assert.True(t, want.Finished.Equal(got.Finished))
			assert.Equal(t, want.Releases[0].Findings, got.Releases[0].Findings)
			assert.Equal(t, "s: document 1 (line 2): bad doc", got.Releases[0].Errors[len(got.Releases[0].Errors)-1].Error())
		})
	}

	t.Run("corrupt file is ignored", func(t *testing.T) {
		bad := filepath.Join(dir, "bad.json")
		require.NoError(t, os.WriteFile(bad, []byte("{not json"), 0o600))
		c3, err := NewCache(s, CacheOptions{DataFile: bad, Now: clock.Now})
		require.NoError(t, err)
		assert.Nil(t, c3.Status().Report)
	})
}

func TestCacheCloseAndRun(t *testing.T) {
	s := &cacheScanner{gate: make(chan struct{}), started: make(chan struct{}, 10)}
	c, err := NewCache(s, CacheOptions{})
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() { errc <- c.Run(context.Background()) }()
	<-s.started
	require.ErrorIs(t, c.Run(context.Background()), ErrCacheRunning)
	require.NoError(t, c.Close(), "cancels the scan in progress and waits for Run")
	require.NoError(t, <-errc)
	require.NoError(t, c.Close(), "idempotent")
	require.ErrorIs(t, c.Run(context.Background()), ErrCacheClosed)
	_, err = c.Refresh(context.Background())
	require.ErrorIs(t, err, ErrCacheClosed)
}

func TestNewCacheErrors(t *testing.T) {
	_, err := NewCache(nil, CacheOptions{})
	require.Error(t, err)
	_, err = NewCache(rsStatic("v1.25"), CacheOptions{Interval: -time.Second})
	require.Error(t, err)
}

func TestCacheHandlers(t *testing.T) {
	clock := newCacheClock()
	s := &cacheScanner{}
	c, err := NewCache(s, CacheOptions{Interval: time.Hour, Now: clock.Now})
	require.NoError(t, err)
	get := func(h http.Handler, method string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, "/", nil))
		return rec
	}

	assert.Equal(t, http.StatusServiceUnavailable, get(c.ReleasesHandler(), http.MethodGet).Code, "no scan yet")
	assert.Equal(t, http.StatusOK, get(c.HealthHandler(), http.MethodGet).Code)
	assert.Equal(t, http.StatusMethodNotAllowed, get(c.HealthHandler(), http.MethodPost).Code)

	_, err = c.Refresh(context.Background())
	require.NoError(t, err)
	rec := get(c.ReleasesHandler(), http.MethodGet)
	require.Equal(t, http.StatusOK, rec.Code)
	var rep ScanReport
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &rep))
	assert.Equal(t, "r", rep.Releases[0].Name)

	clock.Add(2 * time.Hour)
	rec = get(c.HealthHandler(), http.MethodGet)
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Contains(t, rec.Body.String(), "stale")
}
