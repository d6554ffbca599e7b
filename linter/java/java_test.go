package java

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fleetkit/fleetkit/linter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func lint(t testing.TB, cfg linter.Config, code string) []linter.Diagnostic {
	t.Helper()
	l, err := New(cfg)
	require.NoError(t, err)
	ds, err := l.Lint(context.Background(), linter.Source{Name: "A.java", Code: []byte(code)})
	require.NoError(t, err)
	return ds
}

// TestChecks holds, for every check, a case it must report (positions and
// messages as checkstyle 8.36 printed them for the same file) and one it
// must not. Only the check under test is enabled.
func TestChecks(t *testing.T) {
	tests := []struct {
		name  string
		check string
		code  string
		want  []linter.Diagnostic
	}{
		{"LineLength/positive", "LineLength", "class A {\n    String s = \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\";\n}\n", []linter.Diagnostic{{Line: 2, Column: 0, Code: "LineLength", Message: "Line is longer than 80 characters (found 98)."}}},
		{"LineLength/negative", "LineLength", "package aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;\nclass A {\n}\n", []linter.Diagnostic{}},
		{"FileTabCharacter/positive", "FileTabCharacter", "class A {\n  int x;\t// tab\n\tint y;\n}\n", []linter.Diagnostic{{Line: 2, Column: 9, Code: "FileTabCharacter", Message: "File contains tab characters (this is the first instance)."}}},
		{"FileTabCharacter/negative", "FileTabCharacter", "class A {\n    int x;\n}\n", []linter.Diagnostic{}},
		{"RegexpSingleline/positive", "RegexpSingleline", "class A { \n    int x;\t\n}\n", []linter.Diagnostic{{Line: 1, Column: 0, Code: "RegexpSingleline", Message: "Line has trailing spaces."}, {Line: 2, Column: 0, Code: "RegexpSingleline", Message: "Line has trailing spaces."}}},
		{"RegexpSingleline/negative", "RegexpSingleline", "class A {\n    int x; // no trailing\n}\n", []linter.Diagnostic{}},
		{"NewlineAtEndOfFile/positive", "NewlineAtEndOfFile", "class A {\n}", []linter.Diagnostic{{Line: 1, Column: 0, Code: "NewlineAtEndOfFile", Message: "File does not end with a newline."}}},
		{"NewlineAtEndOfFile/negative", "NewlineAtEndOfFile", "class A {\n}\r\n", []linter.Diagnostic{}},
		{"AvoidStarImport/positive", "AvoidStarImport", "import java.util.*;\nimport static java.lang.Math.*;\nclass A { List<String> l; double d = max(1, 2); }\n", []linter.Diagnostic{{Line: 1, Column: 17, Code: "AvoidStarImport", Message: "Using the '.*' form of import should be avoided - java.util.*."}, {Line: 2, Column: 29, Code: "AvoidStarImport", Message: "Using the '.*' form of import should be avoided - java.lang.Math.*."}}},
		{"AvoidStarImport/negative", "AvoidStarImport", "import java.util.List;\nclass A { List<String> l; }\n", []linter.Diagnostic{}},
		{"UnusedImports/positive", "UnusedImports", "import java.util.List;\nimport java.util.Map;\nimport java.lang.String;\nclass A { java.util.Map<String, String> m; }\n", []linter.Diagnostic{{Line: 1, Column: 8, Code: "UnusedImports", Message: "Unused import - java.util.List."}, {Line: 3, Column: 8, Code: "UnusedImports", Message: "Unused import - java.lang.String."}}},
		{"UnusedImports/negative", "UnusedImports", "import java.util.List;\nimport java.util.Map;\nimport java.util.Set;\nimport static java.lang.Math.max;\n/** Uses {@link Set}. */\nclass A { List<Map.Entry<String, String>> l; int m = max(1, 2); }\n", []linter.Diagnostic{}},
		{"RedundantImport/positive", "RedundantImport", "package p;\nimport java.lang.String;\nimport p.B;\nimport java.util.List;\nimport java.util.List;\nclass A { List<B> l; }\n", []linter.Diagnostic{{Line: 2, Column: 1, Code: "RedundantImport", Message: "Redundant import from the java.lang package - java.lang.String."}, {Line: 3, Column: 1, Code: "RedundantImport", Message: "Redundant import from the same package - p.B."}, {Line: 5, Column: 1, Code: "RedundantImport", Message: "Duplicate import to line 4 - java.util.List."}}},
		{"RedundantImport/negative", "RedundantImport", "package p;\nimport java.lang.reflect.Method;\nimport q.B;\nclass A { Method m; B b; }\n", []linter.Diagnostic{}},
		{"ConstantName/positive", "ConstantName", "class A {\n    static final int lower = 1;\n    interface I { int Bad_ = 2; }\n}\n", []linter.Diagnostic{{Line: 2, Column: 22, Code: "ConstantName", Message: "Name 'lower' must match pattern '^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$'."}, {Line: 3, Column: 23, Code: "ConstantName", Message: "Name 'Bad_' must match pattern '^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$'."}}},
		{"ConstantName/negative", "ConstantName", "class A {\n    static final long serialVersionUID = 1L;\n    static final int MAX_SIZE = 2;\n    final int notConstant = 3;\n}\n", []linter.Diagnostic{}},
		{"MemberName/positive", "MemberName", "class A {\n    int Bad;\n    final int FINAL_MEMBER = 1;\n}\n", []linter.Diagnostic{{Line: 2, Column: 9, Code: "MemberName", Message: "Name 'Bad' must match pattern '^[a-z][a-zA-Z0-9]*$'."}, {Line: 3, Column: 15, Code: "MemberName", Message: "Name 'FINAL_MEMBER' must match pattern '^[a-z][a-zA-Z0-9]*$'."}}},
		{"MemberName/negative", "MemberName", "class A {\n    int good;\n    static int Static;\n    interface I { int X = 1; }\n}\n", []linter.Diagnostic{}},
		{"MethodName/positive", "MethodName", "class A {\n    void Bad() { }\n    void A() { }\n}\n", []linter.Diagnostic{{Line: 2, Column: 10, Code: "MethodName", Message: "Name 'Bad' must match pattern '^[a-z][a-zA-Z0-9]*$'."}, {Line: 3, Column: 10, Code: "MethodName", Message: "Method Name 'A' must not equal the enclosing class name."}, {Line: 3, Column: 10, Code: "MethodName", Message: "Name 'A' must match pattern '^[a-z][a-zA-Z0-9]*$'."}}},
		{"MethodName/negative", "MethodName", "class A {\n    void good() { }\n    @Override public String ToString() { return \"\"; }\n}\n", []linter.Diagnostic{}},
		{"TypeName/positive", "TypeName", "class lower_case {\n    interface i { }\n}\n", []linter.Diagnostic{{Line: 1, Column: 7, Code: "TypeName", Message: "Name 'lower_case' must match pattern '^[A-Z][a-zA-Z0-9]*$'."}, {Line: 2, Column: 15, Code: "TypeName", Message: "Name 'i' must match pattern '^[A-Z][a-zA-Z0-9]*$'."}}},
		{"TypeName/negative", "TypeName", "class Upper {\n    enum Color { RED }\n}\n", []linter.Diagnostic{}},
		{"LocalVariableName/positive", "LocalVariableName", "class A {\n    void f() {\n        int Bad = 1;\n        for (int I = 0; I < 1; I++) { }\n    }\n}\n", []linter.Diagnostic{{Line: 3, Column: 13, Code: "LocalVariableName", Message: "Name 'Bad' must match pattern '^[a-z][a-zA-Z0-9]*$'."}, {Line: 4, Column: 18, Code: "LocalVariableName", Message: "Name 'I' must match pattern '^[a-z][a-zA-Z0-9]*$'."}}},
		{"LocalVariableName/negative", "LocalVariableName", "class A {\n    void f() {\n        final int FINAL = 1;\n        int good = FINAL;\n        try { } catch (Exception E) { }\n    }\n}\n", []linter.Diagnostic{}},
		{"ParameterName/positive", "ParameterName", "class A {\n    A(int Bad) { }\n    void f(String x_y) { }\n}\n", []linter.Diagnostic{{Line: 2, Column: 11, Code: "ParameterName", Message: "Name 'Bad' must match pattern '^[a-z][a-zA-Z0-9]*$'."}, {Line: 3, Column: 19, Code: "ParameterName", Message: "Name 'x_y' must match pattern '^[a-z][a-zA-Z0-9]*$'."}}},
		{"ParameterName/negative", "ParameterName", "class A {\n    void f(int good) {\n        java.util.function.IntUnaryOperator op = X -> X;\n    }\n}\n", []linter.Diagnostic{}},
		{"NeedBraces/positive", "NeedBraces", "class A {\n    void f(int x) {\n        if (x > 0) x--; else x++;\n        while (x < 0) x++;\n        for (;;) ;\n        do x++; while (x < 9);\n    }\n}\n", []linter.Diagnostic{{Line: 3, Column: 9, Code: "NeedBraces", Message: "'if' construct must use '{}'s."}, {Line: 3, Column: 25, Code: "NeedBraces", Message: "'else' construct must use '{}'s."}, {Line: 4, Column: 9, Code: "NeedBraces", Message: "'while' construct must use '{}'s."}, {Line: 5, Column: 9, Code: "NeedBraces", Message: "'for' construct must use '{}'s."}, {Line: 6, Column: 9, Code: "NeedBraces", Message: "'do' construct must use '{}'s."}}},
		{"NeedBraces/negative", "NeedBraces", "class A {\n    void f(int x) {\n        if (x > 0) { x--; } else if (x < 0) { x++; }\n    }\n}\n", []linter.Diagnostic{}},
		{"EmptyBlock/positive", "EmptyBlock", "class A {\n    static { }\n    void f(int x) {\n        if (x > 0) { } else { }\n        try { } finally { }\n        switch (x) { }\n    }\n}\n", []linter.Diagnostic{{Line: 2, Column: 12, Code: "EmptyBlock", Message: "Must have at least one statement."}, {Line: 4, Column: 20, Code: "EmptyBlock", Message: "Must have at least one statement."}, {Line: 4, Column: 29, Code: "EmptyBlock", Message: "Must have at least one statement."}, {Line: 5, Column: 13, Code: "EmptyBlock", Message: "Must have at least one statement."}, {Line: 5, Column: 25, Code: "EmptyBlock", Message: "Must have at least one statement."}, {Line: 6, Column: 20, Code: "EmptyBlock", Message: "Must have at least one statement."}}},
		{"EmptyBlock/negative", "EmptyBlock", "class A {\n    void f(int x) {\n        if (x > 0) { ; }\n        try { x++; } catch (Exception e) { }\n    }\n}\n", []linter.Diagnostic{}},
		{"EmptyStatement/positive", "EmptyStatement", "class A {\n    void f(int x) {\n        ;\n        if (x > 0) ;\n    }\n}\n", []linter.Diagnostic{{Line: 3, Column: 9, Code: "EmptyStatement", Message: "Empty statement."}, {Line: 4, Column: 20, Code: "EmptyStatement", Message: "Empty statement."}}},
		{"EmptyStatement/negative", "EmptyStatement", "class A {\n    int x;;\n    void f() {\n        for (;;) { break; }\n    }\n};\n", []linter.Diagnostic{}},
		{"EqualsHashCode/positive", "EqualsHashCode", "class A {\n    public boolean equals(Object o) { return false; }\n}\nclass B {\n    public int hashCode() { return 1; }\n}\n", []linter.Diagnostic{{Line: 2, Column: 5, Code: "EqualsHashCode", Message: "Definition of 'equals()' without corresponding definition of 'hashCode()'."}, {Line: 5, Column: 5, Code: "EqualsHashCode", Message: "Definition of 'hashCode()' without corresponding definition of 'equals()'."}}},
		{"EqualsHashCode/negative", "EqualsHashCode", "class A {\n    public boolean equals(Object o) { return false; }\n    public int hashCode() { return 1; }\n    public boolean equals(A a) { return true; }\n}\n", []linter.Diagnostic{}},
		{"WhitespaceAround/positive", "WhitespaceAround", "class A {\n    int f(int x) {\n        if(x>0){return x+1;}\n        return x==0?1:2;\n    }\n}\n", []linter.Diagnostic{{Line: 3, Column: 9, Code: "WhitespaceAround", Message: "'if' is not followed by whitespace."}, {Line: 3, Column: 13, Code: "WhitespaceAround", Message: "'>' is not followed by whitespace."}, {Line: 3, Column: 13, Code: "WhitespaceAround", Message: "'>' is not preceded with whitespace."}, {Line: 3, Column: 16, Code: "WhitespaceAround", Message: "'{' is not followed by whitespace."}, {Line: 3, Column: 16, Code: "WhitespaceAround", Message: "'{' is not preceded with whitespace."}, {Line: 3, Column: 17, Code: "WhitespaceAround", Message: "'return' is not preceded with whitespace."}, {Line: 3, Column: 25, Code: "WhitespaceAround", Message: "'+' is not followed by whitespace."}, {Line: 3, Column: 25, Code: "WhitespaceAround", Message: "'+' is not preceded with whitespace."}, {Line: 3, Column: 28, Code: "WhitespaceAround", Message: "'}' is not preceded with whitespace."}, {Line: 4, Column: 17, Code: "WhitespaceAround", Message: "'==' is not followed by whitespace."}, {Line: 4, Column: 17, Code: "WhitespaceAround", Message: "'==' is not preceded with whitespace."}, {Line: 4, Column: 20, Code: "WhitespaceAround", Message: "'?' is not followed by whitespace."}, {Line: 4, Column: 20, Code: "WhitespaceAround", Message: "'?' is not preceded with whitespace."}, {Line: 4, Column: 22, Code: "WhitespaceAround", Message: "':' is not followed by whitespace."}, {Line: 4, Column: 22, Code: "WhitespaceAround", Message: "':' is not preceded with whitespace."}}},
		{"WhitespaceAround/negative", "WhitespaceAround", "class A {\n    java.util.List<? extends Number> l;\n    int f(int x) {\n        int[] a = {1, -2};\n        Runnable r = () -> { };\n        for (int i : a) { x += i; }\n        return;\n    }\n}\n", []linter.Diagnostic{}},
		{"OneStatementPerLine/positive", "OneStatementPerLine", "class A {\n    int a; int b;\n    void f() {\n        a = 1; b = 2;\n    }\n}\n", []linter.Diagnostic{{Line: 2, Column: 17, Code: "OneStatementPerLine", Message: "Only one statement per line allowed."}, {Line: 4, Column: 21, Code: "OneStatementPerLine", Message: "Only one statement per line allowed."}}},
		{"OneStatementPerLine/negative", "OneStatementPerLine", "class A {\n    void f() {\n        for (int i = 0; i < 2; i++) f();\n        Runnable r = () -> { f(); };\n    }\n}\n", []linter.Diagnostic{}},
		{"MultipleVariableDeclarations/positive", "MultipleVariableDeclarations", "class A {\n    int a, b;\n    void f() {\n        int c; int d;\n    }\n}\n", []linter.Diagnostic{{Line: 2, Column: 5, Code: "MultipleVariableDeclarations", Message: "Each variable declaration must be in its own statement."}, {Line: 4, Column: 9, Code: "MultipleVariableDeclarations", Message: "Only one variable definition per line allowed."}}},
		{"MultipleVariableDeclarations/negative", "MultipleVariableDeclarations", "class A {\n    int a;\n    void f() {\n        for (int i = 0, j = 1; i < j; i++) { }\n    }\n}\n", []linter.Diagnostic{}},
		{"ModifierOrder/positive", "ModifierOrder", "class A {\n    final static int X = 1;\n    public @Deprecated void f() { }\n}\n", []linter.Diagnostic{{Line: 2, Column: 11, Code: "ModifierOrder", Message: "'static' modifier out of order with the JLS suggestions."}, {Line: 3, Column: 12, Code: "ModifierOrder", Message: "'@Deprecated' annotation modifier does not precede non-annotation modifiers."}}},
		{"FileLength/positive", "FileLength", "class A {\n" + strings.Repeat("\n", 2000) + "}\n", []linter.Diagnostic{{Line: 1, Column: 0, Code: "FileLength", Message: "File length is 2,002 lines (max allowed is 2,000)."}}},
		{"FileLength/negative", "FileLength", "class A {\n" + strings.Repeat("\n", 1998) + "}\n", []linter.Diagnostic{}},
		{"FinalParameters/positive", "FinalParameters", "abstract class A {\n    A(java.util.List<String> a, int... b) { }\n    void m(A this, @Deprecated int[] c) { }\n    enum E { X; void e(long l) { } }\n}\n", []linter.Diagnostic{{Line: 2, Column: 7, Code: "FinalParameters", Message: "Parameter a should be final."}, {Line: 2, Column: 33, Code: "FinalParameters", Message: "Parameter b should be final."}, {Line: 3, Column: 20, Code: "FinalParameters", Message: "Parameter c should be final."}, {Line: 4, Column: 24, Code: "FinalParameters", Message: "Parameter l should be final."}}},
		{"FinalParameters/negative", "FinalParameters", "interface I {\n    void f(int x);\n    default void g(int y) { }\n}\nabstract class A {\n    abstract void f(int x);\n    native void n(int x);\n    void m(final int y) { Runnable r = () -> { }; try { } catch (Exception e) { } for (int i : new int[0]) { } }\n}\n", []linter.Diagnostic{}},
		{"IllegalImport/positive", "IllegalImport", "import sun.misc.Unsafe;\nimport static sun.misc.Unsafe.getUnsafe;\nclass A { Unsafe u = getUnsafe(); }\n", []linter.Diagnostic{{Line: 1, Column: 1, Code: "IllegalImport", Message: "Illegal import - sun.misc.Unsafe."}, {Line: 2, Column: 1, Code: "IllegalImport", Message: "Illegal import - sun.misc.Unsafe.getUnsafe."}}},
		{"IllegalImport/negative", "IllegalImport", "import sunny.Day;\nimport com.sun.X;\nclass A { Day d; X x; }\n", []linter.Diagnostic{}},
		{"WhitespaceAfter/positive", "WhitespaceAfter", "class W {;int q;\n    int f(int a,int b) {\n        for (int i = 0;i < 2;i++) { a = (int)b; }\n        if(a > 0) { a++; }else{ a--; }\n        do{ a++; }while(a < 0);\n        return a;\n    }\n}\n", []linter.Diagnostic{{Line: 1, Column: 10, Code: "WhitespaceAfter", Message: "';' is not followed by whitespace."}, {Line: 2, Column: 16, Code: "WhitespaceAfter", Message: "',' is not followed by whitespace."}, {Line: 3, Column: 23, Code: "WhitespaceAfter", Message: "';' is not followed by whitespace."}, {Line: 3, Column: 29, Code: "WhitespaceAfter", Message: "';' is not followed by whitespace."}, {Line: 3, Column: 45, Code: "WhitespaceAfter", Message: "'typecast' is not followed by whitespace."}, {Line: 4, Column: 9, Code: "WhitespaceAfter", Message: "'if' is not followed by whitespace."}, {Line: 4, Column: 27, Code: "WhitespaceAfter", Message: "'else' is not followed by whitespace."}, {Line: 5, Column: 9, Code: "WhitespaceAfter", Message: "'do' is not followed by whitespace."}, {Line: 5, Column: 19, Code: "WhitespaceAfter", Message: "'while' is not followed by whitespace."}}},
		{"WhitespaceAfter/negative", "WhitespaceAfter", "class W {\n    void f(int a) {\n        for (;;) { break; }\n        ;;a = 3;\n        switch(a) { default: }\n        synchronized(this) { }\n        return;\n    }\n}\n", []linter.Diagnostic{}},
		{"ArrayTypeStyle/positive", "ArrayTypeStyle", "class AT {\n    int a[], b[][];\n    int[] c[];\n    int f(String args[])[] { for (String s[] : new String[0][]) { } return null; }\n}\n", []linter.Diagnostic{{Line: 2, Column: 10, Code: "ArrayTypeStyle", Message: "Array brackets at illegal position."}, {Line: 2, Column: 17, Code: "ArrayTypeStyle", Message: "Array brackets at illegal position."}, {Line: 3, Column: 12, Code: "ArrayTypeStyle", Message: "Array brackets at illegal position."}, {Line: 4, Column: 22, Code: "ArrayTypeStyle", Message: "Array brackets at illegal position."}, {Line: 4, Column: 25, Code: "ArrayTypeStyle", Message: "Array brackets at illegal position."}, {Line: 4, Column: 43, Code: "ArrayTypeStyle", Message: "Array brackets at illegal position."}}},
		{"ArrayTypeStyle/negative", "ArrayTypeStyle", "class AT {\n    String[] ok;\n    int[][] f(int... v) { int[] x = new int[2]; return new int[0][]; }\n}\n", []linter.Diagnostic{}},
		{"UpperEll/positive", "UpperEll", "class U {\n    long a = 1l, b = 2L, c = 0x1fl, d = -3l;\n}\n", []linter.Diagnostic{{Line: 2, Column: 14, Code: "UpperEll", Message: "Should use uppercase 'L'."}, {Line: 2, Column: 30, Code: "UpperEll", Message: "Should use uppercase 'L'."}, {Line: 2, Column: 42, Code: "UpperEll", Message: "Should use uppercase 'L'."}}},
		{"UpperEll/negative", "UpperEll", "class U {\n    long a = 1L; double d = 1e1; float f = 1f;\n}\n", []linter.Diagnostic{}},
		{"TodoComment/positive", "TodoComment", "class U {\n    // TODO: fix\n    /* TODO: block */ int e;\n    /** javadoc\n     * TODO: later */\n    int f;\n\t// TODO: tab\n}\n", []linter.Diagnostic{{Line: 2, Column: 7, Code: "TodoComment", Message: "Comment matches to-do format 'TODO:'."}, {Line: 3, Column: 7, Code: "TodoComment", Message: "Comment matches to-do format 'TODO:'."}, {Line: 4, Column: 7, Code: "TodoComment", Message: "Comment matches to-do format 'TODO:'."}, {Line: 7, Column: 11, Code: "TodoComment", Message: "Comment matches to-do format 'TODO:'."}}},
		{"TodoComment/negative", "TodoComment", "class U {\n    int f; // TODO without colon\n    String s = \"TODO: in string\";\n}\n", []linter.Diagnostic{}},
		{"ModifierOrder/negative", "ModifierOrder", "class A {\n    @Deprecated public static final int X = 1;\n    public @Deprecated String f() { return null; }\n}\n", []linter.Diagnostic{}},
		{"AbbreviationAsWordInName/negative", "AbbreviationAsWordInName", "class HttpClient {\n  static int staticURL;\n  static final int CONSTANT_VALUE = 1;\n\n  interface I {\n    int XYZ = 1;\n  }\n\n  @Override\n  public String toString() {\n    return \"\";\n  }\n\n  void getX(int argX) {\n    int scaleX = argX;\n  }\n}\n", []linter.Diagnostic{}},
		{"AbbreviationAsWordInName/positive", "AbbreviationAsWordInName", "class HTTPClient {\n  private int myURL;\n\n  void getXML(int argXY) {\n    final int localABC = 1;\n    for (String sURL : new String[0]) {\n      sURL.trim();\n    }\n  }\n}\n", []linter.Diagnostic{{Line: 1, Column: 7, Code: "AbbreviationAsWordInName", Message: "Abbreviation in name 'HTTPClient' must contain no more than '1' consecutive capital letters."}, {Line: 2, Column: 15, Code: "AbbreviationAsWordInName", Message: "Abbreviation in name 'myURL' must contain no more than '1' consecutive capital letters."}, {Line: 4, Column: 8, Code: "AbbreviationAsWordInName", Message: "Abbreviation in name 'getXML' must contain no more than '1' consecutive capital letters."}, {Line: 4, Column: 19, Code: "AbbreviationAsWordInName", Message: "Abbreviation in name 'argXY' must contain no more than '1' consecutive capital letters."}, {Line: 5, Column: 15, Code: "AbbreviationAsWordInName", Message: "Abbreviation in name 'localABC' must contain no more than '1' consecutive capital letters."}, {Line: 6, Column: 17, Code: "AbbreviationAsWordInName", Message: "Abbreviation in name 'sURL' must contain no more than '1' consecutive capital letters."}}},
		{"EmptyCatchBlock/negative", "EmptyCatchBlock", "class A {\n  void f() {\n    try {\n      f();\n    } catch (RuntimeException expected) {\n    }\n    try {\n      f();\n    } catch (IllegalStateException e) {\n      // ignored\n    }\n  }\n}\n", []linter.Diagnostic{}},
		{"EmptyCatchBlock/positive", "EmptyCatchBlock", "class A {\n  void f() {\n    try {\n      f();\n    } catch (RuntimeException e) {\n    }\n    try {\n      f();\n    } catch (IllegalStateException e) { }\n  }\n}\n", []linter.Diagnostic{{Line: 5, Column: 34, Code: "EmptyCatchBlock", Message: "Empty catch block."}, {Line: 9, Column: 39, Code: "EmptyCatchBlock", Message: "Empty catch block."}}},
		{"GenericWhitespace/negative", "GenericWhitespace", "import java.util.*;\nclass A<T extends Comparable<T> & Cloneable> {\n    public static <X> List<X> f(List<String> x) { return Collections.<X>emptyList(); }\n    Map<String, List<String>> b = new HashMap<>();\n    Class<?>[] c;\n    void g(List<String>... v) { Object o = (List<String>) null; }\n}\n", []linter.Diagnostic{}},
		{"GenericWhitespace/positive", "GenericWhitespace", "import java.util.*;\nclass A<T> {\n    public static<X> List<X> f(List<String>x) { return null; }\n    List <String> a;\n    Map<String, List<String> > b;\n    List< String> c = Collections. <String> emptyList();\n    List<String >d;\n}\n", []linter.Diagnostic{{Line: 3, Column: 18, Code: "GenericWhitespace", Message: "'<' is not preceded with whitespace."}, {Line: 3, Column: 43, Code: "GenericWhitespace", Message: "'>' is followed by an illegal character."}, {Line: 4, Column: 10, Code: "GenericWhitespace", Message: "'<' is preceded with whitespace."}, {Line: 5, Column: 28, Code: "GenericWhitespace", Message: "'>' is followed by whitespace."}, {Line: 5, Column: 30, Code: "GenericWhitespace", Message: "'>' is preceded with whitespace."}, {Line: 6, Column: 9, Code: "GenericWhitespace", Message: "'<' is followed by whitespace."}, {Line: 6, Column: 36, Code: "GenericWhitespace", Message: "'<' is preceded with whitespace."}, {Line: 6, Column: 43, Code: "GenericWhitespace", Message: "'>' is followed by whitespace."}, {Line: 7, Column: 17, Code: "GenericWhitespace", Message: "'>' is followed by an illegal character."}, {Line: 7, Column: 17, Code: "GenericWhitespace", Message: "'>' is preceded with whitespace."}}},
		{"JavadocStyle/negative", "JavadocStyle", "/**\n * A class.\n * <p>Para <T> and <b>bold</b>, <br> done!\n */\nclass A<T> {\n    /** {@inheritDoc} */\n    public String toString() { return \"\"; }\n    /**\n     * Ends with a question?\n     * @return nothing\n     */\n    int f() { return 0; }\n    void g() {\n        /** Not checked */\n        int z;\n    }\n}\n", []linter.Diagnostic{}},
		{"JavadocStyle/positive", "JavadocStyle", "/**\n * A class without period\n */\nclass A<T> {\n    /**\n     * Has <b>bold and <i>italic</b> text.\n     */\n    int x;\n    /**\n     * Extra </ul> here.\n     */\n    void f() { }\n    /**\n     * Open <abbr>abbr at the end.\n     */\n    int y;\n}\n", []linter.Diagnostic{{Line: 1, Column: 0, Code: "JavadocStyle", Message: "First sentence should end with a period."}, {Line: 6, Column: 24, Code: "JavadocStyle", Message: "Unclosed HTML tag found: <i>italic</b> text."}, {Line: 10, Column: 14, Code: "JavadocStyle", Message: "Extra HTML tag found: </ul> here."}, {Line: 14, Column: 13, Code: "JavadocStyle", Message: "Unclosed HTML tag found: <abbr>abbr at the end."}}},
		{"SimplifyBooleanExpression/negative", "SimplifyBooleanExpression", "class A {\n    boolean f(boolean b) {\n        boolean t = true;\n        return b && t;\n    }\n}\n", []linter.Diagnostic{}},
		{"SimplifyBooleanExpression/positive", "SimplifyBooleanExpression", "class A {\n    boolean f(boolean b) {\n        if (b == true) {\n            return !false;\n        }\n        return b || (false);\n    }\n}\n", []linter.Diagnostic{{Line: 3, Column: 15, Code: "SimplifyBooleanExpression", Message: "Expression can be simplified."}, {Line: 4, Column: 20, Code: "SimplifyBooleanExpression", Message: "Expression can be simplified."}, {Line: 6, Column: 18, Code: "SimplifyBooleanExpression", Message: "Expression can be simplified."}}},
		{"SimplifyBooleanReturn/negative", "SimplifyBooleanReturn", "class A {\n    boolean f(boolean b) {\n        if (b) {\n            return true;\n        }\n        return false;\n    }\n    boolean g(boolean b) {\n        if (b) { return b; } else { return true; }\n    }\n}\n", []linter.Diagnostic{}},
		{"SimplifyBooleanReturn/positive", "SimplifyBooleanReturn", "class A {\n    boolean f(boolean b) {\n        if (b) {\n            return true;\n        } else {\n            return false;\n        }\n    }\n    boolean g(boolean b) {\n        if (b) return false; else { return true; }\n    }\n}\n", []linter.Diagnostic{{Line: 3, Column: 9, Code: "SimplifyBooleanReturn", Message: "Conditional logic can be removed."}, {Line: 10, Column: 9, Code: "SimplifyBooleanReturn", Message: "Conditional logic can be removed."}}},
		{"PackageName/negative", "PackageName", "package good.pkg_2;\n\nclass A {\n}\n", []linter.Diagnostic{}},
		{"PackageName/positive", "PackageName", "package Bad_pkg.x;\n\nclass A {\n}\n", []linter.Diagnostic{{Line: 1, Column: 9, Code: "PackageName", Message: "Name 'Bad_pkg.x' must match pattern '^[a-z]+(\\.[a-zA-Z_][a-zA-Z0-9_]*)*$'."}}},
		{"InvalidJavadocPosition/negative", "InvalidJavadocPosition", "/** Pkg. */\npackage p;\n\n/** Class. */\nclass P {\n    /** a */\n    // note\n    int z;\n    /** m */\n    <T> void f() { }\n    /** e */\n    enum E {\n        /** c */\n        C\n    }\n}\n", []linter.Diagnostic{}},
		{"InvalidJavadocPosition/positive", "InvalidJavadocPosition", "/** Class. */\nclass P {\n    /** a */\n    /** b */\n    int z;\n    void f() {\n        /** local */\n        int y = 1;\n    }\n    @Deprecated\n    /** late */\n    void g() { }\n    /** end */\n}\n", []linter.Diagnostic{{Line: 3, Column: 5, Code: "InvalidJavadocPosition", Message: "Javadoc comment is placed in the wrong location."}, {Line: 7, Column: 9, Code: "InvalidJavadocPosition", Message: "Javadoc comment is placed in the wrong location."}, {Line: 11, Column: 5, Code: "InvalidJavadocPosition", Message: "Javadoc comment is placed in the wrong location."}, {Line: 13, Column: 5, Code: "InvalidJavadocPosition", Message: "Javadoc comment is placed in the wrong location."}}},
		{"NoWhitespaceAfter/negative", "NoWhitespaceAfter", "class A {\n    int[] a = {1, 2};\n    boolean f(boolean x, int y) {\n        y = -y + ~y + a[0];\n        y++;\n        String s = \"a\"\n            .trim();\n        return !x;\n    }\n}\n", []linter.Diagnostic{}},
		{"NoWhitespaceAfter/positive", "NoWhitespaceAfter", "class A {\n    int[] a = { 1, 2 };\n    int b [] = new int [2];\n    boolean f(boolean x, int y) {\n        y = - y + ~ y + a [0];\n        ++ y;\n        return ! x;\n    }\n    @ Deprecated\n    void g() { this. f(true, 1); }\n}\n", []linter.Diagnostic{{Line: 2, Column: 15, Code: "NoWhitespaceAfter", Message: "'{' is followed by whitespace."}, {Line: 3, Column: 11, Code: "NoWhitespaceAfter", Message: "'b' is followed by whitespace."}, {Line: 3, Column: 24, Code: "NoWhitespaceAfter", Message: "'int' is followed by whitespace."}, {Line: 5, Column: 13, Code: "NoWhitespaceAfter", Message: "'-' is followed by whitespace."}, {Line: 5, Column: 19, Code: "NoWhitespaceAfter", Message: "'~' is followed by whitespace."}, {Line: 5, Column: 27, Code: "NoWhitespaceAfter", Message: "'a' is followed by whitespace."}, {Line: 6, Column: 9, Code: "NoWhitespaceAfter", Message: "'++' is followed by whitespace."}, {Line: 7, Column: 16, Code: "NoWhitespaceAfter", Message: "'!' is followed by whitespace."}, {Line: 9, Column: 5, Code: "NoWhitespaceAfter", Message: "'@' is followed by whitespace."}, {Line: 10, Column: 20, Code: "NoWhitespaceAfter", Message: "'.' is followed by whitespace."}}},
		{"FinalClass/negative", "FinalClass", "class A {\n    private A() { }\n    static class B extends A { }\n}\nfinal class C {\n    private C() { }\n}\nclass D {\n    private D() { }\n    Object o = new D() { };\n}\nabstract class E {\n    private E() { }\n}\nclass F {\n    private F() { }\n    F(int x) { }\n}\n", []linter.Diagnostic{{Line: 8, Column: 1, Code: "FinalClass", Message: "Class D should be declared as final."}}},
		{"FinalClass/positive", "FinalClass", "class A {\n    private A() { }\n    static class B {\n        private B() { }\n    }\n}\n", []linter.Diagnostic{{Line: 1, Column: 1, Code: "FinalClass", Message: "Class A should be declared as final."}, {Line: 3, Column: 5, Code: "FinalClass", Message: "Class B should be declared as final."}}},
		{"HideUtilityClassConstructor/negative", "HideUtilityClassConstructor", "class U {\n    private U() { }\n    static void f() { }\n}\nclass V {\n    void g() { }\n    static int x;\n}\nclass W extends U {\n    static void h() { }\n}\nclass X {\n    private static int y;\n}\n", []linter.Diagnostic{}},
		{"HideUtilityClassConstructor/positive", "HideUtilityClassConstructor", "class U {\n    static void f() { }\n}\nclass V {\n    public V() { }\n    static int x;\n}\n", []linter.Diagnostic{{Line: 1, Column: 1, Code: "HideUtilityClassConstructor", Message: "Utility classes should not have a public or default constructor."}, {Line: 4, Column: 1, Code: "HideUtilityClassConstructor", Message: "Utility classes should not have a public or default constructor."}}},
		{"InterfaceIsType/negative", "InterfaceIsType", "interface I {\n}\ninterface J {\n    int X = 1;\n    void f();\n}\n", []linter.Diagnostic{}},
		{"InterfaceIsType/positive", "InterfaceIsType", "interface I {\n    int X = 1;\n}\n", []linter.Diagnostic{{Line: 1, Column: 1, Code: "InterfaceIsType", Message: "interfaces should describe a type and hence have methods."}}},
		{"LocalFinalVariableName/negative", "LocalFinalVariableName", "class A {\n    void f() {\n        final int good = 1;\n        int Other = 2;\n        try { } catch (Exception E) { }\n    }\n}\n", []linter.Diagnostic{}},
		{"LocalFinalVariableName/positive", "LocalFinalVariableName", "class A {\n    void f() throws Exception {\n        final int Bad = 1;\n        for (final String S : new String[0]) { }\n        try (java.io.Reader R = null) { } catch (final Exception E) { }\n    }\n}\n", []linter.Diagnostic{{Line: 3, Column: 19, Code: "LocalFinalVariableName", Message: "Name 'Bad' must match pattern '^[a-z][a-zA-Z0-9]*$'."}, {Line: 4, Column: 27, Code: "LocalFinalVariableName", Message: "Name 'S' must match pattern '^[a-z][a-zA-Z0-9]*$'."}, {Line: 5, Column: 29, Code: "LocalFinalVariableName", Message: "Name 'R' must match pattern '^[a-z][a-zA-Z0-9]*$'."}, {Line: 5, Column: 66, Code: "LocalFinalVariableName", Message: "Name 'E' must match pattern '^[a-z][a-zA-Z0-9]*$'."}}},
		{"StaticVariableName/negative", "StaticVariableName", "class A {\n    static int good;\n    static final int CONST = 1;\n    interface I { int X = 1; }\n}\n", []linter.Diagnostic{}},
		{"StaticVariableName/positive", "StaticVariableName", "class A {\n    static int Bad_Name;\n    private static long X;\n}\n", []linter.Diagnostic{{Line: 2, Column: 16, Code: "StaticVariableName", Message: "Name 'Bad_Name' must match pattern '^[a-z][a-zA-Z0-9]*$'."}, {Line: 3, Column: 25, Code: "StaticVariableName", Message: "Name 'X' must match pattern '^[a-z][a-zA-Z0-9]*$'."}}},
		{"TypecastParenPad/negative", "TypecastParenPad", "class A {\n    int f(long x) {\n        return (int) x + ( 1);\n    }\n}\n", []linter.Diagnostic{}},
		{"TypecastParenPad/positive", "TypecastParenPad", "class A {\n    int f(long x) {\n        return ( int) x + (int )x;\n    }\n}\n", []linter.Diagnostic{{Line: 3, Column: 16, Code: "TypecastParenPad", Message: "'(' is followed by whitespace."}, {Line: 3, Column: 32, Code: "TypecastParenPad", Message: "')' is preceded with whitespace."}}},
		{"JavadocType/negative", "JavadocType", "/**\n * A list.\n * @param <E> the element\n * @since 1\n */\nclass A<E> {\n    class B<T> { }\n    /** Doc. */\n    @Generated\n    class C<T> { }\n    @interface Generated { }\n}\n", []linter.Diagnostic{}},
		{"JavadocType/positive", "JavadocType", "/**\n * A list.\n * @implNote fast\n * @param <X> unknown\n */\nclass A<E, F> {\n    /**\n     * Inner.\n     * @param <T> the type\n     */\n    interface I<T, U> { }\n}\n", []linter.Diagnostic{{Line: 3, Column: 4, Code: "JavadocType", Message: "Unknown tag 'implNote'."}, {Line: 4, Column: 4, Code: "JavadocType", Message: "Unused @param tag for '<X>'."}, {Line: 6, Column: 1, Code: "JavadocType", Message: "Type Javadoc comment is missing @param <E> tag."}, {Line: 6, Column: 1, Code: "JavadocType", Message: "Type Javadoc comment is missing @param <F> tag."}, {Line: 11, Column: 5, Code: "JavadocType", Message: "Type Javadoc comment is missing @param <U> tag."}}},
		{"RedundantModifier/negative", "RedundantModifier", "public class A {\n    public A() { }\n    final void f() { }\n    @SafeVarargs\n    private final void g(int... a) { }\n    interface I { static void s() { } default void d() { } }\n    protected static class C { public C() { } }\n    void m(final int x) { }\n}\n", []linter.Diagnostic{}},
		{"RedundantModifier/positive", "RedundantModifier", "interface I {\n    public static final int X = 1;\n    public abstract void f(final int a);\n    static interface J { }\n    public static class C { }\n    enum E { A; private E() { } }\n}\nclass P {\n    public P() { }\n    private final void g() { }\n    static enum F { B }\n    void h() throws Exception { try (final java.io.Reader r = null) { } }\n    final class Q { final void k() { } }\n}\n", []linter.Diagnostic{{Line: 2, Column: 5, Code: "RedundantModifier", Message: "Redundant 'public' modifier."}, {Line: 3, Column: 5, Code: "RedundantModifier", Message: "Redundant 'public' modifier."}, {Line: 3, Column: 28, Code: "RedundantModifier", Message: "Redundant 'final' modifier."}, {Line: 4, Column: 5, Code: "RedundantModifier", Message: "Redundant 'static' modifier."}, {Line: 5, Column: 5, Code: "RedundantModifier", Message: "Redundant 'public' modifier."}, {Line: 6, Column: 17, Code: "RedundantModifier", Message: "Redundant 'private' modifier."}, {Line: 9, Column: 5, Code: "RedundantModifier", Message: "Redundant 'public' modifier."}, {Line: 10, Column: 13, Code: "RedundantModifier", Message: "Redundant 'final' modifier."}, {Line: 11, Column: 5, Code: "RedundantModifier", Message: "Redundant 'static' modifier."}, {Line: 12, Column: 38, Code: "RedundantModifier", Message: "Redundant 'final' modifier."}, {Line: 13, Column: 21, Code: "RedundantModifier", Message: "Redundant 'final' modifier."}}},
		{"JavadocMethod/negative", "JavadocMethod", "class A {\n    /**\n     * Does f.\n     * @param x the x\n     * @param <T> the type\n     * @return the value\n     * @throws Exception never\n     * @see Object\n     */\n    <T> int f(int x) throws Exception {\n        return x;\n    }\n    /** {@inheritDoc} */\n    public String toString() {\n        return \"\";\n    }\n    /**\n     * Overrides.\n     */\n    @Override\n    public boolean equals(Object o) {\n        return false;\n    }\n    void noDoc(int y) {\n    }\n    /**\n     * Multi.\n     * @return\n     *     the value\n     */\n    int m() {\n        return 1;\n    }\n}\n", []linter.Diagnostic{}},
		{"JavadocMethod/positive", "JavadocMethod", "class A {\n    /**\n     * Does f.\n     * @param x the x\n     * @param y unknown\n     */\n    int f(int x, int z) {\n        return x;\n    }\n    /**\n     * Generic.\n     * @return nothing\n     */\n    <T> void g(T t) {\n    }\n    /** Bad. {@inheritDoc} */\n    static void h() {\n    }\n    /**\n     * Ann.\n     */\n    @interface N {\n        /** Value. */\n        int v();\n    }\n}\n", []linter.Diagnostic{{Line: 5, Column: 8, Code: "JavadocMethod", Message: "Unused @param tag for 'y'."}, {Line: 7, Column: 0, Code: "JavadocMethod", Message: "@return tag should be present and have description."}, {Line: 7, Column: 22, Code: "JavadocMethod", Message: "Expected @param tag for 'z'."}, {Line: 12, Column: 0, Code: "JavadocMethod", Message: "Unused Javadoc tag."}, {Line: 14, Column: 6, Code: "JavadocMethod", Message: "Expected @param tag for '<T>'."}, {Line: 14, Column: 18, Code: "JavadocMethod", Message: "Expected @param tag for 't'."}, {Line: 17, Column: 5, Code: "JavadocMethod", Message: "Invalid use of the {@inheritDoc} tag."}, {Line: 24, Column: 0, Code: "JavadocMethod", Message: "@return tag should be present and have description."}}},
		{"AvoidNestedBlocks/negative", "AvoidNestedBlocks", "class A {\n    void f(int x) {\n        if (x > 0) {\n            x++;\n        }\n        Runnable r = () -> { };\n        switch (x) {\n            case 1 -> { x++; }\n            default -> { }\n        }\n    }\n}\n", []linter.Diagnostic{}},
		{"AvoidNestedBlocks/positive", "AvoidNestedBlocks", "class A {\n    void f(int x) {\n        {\n            x++;\n        }\n        switch (x) {\n            case 1: {\n                x++;\n                break;\n            }\n            default:\n        }\n    }\n}\n", []linter.Diagnostic{{Line: 3, Column: 9, Code: "AvoidNestedBlocks", Message: "Avoid nested blocks."}, {Line: 7, Column: 21, Code: "AvoidNestedBlocks", Message: "Avoid nested blocks."}}},
		{"EmptyForIteratorPad/negative", "EmptyForIteratorPad", "class A {\n    void f(int x) {\n        for (int i = 0; i < x;) {\n            x--;\n        }\n        for (int i : new int[0]) { }\n        for (; ; x++) { break; }\n    }\n}\n", []linter.Diagnostic{}},
		{"EmptyForIteratorPad/positive", "EmptyForIteratorPad", "class A {\n    void f(int x) {\n        for (int i = 0; i < x; ) {\n            x--;\n        }\n        for (;;\n        ) {\n            break;\n        }\n    }\n}\n", []linter.Diagnostic{{Line: 3, Column: 32, Code: "EmptyForIteratorPad", Message: "';' is followed by whitespace."}}},
		{"MethodLength/negative", "MethodLength", "class A {\n    void f() {\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n    }\n}\n", []linter.Diagnostic{}},
		{"MethodLength/positive", "MethodLength", "class A {\n    void f() {\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n    }\n    A() {\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n        f();\n    }\n}\n", []linter.Diagnostic{{Line: 2, Column: 5, Code: "MethodLength", Message: "Method length is 152 lines (max allowed is 150)."}, {Line: 154, Column: 5, Code: "MethodLength", Message: "Method length is 151 lines (max allowed is 150)."}}},
		{"MethodParamPad/negative", "MethodParamPad", "class A {\n    A(int x) {\n        this(x, x);\n    }\n    A(int x, int y) {\n        super();\n    }\n    void f(int x) {\n        f(x);\n        int[] a = new int [2];\n        this.f(\n            x);\n    }\n}\n", []linter.Diagnostic{}},
		{"MethodParamPad/positive", "MethodParamPad", "class A extends Object {\n    A (int x) {\n        super ();\n    }\n    void f (int x) {\n        f (x);\n        new A\n            (1);\n    }\n    enum E { X (1); E(int i) { } }\n}\n", []linter.Diagnostic{{Line: 2, Column: 7, Code: "MethodParamPad", Message: "'(' is preceded with whitespace."}, {Line: 3, Column: 15, Code: "MethodParamPad", Message: "'(' is preceded with whitespace."}, {Line: 5, Column: 12, Code: "MethodParamPad", Message: "'(' is preceded with whitespace."}, {Line: 6, Column: 11, Code: "MethodParamPad", Message: "'(' is preceded with whitespace."}, {Line: 8, Column: 13, Code: "MethodParamPad", Message: "'(' should be on the previous line."}, {Line: 10, Column: 16, Code: "MethodParamPad", Message: "'(' is preceded with whitespace."}}},
		{"MissingJavadocMethod/negative", "MissingJavadocMethod", "/** A. */\npublic class A {\n    /** Doc. */\n    public void f() {\n        f();\n    }\n    void pkg() {\n    }\n    public void one() { f(); }\n    @Override\n    public String toString() {\n        return \"\";\n    }\n    class P {\n        public void m() {\n        }\n    }\n    interface I {\n        void h();\n    }\n}\n", []linter.Diagnostic{}},
		{"MissingJavadocMethod/positive", "MissingJavadocMethod", "/** A. */\npublic class A {\n    public void f() {\n        f();\n    }\n    public A() {\n    }\n    public <T> void g() {\n    }\n    public interface I {\n        void h();\n    }\n    public @interface N {\n        int v();\n    }\n}\n", []linter.Diagnostic{{Line: 3, Column: 5, Code: "MissingJavadocMethod", Message: "Missing a Javadoc comment."}, {Line: 6, Column: 5, Code: "MissingJavadocMethod", Message: "Missing a Javadoc comment."}, {Line: 8, Column: 5, Code: "MissingJavadocMethod", Message: "Missing a Javadoc comment."}, {Line: 11, Column: 9, Code: "MissingJavadocMethod", Message: "Missing a Javadoc comment."}, {Line: 14, Column: 9, Code: "MissingJavadocMethod", Message: "Missing a Javadoc comment."}}},
		{"MissingSwitchDefault/negative", "MissingSwitchDefault", "class A {\n    void f(int x) {\n        switch (x) {\n            case 1:\n                break;\n            default:\n        }\n        switch (x) {\n            default -> x++;\n        }\n    }\n}\n", []linter.Diagnostic{}},
		{"MissingSwitchDefault/positive", "MissingSwitchDefault", "class A {\n    void f(int x) {\n        switch (x) {\n            case 1:\n                break;\n        }\n        switch (x) {\n            case 2 -> x++;\n        }\n    }\n}\n", []linter.Diagnostic{{Line: 3, Column: 9, Code: "MissingSwitchDefault", Message: "switch without \"default\" clause."}, {Line: 7, Column: 9, Code: "MissingSwitchDefault", Message: "switch without \"default\" clause."}}},
		{"NoWhitespaceBefore/negative", "NoWhitespaceBefore", "class A {\n    int f(int x, int... y) {\n        for ( ; ; ) {\n            x--;\n            break;\n        }\n        ;\n        return x;\n    }\n}\n", []linter.Diagnostic{}},
		{"NoWhitespaceBefore/positive", "NoWhitespaceBefore", "class A {\n    int f(int x , int... y) {\n        for (int i = 0 ; i < x ; i ++) {\n            x --;\n        }\n        f(x\n            , y) ;\n        return x ;\n    }\n    void g(String ... s) { }\n}\n", []linter.Diagnostic{{Line: 2, Column: 17, Code: "NoWhitespaceBefore", Message: "',' is preceded with whitespace."}, {Line: 3, Column: 24, Code: "NoWhitespaceBefore", Message: "';' is preceded with whitespace."}, {Line: 3, Column: 32, Code: "NoWhitespaceBefore", Message: "';' is preceded with whitespace."}, {Line: 3, Column: 36, Code: "NoWhitespaceBefore", Message: "'++' is preceded with whitespace."}, {Line: 4, Column: 15, Code: "NoWhitespaceBefore", Message: "'--' is preceded with whitespace."}, {Line: 7, Column: 13, Code: "NoWhitespaceBefore", Message: "',' is preceded with whitespace."}, {Line: 7, Column: 18, Code: "NoWhitespaceBefore", Message: "';' is preceded with whitespace."}, {Line: 8, Column: 18, Code: "NoWhitespaceBefore", Message: "';' is preceded with whitespace."}, {Line: 10, Column: 19, Code: "NoWhitespaceBefore", Message: "'...' is preceded with whitespace."}}},
		{"ParameterNumber/negative", "ParameterNumber", "class A {\n    A(int a, int b, int c, int d, int e, int f, int g) { }\n    @interface N { int v(); }\n}\n", []linter.Diagnostic{}},
		{"ParameterNumber/positive", "ParameterNumber", "class A {\n    A(int a, int b, int c, int d, int e, int f, int g, int h) { }\n    void m(int a, int b, int c, int d, int e, int f, int g, int h) { }\n}\n", []linter.Diagnostic{{Line: 2, Column: 5, Code: "ParameterNumber", Message: "More than 7 parameters (found 8)."}, {Line: 3, Column: 10, Code: "ParameterNumber", Message: "More than 7 parameters (found 8)."}}},
		{"RightCurly/negative", "RightCurly", "class A {\n    void f(boolean b) {\n        if (b) {\n            f(b);\n        } else if (!b) {\n            f(!b);\n        } else {\n            f(b);\n        }\n        try {\n            f(b);\n        } finally {\n            f(b);\n        }\n        if (b) { f(b); }\n    }\n}\n", []linter.Diagnostic{}},
		{"RightCurly/positive", "RightCurly", "class A {\n    void f(boolean b) {\n        if (b) {\n            f(b);\n        }\n        else {\n            f(!b);\n        }\n        try {\n            f(b);\n        }\n        catch (Exception e) {\n            f(b);\n        } if (b) {\n            f(b); }\n    }\n}\n", []linter.Diagnostic{{Line: 5, Column: 9, Code: "RightCurly", Message: "'}' at column 9 should be on the same line as the next part of a multi-block statement (one that directly contains multiple blocks: if/else-if/else, do/while or try/catch/finally)."}, {Line: 11, Column: 9, Code: "RightCurly", Message: "'}' at column 9 should be on the same line as the next part of a multi-block statement (one that directly contains multiple blocks: if/else-if/else, do/while or try/catch/finally)."}, {Line: 14, Column: 9, Code: "RightCurly", Message: "'}' at column 9 should be alone on a line."}, {Line: 15, Column: 19, Code: "RightCurly", Message: "'}' at column 19 should have line break before."}}},
		{"DesignForExtension/negative", "DesignForExtension", "public class A {\n    /** Doc. */\n    public void f() { f(); }\n    public void empty() { }\n    public final void g() { f(); }\n    public static void s() { s(); }\n    private void p() { p(); }\n    class P { public void m() { f(); } }\n    public final class F { public void m() { f(); } }\n    public class C { private C() { } public void m() { f(); } }\n    public enum E { X; public void m() { m(); } }\n    public interface I { default void m() { m(); } }\n    Object o = new Object() { public String toString() { return \"\"; } };\n}\n", []linter.Diagnostic{}},
		{"DesignForExtension/positive", "DesignForExtension", "public class A {\n    public void f() { f(); }\n    protected native void n();\n    int g() { return 1; }\n    public <T> T h() { return null; }\n    @Deprecated\n    public void k() { f(); }\n    public class B { public void m() { f(); } }\n}\n", []linter.Diagnostic{{Line: 2, Column: 5, Code: "DesignForExtension", Message: "Class 'A' looks like designed for extension (can be subclassed), but the method 'f' does not have javadoc that explains how to do that safely. If class is not designed for extension consider making the class 'A' final or making the method 'f' static/final/abstract/empty, or adding allowed annotation for the method."}, {Line: 3, Column: 5, Code: "DesignForExtension", Message: "Class 'A' looks like designed for extension (can be subclassed), but the method 'n' does not have javadoc that explains how to do that safely. If class is not designed for extension consider making the class 'A' final or making the method 'n' static/final/abstract/empty, or adding allowed annotation for the method."}, {Line: 4, Column: 5, Code: "DesignForExtension", Message: "Class 'A' looks like designed for extension (can be subclassed), but the method 'g' does not have javadoc that explains how to do that safely. If class is not designed for extension consider making the class 'A' final or making the method 'g' static/final/abstract/empty, or adding allowed annotation for the method."}, {Line: 5, Column: 5, Code: "DesignForExtension", Message: "Class 'A' looks like designed for extension (can be subclassed), but the method 'h' does not have javadoc that explains how to do that safely. If class is not designed for extension consider making the class 'A' final or making the method 'h' static/final/abstract/empty, or adding allowed annotation for the method."}, {Line: 6, Column: 5, Code: "DesignForExtension", Message: "Class 'A' looks like designed for extension (can be subclassed), but the method 'k' does not have javadoc that explains how to do that safely. If class is not designed for extension consider making the class 'A' final or making the method 'k' static/final/abstract/empty, or adding allowed annotation for the method."}, {Line: 8, Column: 22, Code: "DesignForExtension", Message: "Class 'B' looks like designed for extension (can be subclassed), but the method 'm' does not have javadoc that explains how to do that safely. If class is not designed for extension consider making the class 'B' final or making the method 'm' static/final/abstract/empty, or adding allowed annotation for the method."}}},
		{"HiddenField/negative", "HiddenField", "class A {\n    int a;\n    static void g(int a) { }\n    static { int a = 1; }\n    interface I { default void h(int a) { } }\n    static class N { void h(int a) { } }\n    void f(java.io.Reader r) throws Exception { try (java.io.Reader a = r) { } }\n}\n", []linter.Diagnostic{}},
		{"HiddenField/positive", "HiddenField", "class A {\n    int a;\n    static int s;\n    A(int a) { }\n    void f(int s) {\n        int a = 1;\n        for (int x : new int[0]) { }\n        try (java.io.Reader a2 = null) { } catch (Exception a) { }\n        Runnable r = () -> { int q; };\n        java.util.function.IntUnaryOperator o = a -> a;\n    }\n    static void g(int a) { }\n    static class N { void h(int a, int s) { } }\n    class M { void h(int a) { } }\n    void p(Object o) { if (o instanceof String a) { } }\n    enum E { X { void k(int a) { } }; int e; void k(int e) { } }\n}\n", []linter.Diagnostic{{Line: 4, Column: 11, Code: "HiddenField", Message: "'a' hides a field."}, {Line: 5, Column: 16, Code: "HiddenField", Message: "'s' hides a field."}, {Line: 6, Column: 13, Code: "HiddenField", Message: "'a' hides a field."}, {Line: 8, Column: 61, Code: "HiddenField", Message: "'a' hides a field."}, {Line: 10, Column: 49, Code: "HiddenField", Message: "'a' hides a field."}, {Line: 13, Column: 40, Code: "HiddenField", Message: "'s' hides a field."}, {Line: 14, Column: 26, Code: "HiddenField", Message: "'a' hides a field."}, {Line: 15, Column: 48, Code: "HiddenField", Message: "'a' hides a field."}, {Line: 16, Column: 29, Code: "HiddenField", Message: "'a' hides a field."}, {Line: 16, Column: 57, Code: "HiddenField", Message: "'e' hides a field."}}},
		{"VisibilityModifier/negative", "VisibilityModifier", "class A {\n    private int a;\n    static final int B = 1;\n    public static final long serialVersionUID = 1L;\n    interface I { int X = 1; }\n    void f() { int local; }\n}\n", []linter.Diagnostic{}},
		{"VisibilityModifier/positive", "VisibilityModifier", "class A {\n    int a;\n    public int b, c;\n    protected static int d;\n    final int e = 1;\n    void f() { new Object() { int g; }; }\n}\n", []linter.Diagnostic{{Line: 2, Column: 9, Code: "VisibilityModifier", Message: "Variable 'a' must be private and have accessor methods."}, {Line: 3, Column: 16, Code: "VisibilityModifier", Message: "Variable 'b' must be private and have accessor methods."}, {Line: 3, Column: 19, Code: "VisibilityModifier", Message: "Variable 'c' must be private and have accessor methods."}, {Line: 4, Column: 26, Code: "VisibilityModifier", Message: "Variable 'd' must be private and have accessor methods."}, {Line: 5, Column: 15, Code: "VisibilityModifier", Message: "Variable 'e' must be private and have accessor methods."}, {Line: 6, Column: 35, Code: "VisibilityModifier", Message: "Variable 'g' must be private and have accessor methods."}}},
		{"MagicNumber/negative", "MagicNumber", "class A {\n    static final int B = 4 * (5 + 6);\n    final long c = -7L, d = 0xFFFFFFFF;\n    interface I { int X = 8; }\n    @interface Ann { int v() default 9; }\n    enum E { Y(10, 11) }\n    int f(int x) { final int[] a = {12, 13}; return x + 1 - 2 + (int) 0.0 + -1; }\n}\n", []linter.Diagnostic{}},
		{"MagicNumber/positive", "MagicNumber", "class A {\n    int a = 3;\n    static final int B = 4 << 1;\n    final int[] c = new int[5];\n    int f(int x) {\n        final int d = x > 0 ? 6 : 7;\n        return x * 100 + -8 + 0xFF + 1.5f;\n    }\n    @SuppressWarnings(value = \"x\") @Deprecated(since = \"9\") int g;\n    enum E { X(10) { int h() { return 11; } } ; E(int i) { } int h() { return 0; } }\n}\n", []linter.Diagnostic{{Line: 2, Column: 13, Code: "MagicNumber", Message: "'3' is a magic number."}, {Line: 3, Column: 26, Code: "MagicNumber", Message: "'4' is a magic number."}, {Line: 4, Column: 29, Code: "MagicNumber", Message: "'5' is a magic number."}, {Line: 6, Column: 31, Code: "MagicNumber", Message: "'6' is a magic number."}, {Line: 6, Column: 35, Code: "MagicNumber", Message: "'7' is a magic number."}, {Line: 7, Column: 20, Code: "MagicNumber", Message: "'100' is a magic number."}, {Line: 7, Column: 26, Code: "MagicNumber", Message: "'-8' is a magic number."}, {Line: 7, Column: 31, Code: "MagicNumber", Message: "'0xFF' is a magic number."}, {Line: 7, Column: 38, Code: "MagicNumber", Message: "'1.5f' is a magic number."}, {Line: 10, Column: 39, Code: "MagicNumber", Message: "'11' is a magic number."}}},
		{"InnerAssignment/negative", "InnerAssignment", "class A {\n    void f(java.io.Reader r, int a) throws Exception {\n        int c;\n        a = 1;\n        if (a > 0) a = 2; else a = 3;\n        for (int i = 0, j = 0; i < 2; i += 1, j = i) { }\n        while ((c = r.read()) != -1 && (a = c) > 0) { }\n        Runnable q = () -> a = 4;\n    }\n}\n", []linter.Diagnostic{}},
		{"InnerAssignment/positive", "InnerAssignment", "class A {\n    int f(int a, int b) {\n        a = b = 1;\n        g(a += 2);\n        if ((a = b) > 0) { }\n        for (int i = 0; (i = a) < 0; ) { }\n        do { } while ((a = b) != 0);\n        return a = 3;\n    }\n    void g(int x) { }\n}\n", []linter.Diagnostic{{Line: 3, Column: 15, Code: "InnerAssignment", Message: "Inner assignments should be avoided."}, {Line: 4, Column: 13, Code: "InnerAssignment", Message: "Inner assignments should be avoided."}, {Line: 5, Column: 16, Code: "InnerAssignment", Message: "Inner assignments should be avoided."}, {Line: 6, Column: 28, Code: "InnerAssignment", Message: "Inner assignments should be avoided."}, {Line: 7, Column: 26, Code: "InnerAssignment", Message: "Inner assignments should be avoided."}, {Line: 8, Column: 18, Code: "InnerAssignment", Message: "Inner assignments should be avoided."}}},
		{"JavadocVariable/negative", "JavadocVariable", "/** A. */\nclass A {\n    /** Doc. */\n    int b;\n    private static final long serialVersionUID = 1L;\n    void f() { int local = 1; new Object() { int inner; }; }\n}\n", []linter.Diagnostic{}},
		{"JavadocVariable/positive", "JavadocVariable", "class A {\n    int a;\n    /** Doc. */\n    int b;\n    enum E { X, /** Y. */ Y }\n    interface I { int C = 1; }\n}\n", []linter.Diagnostic{{Line: 2, Column: 5, Code: "JavadocVariable", Message: "Missing a Javadoc comment."}, {Line: 5, Column: 14, Code: "JavadocVariable", Message: "Missing a Javadoc comment."}, {Line: 5, Column: 27, Code: "JavadocVariable", Message: "Missing a Javadoc comment."}}},
		{"LeftCurly/negative", "LeftCurly", "class A {\n    void f(int x) {\n        if (x > 0) { }\n        Runnable r = () -> {\n        };\n        { x++; }\n        new Object() { };\n    }\n}\n", []linter.Diagnostic{}},
		{"LeftCurly/positive", "LeftCurly", "class A\n{\n    void f(int x) { x++;\n        if (x > 0)\n        {\n            x--;\n        }\n        Runnable r = () -> { f(1); };\n        switch (x) { case 1: { x++; break; } default: }\n    }\n}\n", []linter.Diagnostic{{Line: 2, Column: 1, Code: "LeftCurly", Message: "'{' at column 1 should be on the previous line."}, {Line: 3, Column: 19, Code: "LeftCurly", Message: "'{' at column 19 should have line break after."}, {Line: 5, Column: 9, Code: "LeftCurly", Message: "'{' at column 9 should be on the previous line."}, {Line: 8, Column: 28, Code: "LeftCurly", Message: "'{' at column 28 should have line break after."}, {Line: 9, Column: 30, Code: "LeftCurly", Message: "'{' at column 30 should have line break after."}}},
		{"OperatorWrap/negative", "OperatorWrap", "class A {\n    boolean f(int x) {\n        int y = x\n            + 1;\n        int z = y + // comment\n            1;\n        switch (x) { case 1:\n            break;\n        }\n        return y > 0\n            && z > 0;\n    }\n}\n", []linter.Diagnostic{}},
		{"OperatorWrap/positive", "OperatorWrap", "class A {\n    boolean f(int x, Object o) {\n        int y = x +\n            1;\n        boolean b = x > 0 ? true :\n            false;\n        return b &&\n            o instanceof String;\n    }\n}\n", []linter.Diagnostic{{Line: 3, Column: 19, Code: "OperatorWrap", Message: "'+' should be on a new line."}, {Line: 5, Column: 34, Code: "OperatorWrap", Message: "':' should be on a new line."}, {Line: 7, Column: 18, Code: "OperatorWrap", Message: "'&&' should be on a new line."}}},
		{"ParenPad/negative", "ParenPad", "class A {\n    void f(int x) {\n        g((int) x, (x + 1));\n        for (; ; ) { break; }\n        f(\n            x);\n    }\n    void g(int a, int b) { }\n}\n", []linter.Diagnostic{}},
		{"ParenPad/positive", "ParenPad", "class A {\n    void f( int x ) {\n        g( x, (x + 1) );\n        for ( ; ; ) { break; }\n    }\n    void g(int a, int b) { }\n}\n", []linter.Diagnostic{{Line: 2, Column: 11, Code: "ParenPad", Message: "'(' is followed by whitespace."}, {Line: 2, Column: 19, Code: "ParenPad", Message: "')' is preceded with whitespace."}, {Line: 3, Column: 10, Code: "ParenPad", Message: "'(' is followed by whitespace."}, {Line: 3, Column: 23, Code: "ParenPad", Message: "')' is preceded with whitespace."}}},
		{"Indentation/negative", "Indentation", "class IndNeg {\n  int x;\n\n  void f(int a) {\n    if (a > 0) {\n      a++;\n    } else {\n      a--;\n    }\n    switch (a) {\n      case 1:\n        break;\n      default:\n    }\n    Runnable r = () -> {\n      g();\n    };\n  }\n\n  void g() {}\n}\n", []linter.Diagnostic{}},
		{"Indentation/positive", "Indentation", "class IndPos {\n    int x;\n    void f(int a) {\n        if (a > 0) {\n            a++;\n        } else if (a < 0) {\n          a--;\n        }\n        switch (a) {\n            case 1:\n                break;\n            default:\n        }\n        Runnable r = () -> {\n            g();\n        };\n    }\n    void g() { }\n}\n", []linter.Diagnostic{{Line: 2, Column: 5, Code: "Indentation", Message: "'member def type' has incorrect indentation level 4, expected level should be 2."}, {Line: 3, Column: 5, Code: "Indentation", Message: "'method def modifier' has incorrect indentation level 4, expected level should be 2."}, {Line: 4, Column: 9, Code: "Indentation", Message: "'if' has incorrect indentation level 8, expected level should be 4."}, {Line: 5, Column: 13, Code: "Indentation", Message: "'if' child has incorrect indentation level 12, expected level should be 6."}, {Line: 6, Column: 9, Code: "Indentation", Message: "'if rcurly' has incorrect indentation level 8, expected level should be 4."}, {Line: 7, Column: 11, Code: "Indentation", Message: "'if' child has incorrect indentation level 10, expected level should be 6."}, {Line: 8, Column: 9, Code: "Indentation", Message: "'if rcurly' has incorrect indentation level 8, expected level should be 4."}, {Line: 9, Column: 9, Code: "Indentation", Message: "'switch' has incorrect indentation level 8, expected level should be 4."}, {Line: 10, Column: 13, Code: "Indentation", Message: "'case' child has incorrect indentation level 12, expected level should be 6."}, {Line: 11, Column: 17, Code: "Indentation", Message: "'block' child has incorrect indentation level 16, expected level should be 8."}, {Line: 12, Column: 13, Code: "Indentation", Message: "'case' child has incorrect indentation level 12, expected level should be 6."}, {Line: 13, Column: 9, Code: "Indentation", Message: "'switch rcurly' has incorrect indentation level 8, expected level should be 4."}, {Line: 14, Column: 9, Code: "Indentation", Message: "'method def' child has incorrect indentation level 8, expected level should be 4."}, {Line: 15, Column: 13, Code: "Indentation", Message: "'block' child has incorrect indentation level 12, expected level should be 10."}, {Line: 17, Column: 5, Code: "Indentation", Message: "'method def rcurly' has incorrect indentation level 4, expected level should be 2."}, {Line: 18, Column: 5, Code: "Indentation", Message: "'method def modifier' has incorrect indentation level 4, expected level should be 2."}}},
		{"JavadocParagraph/negative", "JavadocParagraph", "/**\n * Summary.\n *\n * <p>Paragraph.\n *\n * <p>Another.\n * <table><tbody><tr><td><p> bare\n * </td></tr></tbody></table>\n */\nclass JpNeg {\n}\n", []linter.Diagnostic{}},
		{"JavadocParagraph/positive", "JavadocParagraph", "/**\n * Summary.\n *\n * Text after an empty line.\n * <p>\n * Next.\n * <ul>\n * <li><p>In a list.</li>\n * </ul>\n */\nclass JpPos {\n  /** Doc. <p>not after an empty line. */\n  int x;\n}\n", []linter.Diagnostic{{Line: 3, Column: 0, Code: "JavadocParagraph", Message: "Empty line should be followed by <p> tag on the next line."}, {Line: 5, Column: 0, Code: "JavadocParagraph", Message: "<p> tag should be placed immediately before the first word, with no space after."}, {Line: 5, Column: 0, Code: "JavadocParagraph", Message: "<p> tag should be preceded with an empty line."}, {Line: 12, Column: 0, Code: "JavadocParagraph", Message: "<p> tag should be preceded with an empty line."}}},
	}
	seen := make(map[string]int)
	for _, tt := range tests {
		if len(tt.want) > 0 {
			seen[tt.check]++
		}
		t.Run(tt.name, func(t *testing.T) {
			cfg := linter.Config{Select: []string{tt.check}}
			if !slices.Contains(defaultCodes, tt.check) {
				// Checks outside the default configuration are in sun_checks,
				// or else in google_checks.
				cfg.Options = map[string]string{OptionConfig: SunChecks}
				if sun, err := New(cfg); err == nil && !sun.enabled[tt.check] {
					cfg.Options = map[string]string{OptionConfig: GoogleChecks}
				}
			}
			got := lint(t, cfg, tt.code)
			if len(tt.want) == 0 {
				assert.Empty(t, got)
				return
			}
			assert.Equal(t, tt.want, got)
		})
	}
	for _, c := range Language().Codes {
		assert.Positive(t, seen[c], "no positive case for %s", c)
	}
}

