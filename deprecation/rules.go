package deprecation

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"
)

// ComponentKubernetes is the component of the rules for Kubernetes' own
// APIs, and the component of a rule that names none.
const ComponentKubernetes = "k8s"

// builtinFS holds the built-in rule sets, one file per component
// (rules/<component>.yaml), in pluto's versions.yaml format.
//
//go:embed rules/*.yaml
var builtinFS embed.FS

// Rule says when one apiVersion and kind was deprecated and removed. Its
// field names in YAML and JSON are those of pluto's versions.yaml.
type Rule struct {
	// APIVersion is "group/version" ("extensions/v1beta1") or a core
	// version ("v1").
	APIVersion string `json:"version" yaml:"version"`
	// Kind is the object kind; an empty Kind matches every kind of
	// APIVersion (pluto uses this for whole API groups).
	Kind string `json:"kind" yaml:"kind"`
	// DeprecatedIn is the first release that deprecated the API; zero when
	// it was removed without a deprecation period.
	DeprecatedIn Version `json:"deprecated-in" yaml:"deprecated-in"`
	// RemovedIn is the first release that no longer serves it; zero when no
	// removal is planned.
	RemovedIn Version `json:"removed-in" yaml:"removed-in"`
	// ReplacementAPI is the apiVersion to migrate to; empty when there is no
	// replacement of the same kind.
	ReplacementAPI string `json:"replacement-api" yaml:"replacement-api"`
	// ReplacementAvailableIn is the first release serving ReplacementAPI.
	// Zero means not known to be served, as in pluto: the replacement then
	// counts as unavailable (exit code 4).
	ReplacementAvailableIn Version `json:"replacement-available-in" yaml:"replacement-available-in"`
	// Component is what the versions refer to: "k8s" for Kubernetes, or
	// e.g. "cert-manager" for a CRD's operator. Empty means "k8s".
	Component string `json:"component" yaml:"component"`
}

// GroupVersion splits APIVersion into its group ("" for the core group)
// and version.
func (r Rule) GroupVersion() (group, version string) {
	if i := strings.LastIndexByte(r.APIVersion, '/'); i >= 0 {
		return r.APIVersion[:i], r.APIVersion[i+1:]
	}
	return "", r.APIVersion
}

// StateAt returns the state of the rule's API in release target.
func (r Rule) StateAt(target Version) State {
	switch {
	case !r.RemovedIn.IsZero() && !target.Less(r.RemovedIn):
		return StateRemoved
	case r.removedWithin(target, 2):
		return StateRemovalSoon
	case !r.DeprecatedIn.IsZero() && !target.Less(r.DeprecatedIn):
		return StateDeprecated
	default:
		return StateNone
	}
}

// removedWithin reports whether the API is still served in target but
// removed within the next minors minor releases: removedWithin(v1.24, 1)
// is true for an API removed in v1.25.
func (r Rule) removedWithin(target Version, minors int) bool {
	return !r.RemovedIn.IsZero() && target.Less(r.RemovedIn) && r.RemovedIn.Less(target.minorsLater(minors+1))
}

// ReplacementAvailable reports whether there is a replacement API and it
// is served in target. A replacement without ReplacementAvailableIn is not
// known to be served and counts as unavailable, as in pluto.
func (r Rule) ReplacementAvailable(target Version) bool {
	return r.ReplacementAPI != "" && !r.ReplacementAvailableIn.IsZero() && !target.Less(r.ReplacementAvailableIn)
}

func (r Rule) validate() error {
	switch {
	case r.APIVersion == "" || strings.ContainsAny(r.APIVersion, " \t\r\n"):
		return fmt.Errorf("version %q is not an apiVersion", r.APIVersion)
	case strings.ContainsAny(r.Kind, " \t\r\n/"):
		return fmt.Errorf("kind %q is not a kind", r.Kind)
	case r.DeprecatedIn.IsZero() && r.RemovedIn.IsZero():
		return errors.New("neither deprecated-in nor removed-in is set")
	case !r.DeprecatedIn.IsZero() && !r.RemovedIn.IsZero() && r.RemovedIn.Less(r.DeprecatedIn):
		return fmt.Errorf("removed-in %s is before deprecated-in %s", r.RemovedIn, r.DeprecatedIn)
	}
	return nil
}

