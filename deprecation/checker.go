package deprecation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"

	"gopkg.in/yaml.v3"
)

// Errors returned by this package.

// DocumentError is a document that could not be checked, or with Index -1
// a whole source that could not be read. The checker reports it in
// Result.Errors and goes on with the next document.
type DocumentError struct {
	Source string
	// Index is the 0-based position of the document among the source's
	// non-empty documents, or -1 for the whole source.
	Index int
	// Line is the 1-based line where the document starts (0 with Index -1).
	// Line numbers inside Err are relative to it.
	Line int
	Err  error
}

func (e *DocumentError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("%s: %v", e.Source, e.Err)
	}
	return fmt.Sprintf("%s: document %d (line %d): %v", e.Source, e.Index, e.Line, e.Err)
}

func (e *DocumentError) Unwrap() error { return e.Err }

// Finding is one object that uses a deprecated or removed API.
type Finding struct {
	// Source names the stream the object came from (a file name, "-").
	Source string `json:"source"`
	// Index is the 0-based position of the document among the source's
	// non-empty documents; Line is the 1-based line where it starts.
	Index int `json:"index"`
	Line  int `json:"line"`
	// Item is the 1-based position of the object in the items of a List
	// document, or 0 when the document is the object itself.
	Item       int    `json:"item,omitempty"`
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
	// State is never StateNone: objects unaffected in Target are not
	// reported.
	State State `json:"state"`
	// Target is the release the object was checked against (the target of
	// Rule.Component).
	Target Version `json:"target"`
	// ReplacementAvailable reports whether Rule.ReplacementAPI exists and
	// is served in Target; when false the object cannot simply be
	// migrated (pluto's exit code 4).
	ReplacementAvailable bool `json:"replacementAvailable"`
	Rule                 Rule `json:"rule"`
}

// Result is what Check found in one source.
type Result struct {
	Source   string
	Findings []Finding
	// Errors are the documents that could not be parsed. Only documents
	// that can match a rule are parsed, so a broken document that cannot
	// match any rule is not reported.
	Errors []*DocumentError
	// Documents counts the non-empty documents; Parsed those the pre-scan
	// could not rule out and that were parsed as YAML.
	Documents, Parsed int
}

// Limits on one document, against hostile input: a List of Lists reached
// through YAML aliases expands exponentially ("billion laughs"; 818 bytes
// can stand for 10^8 objects), and nesting costs recursion. A document over
// a limit is reported as an error, its findings are dropped, and the check
// goes on with the next document.
const (
	// MaxListDepth bounds the nesting of Lists in Lists.
	MaxListDepth = 8
	// MaxObjectsPerDocument bounds the objects one document may hold,
	// List items included.
	MaxObjectsPerDocument = 100_000
	// MaxAliasedObjects bounds the objects reached through YAML aliases in
	// one document.
	MaxAliasedObjects = 1_000
)

// Options configures a Checker. The zero value checks against the newest
// Kubernetes release the rules know of.
type Options struct {
	// Target is the Kubernetes release to check against. Zero means
	// rules.Newest(ComponentKubernetes).
	Target Version
	// ComponentTargets sets the target of other components' rules, e.g.
	// {"cert-manager": v1.6.0}. A component without an entry, or with a
	// zero Version, is checked against rules.Newest(component). Target, when set, overrides an
	// entry for "k8s".
	ComponentTargets map[string]Version
	// Lazy parses only the documents a rule can match (and Lists, and
	// documents the pre-scan cannot read), so a broken document that no
	// rule could match is not reported. The zero value reports every
	// broken document; documents the validator recognises as well-formed
	// are still not parsed.
	Lazy bool
}

// Checker finds deprecated and removed APIs in manifests. It is immutable
// and safe for concurrent use.
type Checker struct {
	rules   *RuleSet
	target  Version
	targets map[string]Version // every component's target
	lazy    bool
	// index holds every rule with its state in its component's target:
	// apiVersion -> kind ("" for a whole apiVersion) -> entry.
	index map[string]map[string]*entry
}

// entry is a rule with what it means in the checker's target.
type entry struct {
	rule                 Rule
	target               Version
	state                State
	replacementAvailable bool
}

