package python

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/fleetkit/fleetkit/linter"
)

// Errors returned by this package.
var (
	// ErrInvalidConfig is returned by New for a configuration it cannot
	// honour, such as a negative MaxLineLength.
	ErrInvalidConfig = errors.New("python: invalid config")
	// ErrTooLarge is returned by Lint for a source of 2 GiB or more, as
	// positions are kept in 32 bits.
	ErrTooLarge = errors.New("python: source too large")
)

// DefaultMaxLineLength is pycodestyle's default for E501.
const DefaultMaxLineLength = 79

// Language returns the Python rule set, for registration in a
// linter.Registry.
func Language() linter.Language {
	return linter.Language{
		Name:         "python",
		Codes:        Codes(),
		Extensions:   []string{".py"},
		NewlineAtEOF: "W292",
		New:          func(cfg linter.Config) (linter.Linter, error) { return New(cfg) },
	}
}

// Codes returns every code this package can report, sorted.
func Codes() []string {
	cs := append([]string(nil), codeNames[:]...)
	slices.Sort(cs)
	return cs
}

// Linter checks Python source the way pycodestyle 2.10 does. It holds
// only its immutable configuration and a pool of scratch buffers, so a
// *Linter is safe for concurrent use.
type Linter struct {
	en      enabledSet
	groups  checkGroups
	maxLine int
	pool    sync.Pool // of *checker
}

var _ linter.Linter = (*Linter)(nil)

// New returns a linter for cfg. A zero MaxLineLength means 79; a negative
// one is an error.
func New(cfg linter.Config) (*Linter, error) {
	if cfg.MaxLineLength < 0 {
		return nil, fmt.Errorf("%w: negative MaxLineLength %d", ErrInvalidConfig, cfg.MaxLineLength)
	}
	l := &Linter{maxLine: cfg.MaxLineLength}
	if l.maxLine == 0 {
		l.maxLine = DefaultMaxLineLength
	}
	for i, name := range codeNames {
		l.en[i] = cfg.Enabled(name)
	}
	l.groups = newCheckGroups(&l.en)
	return l, nil
}

// Lint checks src. It fails only when ctx is done or src is too large;
// source that does not tokenize is reported as E901 along with whatever
// else could be checked.
func (l *Linter) Lint(ctx context.Context, src linter.Source) ([]linter.Diagnostic, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(src.Code) >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: %s is %d bytes", ErrTooLarge, src.Name, len(src.Code))
	}
	c, _ := l.pool.Get().(*checker)
	if c == nil {
		c = &checker{}
	}
	c.en, c.groups, c.maxLine = &l.en, &l.groups, l.maxLine
	c.reset(src.Code)
	err := c.run(ctx)
	var out []linter.Diagnostic
	if len(c.diags) > 0 && err == nil {
		out = slices.Clone(c.diags)
		linter.Sort(out)
	}
	c.src = nil
	l.pool.Put(c)
	return out, err
}