// State is what a rule means for an object in a target release. States are
// ordered by severity, so the larger of two states is the worse.
type State uint8

const (
	// StateNone: the API is neither deprecated nor removed in the target,
	// and its removal (if any) is more than two minor releases away.
	StateNone State = iota
	// StateDeprecated: DeprecatedIn <= target < RemovedIn, and the removal
	// is more than two minor releases away.
	StateDeprecated
	// StateRemovalSoon: still served in the target, but removed in one of
	// the next two minor releases (target < RemovedIn <= target+2 minors),
	// whether or not it was deprecated first.
	StateRemovalSoon
	// StateRemoved: RemovedIn <= target; the API server rejects the object.
	StateRemoved
)

var stateNames = [...]string{"none", "deprecated", "removal-soon", "removed"}

// String returns "none", "deprecated", "removal-soon" or "removed".
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// MarshalText implements encoding.TextMarshaler.
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (s *State) UnmarshalText(b []byte) error {
	i := slices.Index(stateNames[:], string(b))
	if i < 0 {
		return fmt.Errorf("deprecation: unknown state %q", b)
	}
	*s = State(i)
	return nil
}

// RuleSet is an immutable set of rules, at most one per apiVersion and
// kind. It is safe for concurrent use.
type RuleSet struct {
	rules   []Rule                    // sorted by APIVersion, Kind
	index   map[string]map[string]int // APIVersion -> Kind -> position in rules
	targets map[string]Version        // declared target-versions, by component
}

// rulesFile is pluto's versions.yaml.
type rulesFile struct {
	DeprecatedVersions []Rule             `yaml:"deprecated-versions"`
	TargetVersions     map[string]Version `yaml:"target-versions"`
}

// DefaultRules returns the built-in rules of every component, as pluto
// checks every component it knows by default: Kubernetes' own APIs
// (ComponentKubernetes) and the component rule sets (BuiltinComponents).
// Its declared target for ComponentKubernetes is the newest Kubernetes
// release the table was reviewed against. The set is parsed once and
// shared; a RuleSet is immutable.
func DefaultRules() *RuleSet { return builtin().all }

// BuiltinComponents returns the components with built-in rules, sorted,
// "k8s" first.
func BuiltinComponents() []string { return slices.Clone(builtin().components) }

// BuiltinRules returns the built-in rules of the given components (all of
// them when none is given). An unknown component is an error wrapping
// ErrUnknownComponent.
func BuiltinRules(components ...string) (*RuleSet, error) {
	b := builtin()
	if len(components) == 0 {
		return b.all, nil
	}
	var sets []*RuleSet
	for _, c := range components {
		s, ok := b.byComponent[c]
		if !ok {
			return nil, fmt.Errorf("%w: %q (built in: %s)", ErrUnknownComponent, c, strings.Join(b.components, ", "))
		}
		sets = append(sets, s)
	}
	return Merge(sets...), nil
}

// builtinSets are the parsed built-in rule files.
type builtinSets struct {
	all         *RuleSet
	byComponent map[string]*RuleSet
	components  []string // ComponentKubernetes first, then sorted
}