// NewChecker returns a Checker for rules (nil means DefaultRules()).
func NewChecker(rules *RuleSet, opts Options) (*Checker, error) {
	if rules == nil {
		rules = DefaultRules()
	}
	targets := make(map[string]Version, len(opts.ComponentTargets)+1)
	for comp, v := range opts.ComponentTargets {
		if comp == "" {
			return nil, errors.New("deprecation: ComponentTargets has an empty component name")
		}
		targets[comp] = v
	}
	if !opts.Target.IsZero() {
		targets[ComponentKubernetes] = opts.Target
	}
	if targets[ComponentKubernetes].IsZero() {
		targets[ComponentKubernetes] = rules.Newest(ComponentKubernetes)
	}
	c := &Checker{rules: rules, target: targets[ComponentKubernetes], targets: targets, lazy: opts.Lazy,
		index: make(map[string]map[string]*entry)}
	for _, r := range rules.rules {
		t, ok := targets[r.Component]
		if !ok || t.IsZero() {
			t = rules.Newest(r.Component)
			targets[r.Component] = t
		}
		kinds := c.index[r.APIVersion]
		if kinds == nil {
			kinds = make(map[string]*entry)
			c.index[r.APIVersion] = kinds
		}
		kinds[r.Kind] = &entry{rule: r, target: t, state: r.StateAt(t), replacementAvailable: r.ReplacementAvailable(t)}
	}
	return c, nil
}

// Target returns the Kubernetes release the checker checks against.
func (c *Checker) Target() Version { return c.target }

// Targets returns the release each component of the rules is checked
// against.
func (c *Checker) Targets() map[string]Version { return maps.Clone(c.targets) }

// Rules returns the checker's rules.
func (c *Checker) Rules() *RuleSet { return c.rules }

// lookup is RuleSet.Lookup on the index: the entry for the exact kind,
// else for a typed list the entry of its item kind, else the apiVersion's
// entry for every kind, else nil.
func (c *Checker) lookup(apiVersion, kind string) *entry {
	kinds := c.index[apiVersion]
	if e, ok := kinds[kind]; ok {
		return e
	}
	if item, ok := strings.CutSuffix(kind, "List"); ok && item != "" {
		if e, ok := kinds[item]; ok {
			return e
		}
	}
	return kinds[""]
}

// Object checks one object known by its type and name, as a live object's
// managed fields name the apiVersion a manager wrote it with. It returns
// the finding and true when a rule affects apiVersion and kind in the
// target.
func (c *Checker) Object(source, apiVersion, kind, name, namespace string) (Finding, bool) {
	e := c.lookup(apiVersion, kind)
	if e == nil || e.state == StateNone {
		return Finding{}, false
	}
	return e.finding(source, apiVersion, kind, name, namespace), true
}

func (e *entry) finding(source, apiVersion, kind, name, namespace string) Finding {
	return Finding{Source: source, APIVersion: apiVersion, Kind: kind, Name: name, Namespace: namespace,
		State: e.state, Target: e.target, ReplacementAvailable: e.replacementAvailable, Rule: e.rule}
}

// Check checks data, a stream of YAML documents or of JSON objects, named
// name in findings. Objects of kind List, and of kinds ending in "List"
// with items, are expanded. A document that cannot be parsed becomes an
// entry of Result.Errors; the only error returned is ctx's.
//
// Check reads every document's top-level apiVersion and kind with a byte
// scanner and parses (as JSON or YAML) only the documents that a rule
// affects in the target, Lists, and documents the scanner cannot read, so
// a large stream of current objects costs little more than reading it.
//
// Streams in UTF-16 or UTF-32 (with a byte order mark, or told by their NUL
// bytes) are decoded first; data with NUL bytes in no such encoding, or
// not valid in its encoding, is one whole-source error (Index -1).
func (c *Checker) Check(ctx context.Context, name string, data []byte) (Result, error) {
	res := Result{Source: name}
	text, _, err := decodeText(data)
	if err != nil {
		res.Errors = append(res.Errors, &DocumentError{Source: name, Index: -1, Err: err})
		return res, ctx.Err()
	}
	sc := newScanner(text)
	for i := 0; ; i++ {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		doc, ok := sc.next()
		if !ok {
			return res, nil
		}
		res.Documents++
		if !doc.ambiguous && !c.candidate(doc.apiVersion, doc.kind) && (c.lazy || wellFormed(doc)) {
			continue
		}
		res.Parsed++
		c.checkDocument(&res, i, doc)
	}
}

