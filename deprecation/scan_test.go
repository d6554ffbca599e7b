package deprecation

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// scanned is what the test expects of one document.
type scanned struct {
	line             int
	apiVersion, kind string // "<nil>" for absent
	ambiguous        bool
}

func scanAll(data string) []scanned {
	var out []scanned
	sc := newScanner([]byte(data))
	for {
		doc, ok := sc.next()
		if !ok {
			return out
		}
		str := func(b []byte) string {
			if b == nil {
				return "<nil>"
			}
			return string(b)
		}
		out = append(out, scanned{doc.line, str(doc.apiVersion), str(doc.kind), doc.ambiguous})
	}
}

func TestScanner(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []scanned
	}{
		{"empty", "", nil},
		{"only comments and separators", "# a\n---\n# b\n---\n\n", nil},
		{"one document", "apiVersion: v1\nkind: Pod\n", []scanned{{1, "v1", "Pod", false}}},
		{"no trailing newline", "kind: Pod\napiVersion: v1", []scanned{{1, "v1", "Pod", false}}},
		{
			"separators and comments",
			"# header\n---\napiVersion: apps/v1 # c\nkind: Deployment\nspec:\n  x: 1\n---   # c\n\nkind: Service\napiVersion: v1\n",
			[]scanned{{3, "apps/v1", "Deployment", false}, {9, "v1", "Service", false}},
		},
		{
			"quoted values and keys",
			"\"apiVersion\": \"apps/v1\"\n'kind' : 'Deployment'  # c\n",
			[]scanned{{1, "apps/v1", "Deployment", false}},
		},
		{
			"CRLF",
			"apiVersion: v1\r\nkind: Pod\r\n---\r\napiVersion: batch/v1beta1\r\nkind: CronJob\r\n",
			[]scanned{{1, "v1", "Pod", false}, {4, "batch/v1beta1", "CronJob", false}},
		},
		{"byte order mark", "\xef\xbb\xbfapiVersion: v1\nkind: Pod\n", []scanned{{1, "v1", "Pod", false}}},
		{
			"no apiVersion",
			"replicaCount: 2\nimage:\n  tag: x\n---\nkind: Pod\n",
			[]scanned{{1, "<nil>", "<nil>", false}, {5, "<nil>", "Pod", false}},
		},
		{
			"nested apiVersion is not top-level",
			"kind: HorizontalPodAutoscaler\nspec:\n  scaleTargetRef:\n    apiVersion: apps/v1\n    kind: Deployment\napiVersion: autoscaling/v2\n",
			[]scanned{{1, "autoscaling/v2", "HorizontalPodAutoscaler", false}},
		},
		{
			"block scalar with separator and keys",
			"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: |\n    ---\n    apiVersion: x/v1\n---\napiVersion: v1\nkind: Secret\n",
			[]scanned{{1, "v1", "ConfigMap", false}, {8, "v1", "Secret", false}},
		},
		{
			"compact sequence at column 0",
			"apiVersion: rbac.authorization.k8s.io/v1\nrules:\n- apiGroups: [\"\"]\n  verbs: [get]\nkind: Role\n",
			[]scanned{{1, "rbac.authorization.k8s.io/v1", "Role", false}},
		},
		{"dashes that are not a separator", "apiVersion: v1\nkind: Pod\n----\n---x\n", []scanned{{1, "v1", "Pod", false}}},
		{
			"document end marker",
			"apiVersion: v1\nkind: Pod\n...\n---\napiVersion: v1\nkind: Service\n",
			[]scanned{{1, "v1", "Pod", false}, {5, "v1", "Service", false}},
		},
		// Content on the "---" line is left to the parser.
		{"content after separator", "--- # c\n--- apiVersion: v1\nkind: Pod\n", []scanned{{2, "<nil>", "<nil>", true}}},
		{"directive", "%YAML 1.2\n---\napiVersion: v1\nkind: Pod\n", []scanned{{3, "v1", "Pod", false}}},
		// Ambiguous forms are left to the parser; once a document is
		// ambiguous the scanner stops reading it.
		{"value on next line", "apiVersion:\n  v1\nkind: Pod\n", []scanned{{1, "<nil>", "<nil>", true}}},
		{"continued plain value", "apiVersion: apps/\n  v1\nkind: Deployment\n", []scanned{{1, "apps/", "<nil>", true}}},
		{"continuation after the second key", "apiVersion: apps/v1\nkind: Deploy\n  ment\n", []scanned{{1, "apps/v1", "Deploy", true}}},
		{"indented comment is no continuation", "apiVersion: v1\nkind: Pod\n  # c\nspec: {}\n", []scanned{{1, "v1", "Pod", false}}},
		{"escape in double quotes", "apiVersion: \"apps\\/v1\"\nkind: Deployment\n", []scanned{{1, "<nil>", "Deployment", true}}},
		{"anchor on value", "apiVersion: &v apps/v1\nkind: Deployment\n", []scanned{{1, "<nil>", "Deployment", true}}},
		{"tag on root", "!!map\napiVersion: v1\nkind: Pod\n", []scanned{{1, "<nil>", "<nil>", true}}},
		{"duplicate key", "kind: Pod\nkind: Service\napiVersion: v1\n", []scanned{{1, "v1", "Pod", true}}},
		{"indented root mapping", "  metadata:\n    name: x\n  apiVersion: v1\n  kind: Pod\n", []scanned{{1, "<nil>", "<nil>", true}}},
		{"complex key", "? apiVersion\n: v1\nkind: Pod\n", []scanned{{1, "<nil>", "<nil>", true}}},
		// JSON.
		{"json one line", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","kind":"x"}}`, []scanned{{1, "v1", "Pod", false}}},
		{
			"json pretty",
			"{\n  \"metadata\": {\"apiVersion\": \"x\"},\n  \"kind\": \"Deployment\",\n  \"apiVersion\": \"apps/v1\"\n}\n",
			[]scanned{{1, "apps/v1", "Deployment", false}},
		},
		{
			"json stream",
			"{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}\n{\"apiVersion\":\"v1\",\n\"kind\":\"Service\"}{\"kind\":\"Secret\",\"apiVersion\":\"v1\"}\n",
			[]scanned{{1, "v1", "Pod", false}, {2, "v1", "Service", false}, {3, "v1", "Secret", false}},
		},
		{"json separated by dashes", "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}\n---\n{\"apiVersion\":\"v1\",\"kind\":\"Service\"}", []scanned{{1, "v1", "Pod", false}, {3, "v1", "Service", false}}},
		{"json escape", `{"apiVersion":"apps\/v1","kind":"Deployment"}`, []scanned{{1, "<nil>", "Deployment", true}}},
		{"json non-string kind", `{"apiVersion":"v1","kind":{"a":1}}`, []scanned{{1, "v1", "<nil>", true}}},
		{"json number kind", `{"apiVersion":"v1","kind":12}`, []scanned{{1, "v1", "<nil>", true}}},
		{"flow mapping with plain keys", "{apiVersion: v1, kind: Pod}\n---\nkind: Service\n", []scanned{{1, "<nil>", "<nil>", true}, {3, "<nil>", "Service", false}}},
		{"unterminated json", "{\"apiVersion\": \"v1\", \"kind\": \"Pod\"\n---\napiVersion: v1\nkind: Service\n", []scanned{{1, "v1", "Pod", true}, {3, "v1", "Service", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, scanAll(tt.in))
		})
	}
}

// TestScannerDocumentBounds checks that the documents are contiguous
// pieces of the input: nothing outside them but blank lines, comments and
// markers.
func TestScannerDocumentBounds(t *testing.T) {
	in := "# h\n---\napiVersion: v1\nkind: Pod\n---\n{\"apiVersion\":\"v1\",\"kind\":\"Service\"}\n---\nkind: Secret\napiVersion: v1\ndata: {}\n"
	sc := newScanner([]byte(in))
	var docs []string
	for {
		doc, ok := sc.next()
		if !ok {
			break
		}
		docs = append(docs, string(doc.data))
	}
	assert.Equal(t, []string{
		"apiVersion: v1\nkind: Pod\n",
		`{"apiVersion":"v1","kind":"Service"}`,
		"kind: Secret\napiVersion: v1\ndata: {}\n",
	}, docs)
}

func TestScannerLineNumbersOnLargeStream(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		b.WriteString("---\n# c\napiVersion: v1\nkind: ConfigMap\ndata:\n  k: v\n")
		_ = i
	}
	got := scanAll(b.String())
	if assert.Len(t, got, 100) {
		for i, d := range got {
			assert.Equal(t, 3+6*i, d.line, "document %d", i)
		}
	}
}
