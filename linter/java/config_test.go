package java

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fleetkit/fleetkit/linter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func withConfig(name string) linter.Config {
	return linter.Config{Options: map[string]string{OptionConfig: name}}
}

// TestBuiltinConfigs reads both built-in configurations: what they enable
// and what they name that is not implemented, each listed once.
func TestBuiltinConfigs(t *testing.T) {
	sun, err := New(withConfig(SunChecks))
	require.NoError(t, err)
	for _, c := range []string{LineLength, FileLength, UnusedImports, WhitespaceAround, NeedBraces} {
		assert.True(t, sun.enabled[c], "sun_checks enables %s", c)
	}
	assert.False(t, sun.enabled[OneStatementPerLine], "sun_checks has no OneStatementPerLine")
	assert.False(t, sun.processJavadoc, "sun_checks sets UnusedImports processJavadoc=false")
	assert.Contains(t, sun.Unsupported(), "module Translation is not implemented")
	assert.Contains(t, sun.Unsupported(), "module JavadocPackage is not implemented")
	seen := map[string]bool{}
	for _, u := range sun.Unsupported() {
		assert.False(t, seen[u], "%q listed twice", u)
		seen[u] = true
	}

	google, err := New(withConfig(GoogleChecks))
	require.NoError(t, err)
	assert.Equal(t, 100, google.maxLen)
	assert.True(t, google.tabEachLine)
	assert.True(t, google.enabled[OneStatementPerLine])
	assert.False(t, google.enabled[FileLength])
	assert.True(t, google.enabled[Indentation], "its six properties are implemented")
	assert.Equal(t, indentOpts{basic: 2, brace: 0, caseIndent: 2, throwsIndent: 4, wrap: 4, arrayInit: 2}, google.indent)
	assert.True(t, google.enabled[JavadocParagraph])
	assert.True(t, google.enabled[CustomImportOrder], "its rules, sorting and separation are implemented")
	for _, c := range []string{OverloadMethodsDeclarationOrder, RequireEmptyLineBeforeBlockTagGroup, JavadocTagContinuationIndentation, SummaryJavadoc, EmptyLineSeparator, OneTopLevelClass, NonEmptyAtclauseDescription} {
		assert.True(t, google.enabled[c], c)
	}
	els, err := New(withConfig(`<module name="Checker"><module name="TreeWalker"><module name="EmptyLineSeparator"/></module></module>`))
	require.NoError(t, err)
	assert.False(t, els.enabled[EmptyLineSeparator], "checkstyle's default allowNoEmptyLineBetweenFields=false is not implemented")
	l, err := New(withConfig(`<module name="Checker"><module name="TreeWalker"><module name="CustomImportOrder"/></module></module>`))
	require.NoError(t, err)
	assert.False(t, l.enabled[CustomImportOrder], "checkstyle's default rules are not implemented")
	assert.Contains(t, l.Unsupported(), `CustomImportOrder: only customImportOrderRules="STATIC###THIRD_PARTY_PACKAGE" is supported; module not run`)
	assert.Contains(t, google.Unsupported(), `EmptyBlock: property option="TEXT" is not supported; module not run`)
	assert.False(t, google.enabled[EmptyBlock], "a module with an unsupported property is not run")
	assert.True(t, google.enabled[WhitespaceAround], "its allowEmpty*, ignoreEnhancedForColon and messages are implemented")

	def, err := New(linter.Config{})
	require.NoError(t, err)
	assert.Empty(t, def.Unsupported(), "the default configuration is fully implemented")
}

// TestXMLConfig drives the linter with a configuration's own text.
func TestXMLConfig(t *testing.T) {
	const cfg = `<?xml version="1.0"?>
<!DOCTYPE module PUBLIC "-//Checkstyle//DTD Checkstyle Configuration 1.3//EN" "https://checkstyle.org/dtds/configuration_1_3.dtd">
<module name="Checker">
  <module name="LineLength"><property name="max" value="20"/><property name="ignorePattern" value="^\s*//"/></module>
  <module name="FileTabCharacter"><property name="eachLine" value="true"/></module>
  <module name="NoSuchCheck"/>
  <module name="TreeWalker">
    <module name="MemberName">
      <property name="format" value="^m[A-Z]\w*$"/>
      <message key="name.invalidPattern" value="Member ''{0}'' must match ''{1}''."/>
    </module>
    <module name="NeedBraces"><property name="severity" value="ignore"/></module>
  </module>
</module>`
	l, err := New(withConfig(cfg))
	require.NoError(t, err)
	assert.Equal(t, []string{"module NoSuchCheck is not implemented"}, l.Unsupported())
	code := "class A {\n\tint mGood;\n\tint bad;\n    // a comment that is long\n    void f() { if (true) f(); }\n}\n"
	got := lint(t, withConfig(cfg), code)
	assert.Equal(t, []linter.Diagnostic{
		{Line: 2, Column: 1, Code: FileTabCharacter, Message: "Line contains a tab character."},
		{Line: 3, Column: 1, Code: FileTabCharacter, Message: "Line contains a tab character."},
		{Line: 3, Column: 13, Code: MemberName, Message: "Member 'bad' must match '^m[A-Z]\\w*$'."},
		{Line: 5, Column: 0, Code: LineLength, Message: "Line is longer than 20 characters (found 31)."},
	}, got)
}

