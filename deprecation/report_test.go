package deprecation

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	syaml "sigs.k8s.io/yaml"
)

// exitFindings are findings of each kind pluto's exit code tells apart,
// in target v1.25.
func exitFindings(t *testing.T) map[string]Finding {
	t.Helper()
	c := newChecker(t, "v1.25.0")
	find := func(apiVersion, kind string) Finding {
		f, ok := c.Object("x.yaml", apiVersion, kind, "n", "")
		require.True(t, ok, "%s %s", apiVersion, kind)
		return f
	}
	return map[string]Finding{
		// deprecated in 1.21, removed in 1.25, replacement served
		"removed": find("batch/v1beta1", "CronJob"),
		// deprecated in 1.23, removed in 1.26
		"soon": find("autoscaling/v2beta2", "HorizontalPodAutoscaler"),
		// removed in 1.25, no replacement
		"removed-no-replacement": find("policy/v1beta1", "PodSecurityPolicy"),
		// alpha, removed in 1.27 without a deprecation
		"alpha-soon": find("resource.k8s.io/v1alpha1", "ResourceClaim"),
		// alpha, removed in 1.21 without a deprecation, replacement served
		"alpha-removed": find("batch/v2alpha1", "CronJob"),
	}
}

// TestReportExitCode holds the exit code to pluto's GetReturnCode for each
// combination of findings and ignore flags: 2 for a deprecated API, 3 for a
// removed one, 4 for one without a replacement in the target, the highest
// not ignored winning; a removed API deprecated first is both.
func TestReportExitCode(t *testing.T) {
	fs := exitFindings(t)
	readErr := &DocumentError{Source: "x", Index: -1, Err: errors.New("unreadable")}
	invalid := &DocumentError{Source: "y", Index: 0, Line: 1, Err: errors.New("bad yaml")}
	var (
		none   = ExitOptions{}
		igDep  = ExitOptions{IgnoreDeprecations: true}
		igRem  = ExitOptions{IgnoreRemovals: true}
		igRepl = ExitOptions{IgnoreUnavailableReplacements: true}
		igAll  = ExitOptions{IgnoreDeprecations: true, IgnoreRemovals: true, IgnoreUnavailableReplacements: true}
		strict = ExitOptions{FailOnInvalid: true}
	)
	tests := []struct {
		name     string
		findings []string
		errs     []*DocumentError
		invalid  []*DocumentError
		opts     ExitOptions
		want     int
	}{
		{"clean", nil, nil, nil, none, ExitOK},
		{"unreadable source", nil, []*DocumentError{readErr}, nil, none, ExitError},
		{"invalid document does not count", nil, nil, []*DocumentError{invalid}, none, ExitOK},
		{"invalid document with -fail-on-invalid", nil, nil, []*DocumentError{invalid}, strict, ExitError},
		{"deprecated", []string{"soon"}, nil, nil, none, ExitDeprecated},
		{"deprecated, ignored", []string{"soon"}, nil, nil, igDep, ExitOK},
		{"deprecated, removals ignored", []string{"soon"}, nil, nil, igRem, ExitDeprecated},
		{"removal soon without deprecation", []string{"alpha-soon"}, nil, nil, none, ExitNoReplacement},
		{"removal soon without deprecation, replacement ignored", []string{"alpha-soon"}, nil, nil, igRepl, ExitDeprecated},
		{"removed", []string{"removed"}, nil, nil, none, ExitRemoved},
		{"removed, removals ignored: still deprecated", []string{"removed"}, nil, nil, igRem, ExitDeprecated},
		{"removed, deprecations ignored", []string{"removed"}, nil, nil, igDep, ExitRemoved},
		{"removed, both ignored", []string{"removed"}, nil, nil, ExitOptions{IgnoreDeprecations: true, IgnoreRemovals: true}, ExitOK},
		{"removed without deprecation, removals ignored", []string{"alpha-removed"}, nil, nil, igRem, ExitOK},
		{"no replacement", []string{"removed-no-replacement"}, nil, nil, none, ExitNoReplacement},
		{"no replacement, ignored", []string{"removed-no-replacement"}, nil, nil, igRepl, ExitRemoved},
		{"no replacement, removals ignored", []string{"removed-no-replacement"}, nil, nil, igRem, ExitNoReplacement},
		{"no replacement, all ignored", []string{"removed-no-replacement"}, nil, nil, igAll, ExitOK},
		{"removed beats deprecated", []string{"soon", "removed"}, nil, nil, none, ExitRemoved},
		{"no replacement beats removed", []string{"removed", "removed-no-replacement"}, nil, nil, none, ExitNoReplacement},
		{"deprecated beats unreadable", []string{"soon"}, []*DocumentError{readErr}, nil, none, ExitDeprecated},
		{"all ignored, unreadable still 1", []string{"removed"}, []*DocumentError{readErr}, nil, igAll, ExitError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Errors: tt.errs, Invalid: tt.invalid}
			for _, name := range tt.findings {
				r.Findings = append(r.Findings, fs[name])
			}
			assert.Equal(t, tt.want, r.ExitCodeWith(tt.opts))
			if tt.opts == none {
				assert.Equal(t, tt.want, r.ExitCode())
			}
		})
	}
}

