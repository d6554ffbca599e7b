package gitops

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	yaml "go.yaml.in/yaml/v3"
)

// truncated ends a diff cut at DiffOptions.LimitBytes: flux-local's
// words, which bots that post diffs already look for.
const truncated = "[Diff truncated by flux-local]"

// DiffOptions tunes Compare.
type DiffOptions struct {
	// Context is the number of unchanged lines around a change (diff -u).
	Context int
	// StripAttrs are labels and annotations left out before comparing,
	// beyond the index annotations MarshalObject always leaves out.
	StripAttrs []string
	// LimitBytes cuts each object's diff after this many bytes; 0 means
	// no limit.
	LimitBytes int
}

// Diff is what changed between two builds: per node (a Kustomization or
// HelmRelease), the objects whose rendered YAML differs.
type Diff struct {
	Nodes []NodeDiff
}

// NodeDiff is the changed objects of one node.
type NodeDiff struct {
	// Path is a Kustomization's spec.path ("" for a HelmRelease).
	Path      string
	Kind      string
	Namespace string
	Name      string
	Objects   []ObjectDiff
}

// label names the node in diff headers, as flux-local does.
func (n NodeDiff) label() string {
	l := n.Kind + ": " + n.Namespace + "/" + n.Name
	if n.Path != "" && n.Path != "." {
		l = n.Path + " " + l
	}
	return l
}

// ObjectDiff is one changed object and its unified diff.
type ObjectDiff struct {
	Kind      string
	Namespace string
	Name      string
	// Lines are the diff's lines as Python's difflib.unified_diff yields
	// them (header lines end with a newline of their own).
	Lines []string
}

// objKey names an object within a node.
type objKey struct{ Kind, Namespace, Name string }

func (o objKey) label() string {
	if o.Namespace == "" {
		return o.Kind + ": " + o.Name
	}
	return o.Kind + ": " + o.Namespace + "/" + o.Name
}

// Compare diffs the nodes of two builds: orig (the other version) against
// cur (the working tree). Nodes are matched by kind, namespace and name,
// objects within a node by kind, namespace (the node's when the object
// has none) and name; a node or object on one side only diffs against
// nothing. Only failed nodes' missing objects are not a change: a node
// that did not build on one side is left out of the diff.
func Compare(orig, cur []*NodeResult, opts DiffOptions) *Diff {
	type side struct{ a, b *NodeResult }
	byID := make(map[string]*side)
	var ids []string
	for i, nodes := range [][]*NodeResult{orig, cur} {
		for _, n := range nodes {
			s := byID[n.ID]
			if s == nil {
				s = &side{}
				byID[n.ID] = s
				ids = append(ids, n.ID)
			}
			if i == 0 {
				s.a = n
			} else {
				s.b = n
			}
		}
	}
	kindRank := func(k string) int {
		if k == kindKustomization {
			return 0
		}
		return 1
	}
	d := &Diff{}
	for _, id := range ids {
		s := byID[id]
		if (s.a != nil && s.a.Status != StatusOK) || (s.b != nil && s.b.Status != StatusOK) {
			continue
		}
		some := cmp.Or(s.b, s.a)
		nd := NodeDiff{Kind: some.Kind, Namespace: some.Namespace, Name: some.Name}
		if some.Kind == kindKustomization {
			nd.Path = some.Path
		}
		a, keysA := objectLines(s.a, opts.StripAttrs)
		b, keysB := objectLines(s.b, opts.StripAttrs)
		keys := keysA
		for _, k := range keysB {
			if _, ok := a[k]; !ok {
				keys = append(keys, k)
			}
		}
		for _, k := range keys {
			lines := unified(a[k], b[k], nd.label()+" "+k.label(), opts.Context)
			if len(lines) == 0 {
				continue
			}
			nd.Objects = append(nd.Objects, ObjectDiff{Kind: k.Kind, Namespace: k.Namespace, Name: k.Name, Lines: limit(lines, opts.LimitBytes)})
		}
		if len(nd.Objects) > 0 {
			d.Nodes = append(d.Nodes, nd)
		}
	}
	slices.SortStableFunc(d.Nodes, func(x, y NodeDiff) int {
		return cmp.Or(cmp.Compare(kindRank(x.Kind), kindRank(y.Kind)), strings.Compare(x.Path, y.Path),
			strings.Compare(x.Namespace, y.Namespace), strings.Compare(x.Name, y.Name))
	})
	return d
}

// objectLines returns a node's objects as flux-local lines them up for
// difflib: "---", then the YAML's lines (the last one empty).
func objectLines(n *NodeResult, strip []string) (map[objKey][]string, []objKey) {
	out := make(map[objKey][]string)
	if n == nil {
		return out, nil
	}
	var keys []objKey
	for _, o := range n.Objects {
		k := objKey{Kind: o.Kind, Namespace: cmp.Or(o.Namespace, n.Namespace), Name: o.Name}
		data, err := MarshalObject(o, strip)
		if err != nil {
			data = []byte(err.Error())
		}
		if _, dup := out[k]; !dup {
			keys = append(keys, k)
		}
		out[k] = append([]string{"---"}, strings.Split(string(data), "\n")...)
	}
	return out, keys
}