func TestConfig(t *testing.T) {
	long := "class A {\n    String s = \"" + strings.Repeat("x", 80) + "\";\n}\n"
	t.Run("MaxLineLength", func(t *testing.T) {
		assert.Empty(t, lint(t, linter.Config{MaxLineLength: 120}, long))
		got := lint(t, linter.Config{MaxLineLength: 50}, long)
		require.Len(t, got, 1)
		assert.Equal(t, "Line is longer than 50 characters (found 98).", got[0].Message)
	})
	t.Run("Ignore", func(t *testing.T) {
		assert.Empty(t, lint(t, linter.Config{Ignore: []string{"Line"}}, long))
	})
	t.Run("Select", func(t *testing.T) {
		got := lint(t, linter.Config{Select: []string{"NewlineAtEndOfFile"}}, "class a {int X_;}")
		require.Len(t, got, 1)
		assert.Equal(t, NewlineAtEndOfFile, got[0].Code)
	})
	t.Run("Sorted", func(t *testing.T) {
		got := lint(t, linter.Config{}, "class a {int X_;}")
		require.NotEmpty(t, got)
		for i := 1; i < len(got); i++ {
			assert.LessOrEqual(t, got[i-1].Line*1000+got[i-1].Column, got[i].Line*1000+got[i].Column)
		}
	})
	t.Run("NegativeMaxLineLength", func(t *testing.T) {
		_, err := New(linter.Config{MaxLineLength: -1})
		assert.ErrorIs(t, err, ErrInvalidConfig)
	})
	t.Run("Cancelled", func(t *testing.T) {
		l, err := New(linter.Config{})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = l.Lint(ctx, linter.Source{Code: []byte("class A {}\n")})
		assert.ErrorIs(t, err, context.Canceled)
	})
}

