package python_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/linter/python"
)

// codeCase is one code with a source that triggers it, the positions
// ("line:col") pycodestyle 2.10 reports for it, and a source that does not.
type codeCase struct {
	code     string
	positive string
	negative string
	want     []string
	// cfg, when set, replaces Select: []string{code}: E117 and E133 are
	// reported only when the check that finds them runs, W505 only with
	// max-doc-length.
	cfg *linter.Config
}

// codeCases were checked against pycodestyle 2.10.0 (`pycodestyle
// --select=E,W`, keeping the lines of the code under test).
var codeCases = []codeCase{
	{"E101", "if True:\n\tx = 1\n        y = 2\n", "if True:\n    x = 1\n    y = 2\n", []string{"3:1"}, nil},
	{"E111", "if True:\n  x = 1\n", "if True:\n    x = 1\n", []string{"2:3"}, nil},
	{"E112", "if True:\npass\n", "if True:\n    pass\n", []string{"2:1"}, nil},
	{"E113", "x = 1\n    y = 2\n", "x = 1\ny = 2\n", []string{"2:5"}, nil},
	{"E114", "if True:\n  # c\n  x = 1\n", "if True:\n    # c\n    x = 1\n", []string{"2:3"}, nil},
	{"E115", "if True:\n# c\n    x = 1\n", "if True:\n    # c\n    x = 1\n", []string{"2:1"}, nil},
	{"E116", "x = 1\n    # c\n", "x = 1\n# c\n", []string{"2:5"}, nil},
	{"E117", "if True:\n        x = 1\n", "if True:\n    x = 1\n", []string{"2:9"}, &linter.Config{Select: []string{"E111", "E117"}}},
	{"E121", "a = (\n   42)\n", "a = (\n    42)\n", []string{"2:4"}, nil},
	{"E122", "a = (\n42)\n", "a = (\n    42)\n", []string{"2:1"}, nil},
	{"E123", "a = (\n    42\n    )\n", "a = (\n    42\n)\n", []string{"3:5"}, nil},
	{"E124", "a = (24,\n     42\n)\n", "a = (24,\n     42)\n", []string{"3:1"}, nil},
	{"E125", "if (\n    b):\n    pass\n", "if (\n        b):\n    pass\n", []string{"2:5"}, nil},
	{"E126", "a = (\n        42)\n", "a = (\n    42)\n", []string{"2:9"}, nil},
	{"E127", "a = (24,\n      42)\n", "a = (24,\n     42)\n", []string{"2:7"}, nil},
	{"E128", "a = (24,\n    42)\n", "a = (24,\n     42)\n", []string{"2:5"}, nil},
	{"E129", "if (a or\n    b):\n    pass\n", "if (a or\n        b):\n    pass\n", []string{"2:5"}, nil},
	{"E131", "a = (\n    42\n 24)\n", "a = (\n    42,\n    24)\n", []string{"3:2"}, nil},
	{"E133", "a = (\n    42\n)\n", "a = (\n    42\n    )\n", []string{"3:1"},
		&linter.Config{Select: []string{"E12", "E133"}, Options: map[string]string{"hang-closing": "true"}}},
	{"E201", "x = ( 1)\n", "x = (1)\n", []string{"1:6"}, nil},
	{"E202", "x = (1 )\n", "x = (1,)\n", []string{"1:7"}, nil},
	{"E203", "x = {1 : 2}\n", "x = {1: 2}\n", []string{"1:7"}, nil},
	{"E211", "print (1)\n", "print(1)\n", []string{"1:6"}, nil},
	{"E221", "x  = 1\n", "x = 1\n", []string{"1:2"}, nil},
	{"E222", "x =  1\n", "x = 1\n", []string{"1:4"}, nil},
	{"E223", "x\t= 1\n", "x = 1\n", []string{"1:2"}, nil},
	{"E224", "x =\t1\n", "x = 1\n", []string{"1:4"}, nil},
	{"E225", "x=1\n", "x = 1\n", []string{"1:2"}, nil},
	{"E226", "x = 1+2\n", "x = 1 + 2\n", []string{"1:6"}, nil},
	{"E227", "x = 1|2\n", "x = 1 | 2\n", []string{"1:6"}, nil},
	{"E228", "x = 1%2\n", "x = 1 % 2\n", []string{"1:6"}, nil},
	{"E231", "x = [1,2]\n", "x = [1, 2]\ny = x[1:2]\n", []string{"1:7"}, nil},
	{"E241", "x = [1,  2]\n", "x = [1, 2]\n", []string{"1:8"}, nil},
	{"E242", "x = [1,\t2]\n", "x = [1, 2]\n", []string{"1:8"}, nil},
	{"E251", "f(a = 1)\n", "f(a=1)\n", []string{"1:4", "1:6"}, nil},
	{"E252", "def f(a: int=1):\n    pass\n", "def f(a: int = 1):\n    pass\n", []string{"1:13", "1:14"}, nil},
	{"E261", "x = 1 # c\n", "x = 1  # c\n", []string{"1:6"}, nil},
	{"E262", "x = 1  #c\n", "x = 1  # c\n", []string{"1:8"}, nil},
	{"E265", "#c\nx = 1\n", "# c\nx = 1\n", []string{"1:1"}, nil},
	{"E266", "## c\nx = 1\n", "# c\nx = 1\n", []string{"1:1"}, nil},
	{"E271", "x = 1 if  x else 2\n", "x = 1 if x else 2\n", []string{"1:9"}, nil},
	{"E272", "x = 1  if x else 2\n", "x = 1 if x else 2\n", []string{"1:6"}, nil},
	{"E273", "x = 1 if\tx else 2\n", "x = 1 if x else 2\n", []string{"1:9"}, nil},
	{"E274", "x = 1\tif x else 2\n", "x = 1 if x else 2\n", []string{"1:6"}, nil},
	{"E275", "x = not(1)\n", "x = not (1)\n", []string{"1:8"}, nil},
	{"E301", "class A:\n    x = 1\n    def f(self):\n        pass\n", "class A:\n    x = 1\n\n    def f(self):\n        pass\n", []string{"3:5"}, nil},
	{"E302", "x = 1\ndef f():\n    pass\n", "x = 1\n\n\ndef f():\n    pass\n", []string{"2:1"}, nil},
	{"E303", "x = 1\n\n\n\ny = 2\n", "x = 1\n\n\ny = 2\n", []string{"5:1"}, nil},
	{"E304", "@d\n\ndef f():\n    pass\n", "@d\ndef f():\n    pass\n", []string{"3:1"}, nil},
	{"E305", "def f():\n    pass\nx = 1\n", "def f():\n    pass\n\n\nx = 1\n", []string{"3:1"}, nil},
	{"E306", "def f():\n    x = 1\n    def g():\n        pass\n", "def f():\n    x = 1\n\n    def g():\n        pass\n", []string{"3:5"}, nil},
	{"E401", "import os, sys\n", "import os\nimport sys\n", []string{"1:10"}, nil},
	{"E402", "x = 1\nimport os\n", "import os\nx = 1\n", []string{"2:1"}, nil},
	{"E501", "x = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'\n", "x = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'\n", []string{"1:80"}, nil},
	{"E502", "x = (1 + \\\n     2)\n", "x = 1 + \\\n    2\n", []string{"1:10"}, nil},
	{"E701", "if x: y = 1\n", "if x:\n    y = 1\n", []string{"1:5"}, nil},
	{"E702", "x = 1; y = 2\n", "x = 1\ny = 2\n", []string{"1:6"}, nil},
	{"E703", "x = 1;\n", "x = 1\n", []string{"1:6"}, nil},
	{"E704", "def f(): pass\n", "def f():\n    pass\n", []string{"1:1"}, nil},
	{"E711", "if x == None:\n    pass\n", "if x is None:\n    pass\n", []string{"1:6"}, nil},
	{"E712", "if x == True:\n    pass\n", "if x is True:\n    pass\n", []string{"1:6"}, nil},
	{"E713", "if not x in y:\n    pass\n", "if x not in y:\n    pass\n", []string{"1:4"}, nil},
	{"E714", "if not x is y:\n    pass\n", "if x is not y:\n    pass\n", []string{"1:4"}, nil},
	{"E721", "if type(x) == type(1):\n    pass\n", "if isinstance(x, int):\n    pass\n", []string{"1:12"}, nil},
	{"E722", "try:\n    pass\nexcept:\n    pass\n", "try:\n    pass\nexcept ValueError:\n    pass\n", []string{"3:1"}, nil},
	{"E731", "f = lambda x: 2 * x\n", "def f(x):\n    return 2 * x\n", []string{"1:1"}, nil},
	{"E741", "l = 1\n", "L = 1\n", []string{"1:1"}, nil},
	{"E742", "class I:\n    pass\n", "class J:\n    pass\n", []string{"1:7"}, nil},
	{"E743", "def O():\n    pass\n", "def P():\n    pass\n", []string{"1:5"}, nil},
	{"E901", "x = (1,\n", "x = (1,)\n", []string{"2:1"}, nil},
	{"W191", "if True:\n\tx = 1\n", "if True:\n    x = 1\n", []string{"2:1"}, nil},
	{"W291", "x = 1 \n", "x = 1\n", []string{"1:6"}, nil},
	{"W292", "x = 1", "x = 1\n", []string{"1:6"}, nil},
	{"W293", "if True:\n    x = 1\n    \n    y = 2\n", "if True:\n    x = 1\n\n    y = 2\n", []string{"3:1"}, nil},
	{"W391", "x = 1\n\n", "x = 1\n", []string{"2:1"}, nil},
	{"W503", "x = (1\n     + 2)\n", "x = (1 +\n     2)\n", []string{"2:6"}, nil},
	{"W504", "x = (1 +\n     2)\n", "x = (1\n     + 2)\n", []string{"1:8"}, nil},
	{"W505", "# " + strings.Repeat("word ", 16) + "\nx = 1\n", "# " + strings.Repeat("word ", 10) + "\nx = 1\n", []string{"1:73"},
		&linter.Config{Select: []string{"W505"}, Options: map[string]string{"max-doc-length": "72"}}},
	{"W605", "x = '\\d'\n", "x = r'\\d'\n", []string{"1:6"}, nil},
	{"W606", "async = 42\n", "async def f():\n    await g()\n", []string{"1:1"}, nil},
}

