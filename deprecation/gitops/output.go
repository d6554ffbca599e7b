package gitops

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"maps"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// defaultStripAttrs are the annotations MarshalObject always leaves out:
// kustomize's index annotations, which change when objects are reordered
// (flux-local's default list).
var defaultStripAttrs = []string{"config.kubernetes.io/index", "internal.config.kubernetes.io/index"}

// keyOrder ranks the keys written first; the others follow sorted.
var keyOrder = map[string]int{"apiVersion": 1, "kind": 2, "metadata": 3, "name": 4, "namespace": 5, "labels": 6, "annotations": 7}

// MarshalObject writes an object as YAML, the way kubectl does (two
// spaces, sequences not indented): apiVersion, kind and metadata first
// (name, namespace, labels, annotations first in it), other keys sorted,
// so equal objects are written alike whatever their source's order.
// kustomize's index annotations (config.kubernetes.io/index and
// internal.config.kubernetes.io/index, which change when objects are
// reordered), and the labels and annotations named in strip, are left out
// of the object's metadata, of spec.template.metadata and of a List's
// items.
func MarshalObject(o Object, strip []string) ([]byte, error) {
	n := toNode(o.Body, nil, append(slices.Clip(defaultStripAttrs), strip...))
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(n); err != nil {
		return nil, fmt.Errorf("gitops: %s %s: %w", o.Kind, o.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// stripAt reports whether the labels and annotations of the metadata at
// path are stripped: the object's, its pod template's, a List item's.
func stripAt(path []string) bool {
	switch len(path) {
	case 1:
		return path[0] == "metadata"
	case 3:
		return path[0] == "spec" && path[1] == "template" && path[2] == "metadata"
	case 2:
		return path[0] == "items" && path[1] == "metadata"
	}
	return false
}

func toNode(v any, path, strip []string) *yaml.Node {
	switch v := v.(type) {
	case map[string]any:
		keys := slices.Collect(maps.Keys(v))
		slices.SortFunc(keys, func(a, b string) int {
			ra, rb := keyOrder[a], keyOrder[b]
			if ra == 0 {
				ra = 100
			}
			if rb == 0 {
				rb = 100
			}
			if ra != rb {
				return ra - rb
			}
			return strings.Compare(a, b)
		})
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range keys {
			child := v[k]
			if len(strip) > 0 && (k == "labels" || k == "annotations") && stripAt(path) {
				m, ok := child.(map[string]any)
				if ok {
					m = maps.Clone(m)
					for _, s := range strip {
						delete(m, s)
					}
					if len(m) == 0 {
						continue
					}
					child = m
				}
			}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, toNode(child, append(path, k), strip))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, c := range v {
			n.Content = append(n.Content, toNode(c, path, strip))
		}
		return n
	default:
		var n yaml.Node
		if err := n.Encode(v); err != nil {
			return &yaml.Node{Kind: yaml.ScalarNode, Value: fmt.Sprint(v)}
		}
		return &n
	}
}

// placeholder is flux-local's stand-in for a wiped Secret value.
func placeholder(key string) string { return "..PLACEHOLDER_" + key + ".." }

// WipeSecret returns a Secret with every value of data and stringData
// replaced by a placeholder naming its key ("..PLACEHOLDER_<key>..",
// base64-encoded in data), as flux-local's --wipe-secrets does; other
// objects are returned as they are.
func WipeSecret(o Object) Object {
	if o.Kind != kindSecret || o.APIVersion != "v1" {
		return o
	}
	body := maps.Clone(o.Body)
	for key, enc := range map[string]bool{"data": true, "stringData": false} {
		m, ok := body[key].(map[string]any)
		if !ok {
			continue
		}
		wiped := make(map[string]any, len(m))
		for k := range m {
			v := placeholder(k)
			if enc {
				v = base64.StdEncoding.EncodeToString([]byte(v))
			}
			wiped[k] = v
		}
		body[key] = wiped
	}
	o.Body = body
	return o
}
