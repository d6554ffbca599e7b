package gitops

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// A Flux Kustomization is often renamed on its way to the cluster: the
// kustomization.yaml that includes its file adds a namePrefix or a
// namespace, and its parent's postBuild substitutes ${var}s in its spec.
// What Flux applies is the parent's build output, so that is the node;
// the raw file only stands in for it when no parent renders it.
//
// To tell which raw file a built Kustomization came from, the in-memory
// copy of every file holding Flux Kustomizations gets an annotation
// naming the file and document (the marker); kustomize carries it
// through renames, and it is removed from what the build reports.

// markerAnnotation names the raw document a Kustomization was read from.
const markerAnnotation = "internal.gitops.fleetkit.dev/raw"

// markKustomizations returns data with a marker annotation added to every
// Flux Kustomization document, and whether it added any. A file that does
// not parse is returned as it was.
func markKustomizations(rel string, data []byte) ([]byte, bool) {
	if !bytes.Contains(data, []byte(groupKustomize)) {
		return data, false // most files: skip the parse
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var (
		docs   []*yaml.Node
		marked bool
	)
	for i := 0; ; i++ {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return data, false
		}
		docs = append(docs, &doc)
		if len(doc.Content) == 0 {
			continue
		}
		var head struct {
			APIVersion string `yaml:"apiVersion"`
			Kind       string `yaml:"kind"`
		}
		if doc.Content[0].Decode(&head) != nil {
			continue
		}
		if !isFlux(Object{APIVersion: head.APIVersion, Kind: head.Kind}, groupKustomize, kindKustomization) {
			continue
		}
		anns := mappingAt(doc.Content[0], "metadata", "annotations")
		if anns == nil {
			continue
		}
		anns.Content = append(anns.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Value: markerAnnotation},
			&yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprintf("%s#%d", rel, i), Style: yaml.DoubleQuotedStyle})
		marked = true
	}
	if !marked {
		return data, false
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			return data, false
		}
	}
	if err := enc.Close(); err != nil {
		return data, false
	}
	return out.Bytes(), true
}

// mappingAt returns the mapping at keys under m, creating empty ones on
// the way; nil when something on the way is not a mapping.
func mappingAt(m *yaml.Node, keys ...string) *yaml.Node {
	for _, key := range keys {
		if m.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				next = m.Content[i+1]
				break
			}
		}
		if next == nil || (next.Kind == yaml.ScalarNode && next.Tag == "!!null") {
			if next == nil {
				next = &yaml.Node{}
				m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, next)
			}
			*next = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		}
		m = next
	}
	if m.Kind != yaml.MappingNode {
		return nil
	}
	return m
}

// unmark removes the marker annotation from a built object.
func unmark(o *Object) {
	anns, ok := lookup(o.Body, "metadata", "annotations").(map[string]any)
	if !ok {
		return
	}
	delete(anns, markerAnnotation)
	if len(anns) == 0 {
		delete(o.Body["metadata"].(map[string]any), "annotations")
	}
}

// contain finds, for every raw Kustomization, the one whose build would
// render its file: among the Kustomizations of the repository itself whose
// build reads the file (see reach), the one that names it most closely (a
// kustomization listing the file itself, else the deepest directory
// holding it). It returns each marker's container and each container's
// contents. A raw Kustomization without a container is a root: it is built
// as read.
func (b *builder) contain(raws []*ksSpec) (container map[string]string, contents map[string][]string) {
	for _, k := range raws {
		if _, mapped := b.source(k.SourceNamespace, k.SourceName); mapped || k.marker == "" || k.SourceKind != kindGitRepository {
			continue
		}
		dir := filepath.Join(b.root, filepath.FromSlash(k.Path))
		if !within(b.root, dir) {
			continue
		}
		dirs, files := b.reach(dir)
		b.scopes = append(b.scopes, scope{dirs, files, k.marker})
	}
	container = make(map[string]string)
	for _, k := range raws {
		if k.marker == "" {
			continue
		}
		if m := b.enclosing(filepath.Join(b.root, filepath.FromSlash(k.Origin)), k.marker); m != "" {
			container[k.marker] = m
		}
	}
	// Two Kustomizations whose paths hold each other's files would wait
	// for each other forever: the first of such a loop is a root.
	for _, k := range raws {
		seen := []string{k.marker}
		for m := container[k.marker]; m != ""; m = container[m] {
			if slices.Contains(seen, m) {
				delete(container, k.marker)
				break
			}
			seen = append(seen, m)
		}
	}
	contents = make(map[string][]string)
	for _, k := range raws {
		if c, ok := container[k.marker]; ok {
			contents[c] = append(contents[c], k.marker)
		}
	}
	return container, contents
}

// scope is what the build of one raw Kustomization (by its marker) reads:
// whole directory trees and single files.
type scope struct {
	dirs, files []string
	marker      string
}

// match returns how closely s names file: the length of the listed file
// or of the deepest directory holding it, -1 when s does not read it.
func (s scope) match(file string) int {
	best := -1
	for _, f := range s.files {
		if f == file {
			best = max(best, len(f))
		}
	}
	for _, d := range s.dirs {
		if within(d, file) {
			best = max(best, len(d))
		}
	}
	return best
}

// enclosing returns the marker of the Kustomization whose build reads
// file and names it most closely, other than self; "" when none does.
func (b *builder) enclosing(file, self string) string {
	best, bestLen := "", -1
	for _, s := range b.scopes {
		if s.marker == self {
			continue
		}
		if l := s.match(file); l > bestLen {
			best, bestLen = s.marker, l
		}
	}
	return best
}

// reach returns what a build of dir reads, as Flux builds it: the
// directories whose whole tree it takes (dir itself when it has no
// kustomization file: Flux then generates one listing the tree) and the
// files a kustomization lists, following the resources, components and
// bases of every kustomization on the way, "../" included. Remote
// resources are not followed.
func (b *builder) reach(dir string) (dirs, files []string) {
	seen := make(map[string]bool)
	var walk func(d string)
	walk = func(d string) {
		if seen[d] {
			return
		}
		seen[d] = true
		name := kustomizationName(b.mem, d)
		if name == "" {
			dirs = append(dirs, d)
			// Kustomizations in the tree may list files outside it.
			_ = b.mem.Walk(d, func(p string, info fs.FileInfo, err error) error {
				if err == nil && !info.IsDir() && filepath.Dir(p) != d && hasKustomizationName(p) {
					walk(filepath.Dir(p))
				}
				return nil
			})
			return
		}
		data, err := b.mem.ReadFile(filepath.Join(d, name))
		if err != nil {
			return
		}
		var kus struct {
			Resources, Components, Bases []string
		}
		if yaml.Unmarshal(data, &kus) != nil {
			return
		}
		for _, r := range slices.Concat(kus.Resources, kus.Components, kus.Bases) {
			if strings.Contains(r, "://") || strings.HasPrefix(r, "github.com/") {
				continue
			}
			p := filepath.Join(d, filepath.FromSlash(r))
			switch {
			case b.mem.IsDir(p):
				walk(p)
			case b.mem.Exists(p):
				files = append(files, p)
			}
		}
	}
	walk(filepath.Clean(dir))
	return dirs, files
}

// within reports whether file is in the tree of dir.
func within(dir, file string) bool {
	rel, err := filepath.Rel(dir, file)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