// lint runs a linter for cfg on src and fails the test on error.
func lint(t testing.TB, cfg linter.Config, src string) []linter.Diagnostic {
	t.Helper()
	l, err := python.New(cfg)
	require.NoError(t, err)
	ds, err := l.Lint(context.Background(), linter.Source{Name: "t.py", Code: []byte(src)})
	require.NoError(t, err)
	return ds
}

// positions returns "line:col" of the diagnostics with the given code.
func positions(ds []linter.Diagnostic, code string) []string {
	var out []string
	for _, d := range ds {
		if d.Code == code {
			out = append(out, fmt.Sprintf("%d:%d", d.Line, d.Column))
		}
	}
	return out
}

func TestEveryCode(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range codeCases {
		covered[tc.code] = true
		t.Run(tc.code, func(t *testing.T) {
			cfg := linter.Config{Select: []string{tc.code}}
			if tc.cfg != nil {
				cfg = *tc.cfg
			}
			ds := lint(t, cfg, tc.positive)
			assert.Equal(t, tc.want, positions(ds, tc.code), "positive: %q", tc.positive)
			for _, d := range ds {
				assert.Equal(t, tc.code, d.Code, "only the selected code is reported")
			}
			assert.Empty(t, lint(t, cfg, tc.negative), "negative: %q", tc.negative)
		})
	}
	for _, c := range python.Codes() {
		// E902 is about reading the file (TestFileError).
		assert.True(t, covered[c] || c == "E902", "no test case for %s", c)
	}
}

