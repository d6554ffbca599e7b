package deprecation

import (
	"bytes"
	"context"
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

func TestReportExitCode(t *testing.T) {
	deprecated := Finding{State: StateDeprecated, ReplacementAvailable: true}
	soon := Finding{State: StateRemovalSoon, ReplacementAvailable: true}
	removed := Finding{State: StateRemoved, ReplacementAvailable: true}
	noRepl := Finding{State: StateDeprecated}
	docErr := &DocumentError{Source: "x", Err: errors.New("bad")}
	tests := []struct {
		name     string
		findings []Finding
		errs     []*DocumentError
		want     int
	}{
		{"clean", nil, nil, ExitOK},
		{"error", nil, []*DocumentError{docErr}, ExitError},
		{"deprecated", []Finding{deprecated}, nil, ExitDeprecated},
		{"removal soon", []Finding{soon}, nil, ExitDeprecated},
		{"deprecated beats error", []Finding{deprecated}, []*DocumentError{docErr}, ExitDeprecated},
		{"removed beats deprecated", []Finding{deprecated, removed, soon}, nil, ExitRemoved},
		{"no replacement beats removed", []Finding{removed, noRepl}, nil, ExitNoReplacement},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Report{Findings: tt.findings, Errors: tt.errs}
			assert.Equal(t, tt.want, r.ExitCode())
		})
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"table", "json", "yaml"} {
		f, err := ParseFormat(s)
		require.NoError(t, err)
		assert.Equal(t, Format(s), f)
	}
	_, err := ParseFormat("xml")
	require.ErrorIs(t, err, ErrUnknownFormat)
	require.ErrorIs(t, (&Report{}).Write(&bytes.Buffer{}, "xml"), ErrUnknownFormat)
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
	assert.Contains(t, out, "error: manifests/broken.yaml: document 1 (line 8): yaml: line 4: did not find expected ',' or ']'\n")
	assert.Contains(t, out, "error: missing.yaml: file does not exist\n")
	assert.True(t, strings.HasSuffix(out, "7 finding(s), 2 error(s) in 11 document(s) of 2 source(s); target Kubernetes v1.25.0\n"), out)

	buf.Reset()
	require.NoError(t, (&Report{Target: v("v1.30")}).WriteTable(&buf))
	assert.Equal(t, "0 finding(s), 0 error(s) in 0 document(s) of 0 source(s); target Kubernetes v1.30.0\n", buf.String())
}

func TestReportWriteJSONAndYAML(t *testing.T) {
	rep := testReport(t)
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
				Target   string `json:"target"`
				Findings []struct {
					Source, APIVersion, Kind, Name, Namespace, State string
					Index, Line                                      int
					ReplacementAvailable                             bool
					Rule                                             map[string]string
				} `json:"findings"`
				Errors []struct {
					Source string `json:"source"`
					Index  int    `json:"index"`
					Line   int    `json:"line"`
					Error  string `json:"error"`
				} `json:"errors"`
			}
			require.NoError(t, json.Unmarshal(b, &got), string(b))
			assert.Equal(t, "v1.25.0", got.Target)
			require.Len(t, got.Findings, 7)
			first := got.Findings[0]
			assert.Equal(t, "manifests/legacy-app.yaml", first.Source)
			assert.Equal(t, "extensions/v1beta1", first.APIVersion)
			assert.Equal(t, "removed", first.State)
			assert.Equal(t, 10, first.Line)
			assert.True(t, first.ReplacementAvailable)
			assert.Equal(t, map[string]string{
				"version": "extensions/v1beta1", "kind": "Deployment", "deprecated-in": "v1.8.0",
				"removed-in": "v1.16.0", "replacement-api": "apps/v1", "replacement-available-in": "v1.9.0", "component": "k8s",
			}, first.Rule, "rules print in pluto's format")
			require.Len(t, got.Errors, 2)
			assert.Equal(t, 1, got.Errors[0].Index)
			assert.Equal(t, -1, got.Errors[1].Index)
			assert.Equal(t, "file does not exist", got.Errors[1].Error)
		})
	}
	var buf bytes.Buffer
	require.NoError(t, (&Report{}).Write(&buf, FormatJSON))
	assert.Contains(t, buf.String(), `"findings": []`)
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
	// In v1.22 the broken document of broken.yaml (autoscaling/v2beta2,
	// deprecated in 1.23) cannot be affected, so it is not parsed.
	require.Len(t, rep.Errors, 1)
	assert.Equal(t, "testdata/nope.yaml", rep.Errors[0].Source)
	assert.ErrorIs(t, rep.Errors[0], os.ErrNotExist)
	assert.Equal(t, ExitNoReplacement, rep.ExitCode(), "PodSecurityPolicy has no replacement")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.CheckPaths(ctx, nil, "testdata/manifests")
	assert.ErrorIs(t, err, context.Canceled)
}
