package java

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

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
	LineLength                          = "LineLength"
	FileTabCharacter                    = "FileTabCharacter"
	RegexpSingleline                    = "RegexpSingleline"
	AvoidStarImport                     = "AvoidStarImport"
	UnusedImports                       = "UnusedImports"
	RedundantImport                     = "RedundantImport"
	ConstantName                        = "ConstantName"
	MemberName                          = "MemberName"
	MethodName                          = "MethodName"
	TypeName                            = "TypeName"
	LocalVariableName                   = "LocalVariableName"
	ParameterName                       = "ParameterName"
	NeedBraces                          = "NeedBraces"
	EmptyBlock                          = "EmptyBlock"
	EmptyStatement                      = "EmptyStatement"
	EqualsHashCode                      = "EqualsHashCode"
	WhitespaceAround                    = "WhitespaceAround"
	OneStatementPerLine                 = "OneStatementPerLine"
	MultipleVariableDeclarations        = "MultipleVariableDeclarations"
	ModifierOrder                       = "ModifierOrder"
	NewlineAtEndOfFile                  = "NewlineAtEndOfFile"
	FileLength                          = "FileLength"
	FinalParameters                     = "FinalParameters"
	IllegalImport                       = "IllegalImport"
	WhitespaceAfter                     = "WhitespaceAfter"
	ArrayTypeStyle                      = "ArrayTypeStyle"
	UpperEll                            = "UpperEll"
	TodoComment                         = "TodoComment"
	JavadocVariable                     = "JavadocVariable"
	LeftCurly                           = "LeftCurly"
	ParenPad                            = "ParenPad"
	OperatorWrap                        = "OperatorWrap"
	InnerAssignment                     = "InnerAssignment"
	MagicNumber                         = "MagicNumber"
	VisibilityModifier                  = "VisibilityModifier"
	HiddenField                         = "HiddenField"
	DesignForExtension                  = "DesignForExtension"
	RightCurly                          = "RightCurly"
	AvoidNestedBlocks                   = "AvoidNestedBlocks"
	NoWhitespaceBefore                  = "NoWhitespaceBefore"
	EmptyForIteratorPad                 = "EmptyForIteratorPad"
	MethodParamPad                      = "MethodParamPad"
	MissingSwitchDefault                = "MissingSwitchDefault"
	ParameterNumber                     = "ParameterNumber"
	MethodLength                        = "MethodLength"
	MissingJavadocMethod                = "MissingJavadocMethod"
	JavadocMethod                       = "JavadocMethod"
	RedundantModifier                   = "RedundantModifier"
	JavadocType                         = "JavadocType"
	StaticVariableName                  = "StaticVariableName"
	LocalFinalVariableName              = "LocalFinalVariableName"
	TypecastParenPad                    = "TypecastParenPad"
	FinalClass                          = "FinalClass"
	HideUtilityClassConstructor         = "HideUtilityClassConstructor"
	InterfaceIsType                     = "InterfaceIsType"
	NoWhitespaceAfter                   = "NoWhitespaceAfter"
	InvalidJavadocPosition              = "InvalidJavadocPosition"
	PackageName                         = "PackageName"
	SimplifyBooleanExpression           = "SimplifyBooleanExpression"
	SimplifyBooleanReturn               = "SimplifyBooleanReturn"
	JavadocStyle                        = "JavadocStyle"
	GenericWhitespace                   = "GenericWhitespace"
	EmptyCatchBlock                     = "EmptyCatchBlock"
	AbbreviationAsWordInName            = "AbbreviationAsWordInName"
	Indentation                         = "Indentation"
	JavadocParagraph                    = "JavadocParagraph"
	CustomImportOrder                   = "CustomImportOrder"
	RequireEmptyLineBeforeBlockTagGroup = "RequireEmptyLineBeforeBlockTagGroup"
	JavadocTagContinuationIndentation   = "JavadocTagContinuationIndentation"
	SummaryJavadoc                      = "SummaryJavadoc"
	EmptyLineSeparator                  = "EmptyLineSeparator"
	OneTopLevelClass                    = "OneTopLevelClass"
	NonEmptyAtclauseDescription         = "NonEmptyAtclauseDescription"
	AtclauseOrder                       = "AtclauseOrder"
	VariableDeclarationUsageDistance    = "VariableDeclarationUsageDistance"
	CommentsIndentation                 = "CommentsIndentation"
	FallThrough                         = "FallThrough"
	ClassTypeParameterName              = "ClassTypeParameterName"
	InterfaceTypeParameterName          = "InterfaceTypeParameterName"
	RecordTypeParameterName             = "RecordTypeParameterName"
	MethodTypeParameterName             = "MethodTypeParameterName"
	OverloadMethodsDeclarationOrder     = "OverloadMethodsDeclarationOrder"
)

