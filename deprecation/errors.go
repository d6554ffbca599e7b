package deprecation

import "errors"

// Errors returned by this package. Callers test them with errors.Is.
var (
	// ErrInvalidVersion is returned by ParseVersion for text that is not a
	// version such as v1.22.0.
	ErrInvalidVersion = errors.New("deprecation: invalid version")
	// ErrInvalidRules is returned by LoadRules and NewRuleSet for a rules
	// file or rule that cannot be used.
	ErrInvalidRules = errors.New("deprecation: invalid rules")
	// ErrUnknownFormat is returned by ParseFormat and Report.Write for an
	// output format it does not know.
	ErrUnknownFormat = errors.New("deprecation: unknown output format")
	// ErrUnknownColumn is returned by ParseColumns for a column name that
	// is not one of pluto's.
	ErrUnknownColumn = errors.New("deprecation: unknown column")
	// ErrUnknownComponent is returned by BuiltinRules and RuleSet.Select
	// for a component without rules.
	ErrUnknownComponent = errors.New("deprecation: unknown component")
	// ErrUnknownTarget is returned by RuleSet.CheckTarget for a Kubernetes
	// release newer than the rules know.
	ErrUnknownTarget = errors.New("deprecation: unknown target version")
	// ErrCorruptRelease is wrapped by the Err of a Release whose storage
	// object could not be decoded (bad base64, gzip or JSON).
	ErrCorruptRelease = errors.New("deprecation: corrupt release")
	// ErrStale is wrapped by Cache.Health when the data is older than
	// Interval + Tolerance (or there has been none for that long).
	ErrStale = errors.New("deprecation: scan data is stale")
	// ErrScanFailed is wrapped by Cache.Health when the last scan failed.
	ErrScanFailed = errors.New("deprecation: last scan failed")
	// ErrCacheClosed is returned by Cache.Run and Cache.Refresh after Close.
	ErrCacheClosed = errors.New("deprecation: cache closed")
	// ErrCacheRunning is returned by a second concurrent Cache.Run.
	ErrCacheRunning = errors.New("deprecation: cache already running")
)