// unified returns Python difflib.unified_diff's output for a and b, both
// files named label: header lines carry their own newline, as there.
func unified(a, b []string, label string, n int) []string {
	var out []string
	m := difflib.NewMatcher(a, b)
	for _, group := range m.GetGroupedOpCodes(n) {
		if out == nil {
			out = append(out, "--- "+label+"\n", "+++ "+label+"\n")
		}
		first, last := group[0], group[len(group)-1]
		out = append(out, fmt.Sprintf("@@ -%s +%s @@\n", unifiedRange(first.I1, last.I2), unifiedRange(first.J1, last.J2)))
		for _, c := range group {
			switch c.Tag {
			case 'e':
				for _, l := range a[c.I1:c.I2] {
					out = append(out, " "+l)
				}
				continue
			case 'r', 'd':
				for _, l := range a[c.I1:c.I2] {
					out = append(out, "-"+l)
				}
			}
			if c.Tag == 'r' || c.Tag == 'i' {
				for _, l := range b[c.J1:c.J2] {
					out = append(out, "+"+l)
				}
			}
		}
	}
	return out
}

// unifiedRange is difflib's _format_range_unified.
func unifiedRange(start, stop int) string {
	begin, length := start+1, stop-start
	if length == 1 {
		return fmt.Sprint(begin)
	}
	if length == 0 {
		begin--
	}
	return fmt.Sprintf("%d,%d", begin, length)
}

// limit cuts lines after limit bytes with the truncation marker.
func limit(lines []string, limit int) []string {
	if limit <= 0 {
		return lines
	}
	size := 0
	for i, l := range lines {
		size += len(l)
		if size > limit {
			return append(lines[:i:i], truncated)
		}
	}
	return lines
}

// WriteUnified writes the diff as flux-local prints it: every line of
// every object's unified diff, each followed by a newline.
func (d *Diff) WriteUnified(w io.Writer) error {
	var b strings.Builder
	for _, n := range d.Nodes {
		for _, o := range n.Objects {
			for _, l := range o.Lines {
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// diffDoc is the document of WriteYAML and WriteJSON, in flux-local's
// field names.
type diffDoc struct {
	KustomizationPath string          `json:"kustomization_path" yaml:"kustomization_path"`
	Kind              string          `json:"kind" yaml:"kind"`
	Namespace         string          `json:"namespace" yaml:"namespace"`
	Name              string          `json:"name" yaml:"name"`
	Diffs             []objectDiffDoc `json:"diffs" yaml:"diffs"`
}

type objectDiffDoc struct {
	KustomizationPath string    `json:"kustomization_path" yaml:"kustomization_path"`
	Kind              string    `json:"kind" yaml:"kind"`
	Namespace         string    `json:"namespace,omitempty" yaml:"namespace,omitempty"`
	Name              string    `json:"name" yaml:"name"`
	Diff              blockText `json:"diff" yaml:"diff"`
}

// blockText is a multi-line string written as a YAML literal block, as
// flux-local writes its diffs.
type blockText string

// MarshalYAML writes the text as a literal block.
func (t blockText) MarshalYAML() (any, error) {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.LiteralStyle, Value: string(t)}, nil
}

func (d *Diff) docs() []diffDoc {
	out := make([]diffDoc, 0, len(d.Nodes))
	for _, n := range d.Nodes {
		doc := diffDoc{KustomizationPath: n.Path, Kind: n.Kind, Namespace: n.Namespace, Name: n.Name}
		for _, o := range n.Objects {
			doc.Diffs = append(doc.Diffs, objectDiffDoc{KustomizationPath: n.Path, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Diff: blockText(strings.Join(o.Lines, "\n"))})
		}
		out = append(out, doc)
	}
	return out
}

// WriteYAML writes the changed objects per node as a YAML document (a
// list of nodes, each with its objects' diffs), for bots; nothing when
// nothing changed.
func (d *Diff) WriteYAML(w io.Writer) error {
	if len(d.Nodes) == 0 {
		return nil
	}
	if _, err := io.WriteString(w, "---\n"); err != nil {
		return err
	}
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(d.docs()); err != nil {
		return err
	}
	return enc.Close()
}

// WriteJSON writes what WriteYAML does, as JSON.
func (d *Diff) WriteJSON(w io.Writer) error {
	if len(d.Nodes) == 0 {
		return nil
	}
	data, err := json.MarshalIndent(d.docs(), "", "    ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// ImageDiff is the images a node uses on one side only.
type ImageDiff struct {
	Kind      string   `json:"kind" yaml:"kind"`
	Namespace string   `json:"namespace" yaml:"namespace"`
	Name      string   `json:"name" yaml:"name"`
	Removed   []string `json:"removed,omitempty" yaml:"removed,omitempty"`
	Added     []string `json:"added,omitempty" yaml:"added,omitempty"`
}

// CompareImages returns, per node built on both sides or on one, the
// images only orig uses (removed) and only cur uses (added), sorted by
// node.
func CompareImages(orig, cur []*NodeResult) []ImageDiff {
	images := func(nodes []*NodeResult) map[string]*NodeResult {
		m := make(map[string]*NodeResult)
		for _, n := range nodes {
			if n.Status == StatusOK {
				m[n.ID] = n
			}
		}
		return m
	}
	a, b := images(orig), images(cur)
	ids := make(map[string]bool)
	for id := range a {
		ids[id] = true
	}
	for id := range b {
		ids[id] = true
	}
	var out []ImageDiff
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for id := range ids {
			if !yield(id) {
				return
			}
		}
	}) {
		na, nb := a[id], b[id]
		some := cmp.Or(nb, na)
		d := ImageDiff{Kind: some.Kind, Namespace: some.Namespace, Name: some.Name}
		var ia, ib []string
		if na != nil {
			ia = na.Images
		}
		if nb != nil {
			ib = nb.Images
		}
		for _, img := range ia {
			if !slices.Contains(ib, img) {
				d.Removed = append(d.Removed, img)
			}
		}
		for _, img := range ib {
			if !slices.Contains(ia, img) {
				d.Added = append(d.Added, img)
			}
		}
		if len(d.Removed)+len(d.Added) > 0 {
			out = append(out, d)
		}
	}
	return out
}
