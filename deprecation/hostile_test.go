package deprecation

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// aliasBomb returns a List whose items are Lists reached through anchors
// and aliases, levels deep, each level holding fanout aliases of the one
// below: fanout^levels Deployments of extensions/v1beta1 in a few hundred
// bytes ("billion laughs").
func aliasBomb(levels, fanout int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: List\nitems:\n")
	b.WriteString("- &l0 {apiVersion: extensions/v1beta1, kind: Deployment, metadata: {name: lol}}\n")
	for l := 1; l <= levels; l++ {
		fmt.Fprintf(&b, "- &l%d {apiVersion: v1, kind: List, items: [", l)
		for i := range fanout {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "*l%d", l-1)
		}
		b.WriteString("]}\n")
	}
	return b.String()
}

// TestCheckAliasBomb: a document whose aliases expand past the limit is
// one error, its partial findings dropped, and the next document is still
// checked. Before the limit, the 818-byte bomb of the issue (eight levels of
// nine) grew past 1.2 GB; a five-level one gave 100,000 findings.
func TestCheckAliasBomb(t *testing.T) {
	c := newChecker(t, "v1.25")
	for _, tt := range []struct{ levels, fanout int }{{5, 10}, {7, 9}} {
		t.Run(fmt.Sprintf("%dx%d", tt.levels, tt.fanout), func(t *testing.T) {
			in := aliasBomb(tt.levels, tt.fanout) + "---\napiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: after}\n"
			res, err := c.Check(context.Background(), "bomb.yaml", []byte(in))
			require.NoError(t, err)
			require.Len(t, res.Errors, 1)
			assert.Equal(t, 0, res.Errors[0].Index)
			assert.Contains(t, res.Errors[0].Error(), "aliases expand to more than 1000 objects")
			assert.Equal(t, []short{{1, 1 + strings.Count(aliasBomb(tt.levels, tt.fanout), "\n") + 1, 0,
				"batch/v1beta1", "CronJob", "after", "", StateRemoved}}, shorten(res.Findings), "only the next document's")
		})
	}
	// The file: eight levels of nine aliases, 818 bytes.
	eight := aliasBomb(8, 9)
	assert.Less(t, len(eight), 900)
	res, err := c.Check(context.Background(), "bomb8.yaml", []byte(eight))
	require.NoError(t, err)
	require.Len(t, res.Errors, 1)
	assert.Empty(t, res.Findings)
}

func TestCheckLimits(t *testing.T) {
	c := newChecker(t, "v1.25")
	// Lists nested deeper than MaxListDepth.
	deep := strings.Repeat("{kind: List, apiVersion: v1, items: [", MaxListDepth+1) +
		"{apiVersion: batch/v1beta1, kind: CronJob}" + strings.Repeat("]}", MaxListDepth+1) + "\n"
	res, err := c.Check(context.Background(), "deep.yaml", []byte(deep))
	require.NoError(t, err)
	require.Len(t, res.Errors, 1)
	assert.Contains(t, res.Errors[0].Error(), "lists nested more than 8 deep")
	assert.Empty(t, res.Findings)

	// Aliases that stay within the limit are expanded.
	small := aliasBomb(2, 3)
	res, err = c.Check(context.Background(), "small.yaml", []byte(small))
	require.NoError(t, err)
	assert.Empty(t, res.Errors)
	assert.Len(t, res.Findings, 1+3+9, "l0, three of l0 in l1, nine of l0 in l2")

	// YAML nested past the parser's depth is an error, not a crash.
	res, err = c.Check(context.Background(), "nest.yaml", []byte("kind: List\nitems: "+strings.Repeat("[", 20000)+"\n"))
	require.NoError(t, err)
	require.Len(t, res.Errors, 1)
}

func encodeUTF16(s string, bigEndian, bom bool) []byte {
	units := utf16.Encode([]rune(s))
	if bom {
		units = append([]uint16{0xFEFF}, units...)
	}
	out := make([]byte, 2*len(units))
	for i, u := range units {
		if bigEndian {
			binary.BigEndian.PutUint16(out[2*i:], u)
		} else {
			binary.LittleEndian.PutUint16(out[2*i:], u)
		}
	}
	return out
}