func TestReportOnlyRemoved(t *testing.T) {
	fs := exitFindings(t)
	r := &Report{Findings: []Finding{fs["soon"], fs["removed"], fs["alpha-soon"], fs["removed-no-replacement"]}}
	only := r.OnlyRemoved()
	require.Len(t, only.Findings, 2)
	assert.Equal(t, "CronJob", only.Findings[0].Kind)
	assert.Equal(t, "PodSecurityPolicy", only.Findings[1].Kind)
	assert.Len(t, r.Findings, 4, "the report is not changed")
	assert.Equal(t, ExitRemoved, only.ExitCodeWith(ExitOptions{IgnoreUnavailableReplacements: true}))
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"table", "normal", "wide", "custom", "markdown", "csv", "json", "yaml"} {
		f, err := ParseFormat(s)
		require.NoError(t, err)
		assert.Equal(t, Format(s), f)
	}
	_, err := ParseFormat("xml")
	require.ErrorIs(t, err, ErrUnknownFormat)
	require.ErrorIs(t, (&Report{}).Write(&bytes.Buffer{}, "xml"), ErrUnknownFormat)
	require.ErrorIs(t, (&Report{}).Write(&bytes.Buffer{}, FormatCustom), ErrUnknownColumn, "custom needs columns")

	cols, err := ParseColumns([]string{"name", " Deprecated In", "REPL AVAIL", "line"})
	require.NoError(t, err)
	assert.Equal(t, []string{"NAME", "DEPRECATED IN", "REPL AVAIL", "LINE"}, cols)
	_, err = ParseColumns([]string{"NAME", "COLOUR"})
	require.ErrorIs(t, err, ErrUnknownColumn)
}

func testReport(t *testing.T) *Report {
	t.Helper()
	c := newChecker(t, "v1.25.0")
	rep := &Report{Target: c.Target()}
	for _, name := range []string{"manifests/legacy-app.yaml", "manifests/broken.yaml"} {
		res, err := c.Check(context.Background(), name, []byte(readTestdata(t, name)))
		require.NoError(t, err)
		rep.Add(res)
	}
	rep.AddError("missing.yaml", os.ErrNotExist)
	return rep
}

func TestReportWriteTable(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, testReport(t).WriteTable(&buf))
	out := buf.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Equal(t, []string{"SOURCE", "LINE", "KIND", "NAME", "API", "VERSION", "REPLACEMENT", "DEPRECATED", "IN", "REMOVED", "IN", "STATE"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"manifests/legacy-app.yaml", "10", "Deployment", "shop/shop-web", "extensions/v1beta1", "apps/v1", "v1.8.0", "v1.16.0", "removed"}, strings.Fields(lines[1]))
	assert.Equal(t, []string{"manifests/legacy-app.yaml", "88", "PodSecurityPolicy", "shop-restricted", "policy/v1beta1", "none", "v1.21.0", "v1.25.0", "removed"}, strings.Fields(lines[5]))
	assert.Equal(t, []string{"manifests/broken.yaml", "14", "EndpointSlice", "jobs/web-abc", "discovery.k8s.io/v1beta1", "discovery.k8s.io/v1", "v1.21.0", "v1.25.0", "removed"}, strings.Fields(lines[7]))
	assert.Contains(t, out, "invalid: manifests/broken.yaml: document 1 (line 8): yaml: line 4: did not find expected ',' or ']'\n")
	assert.Contains(t, out, "error: missing.yaml: file does not exist\n")
	assert.True(t, strings.HasSuffix(out, "7 finding(s), 2 error(s) in 11 document(s) of 2 source(s); target Kubernetes v1.25.0\n"), out)

	buf.Reset()
	require.NoError(t, (&Report{Target: v("v1.30")}).WriteTable(&buf))
	assert.Equal(t, "0 finding(s), 0 error(s) in 0 document(s) of 0 source(s); target Kubernetes v1.30.0\n", buf.String())
}