func TestConfigErrors(t *testing.T) {
	for name, cfg := range map[string]linter.Config{
		"unknown name":     withConfig("sun"),
		"bad XML":          withConfig("<module name="),
		"root not Checker": withConfig(`<module name="TreeWalker"/>`),
		"bad max":          withConfig(`<module name="Checker"><module name="LineLength"><property name="max" value="x"/></module></module>`),
		"misplaced module": withConfig(`<module name="Checker"><module name="NeedBraces"/></module>`),
		"unknown option":   {Options: map[string]string{"max-doc-length": "72"}},
		"huge":             withConfig("<" + strings.Repeat("x", maxConfigSize)),
		"RE2 cannot do it": withConfig(`<module name="Checker"><module name="LineLength"><property name="ignorePattern" value="(?=x)"/></module></module>`),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(cfg)
			require.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}

func TestMessageFormat(t *testing.T) {
	assert.Equal(t, "Name 'x' must match '^a$'.", messageFormat("Name ''{0}'' must match ''{1}''.", "x", "^a$"))
	assert.Equal(t, "quoted {0} and x", messageFormat("quoted '{0}' and {0}", "x"))
	assert.Equal(t, "{9} {", messageFormat("{9} {", "x"))
}

// TestSameMessageTwoModules: checkstyle prints a message once per
// position even when two modules report it; for `if(` under sun_checks
// that is WhitespaceAround's, not WhitespaceAfter's.
func TestSameMessageTwoModules(t *testing.T) {
	code := "class K {\n    void f(int x) {\n        if(x > 0) { x++; }\n    }\n}\n"
	cfg := withConfig(SunChecks)
	cfg.Select = []string{"WhitespaceA"}
	assert.Equal(t, []linter.Diagnostic{{Line: 3, Column: 9, Code: WhitespaceAround, Message: "'if' is not followed by whitespace."}}, lint(t, cfg, code))
	cfg.Select = []string{WhitespaceAfter}
	assert.Equal(t, []linter.Diagnostic{{Line: 3, Column: 9, Code: WhitespaceAfter, Message: "'if' is not followed by whitespace."}}, lint(t, cfg, code))
}

// TestOperatorWrapTokens runs OperatorWrap at google_checks' tokens: '::'
// is checked, the ':' of a conditional is not (checkstyle 8.36's output
// for the same file).
func TestOperatorWrapTokens(t *testing.T) {
	cfg := withConfig(GoogleChecks)
	cfg.Select = []string{OperatorWrap}
	got := lint(t, cfg, "class G {\n  java.util.function.Function<Object, String> f = String::\n      valueOf;\n\n"+
		"  int g(int x) {\n    return x > 0 ?\n        1 :\n        2;\n  }\n}\n")
	assert.Equal(t, []linter.Diagnostic{
		{Line: 2, Column: 57, Code: OperatorWrap, Message: "'::' should be on a new line."},
		{Line: 6, Column: 18, Code: OperatorWrap, Message: "'?' should be on a new line."},
	}, got)
	_, err := New(linter.Config{Options: map[string]string{OptionConfig: `<module name="Checker"><module name="TreeWalker">` +
		`<module name="OperatorWrap"><property name="tokens" value="PLUS, NOPE"/></module></module></module>`}})
	assert.ErrorIs(t, err, ErrInvalidConfig, "a token OperatorWrap does not accept")
}

// TestWhitespaceAroundGoogle runs WhitespaceAround at google_checks'
// properties: empty constructors, methods, loops, lambdas and types are
// allowed, the colon of an enhanced for is checked and the messages are
// google's (checkstyle 8.36's output for the same file).
func TestWhitespaceAroundGoogle(t *testing.T) {
	cfg := withConfig(GoogleChecks)
	cfg.Select = []string{WhitespaceAround}
	got := lint(t, cfg, "class W {\n  W() {}\n\n  void f(int[] a) {\n    for (int i : a) {}\n    for (int j: a) {\n      j++;\n    }\n"+
		"    Runnable r = () -> {};\n    if (a == null) {}\n    new Object() {};\n  }\n\n  interface I {}\n}\n")
	assert.Equal(t, []linter.Diagnostic{
		{Line: 6, Column: 15, Code: WhitespaceAround, Message: "WhitespaceAround: ':' is not preceded with whitespace."},
		{Line: 10, Column: 20, Code: WhitespaceAround, Message: "WhitespaceAround: '{' is not followed by whitespace. Empty blocks may only be represented as {} when not part of a multi-block statement (4.1.3)"},
		{Line: 10, Column: 21, Code: WhitespaceAround, Message: "WhitespaceAround: '}' is not preceded with whitespace."},
	}, got)
}

// TestNoWhitespaceBeforeGoogle runs NoWhitespaceBefore at google_checks'
// tokens (DOT, METHOD_REF, LABELED_STAT among them) with allowLineBreaks:
// a '.' starting a line is fine (checkstyle 8.36's output for the file).
func TestNoWhitespaceBeforeGoogle(t *testing.T) {
	cfg := withConfig(GoogleChecks)
	cfg.Select = []string{NoWhitespaceBefore}
	got := lint(t, cfg, "class N {\n  void f(java.util.List<String> a) {\n    String s = \"x\"\n        .trim() .trim();\n"+
		"    a.forEach(System.out ::println);\n    outer :\n    for (int i = 0; i < 1; i++) {\n      f(a) ;\n    }\n  }\n}\n")
	assert.Equal(t, []linter.Diagnostic{
		{Line: 4, Column: 17, Code: NoWhitespaceBefore, Message: "'.' is preceded with whitespace."},
		{Line: 5, Column: 26, Code: NoWhitespaceBefore, Message: "'::' is preceded with whitespace."},
		{Line: 6, Column: 11, Code: NoWhitespaceBefore, Message: "':' is preceded with whitespace."},
		{Line: 8, Column: 12, Code: NoWhitespaceBefore, Message: "';' is preceded with whitespace."},
	}, got)
}

// TestMissingJavadocMethodGoogle runs MissingJavadocMethod at
// google_checks' minLineCount 2 and allowedAnnotations Override, Test
// (checkstyle 8.36's output for the same file).
func TestMissingJavadocMethodGoogle(t *testing.T) {
	cfg := withConfig(GoogleChecks)
	cfg.Select = []string{MissingJavadocMethod}
	got := lint(t, cfg, "/** M. */\npublic class M {\n  public void a() {\n    a();\n    a();\n  }\n\n  public void b() {\n    a();\n    a();\n    a();\n  }\n\n"+
		"  @Test\n  public void c() {\n    a();\n    a();\n    a();\n  }\n\n  @interface Test {}\n}\n")
	assert.Equal(t, []linter.Diagnostic{{Line: 8, Column: 3, Code: MissingJavadocMethod, Message: "Missing a Javadoc comment."}}, got)
}

// TestAbbreviationDefaults runs AbbreviationAsWordInName at checkstyle's
// defaults (allowedAbbreviationLength 3, ignoreFinal true), where
// google_checks sets 0 and false (checkstyle 8.36's output for the file).
func TestAbbreviationDefaults(t *testing.T) {
	cfg := linter.Config{Options: map[string]string{OptionConfig: `<module name="Checker"><module name="TreeWalker">` +
		`<module name="AbbreviationAsWordInName"/></module></module>`}}
	got := lint(t, cfg, "class HTTPClient {\n  final int fieldABCDE = 1;\n  void f() {\n    final int localABCDE = 1;\n    int otherABCDE = 2;\n  }\n}\n")
	assert.Equal(t, []linter.Diagnostic{
		{Line: 1, Column: 7, Code: AbbreviationAsWordInName, Message: "Abbreviation in name 'HTTPClient' must contain no more than '4' consecutive capital letters."},
		{Line: 5, Column: 9, Code: AbbreviationAsWordInName, Message: "Abbreviation in name 'otherABCDE' must contain no more than '4' consecutive capital letters."},
	}, got)
}

// TestIndentationProperties runs Indentation at checkstyle's defaults but
// caseIndent 0; the findings are checkstyle 8.36's for the same file and
// configuration.
func TestIndentationProperties(t *testing.T) {
	cfg := `<module name="Checker"><module name="TreeWalker"><module name="Indentation">
  <property name="caseIndent" value="0"/>
</module></module></module>`
	code := "class IndPos {\n    int x;\n    void f(int a) {\n        if (a > 0) {\n            a++;\n        } else if (a < 0) {\n          a--;\n        }\n" +
		"        switch (a) {\n            case 1:\n                break;\n            default:\n        }\n        Runnable r = () -> {\n            g();\n        };\n    }\n    void g() { }\n}\n"
	got := lint(t, withConfig(cfg), code)
	assert.Equal(t, []linter.Diagnostic{
		{Line: 7, Column: 11, Code: Indentation, Message: "'if' child has incorrect indentation level 10, expected level should be 12."},
		{Line: 10, Column: 13, Code: Indentation, Message: "'case' child has incorrect indentation level 12, expected level should be 8."},
		{Line: 11, Column: 17, Code: Indentation, Message: "'block' child has incorrect indentation level 16, expected level should be 12."},
		{Line: 12, Column: 13, Code: Indentation, Message: "'case' child has incorrect indentation level 12, expected level should be 8."},
	}, got)

	_, err := New(withConfig(`<module name="Checker"><module name="TreeWalker"><module name="Indentation">
  <property name="basicOffset" value="-1"/></module></module></module>`))
	require.ErrorIs(t, err, ErrInvalidConfig)
	l, err := New(withConfig(`<module name="Checker"><module name="TreeWalker"><module name="Indentation">
  <property name="forceStrictCondition" value="true"/></module></module></module>`))
	require.NoError(t, err)
	assert.False(t, l.enabled[Indentation], "forceStrictCondition true is not implemented: not run")
	assert.Contains(t, l.Unsupported(), `Indentation: property forceStrictCondition="true" is not supported; module not run`)
}

// TestGoogleRightCurly runs google_checks' two RightCurly modules, each
// printed under its id, with the XPath filter that exempts empty bodies.
// The findings are those checkstyle 8.36 printed for the same file.
func TestGoogleRightCurly(t *testing.T) {
	const src = "class A {\n  enum E { X, Y };\n\n  void empty() {}\n\n  void comment() { /* none */ }\n\n" +
		"  void one() { return; }\n\n  int loop(int n) {\n    do {\n      n--;\n    }\n    while (n > 0);\n" +
		"    for (int i = 0; i < n; i++) {\n      n--; }\n    while (n > 0) { n--; }\n    if (n > 0) {\n      n++;\n    }\n" +
		"    else {\n      n--;\n    }\n    return n;\n  }\n\n  static {\n    System.gc(); }\n}\n"
	const same = "should be on the same line as the next part of a multi-block statement (one that directly contains multiple blocks: if/else-if/else, do/while or try/catch/finally)."
	alone := func(line, col int) linter.Diagnostic {
		return linter.Diagnostic{Line: line, Column: col, Code: "RightCurlyAlone", Message: fmt.Sprintf("'}' at column %d should be alone on a line.", col)}
	}
	want := []linter.Diagnostic{
		alone(2, 17), alone(6, 31), alone(8, 24),
		{Line: 13, Column: 5, Code: "RightCurlySame", Message: "'}' at column 5 " + same},
		alone(16, 12), alone(17, 26),
		{Line: 20, Column: 5, Code: "RightCurlySame", Message: "'}' at column 5 " + same},
		alone(28, 18),
	}
	var got []linter.Diagnostic
	for _, d := range lint(t, withConfig(GoogleChecks), src) {
		if strings.HasPrefix(d.Code, RightCurly) {
			got = append(got, d)
		}
	}
	assert.Equal(t, want, got)

	google, err := New(withConfig(GoogleChecks))
	require.NoError(t, err)
	assert.NotContains(t, strings.Join(google.Unsupported(), "\n"), "RightCurly")
	assert.NotContains(t, strings.Join(google.Unsupported(), "\n"), "SuppressionXpathSingleFilter")
	other, err := New(withConfig(`<module name="Checker"><module name="TreeWalker"><module name="SuppressionXpathSingleFilter"><property name="query" value="//IDENT"/></module></module></module>`))
	require.NoError(t, err)
	assert.Contains(t, other.Unsupported(), "SuppressionXpathSingleFilter: only google_checks' RightCurly query is supported; filter not applied")
}

// TestGoogleGenericWhitespace runs GenericWhitespace with google_checks'
// own messages, as checkstyle 8.36 printed them for the same file.
func TestGoogleGenericWhitespace(t *testing.T) {
	const src = "import java.util.List;\n\nclass A {\n  public static<X> List<X> f(List <String>x) {\n    return null;\n  }\n}\n"
	got := lint(t, linter.Config{Select: []string{GenericWhitespace}, Options: map[string]string{OptionConfig: GoogleChecks}}, src)
	assert.Equal(t, []linter.Diagnostic{
		{Line: 4, Column: 16, Code: GenericWhitespace, Message: "GenericWhitespace '<' is not preceded with whitespace."},
		{Line: 4, Column: 35, Code: GenericWhitespace, Message: "GenericWhitespace '<' is preceded with whitespace."},
		{Line: 4, Column: 42, Code: GenericWhitespace, Message: "GenericWhitespace '>' should followed by whitespace."},
	}, got)
}
