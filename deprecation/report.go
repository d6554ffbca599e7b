package deprecation

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"

	"golang.org/x/sync/errgroup"
	syaml "sigs.k8s.io/yaml"
)

// Exit codes of a check, as pluto's. When several apply the highest wins.
const (
	ExitOK            = 0 // nothing found
	ExitError         = 1 // a source or document could not be checked
	ExitDeprecated    = 2 // an object uses a deprecated API, or one removed within two minor releases
	ExitRemoved       = 3 // an object uses an API removed in the target
	ExitNoReplacement = 4 // an affected object has no replacement API served in the target
)

// Report gathers the results of several sources. The zero value is an
// empty report; set Target to say what was checked against. A Report is
// not safe for concurrent use.
type Report struct {
	// Target is the Kubernetes release the sources were checked against.
	Target Version `json:"target"`
	// Sources and Documents count what was checked.
	Sources   int `json:"sources"`
	Documents int `json:"documents"`
	// Findings are in source order, then document order.
	Findings []Finding        `json:"findings"`
	Errors   []*DocumentError `json:"errors"`
}

// Add adds the findings and errors of res.
func (r *Report) Add(res Result) {
	r.Sources++
	r.Documents += res.Documents
	r.Findings = append(r.Findings, res.Findings...)
	r.Errors = append(r.Errors, res.Errors...)
}

// AddError records a source that could not be read.
func (r *Report) AddError(source string, err error) {
	r.Errors = append(r.Errors, &DocumentError{Source: source, Index: -1, Err: err})
}

// ExitCode returns the exit code for the report: the highest of
// ExitError, ExitDeprecated, ExitRemoved and ExitNoReplacement that
// applies, or ExitOK.
func (r *Report) ExitCode() int {
	code := ExitOK
	if len(r.Errors) > 0 {
		code = ExitError
	}
	for _, f := range r.Findings {
		c := ExitDeprecated
		switch {
		case !f.ReplacementAvailable:
			c = ExitNoReplacement
		case f.State == StateRemoved:
			c = ExitRemoved
		}
		code = max(code, c)
	}
	return code
}

// Format is an output format of Report.Write.
type Format string

// Output formats.
const (
	FormatTable Format = "table"
	FormatJSON  Format = "json"
	FormatYAML  Format = "yaml"
)

// ParseFormat returns the Format named s: table, json or yaml.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatTable, FormatJSON, FormatYAML:
		return f, nil
	}
	return "", fmt.Errorf("%w: %q (want table, json or yaml)", ErrUnknownFormat, s)
}

// Write writes the report to w in format f.
func (r *Report) Write(w io.Writer, f Format) error {
	switch f {
	case FormatTable:
		return r.WriteTable(w)
	case FormatJSON:
		b, err := json.MarshalIndent(r.normalized(), "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	case FormatYAML:
		b, err := syaml.Marshal(r.normalized())
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	return fmt.Errorf("%w: %q", ErrUnknownFormat, f)
}

// normalized returns r with empty lists rather than nil ones, so that JSON
// and YAML show "findings: []".
func (r *Report) normalized() *Report {
	n := *r
	if n.Findings == nil {
		n.Findings = []Finding{}
	}
	if n.Errors == nil {
		n.Errors = []*DocumentError{}
	}
	return &n
}

// WriteTable writes the findings as an aligned table, then the errors and
// a summary line.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(r.Findings) > 0 {
		fmt.Fprintln(tw, "SOURCE\tLINE\tKIND\tNAME\tAPI VERSION\tREPLACEMENT\tDEPRECATED IN\tREMOVED IN\tSTATE")
	}
	for _, f := range r.Findings {
		line := fmt.Sprint(f.Line)
		if f.Item > 0 {
			line = fmt.Sprintf("%d[%d]", f.Line, f.Item)
		}
		name := f.Name
		if f.Namespace != "" {
			name = f.Namespace + "/" + f.Name
		}
		repl := f.Rule.ReplacementAPI
		switch {
		case repl == "":
			repl = "none"
		case !f.ReplacementAvailable:
			repl += " (from " + f.Rule.ReplacementAvailableIn.String() + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Source, line, f.Kind, dash(name),
			f.APIVersion, repl, dash(f.Rule.DeprecatedIn.String()), dash(f.Rule.RemovedIn.String()), f.State)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, e := range r.Errors {
		if _, err := fmt.Fprintf(w, "error: %v\n", e); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%d finding(s), %d error(s) in %d document(s) of %d source(s); target Kubernetes %s\n",
		len(r.Findings), len(r.Errors), r.Documents, r.Sources, r.Target)
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
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

// Stdin is the path that CheckPaths reads from its stdin argument.
const Stdin = "-"

// CheckPaths checks files and directories and returns a report. A
// directory is walked recursively for *.yaml, *.yml and *.json files,
// skipping hidden directories; a file named explicitly is checked
// whatever its name; the path "-" reads stdin. A source that cannot be
// read is an error in the report, not a failure: the only error returned
// is ctx's. Files are checked concurrently, one per CPU.
func (c *Checker) CheckPaths(ctx context.Context, stdin io.Reader, paths ...string) (*Report, error) {
	rep := &Report{Target: c.target}
	var files []string
	for _, p := range paths {
		if p == Stdin {
			files = append(files, p)
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			rep.AddError(p, err)
			continue
		}
		if !fi.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				rep.AddError(path, err)
				return nil
			case d.IsDir() && path != p && strings.HasPrefix(d.Name(), "."):
				return filepath.SkipDir
			case !d.IsDir() && isManifestName(d.Name()):
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			rep.AddError(p, err)
		}
	}

	results := make([]Result, len(files))
	readErrs := make([]error, len(files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, name := range files {
		g.Go(func() error {
			var data []byte
			var err error
			if name == Stdin {
				data, err = io.ReadAll(stdin)
			} else {
				data, err = os.ReadFile(name)
			}
			if err != nil {
				readErrs[i] = err
				return nil
			}
			results[i], err = c.Check(gctx, name, data)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, res := range results {
		if readErrs[i] != nil {
			rep.AddError(files[i], readErrs[i])
			continue
		}
		rep.Add(res)
	}
	return rep, nil
}

func isManifestName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}