func TestReportWritePlutoTables(t *testing.T) {
	rep := testReport(t)
	write := func(opts WriteOptions) string {
		var buf bytes.Buffer
		require.NoError(t, rep.WriteWith(&buf, opts))
		return buf.String()
	}
	fields := func(line string) []string { return strings.Split(strings.Join(strings.Fields(line), " "), " ") }

	lines := strings.Split(strings.TrimSpace(write(WriteOptions{Format: FormatNormal})), "\n")
	assert.Equal(t, "NAME KIND VERSION REPLACEMENT REMOVED DEPRECATED REPL AVAIL", strings.Join(fields(lines[0]), " "))
	assert.Equal(t, "shop-web Deployment extensions/v1beta1 apps/v1 true true true", strings.Join(fields(lines[1]), " "))
	assert.Len(t, lines, 1+7)

	lines = strings.Split(strings.TrimSpace(write(WriteOptions{Format: FormatWide, NoHeaders: true})), "\n")
	assert.Len(t, lines, 7, "no header")
	assert.Equal(t, "shop-restricted <UNKNOWN> PodSecurityPolicy policy/v1beta1 true v1.21.0 true v1.25.0 false",
		strings.Join(fields(lines[4]), " "), "no replacement: the column is empty")

	lines = strings.Split(strings.TrimSpace(write(WriteOptions{Format: FormatCustom, Columns: []string{"KIND", "FILEPATH", "LINE"}})), "\n")
	assert.Equal(t, "KIND FILEPATH LINE", strings.Join(fields(lines[0]), " "))
	assert.Equal(t, "Deployment manifests/legacy-app.yaml 10", strings.Join(fields(lines[1]), " "))

	csvOut := write(WriteOptions{Format: FormatCSV})
	rows, err := csv.NewReader(strings.NewReader(csvOut)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 8)
	assert.Equal(t, wideColumns, rows[0])
	assert.Equal(t, []string{"shop-web", "shop", "Deployment", "extensions/v1beta1", "apps/v1", "true", "v1.8.0", "true", "v1.16.0", "true", "v1.9.0"}, rows[1])
	csvOut = write(WriteOptions{Format: FormatCSV, Columns: []string{"KIND", "NAMESPACE"}, NoHeaders: true})
	assert.True(t, strings.HasPrefix(csvOut, "Deployment,shop\n"), csvOut)

	md := strings.Split(strings.TrimSpace(write(WriteOptions{Format: FormatMarkdown, Columns: []string{"NAME", "KIND"}})), "\n")
	require.Len(t, md, 2+7)
	assert.Equal(t, "| NAME            | KIND                |", md[0])
	assert.Equal(t, "|-----------------|---------------------|", md[1])
	assert.Equal(t, "| shop-web        | Deployment          |", md[2])

	empty := &Report{Target: v("v1.25")}
	var buf bytes.Buffer
	require.NoError(t, empty.Write(&buf, FormatNormal))
	assert.Equal(t, "There were no resources found with known deprecated apiVersions.\n", buf.String())
}