// defaultCodes are the checks of DefaultConfig, in the order of
// checkstyle's configuration.
var defaultCodes = []string{
	LineLength, FileTabCharacter, RegexpSingleline, NewlineAtEndOfFile,
	AvoidStarImport, UnusedImports, RedundantImport,
	ConstantName, MemberName, MethodName, TypeName, LocalVariableName, ParameterName,
	NeedBraces, EmptyBlock, EmptyStatement, EqualsHashCode, WhitespaceAround,
	OneStatementPerLine, MultipleVariableDeclarations, ModifierOrder,
}

// codes lists every check implemented: those of DefaultConfig and those
// a configuration (OptionConfig) may add.
var codes = append(slices.Clip(defaultCodes), FileLength, FinalParameters, IllegalImport, WhitespaceAfter, ArrayTypeStyle, UpperEll, TodoComment,
	JavadocVariable, LeftCurly, ParenPad, OperatorWrap, InnerAssignment, MagicNumber, VisibilityModifier, HiddenField, DesignForExtension,
	RightCurly, AvoidNestedBlocks, NoWhitespaceBefore, EmptyForIteratorPad, MethodParamPad, MissingSwitchDefault,
	ParameterNumber, MethodLength, MissingJavadocMethod, JavadocMethod, RedundantModifier, JavadocType,
	StaticVariableName, LocalFinalVariableName, TypecastParenPad,
	FinalClass, HideUtilityClassConstructor, InterfaceIsType, NoWhitespaceAfter, InvalidJavadocPosition,
	PackageName, SimplifyBooleanExpression, SimplifyBooleanReturn, JavadocStyle, GenericWhitespace, EmptyCatchBlock, AbbreviationAsWordInName, Indentation, JavadocParagraph, CustomImportOrder, OverloadMethodsDeclarationOrder, RequireEmptyLineBeforeBlockTagGroup, JavadocTagContinuationIndentation, SummaryJavadoc, EmptyLineSeparator, OneTopLevelClass, NonEmptyAtclauseDescription,
	AtclauseOrder, VariableDeclarationUsageDistance, CommentsIndentation, FallThrough,
	ClassTypeParameterName, InterfaceTypeParameterName, RecordTypeParameterName, MethodTypeParameterName)

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
	*settings
	maxLen int
}

var _ linter.Linter = (*Linter)(nil)

// New returns a linter for cfg. The checks and their properties come from
// the checkstyle configuration cfg.Options[OptionConfig] names (a built-in
// one or XML text; DefaultConfig without it); Select, Ignore and
// ExtendIgnore then choose among them. A MaxLineLength above zero
// overrides the configuration's LineLength max; a negative one, an option
// other than OptionConfig or a configuration that cannot be read is an
// ErrInvalidConfig. Modules and properties the configuration names that
// are not implemented are listed by Unsupported.
func New(cfg linter.Config) (*Linter, error) {
	if cfg.MaxLineLength < 0 {
		return nil, fmt.Errorf("%w: MaxLineLength %d is negative", ErrInvalidConfig, cfg.MaxLineLength)
	}
	for k := range cfg.Options {
		if k != OptionConfig {
			return nil, fmt.Errorf("%w: unknown option %q (java has %q)", ErrInvalidConfig, k, OptionConfig)
		}
	}
	s, err := loadConfig(cfg.Options[OptionConfig])
	if err != nil {
		return nil, err
	}
	l := &Linter{settings: s, maxLen: s.maxLen}
	if cfg.MaxLineLength > 0 {
		l.maxLen = cfg.MaxLineLength
	}
	for _, c := range codes {
		l.enabled[c] = l.enabled[c] && cfg.Enabled(c)
	}
	// A RightCurly module with an id prints, and is selected by, its id.
	for _, r := range l.rightCurlies {
		l.enabled[r.code] = l.enabled[r.code] && cfg.Enabled(r.code)
	}
	return l, nil
}

// loadConfig returns the settings of a configuration named as
// OptionConfig names it.
func loadConfig(name string) (*settings, error) {
	if name == "" || name == DefaultConfig {
		return defaultSettings(), nil
	}
	text := []byte(name)
	if b, ok := BuiltinConfig(name); ok {
		text = b
	} else if !strings.HasPrefix(strings.TrimSpace(name), "<") {
		return nil, fmt.Errorf("%w: config %q is neither %s, %s, %s nor the XML text of a checkstyle configuration",
			ErrInvalidConfig, clip(name), DefaultConfig, SunChecks, GoogleChecks)
	}
	root, err := ParseConfig(text)
	if err != nil {
		return nil, err
	}
	return configure(root)
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Unsupported lists, once each, the modules, properties and messages of
// the configuration that this package does not implement: their findings
// are missing from its output.
func (l *Linter) Unsupported() []string { return slices.Clone(l.unsupported) }

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
	for _, re := range l.excludeFile {
		if re.MatchString(src.Name) {
			return nil, nil
		}
	}
	f, err := l.checkNamed(ctx, src.Name, string(src.Code))
	if err != nil {
		return nil, err
	}
	return f.out, nil
}