func TestMessages(t *testing.T) {
	tests := []struct {
		src  string
		want linter.Diagnostic
	}{
		{"x = '" + strings.Repeat("a", 80) + "'\n", linter.Diagnostic{Line: 1, Column: 80, Code: "E501", Message: "line too long (86 > 79 characters)"}},
		{"x = 1\n\n\n\ny = 2\n", linter.Diagnostic{Line: 5, Column: 1, Code: "E303", Message: "too many blank lines (3)"}},
		{"x = 1\ndef f():\n    pass\n", linter.Diagnostic{Line: 2, Column: 1, Code: "E302", Message: "expected 2 blank lines, found 0"}},
		{"if x != False:\n    pass\n", linter.Diagnostic{Line: 1, Column: 6, Code: "E712", Message: "comparison to False should be 'if cond is not False:' or 'if cond:'"}},
		{"if x == None:\n    pass\n", linter.Diagnostic{Line: 1, Column: 6, Code: "E711", Message: "comparison to None should be 'if cond is None:'"}},
		{"x = '\\d'\n", linter.Diagnostic{Line: 1, Column: 6, Code: "W605", Message: "invalid escape sequence '\\d'"}},
		{"I = 1\n", linter.Diagnostic{Line: 1, Column: 1, Code: "E741", Message: "ambiguous variable name 'I'"}},
		{"x = [1,2]\n", linter.Diagnostic{Line: 1, Column: 7, Code: "E231", Message: "missing whitespace after ','"}},
		{"x = 1", linter.Diagnostic{Line: 1, Column: 6, Code: "W292", Message: "no newline at end of file"}},
		{"x = (1,\n", linter.Diagnostic{Line: 2, Column: 1, Code: "E901", Message: "TokenError: EOF in multi-line statement"}},
		{"if True:\n  # c\n  x = 1\n", linter.Diagnostic{Line: 2, Column: 3, Code: "E114", Message: "indentation is not a multiple of 4 (comment)"}},
	}
	for _, tc := range tests {
		t.Run(tc.want.Code, func(t *testing.T) {
			assert.Contains(t, lint(t, linter.Config{}, tc.src), tc.want)
		})
	}
}