// wellFormed reports whether a document the pre-scan ruled out is
// certainly well-formed, so that it need not be parsed to find out.
func wellFormed(doc document) bool {
	if doc.data[0] == '{' {
		return json.Valid(doc.data)
	}
	return validYAML(doc.data)
}

// candidate reports whether a document with these top-level values must
// be parsed: a rule matches it and it is affected in the target, or it is
// a List (with or without an apiVersion of its own).
func (c *Checker) candidate(apiVersion, kind []byte) bool {
	if kind == nil {
		return false // not a Kubernetes object
	}
	if isListKind(string(kind)) {
		return true
	}
	if apiVersion == nil {
		return false
	}
	// lookup, written out: converting in the map index expressions
	// does not allocate.
	kinds := c.index[string(apiVersion)]
	e, ok := kinds[string(kind)]
	if !ok {
		e = kinds[""]
	}
	return e != nil && e.state != StateNone
}

func isListKind(kind string) bool { return strings.HasSuffix(kind, "List") }

func (c *Checker) checkDocument(res *Result, index int, doc document) {
	fail := func(err error) {
		res.Errors = append(res.Errors, &DocumentError{Source: res.Source, Index: index, Line: doc.line, Err: err})
	}
	obj, err := parseObject(doc.data)
	if err != nil {
		fail(err)
		return
	}
	c.addDocument(res, index, doc.line, obj, fail)
}

// addDocument adds the findings of a parsed document, Lists expanded.
func (c *Checker) addDocument(res *Result, index, line int, obj object, fail func(error)) {
	x := expansion{c: c, res: res, index: index, line: line, fail: fail}
	before := len(res.Findings)
	if err := x.add(obj, 0, 0, false); err != nil {
		// Over a limit: the document is hostile or broken; what it
		// expanded to so far is not a finding.
		clear(res.Findings[before:])
		res.Findings = res.Findings[:before]
		fail(err)
	}
}

// expansion walks the objects of one document, Lists expanded, within the
// limits on objects and aliases.
type expansion struct {
	c           *Checker
	res         *Result
	index, line int
	fail        func(error)
	// objects and aliased count the objects seen, and those reached
	// through a YAML alias.
	objects, aliased int
}

// add checks obj, the item-th item (1-based; 0 for the document itself) of
// a List at depth, and expands it if it is a List itself. It returns an
// error when the document goes over a limit.
func (x *expansion) add(obj object, item, depth int, viaAlias bool) error {
	x.objects++
	if viaAlias || obj.aliased {
		x.aliased++
	}
	switch {
	case x.objects > MaxObjectsPerDocument:
		return fmt.Errorf("more than %d objects in one document", MaxObjectsPerDocument)
	case x.aliased > MaxAliasedObjects:
		return fmt.Errorf("YAML aliases expand to more than %d objects", MaxAliasedObjects)
	}
	list := isListKind(obj.kind)
	// A typed list (DeploymentList) with items is reported through its
	// items; without any, as itself.
	if !list || obj.kind == "List" || obj.items == 0 {
		if e := x.c.lookup(obj.apiVersion, obj.kind); e != nil && e.state != StateNone {
			f := e.finding(x.res.Source, obj.apiVersion, obj.kind, obj.name, obj.namespace)
			f.Index, f.Line, f.Item = x.index, x.line, item
			x.res.Findings = append(x.res.Findings, f)
		}
	}
	if !list || obj.items == 0 {
		return nil
	}
	if depth >= MaxListDepth {
		return fmt.Errorf("lists nested more than %d deep", MaxListDepth)
	}
	for j := range obj.items {
		it, err := obj.item(j)
		if err != nil {
			x.fail(fmt.Errorf("item %d: %w", j+1, err))
			continue
		}
		// Items of a typed list (DeploymentList) may omit their TypeMeta.
		if obj.kind != "List" {
			if it.apiVersion == "" {
				it.apiVersion = obj.apiVersion
			}
			if it.kind == "" {
				it.kind = strings.TrimSuffix(obj.kind, "List")
			}
		}
		n := item
		if n == 0 {
			n = j + 1
		}
		if err := x.add(it, n, depth+1, viaAlias || obj.aliased); err != nil {
			return err
		}
	}
	return nil
}

