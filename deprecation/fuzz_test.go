package deprecation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// FuzzCheck feeds arbitrary streams to the scanner and the checker: they
// must not panic, and what they report must be consistent.
func FuzzCheck(f *testing.F) {
	files, _ := filepath.Glob("testdata/manifests/*")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"apiVersion: extensions/v1beta1\nkind: Deployment\n",
		"---\n--- apiVersion: v1\n...\n%YAML 1.2\n",
		`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"batch/v1beta1","kind":"CronJob"}]}{`,
		"apiVersion: &a batch/v1beta1\nkind: *a\n",
		"kind: DeploymentList\napiVersion: extensions/v1beta1\nitems: [{metadata: {name: x}}, 3, [a]]\n",
		"\"apiVersion\": 'policy/v1beta1'\r\n'kind': \"PodSecurityPolicy\"\r\n",
		"{\"kind\":\"Ingress\",\"apiVersion\":\"extensions\\/v1beta1\"\n---\n",
	} {
		f.Add([]byte(s))
	}
	c, err := NewChecker(nil, Options{Target: MustParseVersion("v1.25")})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// Documents are disjoint, ordered pieces of the input.
		sc := newScanner(data)
		end, n := 0, 0
		for {
			doc, ok := sc.next()
			if !ok {
				break
			}
			n++
			if len(doc.data) == 0 || doc.line < 1 {
				t.Fatalf("document %d: empty or no line: %q line %d", n, doc.data, doc.line)
			}
			start := sc.pos - len(doc.data) // every document ends where the scanner stopped
			if start < end {
				t.Fatalf("document %d overlaps the previous one", n)
			}
			end = start + len(doc.data)
		}

		res, err := c.Check(context.Background(), "fuzz", data)
		if err != nil {
			t.Fatal(err)
		}
		if res.Documents != n || res.Parsed > res.Documents {
			t.Fatalf("documents %d (scanner %d), parsed %d", res.Documents, n, res.Parsed)
		}
		for _, f := range res.Findings {
			if f.State == StateNone || f.Index >= res.Documents || f.Line < 1 || f.APIVersion == "" || f.Kind == "" {
				t.Fatalf("bad finding %+v", f)
			}
		}
		for _, e := range res.Errors {
			if e.Index < 0 || e.Index >= res.Documents || e.Err == nil {
				t.Fatalf("bad error %+v", e)
			}
		}
	})
}

// FuzzCheckMatchesNaive checks the pre-scan against parsing every
// document: whenever both read a stream without errors, they must find the
// same objects.
func FuzzCheckMatchesNaive(f *testing.F) {
	files, _ := filepath.Glob("testdata/manifests/*.yaml")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: a}\n---\nkind: Ingress\napiVersion: extensions/v1beta1\n"))
	f.Add([]byte("\"api\\u0056ersion\": extensions/v1beta1\nkind: Deployment\n"))
	c, err := NewChecker(nil, Options{Target: MustParseVersion("v1.25")})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		slow, err := naiveCheck(c, "fuzz", data)
		if err != nil || len(slow.Errors) > 0 {
			return
		}
		fast, err := c.Check(context.Background(), "fuzz", data)
		if err != nil {
			t.Fatal(err)
		}
		if len(fast.Errors) > 0 {
			return
		}
		type key struct {
			apiVersion, kind, name, namespace string
			item                              int
		}
		var a, b []key
		for _, f := range slow.Findings {
			a = append(a, key{f.APIVersion, f.Kind, f.Name, f.Namespace, f.Item})
		}
		for _, f := range fast.Findings {
			b = append(b, key{f.APIVersion, f.Kind, f.Name, f.Namespace, f.Item})
		}
		if fmt.Sprint(a) != fmt.Sprint(b) {
			t.Fatalf("naive found %v, pre-scan found %v in %q", a, b, data)
		}
	})
}