func TestColumnsCountCharacters(t *testing.T) {
	// pycodestyle works on decoded text: columns and lengths count code
	// points, not bytes.
	src := "s = 'ééé' ;x = 1\nt = '" + strings.Repeat("é", 76) + "'\n"
	ds := lint(t, linter.Config{}, src)
	assert.Equal(t, []string{"1:10"}, positions(ds, "E203"))
	assert.Equal(t, []string{"1:11"}, positions(ds, "E702"))
	assert.Equal(t, []string{"2:80"}, positions(ds, "E501"))
	assert.Equal(t, "line too long (82 > 79 characters)", ds[len(ds)-1].Message)
}

// TestConfig checks Select and Ignore against pycodestyle (the results
// of the same options on the same file), and ExtendIgnore against flake8's
// meaning.
func TestConfig(t *testing.T) {
	src := "import os, sys\nx=1 \ny = 1+2\nz = '" + strings.Repeat("a", 80) + "'\n"
	codes := func(cfg linter.Config) []string {
		var out []string
		for _, d := range lint(t, cfg, src) {
			out = append(out, d.Code)
		}
		return out
	}
	tests := []struct {
		name string
		cfg  linter.Config
		want []string
	}{
		{"zero value is pycodestyle's default", linter.Config{}, []string{"E401", "E225", "W291", "E501"}},
		{"select replaces the default ignore list", linter.Config{Select: []string{"E2"}}, []string{"E225", "E226"}},
		{"select several", linter.Config{Select: []string{"E4", "W"}}, []string{"E401", "W291"}},
		{"ignore replaces the default ignore list", linter.Config{Ignore: []string{"E5", "W2"}}, []string{"E401", "E225", "E226"}},
		{"select overrides ignore", linter.Config{Select: []string{"E"}, Ignore: []string{"E4"}}, []string{"E401", "E225", "E226", "E501"}},
		{"extend-ignore keeps the default list", linter.Config{ExtendIgnore: []string{"W2"}}, []string{"E401", "E225", "E501"}},
		{"extend-ignore beats a shorter select", linter.Config{Select: []string{"E"}, ExtendIgnore: []string{"E4"}}, []string{"E225", "E226", "E501"}},
		{"max line length", linter.Config{MaxLineLength: 100}, []string{"E401", "E225", "W291"}},
		{"short max line length", linter.Config{MaxLineLength: 10, Select: []string{"E501"}}, []string{"E501", "E501"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, codes(tc.cfg))
		})
	}

	ds := lint(t, linter.Config{MaxLineLength: 10, Select: []string{"E501"}}, src)
	require.Len(t, ds, 2)
	assert.Equal(t, linter.Diagnostic{Line: 1, Column: 11, Code: "E501", Message: "line too long (14 > 10 characters)"}, ds[0])
}