func TestInteger(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 4458: "4,458", 1234567: "1,234,567", -1000: "-1,000"} {
		assert.Equal(t, want, integer(n))
	}
}

func TestLanguage(t *testing.T) {
	lang := Language()
	assert.Equal(t, "java", lang.Name)
	assert.Equal(t, NewlineAtEndOfFile, lang.NewlineAtEOF)
	assert.Equal(t, []string{".java"}, lang.Extensions)
	// The default configuration keeps its 21 checks; the others come with
	// a configuration that names them (OptionConfig).
	assert.Len(t, defaultCodes, 21)
	assert.Equal(t, codes, lang.Codes)
	l, err := lang.New(linter.Config{})
	require.NoError(t, err)
	ds, err := l.Lint(context.Background(), linter.Source{Code: []byte("class A {}")})
	require.NoError(t, err)
	assert.Contains(t, ds, linter.Diagnostic{Line: 1, Column: 0, Code: NewlineAtEndOfFile, Message: "File does not end with a newline."})
}

func TestTokenize(t *testing.T) {
	src := "x >>>= 1_000L + 0x1F + 0b1010 + 017 + 1.5e-3f + .5 + 'a' + '\\'' + '\\u0041' + \"s\\\"\"; " +
		"f = a -> b::c; @interface @Foo /** doc */ /* c */ // end\ns = \"\"\"\n  text \\\"\"\" \"\"\";\n"
	lx := tokenize(src)
	var got []string
	for _, tk := range lx.toks {
		if tk.kind != tEOF {
			got = append(got, tk.text)
		}
	}
	assert.Equal(t, []string{"x", ">>>=", "1_000L", "+", "0x1F", "+", "0b1010", "+", "017", "+", "1.5e-3f",
		"+", ".5", "+", "'a'", "+", `'\''`, "+", `'\u0041'`, "+", `"s\""`, ";", "f", "=", "a", "->", "b",
		"::", "c", ";", "@", "interface", "@", "Foo", "s", "=", "\"\"\"\n  text \\\"\"\" \"\"\"", ";"}, got)
	require.Len(t, lx.comments, 3)
	assert.True(t, lx.comments[0].javadocOK)
	assert.False(t, lx.comments[1].javadocOK)
	last := lx.toks[len(lx.toks)-2]
	assert.Equal(t, int32(3), last.line, "text block spans lines")
	assert.Equal(t, int32(15), last.col)
}

