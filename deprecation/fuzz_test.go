package deprecation

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
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
		text, _, err := decodeText(data)
		if err != nil {
			text = nil
		}
		sc := newScanner(text)
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
			if e.Index < -1 || e.Index >= res.Documents || e.Err == nil || (e.Index == -1 && res.Documents > 0) {
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
		if a, b := findingKeys(slow.Findings), findingKeys(fast.Findings); a != b {
			t.Fatalf("naive found %v, pre-scan found %v in %q", a, b, data)
		}
	})
}

// findingKeys describes findings by object and List item, without lines
// (naiveCheck counts a document's line from its "---").
func findingKeys(fs []Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "%d:%s/%s %s/%s[%d] ", f.Index, f.APIVersion, f.Kind, f.Namespace, f.Name, f.Item)
	}
	return b.String()
}

// FuzzPrescanMatchesParse generates manifests from the fuzzer's bytes,
// written in the forms that can fool a line scanner (multi-line quoted
// scalars and flow collections whose lines look like keys, block
// scalars, comments, anchors, Lists without an apiVersion, typed lists,
// JSON, CRLF, byte order marks, UTF-16), and requires the pre-scan path
// to find exactly what parsing every document finds, and to report no
// document as broken that the parser reads. It checks with Options.Lazy
// too, where the pre-scan alone decides what is parsed (by default the
// validator parses what it does not recognise, which hides pre-scan
// mistakes).
func FuzzPrescanMatchesParse(f *testing.F) {
	for _, seed := range []string{"", "a", "kind: List", "\x00\x01\x02\x03", "0123456789abcdef0123456789abcdef", strings.Repeat("\xff\x10", 40)} {
		f.Add([]byte(seed))
	}
	c, err := NewChecker(nil, Options{Target: MustParseVersion("v1.25")})
	if err != nil {
		f.Fatal(err)
	}
	lazy, err := NewChecker(nil, Options{Target: MustParseVersion("v1.25"), Lazy: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, seed []byte) {
		data, utf16 := generateManifests(seed)
		text := data
		if utf16 {
			if text, _, err = decodeText(data); err != nil {
				t.Fatal(err)
			}
		}
		slow, err := naiveCheck(c, "gen", text)
		if err != nil || len(slow.Errors) > 0 {
			return // the stream decoder stops at a broken document
		}
		for _, checker := range []*Checker{c, lazy} {
			fast, err := checker.Check(context.Background(), "gen", data)
			if err != nil {
				t.Fatal(err)
			}
			if len(fast.Errors) > 0 {
				t.Fatalf("lazy %v: pre-scan path reports %v; the parser reads the stream:\n%s", checker.lazy, fast.Errors[0], text)
			}
			if a, b := findingKeys(slow.Findings), findingKeys(fast.Findings); a != b {
				t.Fatalf("lazy %v: parse found %v\npre-scan found %v\nin:\n%s", checker.lazy, a, b, text)
			}
		}
	})
}

// FuzzValidatorSound requires that whenever the validator calls a
// document well-formed, yaml.v3 parses it and readObject reads it: a wrong
// "valid" would hide a broken document.
func FuzzValidatorSound(f *testing.F) {
	files, _ := filepath.Glob("testdata/manifests/*")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		"a: 1\nb:\n  - c\n  - {d: e, f: [g, 'h''i', \"j\\u00e9\"]}\nk: |\n  x\n\n  y\n",
		"a:\n- b\n- c: d\n  e: f\ng: >-\n    z\n",
		"a: x: y\n", "a: \"\\q\"\n", "a: b\n  c: d\n", "a:\n  - b\n - c\n", "a: |\n   x\n  y\n",
		"kind: A\nkind: B\n", "a: [b,, c]\n", "a: 'x'y\n", "a: b\u0085c\n", "a: |\n  x\n\ty\n",
	} {
		f.Add([]byte(s))
	}
	for i := range 8 {
		data, _ := generateManifests([]byte{byte(i), byte(i * 7), byte(i * 13), 0xff, byte(i)})
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc := newScanner(data)
		for {
			doc, ok := sc.next()
			if !ok {
				return
			}
			if doc.inline || doc.data[0] == '{' || !validYAML(doc.data) {
				continue
			}
			var n yaml.Node
			if err := unmarshal(doc.data, &n); err != nil {
				t.Fatalf("validator accepts, yaml.v3 says %v:\n%s", err, doc.data)
			}
			if _, err := readObject(&n); err != nil {
				t.Fatalf("validator accepts, readObject says %v:\n%s", err, doc.data)
			}
		}
	})
}
