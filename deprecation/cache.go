package deprecation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/fleetkit/fleetkit/internal/httpjson"
)

// Defaults of CacheOptions.
const (
	DefaultCacheInterval = time.Hour
	// dataFileVersion is the version of the data file's format.
	dataFileVersion = 1
)

// CacheOptions configures a Cache. A zero field means the documented
// default.
type CacheOptions struct {
	// Interval is how old the data may get before a read triggers a new
	// scan; 0 means DefaultCacheInterval.
	Interval time.Duration
	// Tolerance is how much older than Interval the data may get before
	// Health fails; 0 means Interval/2.
	Tolerance time.Duration
	// RetryDelay is how long after a failed scan reads wait before
	// triggering another; 0 means min(Interval, 1m).
	RetryDelay time.Duration
	// Timeout bounds one scan; 0 means Interval.
	Timeout time.Duration
	// DataFile, when set, is where each successful scan is saved (written
	// atomically) and where a fresh scan is loaded from at start.
	DataFile string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives scan failures and data file problems; nil means
	// slog.Default().
	Logger *slog.Logger
}

// CacheStatus is a snapshot of a Cache's state.
type CacheStatus struct {
	// Report is the data served, nil before the first scan.
	Report *ScanReport
	// Age is how old Report is (since the cache was created when Report
	// is nil).
	Age time.Duration
	// Scanning is true while a scan runs.
	Scanning bool
	// LastError is the error of the last scan, nil if it succeeded.
	LastError error
	// LastAttempt is when the last scan started.
	LastAttempt time.Time
}

// Cache serves the last complete scan of a ReleaseScanner from memory,
// as kdave's exporter did, done right: a read that finds the data older
// than Interval is answered at once with the data there is, and wakes Run
// to scan in the background; scans never run two at once; each scan is
// saved to DataFile atomically and a scan still fresh is loaded from it at
// start (whole durations are compared); Health fails when the data is
// older than Interval + Tolerance or the last scan failed.
//
// Reads (Report, Health, Status) are safe for concurrent use and never
// block on a scan. Background scans happen only while Run runs: Run owns
// them.
type Cache struct {
	scanner ReleaseScanner
	opts    CacheOptions
	log     *slog.Logger
	created time.Time
	// wake carries read-triggered scan requests to Run (capacity 1, so
	// requests made while one is pending coalesce).
	wake  chan struct{}
	group singleflight.Group

	// mu guards the fields below.
	mu          sync.Mutex
	report      *ScanReport
	lastErr     error
	lastAttempt time.Time
	scanning    bool
	running     bool
	closed      bool
	stop        context.CancelFunc // cancels Run's context; nil when Run is not running
	done        chan struct{}      // closed when Run returns; nil when Run is not running
}

// NewCache returns a Cache over s. When opts.DataFile holds a scan younger
// than Interval, the cache starts with it; a missing, unreadable or stale
// data file is not an error (it is logged), the cache then starts empty.
func NewCache(s ReleaseScanner, opts CacheOptions) (*Cache, error) {
	if s == nil {
		return nil, errors.New("deprecation: NewCache: nil ReleaseScanner")
	}
	for name, d := range map[string]time.Duration{"Interval": opts.Interval, "Tolerance": opts.Tolerance,
		"RetryDelay": opts.RetryDelay, "Timeout": opts.Timeout} {
		if d < 0 {
			return nil, fmt.Errorf("deprecation: NewCache: negative %s %v", name, d)
		}
	}
	if opts.Interval == 0 {
		opts.Interval = DefaultCacheInterval
	}
	if opts.Tolerance == 0 {
		opts.Tolerance = opts.Interval / 2
	}
	if opts.RetryDelay == 0 {
		opts.RetryDelay = min(opts.Interval, time.Minute)
	}
	if opts.Timeout == 0 {
		opts.Timeout = opts.Interval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	c := &Cache{scanner: s, opts: opts, log: log, created: opts.Now(), wake: make(chan struct{}, 1)}
	if opts.DataFile != "" {
		rep, err := loadDataFile(opts.DataFile)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			log.Warn("ignoring unreadable data file", "file", opts.DataFile, "err", err)
		case !c.fresh(rep, c.created):
			log.Info("data file is stale; scanning", "file", opts.DataFile, "finished", rep.Finished)
		default:
			c.report = rep
		}
	}
	return c, nil
}

