package linter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Errors returned by this package.
var (
	// ErrUnknownLanguage is returned by Registry.Lookup callers and NewService
	// when a language has not been registered.
	ErrUnknownLanguage = errors.New("linter: unknown language")
	// ErrDuplicateLanguage is returned by Registry.Register for a name that is
	// already taken.
	ErrDuplicateLanguage = errors.New("linter: language already registered")
	// ErrUnknownVersion is returned by VersionProfile for a version that is
	// not one of the four standard versions.
	ErrUnknownVersion = errors.New("linter: unknown version")
	// ErrCrashed is returned by a Service whose fault injection has fired:
	// from then on it fails every call.
	ErrCrashed = errors.New("linter: crashed")
)

// Source is one file to lint.
type Source struct {
	// Name is used in messages only; it may be empty.
	Name string
	// Code is the text of the file. It need not be valid code.
	Code []byte
}

// Diagnostic is one problem found in a Source. Line and Column are 1-based,
// as pycodestyle and checkstyle print them; Code is the peer tool's code
// (E501, LineLength, ...).
type Diagnostic struct {
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (d Diagnostic) String() string {
	return fmt.Sprintf("%d:%d: %s %s", d.Line, d.Column, d.Code, d.Message)
}

// Linter checks source code. Implementations are safe for concurrent use,
// do not block on I/O, and never fail on code that does not parse: they
// report what they can. An error means the linter itself could not run
// (for example ctx was cancelled).
type Linter interface {
	Lint(ctx context.Context, src Source) ([]Diagnostic, error)
}

// LinterFunc adapts a function to the Linter interface.
type LinterFunc func(ctx context.Context, src Source) ([]Diagnostic, error)

// Lint calls f(ctx, src).
func (f LinterFunc) Lint(ctx context.Context, src Source) ([]Diagnostic, error) { return f(ctx, src) }

// Config selects rules and sets their options. The zero value is the
// language's default configuration: what its peer tool reports when run
// with no options (for Python, pycodestyle's default selection).
//
// Select and Ignore follow pycodestyle, the peer that has them;
// ExtendIgnore follows flake8, the front end most users know them from:
//
//   - Select, when non-empty, enables exactly the codes that start with one
//     of its prefixes ("E2" selects E201, E225, ...); Ignore is then not
//     consulted (pycodestyle: --select overrides --ignore).
//   - Ignore, when Select is empty, disables the codes that start with one
//     of its prefixes.
//   - When both are empty, the language's default ignore list applies (see
//     WithDefaultIgnore); setting either replaces it.
//   - ExtendIgnore disables codes on top of that without replacing the
//     default ignore list, and wins over a Select prefix that is not
//     longer than its own (flake8: --select=E --extend-ignore=E501 drops
//     E501, --select=E501 --extend-ignore=E5 keeps it).
type Config struct {
	Select       []string
	Ignore       []string
	ExtendIgnore []string
	// MaxLineLength is the longest allowed line; 0 means the language's
	// default (79 for Python, as pycodestyle; 80 for Java, as checkstyle).
	MaxLineLength int
	// Options are the language's own settings, named as its peer tool names
	// them: pycodestyle's options ("max-doc-length", "hang-closing",
	// "indent-size", ...) for Python; for Java, "config" names a checkstyle
	// configuration — a built-in one ("sun_checks", "google_checks") or the
	// XML text of one. A language rejects (from New) an option it does not
	// know, so a typo never passes silently.
	Options map[string]string
}

// Enabled reports whether code is enabled by c, as the Config
// documentation describes. A language with a default ignore list asks
// c.WithDefaultIgnore(list).Enabled(code).
func (c Config) Enabled(code string) bool {
	ext := longestPrefix(c.ExtendIgnore, code)
	if len(c.Select) > 0 {
		sel := longestPrefix(c.Select, code)
		return sel >= 0 && ext < sel
	}
	return ext < 0 && longestPrefix(c.Ignore, code) < 0
}

// WithDefaultIgnore returns c with Ignore set to list when neither Select
// nor Ignore is set: a language's default ignore list, such as
// pycodestyle's E121, E123, E126, E226, E24, E704, W503 and W504.
func (c Config) WithDefaultIgnore(list []string) Config {
	if len(c.Select) == 0 && len(c.Ignore) == 0 {
		c.Ignore = list
	}
	return c
}

// longestPrefix returns the length of the longest prefix of code in list, or
// -1 when none matches.
func longestPrefix(list []string, code string) int {
	best := -1
	for _, p := range list {
		if strings.HasPrefix(code, p) && len(p) > best {
			best = len(p)
		}
	}
	return best
}

// Sort orders diagnostics by line, column and code, the order the peer
// tools print them in.
func Sort(ds []Diagnostic) {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column), strings.Compare(a.Code, b.Code))
	})
}

// Language describes a rule set that a Registry can build linters from.
type Language struct {
	// Name is the language's name as used in URLs ("python", "java").
	Name string
	// Codes lists every code the rule set can report.
	Codes []string
	// Extensions are the file name extensions of the language (".py"),
	// used by tools that walk directories.
	Extensions []string
	// NewlineAtEOF is the code of the rule "the file ends with a newline",
	// the rule that version 2.0 of the reference service adds to 1.0.
	NewlineAtEOF string
	// New builds a linter for cfg.
	New func(cfg Config) (Linter, error)
}

// Registry maps language names to rule sets. Users add languages with
// Register; nothing is registered implicitly. A Registry is safe for
// concurrent use.
type Registry struct {
	mu    sync.RWMutex
	langs map[string]Language // guarded by mu
}

// NewRegistry returns a registry holding langs.
func NewRegistry(langs ...Language) (*Registry, error) {
	r := &Registry{langs: make(map[string]Language)}
	for _, l := range langs {
		if err := r.Register(l); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Register adds l. Its name must be non-empty and not yet registered.
func (r *Registry) Register(l Language) error {
	if l.Name == "" || l.New == nil {
		return fmt.Errorf("linter: language needs a Name and a New func")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.langs == nil {
		r.langs = make(map[string]Language)
	}
	if _, ok := r.langs[l.Name]; ok {
		return fmt.Errorf("%w: %q", ErrDuplicateLanguage, l.Name)
	}
	r.langs[l.Name] = l
	return nil
}

// Lookup returns the language called name.
func (r *Registry) Lookup(name string) (Language, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	l, ok := r.langs[name]
	if !ok {
		return Language{}, fmt.Errorf("%w: %q", ErrUnknownLanguage, name)
	}
	return l, nil
}

// Names returns the registered language names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.langs))
	for n := range r.langs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