var builtin = sync.OnceValue(func() *builtinSets {
	b := &builtinSets{byComponent: make(map[string]*RuleSet)}
	files, err := builtinFS.ReadDir("rules")
	if err != nil {
		panic("deprecation: embedded rules: " + err.Error())
	}
	var sets []*RuleSet
	for _, f := range files {
		data, err := builtinFS.ReadFile(path.Join("rules", f.Name()))
		if err == nil {
			var s *RuleSet
			if s, err = LoadRules(bytes.NewReader(data)); err == nil {
				comp := strings.TrimSuffix(f.Name(), ".yaml")
				b.byComponent[comp] = s
				b.components = append(b.components, comp)
				sets = append(sets, s)
				continue
			}
		}
		panic("deprecation: embedded rules " + f.Name() + ": " + err.Error()) // caught by TestDefaultRules*
	}
	slices.SortFunc(b.components, func(x, y string) int {
		switch {
		case x == y:
			return 0
		case x == ComponentKubernetes:
			return -1
		case y == ComponentKubernetes:
			return 1
		}
		return strings.Compare(x, y)
	})
	b.all = Merge(sets...)
	return b
})

// LoadRules reads rules in pluto's versions.yaml format:
//
//	deprecated-versions:
//	  - version: extensions/v1beta1
//	    kind: Deployment
//	    deprecated-in: v1.9.0
//	    removed-in: v1.16.0
//	    replacement-api: apps/v1
//	    replacement-available-in: v1.9.0
//	    component: k8s
//	target-versions:
//	  k8s: v1.25.0
//
// Unknown fields are errors, so a misspelt key does not silently disable a
// rule. When a version and kind appear twice the later row wins. The
// errors wrap ErrInvalidRules.
func LoadRules(r io.Reader) (*RuleSet, error) {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	var f rulesFile
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%w: empty rules file", ErrInvalidRules)
		}
		return nil, fmt.Errorf("%w: %w", ErrInvalidRules, err)
	}
	if len(f.DeprecatedVersions) == 0 {
		return nil, fmt.Errorf("%w: no deprecated-versions", ErrInvalidRules)
	}
	return NewRuleSet(f.DeprecatedVersions, f.TargetVersions)
}

// NewRuleSet builds a RuleSet from rules and the declared target version
// of each component (nil for none). A later rule replaces an earlier one
// with the same APIVersion and Kind. The errors wrap ErrInvalidRules.
func NewRuleSet(rules []Rule, targets map[string]Version) (*RuleSet, error) {
	s := &RuleSet{index: make(map[string]map[string]int), targets: make(map[string]Version)}
	for i, r := range rules {
		if r.Component == "" {
			r.Component = ComponentKubernetes
		}
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("%w: rule %d (%s %s): %w", ErrInvalidRules, i+1, r.APIVersion, r.Kind, err)
		}
		s.add(r)
	}
	for c, v := range targets {
		if c == "" || v.IsZero() {
			return nil, fmt.Errorf("%w: target-versions: empty component or version", ErrInvalidRules)
		}
		s.targets[c] = v
	}
	s.sort()
	return s, nil
}

// Merge returns the union of sets. A rule in a later set replaces one with
// the same APIVersion and Kind in an earlier set; for each component the
// newest declared target version is kept. Nil sets are ignored.
func Merge(sets ...*RuleSet) *RuleSet {
	m := &RuleSet{index: make(map[string]map[string]int), targets: make(map[string]Version)}
	for _, s := range sets {
		if s == nil {
			continue
		}
		for _, r := range s.rules {
			m.add(r)
		}
		for c, v := range s.targets {
			if m.targets[c].Less(v) {
				m.targets[c] = v
			}
		}
	}
	m.sort()
	return m
}

// add inserts or replaces r; s.rules is unsorted until sort is called.
func (s *RuleSet) add(r Rule) {
	kinds := s.index[r.APIVersion]
	if kinds == nil {
		kinds = make(map[string]int)
		s.index[r.APIVersion] = kinds
	}
	if i, ok := kinds[r.Kind]; ok {
		s.rules[i] = r
		return
	}
	kinds[r.Kind] = len(s.rules)
	s.rules = append(s.rules, r)
}

