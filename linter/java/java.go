package java

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/fleetkit/fleetkit/linter"
)

// Errors returned by this package.
var (
	// ErrInvalidConfig is returned by New for a configuration it cannot
	// honour, such as a negative MaxLineLength.
	ErrInvalidConfig = errors.New("java: invalid config")
	// ErrTooLarge is returned by Lint for a source of 2 GiB or more, as
	// positions are kept in 32 bits.
	ErrTooLarge = errors.New("java: source too large")
)

// DefaultMaxLineLength is checkstyle's default for LineLength.
const DefaultMaxLineLength = 80

// Check names, as checkstyle prints them in brackets.
const (
	LineLength                   = "LineLength"
	FileTabCharacter             = "FileTabCharacter"
	RegexpSingleline             = "RegexpSingleline"
	AvoidStarImport              = "AvoidStarImport"
	UnusedImports                = "UnusedImports"
	RedundantImport              = "RedundantImport"
	ConstantName                 = "ConstantName"
	MemberName                   = "MemberName"
	MethodName                   = "MethodName"
	TypeName                     = "TypeName"
	LocalVariableName            = "LocalVariableName"
	ParameterName                = "ParameterName"
	NeedBraces                   = "NeedBraces"
	EmptyBlock                   = "EmptyBlock"
	EmptyStatement               = "EmptyStatement"
	EqualsHashCode               = "EqualsHashCode"
	WhitespaceAround             = "WhitespaceAround"
	OneStatementPerLine          = "OneStatementPerLine"
	MultipleVariableDeclarations = "MultipleVariableDeclarations"
	ModifierOrder                = "ModifierOrder"
	NewlineAtEndOfFile           = "NewlineAtEndOfFile"
)

// codes lists every check, in the order of checkstyle's configuration.
var codes = []string{
	LineLength, FileTabCharacter, RegexpSingleline, NewlineAtEndOfFile,
	AvoidStarImport, UnusedImports, RedundantImport,
	ConstantName, MemberName, MethodName, TypeName, LocalVariableName, ParameterName,
	NeedBraces, EmptyBlock, EmptyStatement, EqualsHashCode, WhitespaceAround,
	OneStatementPerLine, MultipleVariableDeclarations, ModifierOrder,
}

// Language returns the Java rule set for a linter.Registry.
func Language() linter.Language {
	return linter.Language{
		Name:         "java",
		Extensions:   []string{".java"},
		Codes:        append([]string(nil), codes...),
		NewlineAtEOF: NewlineAtEndOfFile,
		New:          func(cfg linter.Config) (linter.Linter, error) { return New(cfg) },
	}
}

// Linter checks Java source. It is immutable after New and safe for
// concurrent use.
type Linter struct {
	maxLen  int
	enabled map[string]bool
}

var _ linter.Linter = (*Linter)(nil)

// New returns a linter for cfg. A zero MaxLineLength means
// DefaultMaxLineLength; a negative one is an ErrInvalidConfig.
func New(cfg linter.Config) (*Linter, error) {
	if cfg.MaxLineLength < 0 {
		return nil, fmt.Errorf("%w: MaxLineLength %d is negative", ErrInvalidConfig, cfg.MaxLineLength)
	}
	l := &Linter{maxLen: DefaultMaxLineLength, enabled: make(map[string]bool, len(codes))}
	if cfg.MaxLineLength > 0 {
		l.maxLen = cfg.MaxLineLength
	}
	for _, c := range codes {
		l.enabled[c] = cfg.Enabled(c)
	}
	return l, nil
}

// Lint checks src. It fails only when ctx is done or src is too large;
// source that does not parse still gets every diagnostic the linter can
// find.
func (l *Linter) Lint(ctx context.Context, src linter.Source) ([]linter.Diagnostic, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(src.Code) >= math.MaxInt32 {
		return nil, fmt.Errorf("%w: %s is %d bytes", ErrTooLarge, src.Name, len(src.Code))
	}
	return l.run(string(src.Code)), nil
}