func TestGenericsAreNotOperators(t *testing.T) {
	code := "class A {\n    java.util.Map<String, java.util.List<java.util.List<String>>> m;\n" +
		"    <T extends Comparable<? super T>> void f(Class<?>[] c) {\n" +
		"        java.util.function.IntFunction<Class<?>[]> g = Class<?>[]::new;\n" +
		"        boolean b = 1 < 2 && 3 >> 1 > 0;\n    }\n}\n"
	assert.Empty(t, lint(t, linter.Config{Select: []string{WhitespaceAround}}, code))
}

// TestBadInput feeds code that is not Java; the linter must not panic and
// must still run the line checks.
func TestBadInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := make([]byte, 4096)
	for i := range random {
		random[i] = byte(rng.UintN(256))
	}
	inputs := map[string]string{
		"empty":                 "",
		"unterminated comment":  "class A { /* never closed\n int x;\n",
		"unterminated javadoc":  "/** x\nimport a.B;",
		"unterminated string":   "class A { String s = \"abc\n int x; }\n",
		"unterminated char":     "class A { char c = 'a\n }\n",
		"unterminated text blk": "class A { String s = \"\"\"\n abc\n",
		"random bytes":          string(random),
		"crlf and tabs":         "class A {\r\n\tint x;\r\n\tvoid f() {\r\n\t\tif (x) x++;\r\n\t}\r\n}\r\n",
		"lone cr":               "class A {\r int x;\r}\r",
		"deep nesting":          "class A { int x = " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000) + "; }\n",
		"deep blocks":           "class A { void f() " + strings.Repeat("{", 5000) + strings.Repeat("}", 5000) + " }\n",
		"unbalanced":            "class A { void f( { if ( } } ) ] [ >>> <<< -> :: @ ... \n",
		"only operators":        ">>>= >> > < <= -> :: ... @ ? : ;",
		"keywords":              "class interface enum record switch case default -> yield new ;",
		"invalid utf8":          "class A { String s = \"\xff\xfe\"; int \xc3x; }\n",
	}
	// Every configuration: sun_checks runs every check implemented.
	configs := []linter.Config{{}, {Options: map[string]string{OptionConfig: SunChecks}}, {Options: map[string]string{OptionConfig: GoogleChecks}}}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			for _, cfg := range configs {
				assert.NotPanics(t, func() { lint(t, cfg, in) })
			}
		})
	}
	got := lint(t, linter.Config{}, inputs["crlf and tabs"])
	assert.Contains(t, got, linter.Diagnostic{Line: 2, Column: 1, Code: FileTabCharacter, Message: "File contains tab characters (this is the first instance)."})
	assert.Contains(t, got, linter.Diagnostic{Line: 4, Column: 17, Code: NeedBraces, Message: "'if' construct must use '{}'s."})
}