func (s *RuleSet) sort() {
	slices.SortFunc(s.rules, func(a, b Rule) int {
		if c := strings.Compare(a.APIVersion, b.APIVersion); c != 0 {
			return c
		}
		return strings.Compare(a.Kind, b.Kind)
	})
	for i, r := range s.rules {
		s.index[r.APIVersion][r.Kind] = i
	}
}

// Len returns the number of rules.
func (s *RuleSet) Len() int { return len(s.rules) }

// Rules returns a copy of the rules, sorted by APIVersion and Kind.
func (s *RuleSet) Rules() []Rule { return slices.Clone(s.rules) }

// Lookup returns the rule for apiVersion and kind: the rule for that exact
// kind, else for a typed list (<Kind>List) the rule of <Kind>, else the
// apiVersion's rule with an empty Kind.
func (s *RuleSet) Lookup(apiVersion, kind string) (Rule, bool) {
	if i, ok := s.lookup(apiVersion, kind); ok {
		return s.rules[i], true
	}
	return Rule{}, false
}

func (s *RuleSet) lookup(apiVersion, kind string) (int, bool) {
	kinds := s.index[apiVersion]
	if i, ok := kinds[kind]; ok {
		return i, true
	}
	if item, ok := strings.CutSuffix(kind, "List"); ok && item != "" {
		if i, ok := kinds[item]; ok {
			return i, true
		}
	}
	i, ok := kinds[""]
	return i, ok
}

// Components returns the components the rules are for, sorted.
func (s *RuleSet) Components() []string {
	var out []string
	for _, r := range s.rules {
		if !slices.Contains(out, r.Component) {
			out = append(out, r.Component)
		}
	}
	slices.Sort(out)
	return out
}

// Select returns the rules of the given components only, with their
// declared targets. A component no rule is for is an error wrapping
// ErrUnknownComponent.
func (s *RuleSet) Select(components ...string) (*RuleSet, error) {
	have := s.Components()
	for _, c := range components {
		if !slices.Contains(have, c) {
			return nil, fmt.Errorf("%w: %q (the rules are for %s)", ErrUnknownComponent, c, strings.Join(have, ", "))
		}
	}
	out := &RuleSet{index: make(map[string]map[string]int), targets: make(map[string]Version)}
	for _, r := range s.rules {
		if slices.Contains(components, r.Component) {
			out.add(r)
		}
	}
	for c, v := range s.targets {
		if slices.Contains(components, c) {
			out.targets[c] = v
		}
	}
	out.sort()
	return out, nil
}

// Targets returns the declared target version of each component
// (target-versions in the rules files).
func (s *RuleSet) Targets() map[string]Version { return maps.Clone(s.targets) }

// CheckTarget returns an error wrapping ErrUnknownTarget when target is a
// Kubernetes minor release newer than the newest the rules were reviewed
// against (their declared k8s target): the table cannot know what that
// release deprecates or removes. Rules without a declared k8s target
// accept any target.
func (s *RuleSet) CheckTarget(target Version) error {
	known, ok := s.targets[ComponentKubernetes]
	if !ok || target.Major < known.Major || (target.Major == known.Major && target.Minor <= known.Minor) {
		return nil
	}
	return fmt.Errorf("%w: Kubernetes %s is newer than the rules know (they were reviewed against %s)",
		ErrUnknownTarget, target, Version{Major: known.Major, Minor: known.Minor})
}

// Newest returns the default target version of component: the version
// declared in target-versions if any, else the newest version any of the
// component's rules mentions. It is the zero Version for an unknown
// component.
func (s *RuleSet) Newest(component string) Version {
	if v, ok := s.targets[component]; ok {
		return v
	}
	var newest Version
	for _, r := range s.rules {
		if r.Component != component {
			continue
		}
		for _, v := range []Version{r.DeprecatedIn, r.RemovedIn, r.ReplacementAvailableIn} {
			if newest.Less(v) {
				newest = v
			}
		}
	}
	return newest
}
