package deprecation

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Errors of release scanning and of the Cache (the checker's are in
// checker.go).

// ReleaseScanner checks the deployed Helm releases of a cluster. The
// implementation over Helm's storage is deprecation/helm.
//
// Scan calls fn once for each deployed release, after checking it; fn is
// never called concurrently, and the order of the calls is unspecified. A
// release whose storage object cannot be decoded is passed with Err set
// (wrapping ErrCorruptRelease) and the scan goes on. When fn returns an
// error, Scan stops and returns it. Scan returns the Kubernetes release
// the releases were checked against; any other error means the scan could
// not be completed (listing failed, ctx was cancelled), and the releases
// already passed to fn are then only part of the cluster's.
//
// Implementations are safe for concurrent use; Scan blocks until the scan
// is done.
type ReleaseScanner interface {
	Scan(ctx context.Context, fn func(Release) error) (Version, error)
}

// ReleaseScannerFunc adapts a function to a ReleaseScanner.
type ReleaseScannerFunc func(ctx context.Context, fn func(Release) error) (Version, error)

// Scan calls f(ctx, fn).
func (f ReleaseScannerFunc) Scan(ctx context.Context, fn func(Release) error) (Version, error) {
	return f(ctx, fn)
}

// Release is one deployed revision of a Helm release and what the checker
// found in its manifest and in its hooks' manifests.
type Release struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Revision  int    `json:"revision"`
	// Chart, ChartVersion and AppVersion come from the chart's metadata.
	Chart        string `json:"chart,omitempty"`
	ChartVersion string `json:"chartVersion,omitempty"`
	AppVersion   string `json:"appVersion,omitempty"`
	// Updated is when the revision was deployed (zero when unknown).
	Updated time.Time `json:"updated,omitzero"`
	// Source names the storage object, e.g.
	// "secret/default/sh.helm.release.v1.shop.v3".
	Source string `json:"source"`
	// Findings are those of the manifest, then of the hooks in order.
	// Their Source is Source plus "/manifest" or "/hooks/<path>".
	Findings []Finding `json:"findings"`
	// Errors are the documents of the manifest and hooks that could not be
	// parsed.
	Errors []*DocumentError `json:"documentErrors,omitempty"`
	// Documents counts the non-empty documents checked.
	Documents int `json:"documents"`
	// Err is set when the storage object could not be decoded; only Name,
	// Namespace, Revision and Source are then known.
	Err error `json:"-"`
}

// releaseJSON is Release on the wire: errors as text.
type releaseJSON struct {
	releaseAlias
	Errors []documentErrorJSON `json:"documentErrors,omitempty"`
	Err    string              `json:"error,omitempty"`
}

type releaseAlias Release

type documentErrorJSON struct {
	Source string `json:"source"`
	Index  int    `json:"index"`
	Line   int    `json:"line,omitempty"`
	Error  string `json:"error"`
}

// MarshalJSON writes the release with its errors as text: Err as "error",
// Errors as {"source", "index", "line", "error"}.
func (r Release) MarshalJSON() ([]byte, error) {
	j := releaseJSON{releaseAlias: releaseAlias(r)}
	if j.Findings == nil {
		j.Findings = []Finding{}
	}
	for _, e := range r.Errors {
		j.Errors = append(j.Errors, documentErrorJSON{e.Source, e.Index, e.Line, fmt.Sprint(e.Err)})
	}
	if r.Err != nil {
		j.Err = r.Err.Error()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes; errors come back as plain
// errors with the same text.
func (r *Release) UnmarshalJSON(b []byte) error {
	var j releaseJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = Release(j.releaseAlias)
	r.Errors = nil
	for _, e := range j.Errors {
		r.Errors = append(r.Errors, &DocumentError{Source: e.Source, Index: e.Index, Line: e.Line, Err: errors.New(e.Error)})
	}
	if j.Err != "" {
		r.Err = errors.New(j.Err)
	}
	return nil
}

// ScanReport is the outcome of one complete scan of a cluster's releases.
// It is a plain value: treat a report shared by a Cache as read-only.
type ScanReport struct {
	// Target is the Kubernetes release the releases were checked against.
	Target Version `json:"target"`
	// Started and Finished bound the scan.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Releases are the releases that could be read, sorted by namespace
	// and name.
	Releases []Release `json:"releases"`
	// Corrupt are the releases whose storage could not be decoded (Err
	// set), sorted by namespace and name.
	Corrupt []Release `json:"corrupt"`
}

// Duration returns how long the scan took.
func (r *ScanReport) Duration() time.Duration { return r.Finished.Sub(r.Started) }

// releaseCounts counts the releases with findings: deprecated counts
// those with a finding in StateDeprecated or StateRemovalSoon, removed
// those with a finding in StateRemoved (a release can be in both).
func (r *ScanReport) releaseCounts() (deprecated, removed int) {
	for i := range r.Releases {
		var dep, rem bool
		for _, f := range r.Releases[i].Findings {
			if f.State == StateRemoved {
				rem = true
			} else {
				dep = true
			}
		}
		if dep {
			deprecated++
		}
		if rem {
			removed++
		}
	}
	return deprecated, removed
}

// ScanReleases runs one scan with s and gathers it into a report. now is
// the clock (nil: time.Now). Any error of s.Scan is returned, with no
// report: a partial scan is not a report of the cluster.
func ScanReleases(ctx context.Context, s ReleaseScanner, now func() time.Time) (*ScanReport, error) {
	if now == nil {
		now = time.Now
	}
	rep := &ScanReport{Started: now(), Releases: []Release{}, Corrupt: []Release{}}
	target, err := s.Scan(ctx, func(r Release) error {
		if r.Err != nil {
			rep.Corrupt = append(rep.Corrupt, r)
		} else {
			rep.Releases = append(rep.Releases, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rep.Target, rep.Finished = target, now()
	byName := func(a, b Release) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Revision, b.Revision))
	}
	slices.SortFunc(rep.Releases, byName)
	slices.SortFunc(rep.Corrupt, byName)
	return rep, nil
}

// Report converts the scan into a Report with one source per release (its
// storage object), for Report.Write and Report.ExitCode. Corrupt releases
// become whole-source errors.
func (r *ScanReport) Report() *Report {
	rep := &Report{Target: r.Target}
	for i := range r.Releases {
		rel := &r.Releases[i]
		rep.Add(Result{Source: rel.Source, Findings: rel.Findings, Errors: rel.Errors, Documents: rel.Documents})
	}
	for i := range r.Corrupt {
		rep.AddError(r.Corrupt[i].Source, r.Corrupt[i].Err)
	}
	return rep
}