// parseObject parses one document. A document that starts with '{' is
// first read as JSON, as kubectl does: YAML parsers reject some valid JSON
// (the escape "\/").
func parseObject(data []byte) (object, error) {
	if len(data) > 0 && data[0] == '{' {
		if obj, err := readJSON(data); err == nil {
			return obj, nil
		}
	}
	var root yaml.Node
	if err := unmarshal(data, &root); err != nil {
		return object{}, err
	}
	return readObject(&root)
}

// unmarshal is yaml.Unmarshal, with a panic in the parser turned into an
// error so that one document cannot stop a scan.
func unmarshal(data []byte, n *yaml.Node) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("yaml parser panic: %v", p)
		}
	}()
	return yaml.Unmarshal(data, n)
}

// object holds the fields of a Kubernetes object the checker reads.
type object struct {
	apiVersion, kind, name, namespace string
	// aliased is set when the object, or its items, were reached through
	// a YAML alias.
	aliased bool
	// items is the number of List items; they are read by item, from
	// yamlItems or jsonItems.
	items     int
	yamlItems []*yaml.Node
	jsonItems []json.RawMessage
}

// item reads the i-th List item.
func (o object) item(i int) (object, error) {
	if o.jsonItems != nil {
		return readJSON(o.jsonItems[i])
	}
	return readObject(o.yamlItems[i])
}

// readJSON reads an object from a JSON document. Keys are matched exactly
// (encoding/json's struct decoding would ignore case), and values of the
// wrong type read as "".
func readJSON(data []byte) (object, error) {
	var obj object
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return obj, err
	}
	obj.apiVersion, obj.kind = jsonString(top["apiVersion"]), jsonString(top["kind"])
	var meta map[string]json.RawMessage
	if json.Unmarshal(top["metadata"], &meta) == nil {
		obj.name, obj.namespace = jsonString(meta["name"]), jsonString(meta["namespace"])
	}
	if items := top["items"]; len(items) > 0 && items[0] == '[' {
		if err := json.Unmarshal(items, &obj.jsonItems); err != nil {
			return obj, err
		}
		obj.items = len(obj.jsonItems)
	}
	return obj, nil
}

func jsonString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// readObject reads an object from a parsed document or List item. A node
// that is not a mapping (an empty document, a scalar) gives the zero
// object, which no rule matches.
func readObject(n *yaml.Node) (object, error) {
	var obj object
	obj.aliased = n != nil && n.Kind == yaml.AliasNode
	n = resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return obj, nil
	}
	var seen [3]bool
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], resolve(n.Content[i+1])
		field := -1
		switch k.Value {
		case "apiVersion":
			field, obj.apiVersion = 0, scalar(v)
		case "kind":
			field, obj.kind = 1, scalar(v)
		case "metadata":
			field = 2
			if v != nil && v.Kind == yaml.MappingNode {
				for j := 0; j+1 < len(v.Content); j += 2 {
					switch v.Content[j].Value {
					case "name":
						obj.name = scalar(resolve(v.Content[j+1]))
					case "namespace":
						obj.namespace = scalar(resolve(v.Content[j+1]))
					}
				}
			}
		case "items":
			if v != nil && v.Kind == yaml.SequenceNode {
				obj.yamlItems, obj.items = v.Content, len(v.Content)
				obj.aliased = obj.aliased || n.Content[i+1].Kind == yaml.AliasNode
			}
		}
		if field >= 0 {
			if seen[field] {
				return object{}, fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
			}
			seen[field] = true
		}
	}
	return obj, nil
}

// resolve follows document nodes and aliases to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && i < 16; i++ {
		switch {
		case n.Kind == yaml.DocumentNode && len(n.Content) > 0:
			n = n.Content[0]
		case n.Kind == yaml.AliasNode:
			n = n.Alias
		default:
			return n
		}
	}
	return n
}

// scalar returns the text of a scalar node, "" for null or a non-scalar.
func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return ""
	}
	return n.Value
}
