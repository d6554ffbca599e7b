package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testdata = "../../../../deprecation/testdata/"

// run runs the lean binary's command line (no kdave-full features).
func run(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(context.Background(), args, IO{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut}, Features{})
	return code, out.String(), errOut.String()
}

const (
	cronJob = "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c, namespace: jobs}\n"
	psp     = "apiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: p}\n"
	hpa     = "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h}\n"
)

func TestIsChart(t *testing.T) {
	dir := t.TempDir()
	chart := filepath.Join(dir, "web")
	require.NoError(t, os.Mkdir(chart, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte("apiVersion: v2\nname: web\nversion: 0.1.0\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "web-0.1.0.tgz"), nil, 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "dir.tgz"), 0o755))
	for path, want := range map[string]bool{
		chart:                               true,
		dir:                                 false,
		filepath.Join(dir, "web-0.1.0.tgz"): true,
		filepath.Join(dir, "dir.tgz"):       false,
		filepath.Join(dir, "none.tar.gz"):   false,
	} {
		assert.Equal(t, want, isChart(path), path)
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantOut    []string
		wantStderr string
	}{
		{"no command", nil, "", 1, nil, "usage: kdave <command>"},
		{"unknown command", []string{"lint"}, "", 1, nil, `unknown command "lint"`},
		{"help", []string{"help"}, "", 0, []string{"list-versions  print the rules"}, ""},
		{"check help", []string{"check", "-h"}, "", 0, nil, "-ignore-unavailable-replacements"},
		{"no paths", []string{"check"}, "", 1, nil, "usage: kdave check"},
		{"malformed target", []string{"check", "-target", "latest", "-"}, "", 1, nil, "invalid version"},
		{"unknown target", []string{"check", "-target", "v1.38", "-"}, "", 1, nil, "Kubernetes v1.38.0 is newer than the rules know (they were reviewed against v1.37.0)"},
		{"unknown target through -t", []string{"check", "-t", "k8s=v2.0", "-"}, "", 1, nil, "unknown target version"},
		{"malformed -t", []string{"check", "-t", "k8s", "-"}, "", 1, nil, "want key=value"},
		{"unknown component in -t", []string{"check", "-t", "linkerd=v2.0", "-"}, "", 1, nil, `unknown component: "linkerd"`},
		{"targets disagree", []string{"check", "-target", "v1.25", "-t", "k8s=v1.30", "-"}, "", 1, nil, "disagree"},
		{"bad format", []string{"check", "-o", "xml", "-"}, "", 1, nil, "unknown output format"},
		{"custom without columns", []string{"check", "-o", "custom", "-"}, "", 1, nil, "-o custom needs -columns"},
		{"bad column", []string{"check", "-o", "csv", "-columns", "NAME,COLOUR", "-"}, "", 1, nil, "unknown column"},
		{"missing rules file", []string{"check", "-rules", "nope.yaml", "-"}, "", 1, nil, "nope.yaml"},
		{"bad rules file", []string{"check", "-f", testdata + "rules/bad-field.yaml", "-"}, "", 1, nil, "invalid rules"},
		{"unknown component", []string{"check", "-components", "k8s,linkerd", "-"}, "", 1, nil, "unknown component"},
		{"clean", []string{"check", testdata + "manifests/current.yaml"}, "", 0, []string{"0 finding(s)", "target Kubernetes v1.37.0"}, ""},
		{"deprecated", []string{"check", "-target", "v1.21", "-"}, cronJob, 2, []string{"CronJob", "deprecated"}, ""},
		{"removed", []string{"check", "-target", "v1.25", "-"}, cronJob, 3, []string{"removed"}, ""},
		{"no replacement", []string{"check", "-target", "v1.25", "-"}, psp, 4, []string{"none"}, ""},
		{"unreadable", []string{"check", "nope.yaml"}, "", 1, []string{"error: nope.yaml"}, ""},
		{"invalid document does not change the exit code", []string{"check", "-"}, "a: [b\n", 0, []string{"invalid: -: document 0 (line 1)"}, ""},
		{"-fail-on-invalid", []string{"check", "-fail-on-invalid", "-"}, "a: [b\n", 1, nil, ""},
		{"directory", []string{"check", testdata + "manifests"}, "", 4, []string{"9 finding(s), 1 error(s) in 16 document(s) of 5 source(s)"}, ""},
		{"extra rules", []string{"check", "-rules", testdata + "rules/cert-manager.yaml", "-target", "v1.25", "-"},
			cronJob + "---\napiVersion: cert-manager.io/v1alpha2\nkind: Certificate\nmetadata: {name: tls}\n",
			4, []string{"v1.40.0", "cert-manager.io/v1alpha2", "not known to be served"}, ""},
		{"component rules built in", []string{"check", "-target", "v1.25", "-"},
			"apiVersion: cert-manager.io/v1alpha2\nkind: Certificate\nmetadata: {name: tls}\n", 2, []string{"Certificate", "removal-soon"}, ""},
		{"component target", []string{"check", "-t", "k8s=v1.25,cert-manager=v1.6.0", "-"},
			"apiVersion: cert-manager.io/v1alpha2\nkind: Certificate\nmetadata: {name: tls}\n", 3, []string{"removed"}, ""},
		{"components selected", []string{"check", "-components", "k8s", "-target", "v1.25", "-"},
			"apiVersion: cert-manager.io/v1alpha2\nkind: Certificate\nmetadata: {name: tls}\n", 0, []string{"0 finding(s)"}, ""},
		{"serve is kdave-full's", []string{"serve"}, "", 1, nil, "serve is not built into this binary"},
		{"-cluster is kdave-full's", []string{"check", "-cluster"}, "", 1, nil, "-cluster is not built into this binary"},
		{"-flux is kdave-full's", []string{"check", "-flux", "."}, "", 1, nil, "-flux is not built into this binary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := run(t, tt.stdin, tt.args...)
			assert.Equal(t, tt.wantCode, code, "stdout:\n%s\nstderr:\n%s", out, errOut)
			for _, w := range tt.wantOut {
				assert.Contains(t, out, w)
			}
			if tt.wantStderr != "" {
				assert.Contains(t, errOut, tt.wantStderr)
			}
		})
	}
}

// TestRunExitCodes runs pluto's exit-code flags through the command line,
// for each combination that tells them apart.
func TestRunExitCodes(t *testing.T) {
	tests := []struct {
		stdin string
		flags []string
		want  int
	}{
		{cronJob, nil, 3},
		{cronJob, []string{"-ignore-removals"}, 2},
		{cronJob, []string{"-ignore-removals", "-ignore-deprecations"}, 0},
		{cronJob, []string{"-ignore-deprecations"}, 3},
		{cronJob, []string{"-ignore-unavailable-replacements"}, 3},
		{hpa, nil, 2},
		{hpa, []string{"-ignore-deprecations"}, 0},
		{hpa, []string{"-only-show-removed"}, 0},
		{hpa, []string{"-r"}, 0},
		{psp, nil, 4},
		{psp, []string{"-ignore-unavailable-replacements"}, 3},
		{psp, []string{"-ignore-unavailable-replacements", "-ignore-removals"}, 2},
		{psp, []string{"-ignore-unavailable-replacements", "-ignore-removals", "-ignore-deprecations"}, 0},
		{psp, []string{"-ignore-removals", "-ignore-deprecations"}, 4},
		{hpa + "---\n" + cronJob, []string{"-only-show-removed"}, 3},
		{hpa + "---\n" + psp, []string{"-only-show-removed", "-ignore-unavailable-replacements"}, 3},
	}
	for _, tt := range tests {
		name := strings.Fields(tt.stdin)[3] + " " + strings.Join(tt.flags, " ")
		t.Run(name, func(t *testing.T) {
			code, out, errOut := run(t, tt.stdin, append(append([]string{"check", "-target", "v1.25"}, tt.flags...), "-")...)
			assert.Equal(t, tt.want, code, "%s%s", out, errOut)
		})
	}
}

// TestRunFlagsAfterPaths: flags go anywhere, as users type them; "--"
// ends them; pluto's attached shorthand values (-owide) work.
func TestRunFlagsAfterPaths(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "cron.yaml")
	require.NoError(t, os.WriteFile(file, []byte(cronJob), 0o644))
	dash := filepath.Join(dir, "-odd.yaml")
	require.NoError(t, os.WriteFile(dash, []byte(hpa), 0o644))

	code, out, errOut := run(t, "", "check", dir, "-o", "json", "-target", "v1.22")
	require.Equal(t, 2, code, errOut)
	var doc struct {
		Items   []struct{ Name string }
		Targets map[string]string `json:"target-versions"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc), out)
	assert.Equal(t, "v1.22.0", doc.Targets["k8s"])
	assert.Len(t, doc.Items, 1, "the HPA is not deprecated in 1.22")

	code, out, _ = run(t, "", "check", "-owide", file, "-tk8s=v1.25", "-H")
	assert.Equal(t, 3, code)
	assert.Equal(t, []string{"c", "jobs", "CronJob", "batch/v1beta1", "batch/v1", "true", "v1.21.0", "true", "v1.25.0", "true", "v1.21.0"}, strings.Fields(out))

	code, out, errOut = run(t, "", "check", "-target", "v1.25", "-o", "csv", "-columns", "NAME,FILEPATH", "--", dash, file)
	assert.Equal(t, 3, code, errOut)
	assert.Equal(t, "NAME,FILEPATH\nh,"+dash+"\nc,"+file+"\n", out)
}

func TestRunPlutoCommands(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cron.yaml"), []byte(cronJob), 0o644))

	// pluto's commands print pluto's output by default.
	code, out, _ := run(t, "", "detect-files", "-d", dir, "-t", "k8s=v1.25.0")
	assert.Equal(t, 3, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2)
	assert.Equal(t, []string{"NAME", "KIND", "VERSION", "REPLACEMENT", "REMOVED", "DEPRECATED", "REPL", "AVAIL"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"c", "CronJob", "batch/v1beta1", "batch/v1", "true", "true", "true"}, strings.Fields(lines[1]))

	code, out, _ = run(t, cronJob, "detect", "-", "-ojson", "--target-versions", "k8s=v1.25.0", "--ignore-removals")
	assert.Equal(t, 2, code, "removed, and deprecated before")
	assert.Contains(t, out, `"deprecated": true`)

	t.Chdir(dir)
	code, out, _ = run(t, "", "detect-files", "--target-versions=k8s=v1.20.0")
	assert.Equal(t, 0, code, "the current directory by default")
	assert.Equal(t, "There were no resources found with known deprecated apiVersions.\n", out)

	code, _, errOut := run(t, "", "detect-helm")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "-cluster is not built into this binary")
}

func TestRunOutputs(t *testing.T) {
	in := cronJob + "---\n" + hpa + "---\nbroken: [\n"
	code, out, errOut := run(t, in, "check", "-target", "v1.25", "-o", "markdown", "-columns", "kind,name", "-")
	assert.Equal(t, 3, code)
	assert.Equal(t, "| KIND                    | NAME |\n|-------------------------|------|\n| CronJob                 | c    |\n| HorizontalPodAutoscaler | h    |\n", out)
	assert.Equal(t, "kdave: invalid: -: document 2 (line 9): yaml: line 1: did not find expected node content\n", errOut,
		"problems go to stderr, stdout stays parseable")

	_, out, _ = run(t, in, "check", "-target", "v1.25", "-o", "csv", "-")
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	assert.Equal(t, []string{"NAME", "NAMESPACE", "KIND", "VERSION", "REPLACEMENT", "DEPRECATED", "DEPRECATED IN", "REMOVED", "REMOVED IN", "REPL AVAIL", "REPL AVAIL IN"}, rows[0])
	assert.Equal(t, []string{"h", "<UNKNOWN>", "HorizontalPodAutoscaler", "autoscaling/v2beta2", "autoscaling/v2", "true", "v1.23.0", "false", "v1.26.0", "true", "v1.23.0"}, rows[2])

	_, out, _ = run(t, in, "check", "-target", "v1.25", "-o", "yaml", "-")
	assert.Contains(t, out, "target-versions:\n  cert-manager: v1.5.3\n  istio: v1.11.0\n  k8s: v1.25.0\n")
	assert.Contains(t, out, "- api:\n    component: k8s\n")

	_, out, _ = run(t, in, "check", "-target", "v1.25", "-no-footer", "-")
	assert.NotContains(t, out, "finding(s)")
	assert.Contains(t, out, "invalid: -: document 2")
}

func TestRunVerbose(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".hidden"), []byte(cronJob), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "blob.bin"), []byte{0x7f, 'E', 'L', 'F', 0, 0, 1}, 0o644))
	code, out, errOut := run(t, "", "check", "-v", "-target", "v1.25", dir)
	assert.Equal(t, 3, code)
	assert.Contains(t, out, ".hidden", "hidden files are read")
	assert.Contains(t, errOut, "kdave: skipped "+filepath.Join(dir, "blob.bin")+": binary (NUL bytes in no YAML encoding)\n")
	assert.Contains(t, errOut, "kdave: 1 source(s), 1 document(s), 1 finding(s), 0 unreadable, 0 invalid, 1 skipped; target Kubernetes v1.25.0\n")
}

func TestRunListVersions(t *testing.T) {
	code, out, _ := run(t, "", "list-versions", "-components", "cert-manager")
	assert.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	assert.Equal(t, []string{"KIND", "NAME", "DEPRECATED", "IN", "REMOVED", "IN", "REPLACEMENT", "REPL", "AVAIL", "IN", "COMPONENT"}, strings.Fields(lines[0]))
	assert.Len(t, lines, 1+24)

	code, out, _ = run(t, "", "list-versions", "-o", "json", "-f", testdata+"rules/cert-manager.yaml", "-components", "k8s")
	require.Equal(t, 0, code)
	var doc struct {
		Rules []struct {
			Version, Kind string
			RemovedIn     string `json:"removed-in"`
		} `json:"deprecated-versions"`
		Targets map[string]string `json:"target-versions"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &doc))
	assert.Equal(t, map[string]string{"k8s": "v1.37.0"}, doc.Targets)
	for _, r := range doc.Rules {
		if r.Version == "batch/v1beta1" && r.Kind == "CronJob" {
			assert.Equal(t, "v1.40.0", r.RemovedIn, "the extra file's row wins")
		}
	}
	code, _, errOut := run(t, "", "list-versions", "-o", "csv")
	assert.Equal(t, 1, code)
	assert.Contains(t, errOut, "unknown output format")
}