func FuzzLint(f *testing.F) {
	f.Add([]byte("class A {\n\tint x = a >>> 2 ? b : c;\n}\n"))
	f.Add([]byte("import java.util.*;\n/** {@link List} */\nrecord P(int x) { P { } }\n"))
	f.Add([]byte("class A { String s = \"\"\"\n x \"\"\"; void f() { switch (x) { case 1 -> { yield 2; } } } }"))
	f.Add([]byte("@interface A { int v() default 1; } enum E { A { }, B; }"))
	l, err := New(linter.Config{})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, code []byte) {
		ds, err := l.Lint(context.Background(), linter.Source{Code: code})
		require.NoError(t, err)
		for _, d := range ds {
			if d.Line < 1 || d.Column < 0 {
				t.Fatalf("bad position %v", d)
			}
		}
	})
}

// pathological inputs are unbalanced code that a look-ahead could turn
// quadratic on.
var pathological = []string{"(a;", "x = (a; ", "a<b<", "a<b.c,", "(a.b.c.d.e.f.g.h ", "@a(;",
	"new a<", "f((a)", "{(", "case a<", "int x = {(", "/** {@link a} */ int x; ", "(", "{", "<"}

// TestPathologicalInput lints unbalanced input without failing. Its speed
// is measured by BenchmarkPathologicalInput, not asserted here: timing
// assertions flake on shared machines.
func TestPathologicalInput(t *testing.T) {
	for _, p := range pathological {
		lint(t, linter.Config{}, "import a.b; class A { void f() {"+strings.Repeat(p, 2000))
		lint(t, linter.Config{Options: map[string]string{OptionConfig: SunChecks}}, "import a.b; class A { void f() {"+strings.Repeat(p, 2000))
	}
}