func TestOptions(t *testing.T) {
	opts := func(kv ...string) linter.Config {
		cfg := linter.Config{Options: map[string]string{}}
		for i := 0; i < len(kv); i += 2 {
			cfg.Options[kv[i]] = kv[i+1]
		}
		return cfg
	}
	t.Run("indent-size", func(t *testing.T) {
		src := "if True:\n  x = (\n    1)\n"
		assert.Contains(t, lint(t, linter.Config{}, src), linter.Diagnostic{Line: 2, Column: 3, Code: "E111", Message: "indentation is not a multiple of 4"})
		cfg := opts("indent-size", "2")
		assert.Empty(t, lint(t, cfg, src), "2-space indents and hangs are right with indent-size 2")
		cfg.Options = map[string]string{"indent_size": "3"} // as in a config file
		assert.Contains(t, lint(t, cfg, src), linter.Diagnostic{Line: 2, Column: 3, Code: "E111", Message: "indentation is not a multiple of 3"})
	})
	t.Run("hang-closing", func(t *testing.T) {
		src := "a = (\n    42\n    )\n"
		cfg := opts("hang-closing", "false")
		cfg.Select = []string{"E12", "E133"}
		assert.Equal(t, []string{"3:5"}, positions(lint(t, cfg, src), "E123"))
		cfg.Options["hang-closing"] = "yes"
		assert.Empty(t, lint(t, cfg, src))
	})
	t.Run("max-doc-length", func(t *testing.T) {
		src := "def f():\n    \"\"\"" + strings.Repeat("doc ", 20) + "\"\"\"\n"
		assert.Empty(t, positions(lint(t, linter.Config{}, src), "W505"), "W505 is off without max-doc-length")
		assert.Equal(t, []string{"2:73"}, positions(lint(t, opts("max-doc-length", "72"), src), "W505"))
		// pycodestyle counts the pieces str.splitlines() makes as rows, a
		// form feed included (it would say 2:21): the real row is given.
		assert.Equal(t, []string{"1:21"}, positions(lint(t, opts("max-doc-length", "20"), "#0\f000000000000000000000"), "W505"))
	})
	for _, cfg := range []linter.Config{
		{MaxLineLength: -1},
		opts("indent-size", "0"),
		opts("indent-size", "four"),
		opts("max-doc-length", "-1"),
		opts("hang-closing", "maybe"),
		opts("max-line-length", "100"),
		opts("colour", "blue"),
	} {
		_, err := python.New(cfg)
		assert.ErrorIs(t, err, python.ErrInvalidConfig, "%+v", cfg)
	}
}

func TestNoqa(t *testing.T) {
	// As in pycodestyle, "# noqa" silences only E501 and the checks that
	// take the noqa argument (E402, E711, E712, E721, E722, W605).
	src := "import os  # noqa\nif x == None:  # noqa\n    pass\nx = 1 # NOQA\ny = '" + strings.Repeat("a", 80) + "'  # noqa\n"
	ds := lint(t, linter.Config{}, src)
	var got []string
	for _, d := range ds {
		got = append(got, d.Code)
	}
	assert.Equal(t, []string{"E261"}, got)
}

