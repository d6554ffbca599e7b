package deprecation

import (
	"encoding/json"
	"fmt"
)

// Exit codes of a check, as pluto's. When several apply the highest wins.
const (
	ExitOK            = 0 // nothing found
	ExitError         = 1 // a source could not be read (or, with ExitOptions.FailOnInvalid, a document is invalid)
	ExitDeprecated    = 2 // an object uses a deprecated API, or one removed within two minor releases
	ExitRemoved       = 3 // an object uses an API removed in the target
	ExitNoReplacement = 4 // an affected object has no replacement API served in the target
)

// Report gathers the results of several sources. The zero value is an
// empty report; set Target to say what was checked against. A Report is
// not safe for concurrent use.
type Report struct {
	// Target is the Kubernetes release the sources were checked against;
	// Targets the release of every component of the rules (pluto's
	// target-versions), when known.
	Target  Version            `json:"target"`
	Targets map[string]Version `json:"targets,omitempty"`
	// Sources and Documents count what was checked.
	Sources   int `json:"sources"`
	Documents int `json:"documents"`
	// Findings are in source order, then document order.
	Findings []Finding `json:"findings"`
	// Errors are the sources that could not be read. Invalid are the
	// documents (Index >= 0) and sources (Index -1) that were read but are
	// not YAML or JSON, or go over a limit: they are reported, and by
	// default do not change the exit code, as pluto's parse errors.
	Errors  []*DocumentError `json:"errors"`
	Invalid []*DocumentError `json:"invalid"`
	// Skipped are the files a directory walk did not read, and why.
	Skipped []Skipped `json:"skipped,omitempty"`
}

// Skipped is a file a directory walk did not read.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Add adds the findings and invalid documents of res.
func (r *Report) Add(res Result) {
	r.Sources++
	r.Documents += res.Documents
	r.Findings = append(r.Findings, res.Findings...)
	r.Invalid = append(r.Invalid, res.Errors...)
}

// Append adds everything o holds to r: its sources, documents, findings,
// errors and skipped files.
func (r *Report) Append(o *Report) {
	r.Sources += o.Sources
	r.Documents += o.Documents
	r.Findings = append(r.Findings, o.Findings...)
	r.Errors = append(r.Errors, o.Errors...)
	r.Invalid = append(r.Invalid, o.Invalid...)
	r.Skipped = append(r.Skipped, o.Skipped...)
}

// AddError records a source that could not be read.
func (r *Report) AddError(source string, err error) {
	r.Errors = append(r.Errors, &DocumentError{Source: source, Index: -1, Err: err})
}

// ExitOptions are pluto's flags that change the exit code.
type ExitOptions struct {
	// IgnoreDeprecations, IgnoreRemovals and IgnoreUnavailableReplacements
	// drop exit codes 2, 3 and 4 (a finding can still give another).
	IgnoreDeprecations, IgnoreRemovals, IgnoreUnavailableReplacements bool
	// FailOnInvalid makes an invalid document exit 1, like a source that
	// could not be read.
	FailOnInvalid bool
}

// ExitCode returns the exit code for the report with pluto's defaults.
func (r *Report) ExitCode() int { return r.ExitCodeWith(ExitOptions{}) }

// ExitCodeWith returns the exit code as pluto computes it: 2 when a
// finding is deprecated (or removed within two releases), 3 when one is
// removed, 4 when one has no replacement served in the target, each
// unless ignored; the highest that applies wins, and a source that could
// not be read gives at least 1. A removed API that was deprecated first
// is both deprecated and removed, so with IgnoreRemovals it still exits 2.
func (r *Report) ExitCodeWith(opts ExitOptions) int {
	code := ExitOK
	if len(r.Errors) > 0 || (opts.FailOnInvalid && len(r.Invalid) > 0) {
		code = ExitError
	}
	for _, f := range r.Findings {
		if !opts.IgnoreDeprecations && (f.Deprecated() || f.State == StateRemovalSoon) {
			code = max(code, ExitDeprecated)
		}
		if !opts.IgnoreRemovals && f.Removed() {
			code = max(code, ExitRemoved)
		}
		if !opts.IgnoreUnavailableReplacements && !f.ReplacementAvailable {
			code = max(code, ExitNoReplacement)
		}
	}
	return code
}

// Deprecated reports whether the finding's API is deprecated in its
// target (pluto's "deprecated": deprecated-in set and reached), removed
// or not.
func (f *Finding) Deprecated() bool {
	return !f.Rule.DeprecatedIn.IsZero() && !f.Target.Less(f.Rule.DeprecatedIn)
}

// Removed reports whether the finding's API is removed in its target.
func (f *Finding) Removed() bool { return f.State == StateRemoved }

// OnlyRemoved returns a copy of r with only the findings of APIs removed
// in their target (pluto's --only-show-removed).
func (r *Report) OnlyRemoved() *Report {
	n := *r
	n.Findings = nil
	for _, f := range r.Findings {
		if f.Removed() {
			n.Findings = append(n.Findings, f)
		}
	}
	return &n
}

// MarshalJSON writes the error as {"source", "index", "line", "error"}.
func (e *DocumentError) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Source string `json:"source"`
		Index  int    `json:"index"`
		Line   int    `json:"line,omitempty"`
		Error  string `json:"error"`
	}{e.Source, e.Index, e.Line, fmt.Sprint(e.Err)})
}