// BenchmarkPathologicalInput lints 20000 repetitions of each input: linear
// look-ahead takes milliseconds, quadratic takes seconds.
func BenchmarkPathologicalInput(b *testing.B) {
	l, err := New(linter.Config{})
	require.NoError(b, err)
	for _, p := range pathological {
		src := []byte("import a.b; class A { void f() {" + strings.Repeat(p, 20000))
		b.Run(fmt.Sprintf("%q", p), func(b *testing.B) {
			for b.Loop() {
				_, _ = l.Lint(context.Background(), linter.Source{Code: src})
			}
		})
	}
}

// TestConcurrentUse lints from several goroutines with one Linter; run
// with -race.
func TestConcurrentUse(t *testing.T) {
	paths, err := filepath.Glob("testdata/corpus/*.java")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	l, err := New(linter.Config{})
	require.NoError(t, err)
	srcs := make([][]byte, len(paths))
	want := make([][]linter.Diagnostic, len(paths))
	for i, p := range paths {
		srcs[i], err = os.ReadFile(p)
		require.NoError(t, err)
		want[i], err = l.Lint(context.Background(), linter.Source{Name: p, Code: srcs[i]})
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Go(func() {
			for i := range srcs {
				got, err := l.Lint(context.Background(), linter.Source{Code: srcs[i]})
				assert.NoError(t, err)
				assert.Equal(t, want[i], got)
			}
		})
	}
	wg.Wait()
}