// fresh reports whether rep is younger than Interval at now. A report from
// the future (a clock that went back) is not trusted.
func (c *Cache) fresh(rep *ScanReport, now time.Time) bool {
	if rep == nil {
		return false
	}
	age := now.Sub(rep.Finished)
	return age >= 0 && age < c.opts.Interval
}

// needScan reports whether a read at now should trigger a scan. c.mu must
// be held.
func (c *Cache) needScan(now time.Time) bool {
	if c.scanning || c.closed || c.fresh(c.report, now) {
		return false
	}
	return c.lastErr == nil || now.Sub(c.lastAttempt) >= c.opts.RetryDelay
}

// read returns a snapshot and, when the data is stale, wakes Run.
func (c *Cache) read() CacheStatus {
	now := c.opts.Now()
	c.mu.Lock()
	st := CacheStatus{Report: c.report, Scanning: c.scanning, LastError: c.lastErr, LastAttempt: c.lastAttempt}
	need := c.needScan(now)
	c.mu.Unlock()
	if st.Report != nil {
		st.Age = now.Sub(st.Report.Finished)
	} else {
		st.Age = now.Sub(c.created)
	}
	if need {
		select {
		case c.wake <- struct{}{}:
		default: // a request is already pending
		}
	}
	return st
}

// Report returns the last complete scan, nil if there has been none. When
// the data is stale it wakes Run to scan in the background and still
// returns what it has. It never blocks on a scan.
func (c *Cache) Report() *ScanReport { return c.read().Report }

// Status returns a snapshot of the cache; like Report, it triggers a
// background scan when the data is stale.
func (c *Cache) Status() CacheStatus { return c.read() }

// Health returns nil when the data is no older than Interval + Tolerance
// and the last scan succeeded; otherwise an error wrapping ErrStale or
// ErrScanFailed. With no data yet, the age counts from NewCache. Like
// Report, it triggers a background scan when the data is stale.
func (c *Cache) Health() error {
	st := c.read()
	if st.LastError != nil {
		return fmt.Errorf("%w: %w", ErrScanFailed, st.LastError)
	}
	if limit := c.opts.Interval + c.opts.Tolerance; st.Age > limit {
		if st.Report == nil {
			return fmt.Errorf("%w: no scan has completed in %v", ErrStale, st.Age.Round(time.Second))
		}
		return fmt.Errorf("%w: last scan finished %v ago (limit %v)", ErrStale, st.Age.Round(time.Second), limit)
	}
	return nil
}

// Refresh scans now, whatever the age of the data, and returns the new
// report. Concurrent calls (and Run's background scans) share one scan:
// the scan runs under the context of the call that started it.
func (c *Cache) Refresh(ctx context.Context) (*ScanReport, error) {
	v, err, _ := c.group.Do("scan", func() (any, error) { return c.scan(ctx) })
	if err != nil {
		return nil, err
	}
	return v.(*ScanReport), nil
}

func (c *Cache) scan(ctx context.Context) (*ScanReport, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrCacheClosed
	}
	c.scanning, c.lastAttempt = true, c.opts.Now()
	c.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	rep, err := ScanReleases(ctx, c.scanner, c.opts.Now)
	cancel()

	c.mu.Lock()
	c.scanning, c.lastErr = false, err
	if err == nil {
		c.report = rep
	}
	c.mu.Unlock()
	if err != nil {
		c.log.Error("release scan failed", "err", err)
		return nil, err
	}
	c.log.Info("release scan done", "releases", len(rep.Releases), "corrupt", len(rep.Corrupt),
		"target", rep.Target.String(), "duration", rep.Duration())
	if c.opts.DataFile != "" {
		if err := saveDataFile(c.opts.DataFile, rep); err != nil {
			c.log.Error("saving data file failed", "file", c.opts.DataFile, "err", err)
		}
	}
	return rep, nil
}