// TestReportWriteJSONAndYAML holds the JSON and YAML layout to pluto's,
// whose field names scripts parse.
func TestReportWriteJSONAndYAML(t *testing.T) {
	rep := testReport(t)
	rep.Targets = map[string]Version{"k8s": v("v1.25.0"), "cert-manager": v("v1.5.3")}
	for _, f := range []Format{FormatJSON, FormatYAML} {
		t.Run(string(f), func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, rep.Write(&buf, f))
			b := buf.Bytes()
			if f == FormatYAML {
				var err error
				b, err = syaml.YAMLToJSON(b)
				require.NoError(t, err)
			}
			var got struct {
				Items []struct {
					Name, FilePath, Namespace string
					API                       map[string]string `json:"api"`
					Deprecated, Removed       bool
					ReplacementAvailable      bool `json:"replacementAvailable"`
					Line, Document            int
					State, Target             string
				} `json:"items"`
				TargetVersions  map[string]string `json:"target-versions"`
				Errors, Invalid []struct {
					Source string `json:"source"`
					Index  int    `json:"index"`
					Line   int    `json:"line"`
					Error  string `json:"error"`
				}
			}
			require.NoError(t, json.Unmarshal(b, &got), string(b))
			assert.Equal(t, map[string]string{"k8s": "v1.25.0", "cert-manager": "v1.5.3"}, got.TargetVersions)
			require.Len(t, got.Items, 7)
			first := got.Items[0]
			assert.Equal(t, "shop-web", first.Name)
			assert.Equal(t, "manifests/legacy-app.yaml", first.FilePath)
			assert.Equal(t, "shop", first.Namespace)
			assert.Equal(t, map[string]string{
				"version": "extensions/v1beta1", "kind": "Deployment", "deprecated-in": "v1.8.0",
				"removed-in": "v1.16.0", "replacement-api": "apps/v1", "replacement-available-in": "v1.9.0", "component": "k8s",
			}, first.API, "pluto's api object")
			assert.True(t, first.Deprecated)
			assert.True(t, first.Removed)
			assert.True(t, first.ReplacementAvailable)
			assert.Equal(t, 10, first.Line)
			assert.Equal(t, 1, first.Document)
			assert.Equal(t, "removed", first.State)
			assert.Equal(t, "v1.25.0", first.Target)
			assert.False(t, got.Items[4].ReplacementAvailable, "PodSecurityPolicy")
			require.Len(t, got.Errors, 1)
			assert.Equal(t, -1, got.Errors[0].Index)
			assert.Equal(t, "file does not exist", got.Errors[0].Error)
			require.Len(t, got.Invalid, 1)
			assert.Equal(t, 1, got.Invalid[0].Index)
			assert.Equal(t, 8, got.Invalid[0].Line)
		})
	}
	var buf bytes.Buffer
	require.NoError(t, (&Report{Target: v("v1.30")}).Write(&buf, FormatJSON))
	assert.NotContains(t, buf.String(), `"items"`, "left out when empty, as pluto does")
	assert.Contains(t, buf.String(), `"k8s": "v1.30.0"`)
}

func TestCheckPaths(t *testing.T) {
	c := newChecker(t, "v1.22.0")
	stdin := strings.NewReader("apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: from-stdin}\n")
	rep, err := c.CheckPaths(context.Background(), stdin, "testdata/manifests", Stdin, "testdata/nope.yaml")
	require.NoError(t, err)

	assert.Equal(t, v("v1.22.0"), rep.Target)
	assert.Equal(t, 6, rep.Sources, "five files and stdin")
	var sources []string
	for _, f := range rep.Findings {
		if len(sources) == 0 || sources[len(sources)-1] != f.Source {
			sources = append(sources, f.Source)
		}
	}
	assert.Equal(t, []string{
		filepath.Join("testdata", "manifests", "broken.yaml"),
		filepath.Join("testdata", "manifests", "cluster-dump.json"),
		filepath.Join("testdata", "manifests", "legacy-app.yaml"),
		"-",
	}, sources)
	assert.Len(t, rep.Findings, 2+1+5+1)
	require.Len(t, rep.Errors, 1)
	assert.Equal(t, "testdata/nope.yaml", rep.Errors[0].Source)
	assert.ErrorIs(t, rep.Errors[0], os.ErrNotExist)
	// In v1.22 the broken document of broken.yaml (autoscaling/v2beta2,
	// deprecated in 1.23) cannot be affected; it is reported all the same.
	require.Len(t, rep.Invalid, 1)
	assert.Equal(t, filepath.Join("testdata", "manifests", "broken.yaml"), rep.Invalid[0].Source)
	assert.Equal(t, 8, rep.Invalid[0].Line)
	assert.Equal(t, ExitNoReplacement, rep.ExitCode(), "PodSecurityPolicy has no replacement")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.CheckPaths(ctx, nil, "testdata/manifests")
	assert.ErrorIs(t, err, context.Canceled)
}