func encodeUTF32(s string, bigEndian, bom bool) []byte {
	runes := []rune(s)
	if bom {
		runes = append([]rune{0xFEFF}, runes...)
	}
	out := make([]byte, 4*len(runes))
	for i, r := range runes {
		if bigEndian {
			binary.BigEndian.PutUint32(out[4*i:], uint32(r))
		} else {
			binary.LittleEndian.PutUint32(out[4*i:], uint32(r))
		}
	}
	return out
}

// TestCheckEncodings: UTF-16 and UTF-32 streams, with a byte order mark or
// told by their NULs, are checked like UTF-8; before, the pre-scan saw no
// apiVersion in them and skipped them without a word.
func TestCheckEncodings(t *testing.T) {
	const doc = "# commentaire: déploiement\napiVersion: extensions/v1beta1\nkind: Deployment\nmetadata:\n  name: café\n"
	c := newChecker(t, "v1.25")
	want := []short{{0, 2, 0, "extensions/v1beta1", "Deployment", "café", "", StateRemoved}}
	for name, data := range map[string][]byte{
		"UTF-8":             []byte(doc),
		"UTF-8 BOM":         append([]byte{0xEF, 0xBB, 0xBF}, doc...),
		"UTF-16LE BOM":      encodeUTF16(doc, false, true),
		"UTF-16BE BOM":      encodeUTF16(doc, true, true),
		"UTF-16LE":          encodeUTF16(doc, false, false),
		"UTF-16BE":          encodeUTF16(doc, true, false),
		"UTF-32LE BOM":      encodeUTF32(doc, false, true),
		"UTF-32BE BOM":      encodeUTF32(doc, true, true),
		"UTF-32LE":          encodeUTF32(doc, false, false),
		"UTF-32BE":          encodeUTF32(doc, true, false),
		"UTF-16 surrogates": encodeUTF16("# 🚀\n"+doc[strings.IndexByte(doc, '\n')+1:], false, true),
	} {
		t.Run(name, func(t *testing.T) {
			res, err := c.Check(context.Background(), "x.yaml", data)
			require.NoError(t, err)
			assert.Empty(t, res.Errors)
			assert.Equal(t, want, shorten(res.Findings))
		})
	}
	for name, tt := range map[string]struct {
		data []byte
		want string
	}{
		"odd UTF-16":         {encodeUTF16(doc, false, true)[:11], "UTF-16LE: odd number of bytes"},
		"unpaired surrogate": {append(encodeUTF16("a: b\n", false, true), 0x00, 0xD8), "UTF-16LE: unpaired surrogate"},
		"bad UTF-32":         {append(encodeUTF32("a: b\n", true, true), 0x00, 0x11, 0x00, 0x00), "invalid code point"},
		"binary":             {[]byte("\x7fELF\x02\x01\x01\x00\x00\x00"), "binary data"},
	} {
		t.Run(name, func(t *testing.T) {
			res, err := c.Check(context.Background(), "x.bin", tt.data)
			require.NoError(t, err)
			require.Len(t, res.Errors, 1)
			assert.Equal(t, -1, res.Errors[0].Index)
			assert.Contains(t, res.Errors[0].Error(), tt.want)
		})
	}
}