// Run scans in the background until ctx is done or Close is called: at
// start when there is no fresh data, then whenever a read finds the data
// stale. It returns nil when stopped, ErrCacheRunning if Run is already
// running and ErrCacheClosed after Close. Scan failures are not returned:
// they are logged and reported by Health.
func (c *Cache) Run(ctx context.Context) error {
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return ErrCacheClosed
	case c.running:
		c.mu.Unlock()
		return ErrCacheRunning
	}
	ctx, cancel := context.WithCancel(ctx)
	c.running, c.stop, c.done = true, cancel, make(chan struct{})
	done := c.done
	c.mu.Unlock()
	defer func() {
		cancel()
		c.mu.Lock()
		c.running, c.stop, c.done = false, nil, nil
		c.mu.Unlock()
		close(done)
	}()

	c.read() // wakes the loop below when there is no fresh data
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-c.wake:
		}
		c.mu.Lock()
		need := c.needScan(c.opts.Now())
		c.mu.Unlock()
		if need {
			_, _ = c.Refresh(ctx) // logged by scan; reported by Health
		}
	}
}

// Close stops Run, waiting for a scan in progress to be cancelled, and
// makes later Run and Refresh calls fail. It is idempotent and returns
// nil.
func (c *Cache) Close() error {
	c.mu.Lock()
	c.closed = true
	stop, done := c.stop, c.done
	c.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	return nil
}

// HealthHandler answers GET with 200 {"status":"ok"} when Health returns
// nil, and 503 with the reason otherwise.
func (c *Cache) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpjson.RequireMethod(w, r, http.MethodGet) {
			return
		}
		if err := c.Health(); err != nil {
			writeError(w, err)
			return
		}
		httpjson.Write(w, http.StatusOK, httpjson.Body{Status: "ok", Message: "last scan is fresh"})
	})
}

// ReleasesHandler answers GET with the last ScanReport as JSON, or 503
// before the first scan. Like Report, it triggers a background scan when
// the data is stale.
func (c *Cache) ReleasesHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpjson.RequireMethod(w, r, http.MethodGet) {
			return
		}
		rep := c.Report()
		if rep == nil {
			writeError(w, fmt.Errorf("%w: no scan has completed yet", ErrStale))
			return
		}
		httpjson.Write(w, http.StatusOK, rep)
	})
}

// writeError maps the cache's errors to HTTP statuses: stale data and a
// failed scan are 503 (the exporter is up but cannot vouch for its data).
func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	if errors.Is(err, ErrStale) || errors.Is(err, ErrScanFailed) || errors.Is(err, ErrCacheClosed) {
		status = http.StatusServiceUnavailable
	}
	httpjson.WriteError(w, httpjson.Errorf(status, "%v", err))
}

// dataFile is the content of CacheOptions.DataFile.
type dataFile struct {
	Version int         `json:"version"`
	Report  *ScanReport `json:"report"`
}

func loadDataFile(path string) (*ScanReport, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f dataFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	if f.Version != dataFileVersion || f.Report == nil {
		return nil, fmt.Errorf("unknown data file version %d", f.Version)
	}
	return f.Report, nil
}

// saveDataFile writes rep to path atomically: a temporary file in the same
// directory, fsynced, renamed over path, then the directory fsynced. A
// crash leaves either the old file or the new one, never a torn one.
func saveDataFile(path string, rep *ScanReport) (err error) {
	b, err := json.Marshal(dataFile{Version: dataFileVersion, Report: rep})
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(b); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
