package python

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
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

// pycodestyle's defaults.
const (
	// DefaultMaxLineLength is the longest line E501 allows.
	DefaultMaxLineLength = 79
	// DefaultIndentSize is the indent E111 and the continuation lines
	// expect.
	DefaultIndentSize = 4
)

// DefaultIgnore is pycodestyle's default ignore list, in force when
// neither Select nor Ignore is set (ExtendIgnore adds to it).
var DefaultIgnore = []string{"E121", "E123", "E126", "E226", "E24", "E704", "W503", "W504"}

// The options this package takes in linter.Config.Options, named as
// pycodestyle names them (an underscore may stand for a dash).
const (
	// OptionMaxDocLength enables W505: the longest comment or docstring
	// line, a number of characters. Unset, W505 is not checked.
	OptionMaxDocLength = "max-doc-length"
	// OptionHangClosing makes closing brackets hang (E133 instead of
	// E123): true or false, or pycodestyle's 1/0, yes/no, on/off.
	OptionHangClosing = "hang-closing"
	// OptionIndentSize is the number of spaces of an indent (default 4).
	OptionIndentSize = "indent-size"
)

// options is the checker's view of the settings.
type options struct {
	maxLine     int
	maxDoc      int // -1: W505 off
	indentSize  int
	hangClosing bool
}

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
	en     enabledSet
	groups checkGroups
	opt    options
	pool   sync.Pool // of *checker
}

var _ linter.Linter = (*Linter)(nil)

// New returns a linter for cfg: pycodestyle's default configuration for
// the zero Config. A zero MaxLineLength means 79; a negative one, an
// unknown option or a value pycodestyle would not take is an error
// wrapping ErrInvalidConfig.
func New(cfg linter.Config) (*Linter, error) {
	if cfg.MaxLineLength < 0 {
		return nil, fmt.Errorf("%w: negative MaxLineLength %d", ErrInvalidConfig, cfg.MaxLineLength)
	}
	l := &Linter{opt: options{maxLine: cfg.MaxLineLength, maxDoc: -1, indentSize: DefaultIndentSize}}
	if l.opt.maxLine == 0 {
		l.opt.maxLine = DefaultMaxLineLength
	}
	if err := l.opt.parse(cfg.Options); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaultIgnore(DefaultIgnore)
	for i, name := range codeNames {
		l.en[i] = cfg.Enabled(name)
	}
	l.groups = newCheckGroups(&l.en, l.opt)
	return l, nil
}

// maxOption bounds the numeric options, far above any real setting.
const maxOption = 1 << 20

// parse reads pycodestyle's options from opts.
func (o *options) parse(opts map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		v := strings.TrimSpace(opts[k])
		switch strings.ReplaceAll(k, "_", "-") {
		case OptionMaxDocLength:
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 || n > maxOption {
				return fmt.Errorf("%w: %s must be a number of characters from 0 to %d, not %q", ErrInvalidConfig, k, maxOption, opts[k])
			}
			o.maxDoc = n
		case OptionIndentSize:
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > maxOption {
				return fmt.Errorf("%w: %s must be a number of spaces from 1 to %d, not %q", ErrInvalidConfig, k, maxOption, opts[k])
			}
			o.indentSize = n
		case OptionHangClosing:
			b, ok := parseBool(v)
			if !ok {
				return fmt.Errorf("%w: %s must be true or false, not %q", ErrInvalidConfig, k, opts[k])
			}
			o.hangClosing = b
		default:
			return fmt.Errorf("%w: unknown option %q (python takes %s, %s and %s; select, ignore and max-line-length are fields of the configuration)",
				ErrInvalidConfig, k, OptionMaxDocLength, OptionHangClosing, OptionIndentSize)
		}
	}
	return nil
}

// parseBool reads a boolean the way Python's configparser does, and Go's
// true/false.
func parseBool(s string) (value, ok bool) {
	switch strings.ToLower(s) {
	case "1", "yes", "true", "on":
		return true, true
	case "0", "no", "false", "off":
		return false, true
	}
	return false, false
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
	c.en, c.groups, c.opt = &l.en, &l.groups, &l.opt
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

// FileError returns what pycodestyle reports for a file it cannot read:
// E902 at 1:1 with Python's message for err ("FileNotFoundError: [Errno 2]
// No such file or directory: 'app.py'"), or nothing when E902 is not
// enabled.
func (l *Linter) FileError(name string, err error) []linter.Diagnostic {
	if !l.en[cE902] {
		return nil
	}
	return []linter.Diagnostic{{Line: 1, Column: 1, Code: codeNames[cE902], Message: pyOSError(name, err)}}
}