func TestCRLFMatchesLF(t *testing.T) {
	lf := "import os\nx = [1,2] \nif x :\n\ty = 1\n\n\n\nz = 1"
	for _, nl := range []string{"\r\n", "\r"} {
		got := lint(t, linter.Config{}, strings.ReplaceAll(lf, "\n", nl))
		assert.Equal(t, lint(t, linter.Config{}, lf), got, "newline %q", nl)
	}
}

// garbage is input that is not Python, or not finished Python.
var garbage = []string{
	"",
	"\n",
	"\n\n\n",
	"   ",
	"\t\t\n\t",
	"\xef\xbb\xbf",
	"\x00\x01\x02",
	"\xff\xfe\xfd\n",
	"x = '''unterminated\n",
	"x = 'unterminated\n",
	"x = 'a\\\nb\n",
	"x = (1,\n",
	"x = ))))\n",
	"if x:\n        y\n  z\n",
	"\\",
	"x = \\",
	"\\\n\\\n",
	"#",
	"# noqa",
	"\"\"\"",
	"'",
	"f(\n\n\n",
	"def f(:\n  return\n\treturn\n",
	"@\n\n\n\ndef",
	"lambda: (yield)",
	"\f\f\f\n\fx\n",
	"x = 1 \\\n\n",
	"class C:\n\tdef f(self):\n        \tpass\n",
	"if 1:\n\tpass\n  \tpass\n",
	"é = 'ü' + \"\\é\"\n",
	"x = \xa0 1\n",
	"s = '''\n\\q\n'''\\\n",
	"x = [\n# c\n]\\\n",
}

// checkPositions asserts that ds lie within src: a line of the file (or
// the one after its end, for errors at EOF) and a column at most just past
// the end of the line.
func checkPositions(t testing.TB, src string, ds []linter.Diagnostic) {
	t.Helper()
	src = strings.ReplaceAll(strings.ReplaceAll(src, "\r\n", "\n"), "\r", "\n")
	lines := strings.SplitAfter(src, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1] // no line after a final newline
	}
	for _, d := range ds {
		if !assert.GreaterOrEqual(t, d.Line, 1, "%v", d) || !assert.LessOrEqual(t, d.Line, len(lines)+1, "%v", d) {
			continue
		}
		assert.GreaterOrEqual(t, d.Column, 1, "%v", d)
		if d.Code == "E501" || d.Code == "W505" {
			continue // reported at the limit, not at a character
		}
		width := 0
		if d.Line <= len(lines) {
			width = len(lines[d.Line-1])
		}
		assert.LessOrEqual(t, d.Column, width+2, "%v in %q", d, src)
	}
}

func TestNeverFails(t *testing.T) {
	l, err := python.New(linter.Config{})
	require.NoError(t, err)
	for _, src := range garbage {
		t.Run(fmt.Sprintf("%q", src), func(t *testing.T) {
			ds, err := l.Lint(context.Background(), linter.Source{Code: []byte(src)})
			require.NoError(t, err)
			checkPositions(t, src, ds)
		})
	}
}

func TestTokenizeErrorsStillCheckLines(t *testing.T) {
	ds := lint(t, linter.Config{}, "x = 1 \ny = '''abc\n")
	assert.Equal(t, []string{"1:6"}, positions(ds, "W291"))
	assert.Equal(t, []string{"2:5"}, positions(ds, "E901"))
}

