// Package java lints Java source the way checkstyle 8.36 does with a fixed
// set of its checks at their default properties: LineLength (max 80, or
// linter.Config.MaxLineLength), FileTabCharacter, RegexpSingleline (trailing
// white space), NewlineAtEndOfFile, AvoidStarImport, UnusedImports,
// RedundantImport, ConstantName, MemberName, MethodName, TypeName,
// LocalVariableName, ParameterName, NeedBraces, EmptyBlock, EmptyStatement,
// EqualsHashCode, WhitespaceAround, OneStatementPerLine,
// MultipleVariableDeclarations and ModifierOrder.
//
// That is DefaultConfig. A checkstyle XML configuration chooses other
// checks and properties: linter.Config.Options[OptionConfig] holds its text
// or the name of a built-in one, SunChecks or GoogleChecks (our renditions
// of checkstyle's sun_checks.xml and google_checks.xml). Every module of
// sun_checks.xml is implemented but JavadocPackage, Translation and
// IllegalInstantiation (the list is in the README), and of google_checks.xml
// the modules the two share plus EmptyCatchBlock, AbbreviationAsWordInName,
// Indentation (checkstyle's handlers for declarations, statements, block
// lambdas and anonymous classes; not yet wrapped lines), JavadocParagraph,
// JavadocTagContinuationIndentation, SummaryJavadoc,
// RequireEmptyLineBeforeBlockTagGroup, NonEmptyAtclauseDescription,
// CustomImportOrder, EmptyLineSeparator, OverloadMethodsDeclarationOrder,
// OneTopLevelClass, AtclauseOrder, VariableDeclarationUsageDistance,
// FallThrough, CommentsIndentation (its general case), the type parameter
// naming checks and its two RightCurly modules with their XPath filter;
// modules, properties and messages the configuration names that are not
// implemented are listed by (*Linter).Unsupported and not run.
//
// Each diagnostic carries the check's name as its Code (a RightCurly
// module's id when it has one, as checkstyle prints it), checkstyle's message
// text, and the line and column checkstyle prints (columns expand tabs to 8;
// checks that report whole lines use Column 0). testdata/checkstyle.xml is
// the equivalent checkstyle configuration; an agreement test compares the
// two over JDK sources.
//
// The package is pure Go: a tokenizer for Java 17 (text blocks, all literal
// forms, >>>= and friends) and a tolerant recursive-descent parser that
// records what the checks need. It never fails on code that does not parse;
// it reports what it can.
//
// A *Linter is immutable once built and safe for concurrent use; Lint does
// no I/O and does not block.
//
//	l, err := java.New(linter.Config{Ignore: []string{"LineLength"}})
//	if err != nil { ... }
//	diags, err := l.Lint(ctx, linter.Source{Name: "A.java", Code: src})
//
// To serve it through a linter.Registry, register Language().
package java
