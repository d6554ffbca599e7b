package deprecation

import (
	"fmt"
	"strings"
)

// genSource turns fuzzer bytes into choices; past the end it yields zeros,
// so every input makes a stream.
type genSource struct {
	b []byte
	i int
}

func (g *genSource) n(k int) int {
	if k <= 1 {
		return 0
	}
	var v int
	if g.i < len(g.b) {
		v = int(g.b[g.i])
	}
	g.i++
	return v % k
}

func (g *genSource) pick(options ...string) string { return options[g.n(len(options))] }

// genAPIs are type pairs, deprecated and current.
var genAPIs = [][2]string{
	{"extensions/v1beta1", "Deployment"}, {"apps/v1", "Deployment"}, {"batch/v1beta1", "CronJob"},
	{"v1", "ConfigMap"}, {"policy/v1beta1", "PodSecurityPolicy"}, {"networking.k8s.io/v1beta1", "Ingress"},
	{"v1", "Secret"}, {"autoscaling/v2beta2", "HorizontalPodAutoscaler"}, {"v1", "List"},
}

// generateManifests writes a YAML stream from seed: documents whose keys
// come in any order and whose values take the forms that can fool a line
// scanner. utf16 reports that the stream was encoded as UTF-16LE with a
// byte order mark.
func generateManifests(seed []byte) (data []byte, utf16 bool) {
	g := &genSource{b: seed}
	var b strings.Builder
	nl := "\n"
	if g.n(6) == 0 {
		nl = "\r\n"
	}
	if g.n(8) == 0 {
		b.WriteString("\xef\xbb\xbf")
	}
	docs := 1 + g.n(4)
	for d := range docs {
		if d > 0 || g.n(3) == 0 {
			b.WriteString(g.pick("---", "---", "--- # doc", "...\n---") + nl)
		}
		if g.n(8) == 0 {
			writeJSONDoc(&b, g, nl)
			continue
		}
		writeYAMLDoc(&b, g, nl, 0)
	}
	out := b.String()
	if g.n(10) == 0 {
		return encodeUTF16LE(out), true
	}
	return []byte(out), false
}

func encodeUTF16LE(s string) []byte {
	out := []byte{0xFF, 0xFE}
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			hi, lo := 0xD800+(r>>10), 0xDC00+(r&0x3FF)
			out = append(out, byte(hi), byte(hi>>8), byte(lo), byte(lo>>8))
			continue
		}
		out = append(out, byte(r), byte(r>>8))
	}
	return out
}

func writeJSONDoc(b *strings.Builder, g *genSource, nl string) {
	api := genAPIs[g.n(len(genAPIs))]
	fmt.Fprintf(b, `{"kind": %q, "metadata": {"name": "j%d"}, "apiVersion": %q`, api[1], g.n(50), api[0])
	if api[1] == "List" {
		inner := genAPIs[g.n(len(genAPIs)-1)]
		fmt.Fprintf(b, `, "items": [{"apiVersion": %q, "kind": %q, "metadata": {"name": "ji"}}]`, inner[0], inner[1])
	}
	b.WriteString("}" + nl)
}

