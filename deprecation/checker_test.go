package deprecation

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// short is the part of a Finding the tests compare.
type short struct {
	Index, Line, Item                 int
	APIVersion, Kind, Name, Namespace string
	State                             State
}

func shorten(fs []Finding) []short {
	var out []short
	for _, f := range fs {
		out = append(out, short{f.Index, f.Line, f.Item, f.APIVersion, f.Kind, f.Name, f.Namespace, f.State})
	}
	return out
}

// docErr is the part of a DocumentError the tests compare.
type docErr struct{ Index, Line int }

func shortenErrs(es []*DocumentError) []docErr {
	var out []docErr
	for _, e := range es {
		out = append(out, docErr{e.Index, e.Line})
	}
	return out
}

func newChecker(t testing.TB, target string) *Checker {
	t.Helper()
	var opts Options
	if target != "" {
		opts.Target = v(target)
	}
	c, err := NewChecker(nil, opts)
	require.NoError(t, err)
	return c
}

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	return string(b)
}

func TestCheck(t *testing.T) {
	const (
		removed    = StateRemoved
		deprecated = StateDeprecated
		soon       = StateRemovalSoon
	)
	tests := []struct {
		name         string
		target       string
		in           string
		want         []short
		wantErrs     []docErr
		docs, parsed int
	}{
		{
			name:   "multi-document YAML with comments and quoted values",
			target: "v1.22.0",
			in:     readTestdata(t, "manifests/legacy-app.yaml"),
			want: []short{
				{1, 10, 0, "extensions/v1beta1", "Deployment", "shop-web", "shop", removed},
				{3, 43, 0, "networking.k8s.io/v1beta1", "Ingress", "shop-web", "shop", removed},
				{4, 60, 0, "batch/v1beta1", "CronJob", "shop-cleanup", "shop", deprecated},
				{5, 77, 0, "policy/v1beta1", "PodDisruptionBudget", "shop-web", "shop", deprecated},
				{6, 88, 0, "policy/v1beta1", "PodSecurityPolicy", "shop-restricted", "", deprecated},
			},
			docs: 8, parsed: 5,
		},
		{
			name:   "same manifest, a release later",
			target: "v1.23.4",
			in:     readTestdata(t, "manifests/legacy-app.yaml"),
			want: []short{
				{1, 10, 0, "extensions/v1beta1", "Deployment", "shop-web", "shop", removed},
				{3, 43, 0, "networking.k8s.io/v1beta1", "Ingress", "shop-web", "shop", removed},
				{4, 60, 0, "batch/v1beta1", "CronJob", "shop-cleanup", "shop", soon},
				{5, 77, 0, "policy/v1beta1", "PodDisruptionBudget", "shop-web", "shop", soon},
				{6, 88, 0, "policy/v1beta1", "PodSecurityPolicy", "shop-restricted", "", soon},
			},
			docs: 8, parsed: 5,
		},
		{
			name: "current APIs only; block scalars hold manifests",
			in:   readTestdata(t, "manifests/current.yaml"),
			docs: 3, parsed: 0,
		},
		{
			name: "JSON List",
			in:   readTestdata(t, "manifests/cluster-dump.json"),
			want: []short{
				{0, 1, 1, "rbac.authorization.k8s.io/v1beta1", "ClusterRole", "legacy-reader", "", removed},
				{0, 1, 3, "flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", "ops-tools", "", removed},
			},
			docs: 1, parsed: 1,
		},
		{
			name: "bad document in the middle",
			in:   readTestdata(t, "manifests/broken.yaml"),
			want: []short{
				{0, 2, 0, "batch/v1beta1", "CronJob", "nightly", "jobs", removed},
				{2, 14, 0, "discovery.k8s.io/v1beta1", "EndpointSlice", "web-abc", "jobs", removed},
			},
			wantErrs: []docErr{{1, 8}},
			docs:     3, parsed: 3,
		},
		{
			name: "documents without apiVersion or kind are not objects",
			in:   "replicaCount: 2\n---\nkind: Deployment\nmetadata: {name: x}\n---\napiVersion: extensions/v1beta1\n---\n- a\n- b\n---\njust a string\n",
			// The validator reads only mappings: the sequence and the
			// string are parsed to know they are well-formed.
			docs: 5, parsed: 2,
		},
		{
			name: "CRLF line ends",
			in:   "apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n  name: p\r\n---\r\napiVersion: policy/v1beta1\r\nkind: PodDisruptionBudget\r\nmetadata:\r\n  name: pdb\r\n  namespace: web\r\n",
			want: []short{{1, 6, 0, "policy/v1beta1", "PodDisruptionBudget", "pdb", "web", removed}},
			docs: 2, parsed: 1,
		},
		{
			name: "JSON stream",
			in:   `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}` + "\n" + `{"kind":"Ingress","metadata":{"namespace":"a","name":"i"},"apiVersion":"extensions/v1beta1"}`,
			want: []short{{1, 2, 0, "extensions/v1beta1", "Ingress", "i", "a", removed}},
			docs: 2, parsed: 1,
		},
		{
			name: "forms the pre-scan leaves to the parser",
			in: "apiVersion: &v extensions/v1beta1\nkind: Deployment\nmetadata: {name: anchored}\n" +
				"---\n{\"apiVersion\":\"extensions\\/v1beta1\",\"kind\":\"Ingress\",\"metadata\":{\"name\":\"escaped\"}}\n" +
				"---\napiVersion:\n  batch/v1beta1\nkind: CronJob\nmetadata:\n  name: next-line\n" +
				"---\n{apiVersion: policy/v1beta1, kind: PodDisruptionBudget, metadata: {name: flow}}\n" +
				"---\n  metadata: {name: indented}\n  kind: Ingress\n  apiVersion: extensions/v1beta1\n",
			want: []short{
				{0, 1, 0, "extensions/v1beta1", "Deployment", "anchored", "", removed},
				{1, 5, 0, "extensions/v1beta1", "Ingress", "escaped", "", removed},
				{2, 7, 0, "batch/v1beta1", "CronJob", "next-line", "", removed},
				{3, 13, 0, "policy/v1beta1", "PodDisruptionBudget", "flow", "", removed},
				{4, 15, 0, "extensions/v1beta1", "Ingress", "indented", "", removed},
			},
			docs: 5, parsed: 5,
		},
		{
			name:     "duplicate keys are an error",
			in:       "apiVersion: v1\nkind: Pod\nkind: Ingress\napiVersion: extensions/v1beta1\n",
			wantErrs: []docErr{{0, 1}},
			docs:     1, parsed: 1,
		},
		{
			name: "typed List items without TypeMeta",
			in: `apiVersion: extensions/v1beta1
kind: DeploymentList
items:
- metadata: {name: a, namespace: n}
- metadata: {name: b, namespace: n}
  apiVersion: apps/v1
  kind: Deployment
`,
			want: []short{{0, 1, 1, "extensions/v1beta1", "Deployment", "a", "n", removed}},
			docs: 1, parsed: 1,
		},
		{
			name: "nested Lists and a bad item",
			in: `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: List
  items:
  - {apiVersion: batch/v1beta1, kind: CronJob, metadata: {name: inner}}
- {apiVersion: v1, kind: Pod, kind: Service}
- apiVersion: policy/v1beta1
  kind: PodSecurityPolicy
  metadata:
    name: outer
- {kind: Deployment, metadata: {name: no-version}}
`,
			want: []short{
				{0, 1, 1, "batch/v1beta1", "CronJob", "inner", "", removed},
				{0, 1, 3, "policy/v1beta1", "PodSecurityPolicy", "outer", "", removed},
			},
			wantErrs: []docErr{{0, 1}},
			docs:     1, parsed: 1,
		},
		{
			name:   "a rule that is not yet in effect is not reported",
			target: "v1.20.0",
			in:     "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n---\napiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: i}\n",
			want:   []short{{1, 5, 0, "extensions/v1beta1", "Ingress", "i", "", soon}},
			docs:   2, parsed: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newChecker(t, tt.target)
			res, err := c.Check(context.Background(), "src", []byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, tt.want, shorten(res.Findings), "findings")
			assert.Equal(t, tt.wantErrs, shortenErrs(res.Errors), "errors: %v", res.Errors)
			assert.Equal(t, tt.docs, res.Documents, "documents")
			assert.Equal(t, tt.parsed, res.Parsed, "parsed")
			for _, f := range res.Findings {
				assert.Equal(t, "src", f.Source)
				assert.Equal(t, c.Target(), f.Target)
				assert.Equal(t, f.Rule.StateAt(f.Target), f.State)
			}
		})
	}
}