func TestLintCancelled(t *testing.T) {
	l, err := python.New(linter.Config{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = l.Lint(ctx, linter.Source{Code: []byte("x=1\n")})
	assert.ErrorIs(t, err, context.Canceled)
}

// endsAfterStart is a context that is still live when Lint starts (its
// first Err call) but whose Done channel is closed: a linter that looks
// at its context only up front finishes the work and returns no error.
type endsAfterStart struct {
	context.Context
	calls atomic.Int32
	done  chan struct{}
}

func (c *endsAfterStart) Done() <-chan struct{} { return c.done }

func (c *endsAfterStart) Err() error {
	if c.calls.Add(1) == 1 {
		return nil
	}
	return context.Canceled
}

func TestLintStopsWhenContextEnds(t *testing.T) {
	l, err := python.New(linter.Config{})
	require.NoError(t, err)
	for name, src := range map[string]string{
		"many lines":    strings.Repeat("x=1\n", 100_000),
		"one long line": "x=[" + strings.Repeat("1,", 100_000) + "]\n",
	} {
		t.Run(name, func(t *testing.T) {
			ctx := &endsAfterStart{Context: context.Background(), done: make(chan struct{})}
			close(ctx.done)
			ds, err := l.Lint(ctx, linter.Source{Code: []byte(src)})
			assert.ErrorIs(t, err, context.Canceled)
			assert.Empty(t, ds)
		})
	}
}

// TestLastLineAtEOF: at the end of a file without a final newline,
// pycodestyle checks the last token's line, reported on the last row. After
// a multi-line string that line spans every row of the string, and it
// prints columns past the end of the last row (2:10 for the first case);
// after a backslash continuation it is an earlier row (3:4 for the last
// case, on a row of one character). Columns are made relative to the
// reported row, or kept within it.
func TestLastLineAtEOF(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want []string
	}{
		{"'''\\\xc6\n''' ", []string{"2:4"}},
		{"x = '''é\nbb''' ", []string{"2:6"}},
		{"s = 1 \n", []string{"1:6"}},
		{"000 \n\\\n ", []string{"1:4", "3:2"}},
	} {
		ds := lint(t, linter.Config{}, tc.src)
		assert.Equal(t, tc.want, positions(ds, "W291"), "%q", tc.src)
		checkPositions(t, tc.src, ds)
	}
}

func TestConcurrentUse(t *testing.T) {
	l, err := python.New(linter.Config{})
	require.NoError(t, err)
	srcs := []string{"x=1\n", "import os, sys\n", "if x == None :\n  pass\n", "x = '''a\n"}
	want := make([][]linter.Diagnostic, len(srcs))
	for i, s := range srcs {
		want[i], err = l.Lint(context.Background(), linter.Source{Code: []byte(s)})
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				k := (g + i) % len(srcs)
				got, err := l.Lint(context.Background(), linter.Source{Code: []byte(srcs[k])})
				assert.NoError(t, err)
				assert.Equal(t, want[k], got)
			}
		}()
	}
	wg.Wait()
}

func TestLanguage(t *testing.T) {
	lang := python.Language()
	assert.Equal(t, "python", lang.Name)
	assert.Equal(t, "W292", lang.NewlineAtEOF)
	assert.Equal(t, []string{".py"}, lang.Extensions)
	assert.Contains(t, lang.Codes, "W292")
	assert.Contains(t, lang.Codes, "E501")
	l, err := lang.New(linter.Config{Select: []string{"W292"}})
	require.NoError(t, err)
	ds, err := l.Lint(context.Background(), linter.Source{Code: []byte("x = 1")})
	require.NoError(t, err)
	assert.Equal(t, []linter.Diagnostic{{Line: 1, Column: 6, Code: "W292", Message: "no newline at end of file"}}, ds)

	r, err := linter.NewRegistry(lang)
	require.NoError(t, err)
	got, err := r.Lookup("python")
	require.NoError(t, err)
	assert.Equal(t, lang.Codes, got.Codes)
}

func FuzzLint(f *testing.F) {
	for _, s := range garbage {
		f.Add(s)
	}
	for _, tc := range codeCases {
		f.Add(tc.positive)
	}
	// The default configuration, and every code with the options that
	// change what the checks compute.
	def, err := python.New(linter.Config{})
	require.NoError(f, err)
	all, err := python.New(linter.Config{Select: []string{"E", "W"},
		Options: map[string]string{"max-doc-length": "20", "hang-closing": "true", "indent-size": "2"}})
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, src string) {
		for _, l := range []*python.Linter{def, all} {
			ds, err := l.Lint(context.Background(), linter.Source{Code: []byte(src)})
			require.NoError(t, err)
			checkPositions(t, src, ds)
		}
	})
}