// TestCheckPrescanMatchesParse holds the pre-scan to what a full parse
// reads, on the forms that fooled it. Lazy, the pre-scan alone decides
// what is parsed.
func TestCheckPrescanMatchesParse(t *testing.T) {
	c, err := NewChecker(nil, Options{Target: v("v1.25"), Lazy: true})
	require.NoError(t, err)
	tests := []struct {
		name string
		in   string
		want []short
	}{
		{
			// A quoted scalar goes on over lines that look like keys at
			// column 0; the scanner took them for the document's kind and
			// stopped before the real one.
			name: "multi-line quoted scalar",
			in:   "notes: \"first\napiVersion: v1\nkind: ConfigMap\nlast\"\napiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: real}\n",
			want: []short{{0, 1, 0, "extensions/v1beta1", "Deployment", "real", "", StateRemoved}},
		},
		{
			name: "single-quoted",
			in:   "notes: 'it''s\napiVersion: v1\nkind: ConfigMap\nend'\napiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: real}\n",
			want: []short{{0, 1, 0, "extensions/v1beta1", "Deployment", "real", "", StateRemoved}},
		},
		{
			name: "flow sequence over lines",
			in:   "args: [a,\napiVersion: v1\n]\nrefs: [b,\nkind: ConfigMap\n]\napiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: real}\n",
			want: []short{{0, 1, 0, "extensions/v1beta1", "Deployment", "real", "", StateRemoved}},
		},
		{
			name: "flow mapping over lines",
			in:   "labels: {a: b,\napiVersion: v1\n,\nkind: ConfigMap\n}\napiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: real}\n",
			want: []short{{0, 1, 0, "extensions/v1beta1", "Deployment", "real", "", StateRemoved}},
		},
		{
			// Nested, the same: a quoted scalar in a List item goes on
			// over column-0 lines (found by FuzzPrescanMatchesParse).
			name: "nested multi-line quoted scalar",
			in:   "items:\n- kind: PodSecurityPolicy\n  notes: \"first\napiVersion: v1\nkind: ConfigMap\nlast\"\n  apiVersion: policy/v1beta1\n  metadata: {name: p}\napiVersion: v1\nkind: List\n",
			want: []short{{0, 1, 1, "policy/v1beta1", "PodSecurityPolicy", "p", "", StateRemoved}},
		},
		{
			// Block scalar lines are indented: "kind:" in them is text.
			name: "block scalars",
			in:   "data: |\n  apiVersion: extensions/v1beta1\n  kind: Deployment\napiVersion: v1\nkind: ConfigMap\n---\nscript: >-\n  kind: CronJob\napiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: c}\n",
			want: []short{{1, 7, 0, "batch/v1beta1", "CronJob", "c", "", StateRemoved}},
		},
		{
			// A List without an apiVersion of its own was not expanded.
			name: "List without apiVersion",
			in:   "kind: List\nitems:\n- apiVersion: extensions/v1beta1\n  kind: Deployment\n  metadata: {name: in-list}\n",
			want: []short{{0, 1, 1, "extensions/v1beta1", "Deployment", "in-list", "", StateRemoved}},
		},
		{
			// A typed list with items is reported through its items.
			name: "typed list",
			in:   "apiVersion: batch/v1beta1\nkind: CronJobList\nitems:\n- metadata: {name: a}\n- metadata: {name: b}\n---\napiVersion: batch/v1beta1\nkind: CronJobList\nitems: []\n",
			want: []short{
				{0, 1, 1, "batch/v1beta1", "CronJob", "a", "", StateRemoved},
				{0, 1, 2, "batch/v1beta1", "CronJob", "b", "", StateRemoved},
				{1, 7, 0, "batch/v1beta1", "CronJobList", "", "", StateRemoved},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Check(context.Background(), "x.yaml", []byte(tt.in))
			require.NoError(t, err)
			assert.Empty(t, res.Errors)
			assert.Equal(t, tt.want, shorten(res.Findings))
			// The same objects as parsing everything (which counts a
			// document's line from its "---").
			slow, err := naiveCheck(c, "x.yaml", []byte(tt.in))
			require.NoError(t, err)
			assert.Equal(t, findingKeys(slow.Findings), findingKeys(res.Findings), "same as parsing everything")
		})
	}
}

// TestCheckReportsEveryInvalidDocument: a broken document is reported
// whether or not a rule could match it (before, only candidates were
// parsed, so a broken ConfigMap went unreported).
func TestCheckReportsEveryInvalidDocument(t *testing.T) {
	in := "apiVersion: v1\nkind: ConfigMap\ndata: [unclosed\n---\n" + // not a candidate, broken
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ok}\ndata:\n  a: b\n---\n" + // well-formed
		"apiVersion: v1\nkind: Secret\nkind: Secret\n---\n" + // duplicate kind
		"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: b: c\n---\n" + // mapping value in a value
		"{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"data\": {\"a\" 1}}\n" // broken JSON
	res, err := newChecker(t, "v1.25").Check(context.Background(), "x.yaml", []byte(in))
	require.NoError(t, err)
	assert.Equal(t, []docErr{{0, 1}, {2, 11}, {3, 15}, {4, 20}}, shortenErrs(res.Errors))
	assert.Equal(t, 5, res.Documents)
	assert.Equal(t, 4, res.Parsed, "the well-formed ConfigMap is not parsed")

	lazy, err := NewChecker(nil, Options{Target: v("v1.25"), Lazy: true})
	require.NoError(t, err)
	res, err = lazy.Check(context.Background(), "x.yaml", []byte(in))
	require.NoError(t, err)
	assert.Equal(t, []docErr{{0, 1}, {2, 11}}, shortenErrs(res.Errors), "Lazy: only documents the pre-scan cannot read")
}
