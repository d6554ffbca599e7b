package deprecation

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	syaml "sigs.k8s.io/yaml"
)

// Format is an output format of Report.Write.
type Format string

// Output formats: kdave's table, and pluto's formats under pluto's names.
const (
	// FormatTable is kdave's table: source, line, kind, name, API,
	// replacement, versions and state, then the errors and a summary.
	FormatTable Format = "table"
	// FormatNormal, FormatWide, FormatCustom, FormatMarkdown and FormatCSV
	// are pluto's: the columns of pluto's default output (NAME, KIND,
	// VERSION, REPLACEMENT, REMOVED, DEPRECATED, REPL AVAIL), of its -o
	// wide (NAME, NAMESPACE, KIND, VERSION, REPLACEMENT, DEPRECATED,
	// DEPRECATED IN, REMOVED, REMOVED IN, REPL AVAIL, REPL AVAIL IN), or
	// the ones asked for (custom needs them; markdown and csv default to
	// wide).
	FormatNormal   Format = "normal"
	FormatWide     Format = "wide"
	FormatCustom   Format = "custom"
	FormatMarkdown Format = "markdown"
	FormatCSV      Format = "csv"
	// FormatJSON and FormatYAML are pluto's layout ({"items": [...],
	// "target-versions": {...}}) with kdave's additions; see Report.Write.
	FormatJSON Format = "json"
	FormatYAML Format = "yaml"
)

var formats = []Format{FormatTable, FormatNormal, FormatWide, FormatCustom, FormatMarkdown, FormatCSV, FormatJSON, FormatYAML}