func TestCheckReplacementAvailability(t *testing.T) {
	in := []byte("apiVersion: flowcontrol.apiserver.k8s.io/v1beta2\nkind: FlowSchema\nmetadata: {name: f}\n" +
		"---\napiVersion: policy/v1beta1\nkind: PodSecurityPolicy\nmetadata: {name: psp}\n")
	tests := []struct {
		target string
		want   []bool
	}{
		{"v1.26.0", []bool{false, false}}, // flowcontrol v1 is served from 1.29; PSP has no replacement
		{"v1.29.0", []bool{true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			res, err := newChecker(t, tt.target).Check(context.Background(), "src", in)
			require.NoError(t, err)
			var got []bool
			for _, f := range res.Findings {
				got = append(got, f.ReplacementAvailable)
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestCheckComponentTargets(t *testing.T) {
	f, err := os.Open("testdata/rules/cert-manager.yaml")
	require.NoError(t, err)
	defer f.Close()
	extra, err := LoadRules(f)
	require.NoError(t, err)
	rules := Merge(DefaultRules(), extra)
	in := []byte("apiVersion: cert-manager.io/v1alpha2\nkind: Certificate\nmetadata: {name: tls, namespace: web}\n" +
		"---\napiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n")

	tests := []struct {
		name string
		opts Options
		want []State
	}{
		{"declared cert-manager target v1.5.0", Options{}, []State{StateRemovalSoon, StateDeprecated}},
		{"explicit cert-manager target", Options{ComponentTargets: map[string]Version{"cert-manager": v("v1.6.0")}}, []State{StateRemoved, StateDeprecated}},
		{"k8s target from ComponentTargets", Options{ComponentTargets: map[string]Version{"k8s": v("v1.38.0")}}, []State{StateRemovalSoon, StateRemovalSoon}},
		{"Target wins over ComponentTargets", Options{Target: v("v1.20.0"), ComponentTargets: map[string]Version{"k8s": v("v1.38.0")}}, []State{StateRemovalSoon}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewChecker(rules, tt.opts)
			require.NoError(t, err)
			res, err := c.Check(context.Background(), "src", in)
			require.NoError(t, err)
			var got []State
			for _, f := range res.Findings {
				got = append(got, f.State)
			}
			assert.Equal(t, tt.want, got)
		})
	}

	_, err = NewChecker(rules, Options{ComponentTargets: map[string]Version{"": v("v1.0")}})
	assert.Error(t, err)
}

func TestNewCheckerDefaults(t *testing.T) {
	c, err := NewChecker(nil, Options{})
	require.NoError(t, err)
	assert.Equal(t, DefaultRules().Newest(ComponentKubernetes), c.Target())
	assert.Equal(t, DefaultRules().Len(), c.Rules().Len())
}

func TestCheckContextCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newChecker(t, "").Check(ctx, "src", genManifests(4, 1))
	require.ErrorIs(t, err, context.Canceled)
}

// TestCheckMatchesNaive checks that the pre-scan loses nothing: on valid
// streams, Check finds what parsing every document finds.
func TestCheckMatchesNaive(t *testing.T) {
	inputs := map[string][]byte{
		"generated":  genManifests(40, 3),
		"legacy-app": []byte(readTestdata(t, "manifests/legacy-app.yaml")),
		"current":    []byte(readTestdata(t, "manifests/current.yaml")),
		"list":       []byte(readTestdata(t, "manifests/cluster-dump.json")),
		"crlf":       []byte(strings.ReplaceAll(readTestdata(t, "manifests/legacy-app.yaml"), "\n", "\r\n")),
	}
	for _, target := range []string{"v1.15.0", "v1.22.0", "v1.24.0", "v1.34.0"} {
		c := newChecker(t, target)
		for name, in := range inputs {
			t.Run(target+"/"+name, func(t *testing.T) {
				fast, err := c.Check(context.Background(), name, in)
				require.NoError(t, err)
				slow, err := naiveCheck(c, name, in)
				require.NoError(t, err)
				strip := func(fs []Finding) []Finding {
					out := make([]Finding, len(fs))
					for i, f := range fs {
						f.Line = 0 // the naive check has the parser's idea of lines
						out[i] = f
					}
					return out
				}
				assert.Equal(t, strip(slow.Findings), strip(fast.Findings))
				assert.Equal(t, slow.Documents, fast.Documents)
				assert.LessOrEqual(t, fast.Parsed, slow.Parsed)
			})
		}
	}
	res, err := newChecker(t, "").Check(context.Background(), "g", genManifests(40, 3))
	require.NoError(t, err)
	assert.Len(t, res.Findings, 2*14, "two legacy objects in every third of 40 releases")
	assert.Equal(t, 40*docsPerRelease, res.Documents)
	assert.Equal(t, 2*14, res.Parsed, "only the legacy objects are parsed")
}

func TestCheckConcurrent(t *testing.T) {
	c := newChecker(t, "v1.22.0")
	in := genManifests(20, 2)
	want, err := c.Check(context.Background(), "src", in)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := c.Check(context.Background(), "src", in)
			assert.NoError(t, err)
			assert.Equal(t, want, got)
		}()
	}
	wg.Wait()
}