// writeYAMLDoc writes one block mapping at column ind; items of Lists
// are written by the same function, nested.
func writeYAMLDoc(b *strings.Builder, g *genSource, nl string, ind int) {
	api := genAPIs[g.n(len(genAPIs))]
	pad := strings.Repeat(" ", ind)
	type entry func()
	var entries []entry
	quote := func(s string) string {
		switch g.n(4) {
		case 0:
			return `"` + s + `"`
		case 1:
			return "'" + s + "'"
		}
		return s
	}
	if g.n(10) != 0 {
		entries = append(entries, func() { fmt.Fprintf(b, "%sapiVersion: %s%s", pad, quote(api[0]), nl) })
	}
	if g.n(12) != 0 {
		entries = append(entries, func() { fmt.Fprintf(b, "%skind: %s%s", pad, quote(api[1]), nl) })
	}
	entries = append(entries, func() {
		name := fmt.Sprintf("n%d", g.n(100))
		switch g.n(3) {
		case 0:
			fmt.Fprintf(b, "%smetadata: {name: %s, namespace: ns%d}%s", pad, name, g.n(3), nl)
		case 1:
			fmt.Fprintf(b, "%smetadata:%s%s  name: %s%s", pad, nl, pad, quote(name), nl)
		default:
			fmt.Fprintf(b, "%smetadata:%s%s  namespace: x%s%s  name: %s # c%s", pad, nl, pad, nl, pad, name, nl)
		}
	})
	// Decoys: values over several lines whose lines look like keys.
	fake := genAPIs[g.n(len(genAPIs))]
	decoys := 1 + g.n(3)
	for range decoys {
		k := g.n(11)
		entries = append(entries, func() {
			switch k {
			// The lines inside read exactly as keys would.
			case 0:
				fmt.Fprintf(b, "%snotes: \"first%sapiVersion: %s%skind: %s%slast\"%s", pad, nl, fake[0], nl, fake[1], nl, nl)
			case 1:
				fmt.Fprintf(b, "%snotes: 'it''s%sapiVersion: %s%skind: %s%send'%s", pad, nl, fake[0], nl, fake[1], nl, nl)
			case 2:
				fmt.Fprintf(b, "%sargs: [a,%s[apiVersion: %s],%s{kind: %s}]%s", pad, nl, fake[0], nl, fake[1], nl)
			case 3:
				fmt.Fprintf(b, "%slabels: {a: b,%sapiVersion: %s%s,%skind: %s%s}%s", pad, nl, fake[0], nl, nl, fake[1], nl, nl)
			case 4:
				fmt.Fprintf(b, "%sdata: %s%s  apiVersion: %s%s  kind: %s%s%s  ---%s", pad, g.pick("|", ">-", "|+", "|2"), nl, fake[0], nl, fake[1], nl, pad, nl)
			case 5:
				fmt.Fprintf(b, "%s# kind: %s%s", pad, fake[1], nl)
			case 6:
				// Anchors do not cross documents (yaml.v3's stream
				// decoder lets them; a document parsed alone does not).
				a := g.n(9)
				fmt.Fprintf(b, "%sanchored: &a%d {kind: %s}%sother: *a%d%s", pad, a, fake[1], nl, a, nl)
			case 7:
				fmt.Fprintf(b, "%stagged: !!str kind%s", pad, nl)
			case 8:
				fmt.Fprintf(b, "%sspec:%s%s  kind: %s%s%s  items:%s%s  - a%s", pad, nl, pad, fake[1], nl, pad, nl, pad, nl)
			case 9:
				fmt.Fprintf(b, "%splain: a%s%s  continued: no%s", pad, nl, pad, nl)
			default:
				fmt.Fprintf(b, "%sspec: {replicas: 2, selector: {matchLabels: {app: \"x\"}}}%s", pad, nl)
			}
		})
	}
	if api[1] == "List" || strings.HasSuffix(api[1], "List") {
		entries = append(entries, func() {
			fmt.Fprintf(b, "%sitems:%s", pad, nl)
			for range 1 + g.n(3) {
				if ind > 4 || g.n(4) == 0 {
					fmt.Fprintf(b, "%s- {apiVersion: batch/v1beta1, kind: CronJob, metadata: {name: f}}%s", pad, nl)
					continue
				}
				// A block mapping item: "- " then the mapping at ind+2.
				var item strings.Builder
				writeYAMLDoc(&item, g, nl, ind+2)
				s := item.String()
				b.WriteString(pad + "- " + s[ind+2:])
			}
		})
	}
	// Any order.
	for i := len(entries) - 1; i > 0; i-- {
		j := g.n(i + 1)
		entries[i], entries[j] = entries[j], entries[i]
	}
	for _, e := range entries {
		e()
	}
}