// ParseFormat returns the Format named s.
func ParseFormat(s string) (Format, error) {
	if f := Format(s); slices.Contains(formats, f) {
		return f, nil
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("%w: %q (want %s)", ErrUnknownFormat, s, strings.Join(names, ", "))
}

// Columns of pluto's tabular formats, by their header.
const (
	ColumnName                   = "NAME"
	ColumnFilePath               = "FILEPATH"
	ColumnNamespace              = "NAMESPACE"
	ColumnKind                   = "KIND"
	ColumnVersion                = "VERSION"
	ColumnReplacement            = "REPLACEMENT"
	ColumnDeprecated             = "DEPRECATED"
	ColumnDeprecatedIn           = "DEPRECATED IN"
	ColumnRemoved                = "REMOVED"
	ColumnRemovedIn              = "REMOVED IN"
	ColumnComponent              = "COMPONENT"
	ColumnReplacementAvailable   = "REPL AVAIL"
	ColumnReplacementAvailableIn = "REPL AVAIL IN"
	// ColumnLine and ColumnState are kdave's: the line the document starts
	// on (with the List item: "12[3]") and the State.
	ColumnLine  = "LINE"
	ColumnState = "STATE"
)

// columns maps each column to its value for a finding.
var columns = map[string]func(f *Finding) string{
	ColumnName:     func(f *Finding) string { return f.Name },
	ColumnFilePath: func(f *Finding) string { return f.Source },
	ColumnNamespace: func(f *Finding) string {
		if f.Namespace == "" {
			return "<UNKNOWN>"
		}
		return f.Namespace
	},
	ColumnKind:                   func(f *Finding) string { return f.Kind },
	ColumnVersion:                func(f *Finding) string { return f.APIVersion },
	ColumnReplacement:            func(f *Finding) string { return f.Rule.ReplacementAPI },
	ColumnDeprecated:             func(f *Finding) string { return strconv.FormatBool(f.Deprecated()) },
	ColumnDeprecatedIn:           func(f *Finding) string { return f.Rule.DeprecatedIn.String() },
	ColumnRemoved:                func(f *Finding) string { return strconv.FormatBool(f.Removed()) },
	ColumnRemovedIn:              func(f *Finding) string { return f.Rule.RemovedIn.String() },
	ColumnComponent:              func(f *Finding) string { return f.Rule.Component },
	ColumnReplacementAvailable:   func(f *Finding) string { return strconv.FormatBool(f.ReplacementAvailable) },
	ColumnReplacementAvailableIn: func(f *Finding) string { return f.Rule.ReplacementAvailableIn.String() },
	ColumnLine:                   func(f *Finding) string { return f.lineText() },
	ColumnState:                  func(f *Finding) string { return f.State.String() },
}

// The column lists are unexported so that no caller can change a
// format's columns for everyone.
var (
	// normalColumns are the columns of pluto's default output.
	normalColumns = []string{ColumnName, ColumnKind, ColumnVersion, ColumnReplacement, ColumnRemoved, ColumnDeprecated, ColumnReplacementAvailable}
	// wideColumns are the columns of pluto's -o wide, and the default of
	// -o markdown and -o csv.
	wideColumns = []string{ColumnName, ColumnNamespace, ColumnKind, ColumnVersion, ColumnReplacement, ColumnDeprecated,
		ColumnDeprecatedIn, ColumnRemoved, ColumnRemovedIn, ColumnReplacementAvailable, ColumnReplacementAvailableIn}
	// allColumns are the columns -columns accepts: pluto's, then kdave's.
	allColumns = []string{ColumnName, ColumnFilePath, ColumnNamespace, ColumnKind, ColumnVersion, ColumnReplacement,
		ColumnDeprecated, ColumnDeprecatedIn, ColumnRemoved, ColumnRemovedIn, ColumnComponent,
		ColumnReplacementAvailable, ColumnReplacementAvailableIn, ColumnLine, ColumnState}
)

// ParseColumns reads a list of column names as pluto's --columns does:
// case does not matter, and each must be one of the Column constants.
func ParseColumns(names []string) ([]string, error) {
	var out []string
	for _, n := range names {
		c := strings.ToUpper(strings.TrimSpace(n))
		if _, ok := columns[c]; !ok {
			return nil, fmt.Errorf("%w: %q (want %s)", ErrUnknownColumn, n, strings.Join(allColumns, ", "))
		}
		out = append(out, c)
	}
	return out, nil
}

// WriteOptions tunes Report.WriteWith.
type WriteOptions struct {
	Format Format
	// Columns are those of FormatCustom (required), FormatMarkdown and
	// FormatCSV (default FormatWide's), as ParseColumns returns them.
	Columns []string
	// NoHeaders leaves out the header line of the tabular formats.
	NoHeaders bool
}

// Write writes the report to w in format f with its default columns.
func (r *Report) Write(w io.Writer, f Format) error { return r.WriteWith(w, WriteOptions{Format: f}) }

// WriteWith writes the report to w as opts asks.
//
// FormatJSON and FormatYAML write pluto's layout, so that scripts reading
// pluto's output keep working:
//
//	{"items": [{"name", "filePath", "namespace",
//	            "api": {"version", "kind", "deprecated-in", "removed-in",
//	                    "replacement-api", "replacement-available-in", "component"},
//	            "deprecated", "removed", "replacementAvailable",
//	            ...kdave's: "line", "document", "item", "state", "target"}],
//	 "target-versions": {"k8s": "v1.37.0", ...},
//	 ...kdave's: "sources", "documents", "errors", "invalid"}
//
// "items" is left out when there is none, as pluto does. The tabular
// formats write no error: the caller reports Errors and Invalid (kdave
// check prints them on stderr); FormatTable writes them after the table.
func (r *Report) WriteWith(w io.Writer, opts WriteOptions) error {
	cols := opts.Columns
	switch opts.Format {
	case FormatTable:
		return r.WriteTable(w)
	case FormatJSON:
		b, err := json.MarshalIndent(r.plutoLayout(), "", "  ")
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	case FormatYAML:
		b, err := syaml.Marshal(r.plutoLayout())
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case FormatNormal:
		cols = normalColumns
	case FormatWide:
		cols = wideColumns
	case FormatCustom:
		if len(cols) == 0 {
			return fmt.Errorf("%w: -o custom needs columns", ErrUnknownColumn)
		}
	case FormatMarkdown, FormatCSV:
		if len(cols) == 0 {
			cols = wideColumns
		}
	default:
		return fmt.Errorf("%w: %q", ErrUnknownFormat, opts.Format)
	}
	if _, err := ParseColumns(cols); err != nil {
		return err
	}
	rows := make([][]string, 0, len(r.Findings)+1)
	if !opts.NoHeaders {
		rows = append(rows, cols)
	}
	for i := range r.Findings {
		row := make([]string, len(cols))
		for j, c := range cols {
			row[j] = columns[c](&r.Findings[i])
		}
		rows = append(rows, row)
	}
	switch opts.Format {
	case FormatCSV:
		cw := csv.NewWriter(w)
		if err := cw.WriteAll(rows); err != nil {
			return err
		}
		return cw.Error()
	case FormatMarkdown:
		return writeMarkdown(w, rows, !opts.NoHeaders)
	}
	if len(r.Findings) == 0 {
		_, err := fmt.Fprintln(w, "There were no resources found with known deprecated apiVersions.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 15, 2, ' ', 0)
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// writeMarkdown writes rows as a Markdown table, columns padded to their
// width; the first row is the header when header is set.
func writeMarkdown(w io.Writer, rows [][]string, header bool) error {
	if len(rows) == 0 {
		return nil
	}
	widths := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, cell := range row {
			widths[i] = max(widths[i], len(cell))
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		for i, cell := range cells {
			fmt.Fprintf(&b, "| %-*s ", widths[i], strings.ReplaceAll(cell, "|", `\|`))
		}
		b.WriteString("|\n")
	}
	for i, row := range rows {
		line(row)
		if i == 0 && header {
			for _, n := range widths {
				b.WriteString("|" + strings.Repeat("-", n+2))
			}
			b.WriteString("|\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// plutoItem is a finding in pluto's JSON and YAML layout, with kdave's
// fields after pluto's.
type plutoItem struct {
	Name                 string  `json:"name,omitempty"`
	FilePath             string  `json:"filePath,omitempty"`
	Namespace            string  `json:"namespace,omitempty"`
	API                  Rule    `json:"api"`
	Deprecated           bool    `json:"deprecated"`
	Removed              bool    `json:"removed"`
	ReplacementAvailable bool    `json:"replacementAvailable"`
	Line                 int     `json:"line,omitempty"`
	Document             int     `json:"document"`
	Item                 int     `json:"item,omitempty"`
	State                State   `json:"state"`
	Target               Version `json:"target"`
	// Kind and APIVersion are the object's, when they differ from the
	// rule's (a typed list, a rule for a whole API group).
	Kind       string `json:"objectKind,omitempty"`
	APIVersion string `json:"objectApiVersion,omitempty"`
}

type plutoLayout struct {
	Items          []plutoItem        `json:"items,omitempty"`
	TargetVersions map[string]Version `json:"target-versions"`
	Sources        int                `json:"sources"`
	Documents      int                `json:"documents"`
	Errors         []*DocumentError   `json:"errors"`
	Invalid        []*DocumentError   `json:"invalid"`
	Skipped        []Skipped          `json:"skipped,omitempty"`
}

func (r *Report) plutoLayout() *plutoLayout {
	out := &plutoLayout{TargetVersions: r.Targets, Sources: r.Sources, Documents: r.Documents,
		Errors: r.Errors, Invalid: r.Invalid, Skipped: r.Skipped}
	if out.TargetVersions == nil {
		out.TargetVersions = map[string]Version{ComponentKubernetes: r.Target}
	}
	if out.Errors == nil {
		out.Errors = []*DocumentError{}
	}
	if out.Invalid == nil {
		out.Invalid = []*DocumentError{}
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		it := plutoItem{Name: f.Name, FilePath: f.Source, Namespace: f.Namespace, API: f.Rule,
			Deprecated: f.Deprecated(), Removed: f.Removed(), ReplacementAvailable: f.ReplacementAvailable,
			Line: f.Line, Document: f.Index, Item: f.Item, State: f.State, Target: f.Target}
		if f.Kind != f.Rule.Kind {
			it.Kind = f.Kind
		}
		if f.APIVersion != f.Rule.APIVersion {
			it.APIVersion = f.APIVersion
		}
		out.Items = append(out.Items, it)
	}
	return out
}

// WriteTable writes the findings as kdave's table, then the errors and
// invalid documents and a summary line.
func (r *Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(r.Findings) > 0 {
		fmt.Fprintln(tw, "SOURCE\tLINE\tKIND\tNAME\tAPI VERSION\tREPLACEMENT\tDEPRECATED IN\tREMOVED IN\tSTATE")
	}
	for i := range r.Findings {
		f := &r.Findings[i]
		name := f.Name
		if f.Namespace != "" {
			name = f.Namespace + "/" + f.Name
		}
		repl := f.Rule.ReplacementAPI
		switch {
		case repl == "":
			repl = "none"
		case !f.ReplacementAvailable && f.Rule.ReplacementAvailableIn.IsZero():
			repl += " (not known to be served)"
		case !f.ReplacementAvailable:
			repl += " (from " + f.Rule.ReplacementAvailableIn.String() + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.Source, f.lineText(), f.Kind, dash(name),
			f.APIVersion, repl, dash(f.Rule.DeprecatedIn.String()), dash(f.Rule.RemovedIn.String()), f.State)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := r.WriteErrors(w); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d finding(s), %d error(s) in %d document(s) of %d source(s); target Kubernetes %s\n",
		len(r.Findings), len(r.Errors)+len(r.Invalid), r.Documents, r.Sources, r.Target)
	return err
}

// WriteErrors writes one line per source that could not be read
// ("error: ...") and per invalid document ("invalid: ...").
func (r *Report) WriteErrors(w io.Writer) error {
	for _, e := range r.Errors {
		if _, err := fmt.Fprintf(w, "error: %v\n", e); err != nil {
			return err
		}
	}
	for _, e := range r.Invalid {
		if _, err := fmt.Fprintf(w, "invalid: %v\n", e); err != nil {
			return err
		}
	}
	return nil
}

// lineText is the finding's line, with the List item: "12" or "12[3]".
func (f *Finding) lineText() string {
	if f.Item > 0 {
		return fmt.Sprintf("%d[%d]", f.Line, f.Item)
	}
	return strconv.Itoa(f.Line)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
