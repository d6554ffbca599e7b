package python

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tok is a token as Python's tokenize prints it.
type tok struct {
	kind           string
	text           string
	sr, sc, er, ec int
}

type tokenizeCase struct {
	src  string
	want []tok
	err  string // the exception tokenize raises, if any
}

// tokenizeCases were produced by CPython 3.11's tokenize.generate_tokens.
var tokenizeCases = []tokenizeCase{
	{"x = (1,\n", []tok{
		{"NAME", "x", 1, 0, 1, 1},
		{"OP", "=", 1, 2, 1, 3},
		{"OP", "(", 1, 4, 1, 5},
		{"NUMBER", "1", 1, 5, 1, 6},
		{"OP", ",", 1, 6, 1, 7},
		{"NL", "\n", 1, 7, 1, 8},
	}, "TokenError"},
	{"x = '''a\n", []tok{
		{"NAME", "x", 1, 0, 1, 1},
		{"OP", "=", 1, 2, 1, 3},
	}, "TokenError"},
	{"if x:\n        y\n  z\n", []tok{
		{"NAME", "if", 1, 0, 1, 2},
		{"NAME", "x", 1, 3, 1, 4},
		{"OP", ":", 1, 4, 1, 5},
		{"NEWLINE", "\n", 1, 5, 1, 6},
		{"INDENT", "        ", 2, 0, 2, 8},
		{"NAME", "y", 2, 8, 2, 9},
		{"NEWLINE", "\n", 2, 9, 2, 10},
	}, "IndentationError"},
	{"x = 1\n   ", []tok{
		{"NAME", "x", 1, 0, 1, 1},
		{"OP", "=", 1, 2, 1, 3},
		{"NUMBER", "1", 1, 4, 1, 5},
		{"NEWLINE", "\n", 1, 5, 1, 6},
		{"ENDMARKER", "", 2, 0, 2, 0},
	}, ""},
	{"\fx = 1\n", []tok{
		{"NAME", "x", 1, 1, 1, 2},
		{"OP", "=", 1, 3, 1, 4},
		{"NUMBER", "1", 1, 5, 1, 6},
		{"NEWLINE", "\n", 1, 6, 1, 7},
		{"ENDMARKER", "", 2, 0, 2, 0},
	}, ""},
	{"x = 'a\\\nb\n", []tok{
		{"NAME", "x", 1, 0, 1, 1},
		{"OP", "=", 1, 2, 1, 3},
		{"ERRORTOKEN", "'a\\\nb\n", 1, 4, 2, 2},
		{"ENDMARKER", "", 3, 0, 3, 0},
	}, ""},
	{"x = 1\n", []tok{
		{"NAME", "x", 1, 0, 1, 1},
		{"OP", "=", 1, 2, 1, 3},
		{"NUMBER", "1", 1, 4, 1, 5},
		{"NEWLINE", "\n", 1, 5, 1, 6},
		{"ENDMARKER", "", 2, 0, 2, 0},
	}, ""},
	{"if x:\n    y = 'a' + b\"c\"\n", []tok{
		{"NAME", "if", 1, 0, 1, 2},
		{"NAME", "x", 1, 3, 1, 4},
		{"OP", ":", 1, 4, 1, 5},
		{"NEWLINE", "\n", 1, 5, 1, 6},
		{"INDENT", "    ", 2, 0, 2, 4},
		{"NAME", "y", 2, 4, 2, 5},
		{"OP", "=", 2, 6, 2, 7},
		{"STRING", "'a'", 2, 8, 2, 11},
		{"OP", "+", 2, 12, 2, 13},
		{"STRING", "b\"c\"", 2, 14, 2, 18},
		{"NEWLINE", "\n", 2, 18, 2, 19},
		{"DEDENT", "", 3, 0, 3, 0},
		{"ENDMARKER", "", 3, 0, 3, 0},
	}, ""},
	{"s = '''a\nb''' + rb'x' + f\"{y}\"\n", []tok{
		{"NAME", "s", 1, 0, 1, 1},
		{"OP", "=", 1, 2, 1, 3},
		{"STRING", "'''a\nb'''", 1, 4, 2, 4},
		{"OP", "+", 2, 5, 2, 6},
		{"STRING", "rb'x'", 2, 7, 2, 12},
		{"OP", "+", 2, 13, 2, 14},
		{"STRING", "f\"{y}\"", 2, 15, 2, 21},
		{"NEWLINE", "\n", 2, 21, 2, 22},
		{"ENDMARKER", "", 3, 0, 3, 0},
	}, ""},
	{"x = (1,\n     2)  # c\n", []tok{
		{"NAME", "x", 1, 0, 1, 1},
		{"OP", "=", 1, 2, 1, 3},
		{"OP", "(", 1, 4, 1, 5},
		{"NUMBER", "1", 1, 5, 1, 6},
		{"OP", ",", 1, 6, 1, 7},
		{"NL", "\n", 1, 7, 1, 8},
		{"NUMBER", "2", 2, 5, 2, 6},
		{"OP", ")", 2, 6, 2, 7},
		{"COMMENT", "# c", 2, 9, 2, 12},
		{"NEWLINE", "\n", 2, 12, 2, 13},
		{"ENDMARKER", "", 3, 0, 3, 0},
	}, ""},
	{"x = 1 + \\\n    2\n", []tok{
		{"NAME", "x", 1, 0, 1, 1},
		{"OP", "=", 1, 2, 1, 3},
		{"NUMBER", "1", 1, 4, 1, 5},
		{"OP", "+", 1, 6, 1, 7},
		{"NUMBER", "2", 2, 4, 2, 5},
		{"NEWLINE", "\n", 2, 5, 2, 6},
		{"ENDMARKER", "", 3, 0, 3, 0},
	}, ""},
	{"x = $\n", []tok{
		{"NAME", "x", 1, 0, 1, 1},
		{"OP", "=", 1, 2, 1, 3},
		{"ERRORTOKEN", " ", 1, 3, 1, 4},
		{"ERRORTOKEN", "$", 1, 4, 1, 5},
		{"NEWLINE", "\n", 1, 5, 1, 6},
		{"ENDMARKER", "", 2, 0, 2, 0},
	}, ""},
	{"x = 'abc\n", []tok{
		{"NAME", "x", 1, 0, 1, 1},
		{"OP", "=", 1, 2, 1, 3},
		{"ERRORTOKEN", " ", 1, 3, 1, 4},
		{"ERRORTOKEN", "'", 1, 4, 1, 5},
		{"NAME", "abc", 1, 5, 1, 8},
		{"NEWLINE", "\n", 1, 8, 1, 9},
		{"ENDMARKER", "", 2, 0, 2, 0},
	}, ""},
	{"n = 0x1F + 1_000 + 1.5e-3j + .5 + 0777\n", []tok{
		{"NAME", "n", 1, 0, 1, 1},
		{"OP", "=", 1, 2, 1, 3},
		{"NUMBER", "0x1F", 1, 4, 1, 8},
		{"OP", "+", 1, 9, 1, 10},
		{"NUMBER", "1_000", 1, 11, 1, 16},
		{"OP", "+", 1, 17, 1, 18},
		{"NUMBER", "1.5e-3j", 1, 19, 1, 26},
		{"OP", "+", 1, 27, 1, 28},
		{"NUMBER", ".5", 1, 29, 1, 31},
		{"OP", "+", 1, 32, 1, 33},
		{"NUMBER", "0", 1, 34, 1, 35},
		{"NUMBER", "777", 1, 35, 1, 38},
		{"NEWLINE", "\n", 1, 38, 1, 39},
		{"ENDMARKER", "", 2, 0, 2, 0},
	}, ""},
	{"a->b <<= c ** d // e != f := g ...\n", []tok{
		{"NAME", "a", 1, 0, 1, 1},
		{"OP", "->", 1, 1, 1, 3},
		{"NAME", "b", 1, 3, 1, 4},
		{"OP", "<<=", 1, 5, 1, 8},
		{"NAME", "c", 1, 9, 1, 10},
		{"OP", "**", 1, 11, 1, 13},
		{"NAME", "d", 1, 14, 1, 15},
		{"OP", "//", 1, 16, 1, 18},
		{"NAME", "e", 1, 19, 1, 20},
		{"OP", "!=", 1, 21, 1, 23},
		{"NAME", "f", 1, 24, 1, 25},
		{"OP", ":=", 1, 26, 1, 28},
		{"NAME", "g", 1, 29, 1, 30},
		{"OP", "...", 1, 31, 1, 34},
		{"NEWLINE", "\n", 1, 34, 1, 35},
		{"ENDMARKER", "", 2, 0, 2, 0},
	}, ""},
	{"\n# comment\n  \n", []tok{
		{"NL", "\n", 1, 0, 1, 1},
		{"COMMENT", "# comment", 2, 0, 2, 9},
		{"NL", "\n", 2, 9, 2, 10},
		{"NL", "\n", 3, 2, 3, 3},
		{"ENDMARKER", "", 4, 0, 4, 0},
	}, ""},
	{"x = 1", []tok{
		{"NAME", "x", 1, 0, 1, 1},
		{"OP", "=", 1, 2, 1, 3},
		{"NUMBER", "1", 1, 4, 1, 5},
		{"NEWLINE", "", 1, 5, 1, 6},
		{"ENDMARKER", "", 2, 0, 2, 0},
	}, ""},
	{"def f():\n    return 1\n", []tok{
		{"NAME", "def", 1, 0, 1, 3},
		{"NAME", "f", 1, 4, 1, 5},
		{"OP", "(", 1, 5, 1, 6},
		{"OP", ")", 1, 6, 1, 7},
		{"OP", ":", 1, 7, 1, 8},
		{"NEWLINE", "\n", 1, 8, 1, 9},
		{"INDENT", "    ", 2, 0, 2, 4},
		{"NAME", "return", 2, 4, 2, 10},
		{"NUMBER", "1", 2, 11, 2, 12},
		{"NEWLINE", "\n", 2, 12, 2, 13},
		{"DEDENT", "", 3, 0, 3, 0},
		{"ENDMARKER", "", 3, 0, 3, 0},
	}, ""},
	{"s = 'a\\\nb'\n", []tok{
		{"NAME", "s", 1, 0, 1, 1},
		{"OP", "=", 1, 2, 1, 3},
		{"STRING", "'a\\\nb'", 1, 4, 2, 2},
		{"NEWLINE", "\n", 2, 2, 2, 3},
		{"ENDMARKER", "", 3, 0, 3, 0},
	}, ""},
}

var kindNames = map[kind]string{
	kEndmarker: "ENDMARKER", kName: "NAME", kNumber: "NUMBER", kString: "STRING",
	kNewline: "NEWLINE", kIndent: "INDENT", kDedent: "DEDENT", kOp: "OP",
	kComment: "COMMENT", kNL: "NL", kErrorToken: "ERRORTOKEN",
}

func TestTokenizeMatchesCPython(t *testing.T) {
	for _, tc := range tokenizeCases {
		t.Run(tc.src, func(t *testing.T) {
			c := &checker{}
			c.reset([]byte(tc.src))
			tk := tokenizer{src: c.src, lineStart: c.lineStart, latin1: c.latin1}
			terr := tk.run()
			if tc.err != "" {
				require.NotNil(t, terr)
				assert.Contains(t, terr.msg, tc.err)
			} else {
				require.Nil(t, terr)
			}
			var got []tok
			for _, k := range tk.toks {
				got = append(got, tok{kindNames[k.kind], string(c.src[k.off:k.end]), int(k.sr), int(k.sc), int(k.er), int(k.ec)})
			}
			assert.Equal(t, tc.want, got)
		})
	}
}
