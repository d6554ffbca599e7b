// Package python is a Go implementation of pycodestyle 2.10, the Python
// style checker: the same codes, messages and positions, produced fast
// enough to lint a large tree in well under a second.
//
// It is faithful at two levels. Tokens come from a model of CPython 3.11's
// pure-Python tokenize module (NEWLINE vs NL, INDENT/DEDENT, f-strings as
// one STRING token, ERRORTOKEN for what does not tokenize), and the checks
// reproduce pycodestyle's: logical lines built from the tokens with strings
// muted and comments left out, the blank_lines/blank_before bookkeeping,
// the continuation-line state machine, "# noqa" for exactly the checks
// that honour it (E501, E402, E711, E712, E721, E722, W605, W505 and the
// continuation lines), and offsets mapped back to (line, column) the same
// way. Files are read as pycodestyle reads them: UTF-8 BOM stripped,
// universal newlines (CRLF and CR count as LF), columns and lengths counted
// in characters, and files that are not UTF-8, or declare another coding,
// counted in bytes as pycodestyle's latin-1 fallback does. Agreement tests
// run the real pycodestyle on a corpus drawn from the standard library, in
// its default configuration and with every code selected, and require
// 99.5% agreement (file, line, column, code and message) per code both
// ways.
//
// Every code of pycodestyle 2.10 is implemented: E1 (the continuation
// lines E121-E131 and E133 included), E2, E3, E4, E5, E7, E9 (E901 for
// source that does not tokenize; E902, a file that cannot be read, comes
// from Linter.FileError, as Lint takes the bytes), W1, W2, W3, W5 (W503,
// W504, and W505 with max-doc-length) and W6 (W605, W606).
//
// Lint costs time linear in the size of the source, whatever its shape:
// where pycodestyle's own algorithms rescan a line or the file for every
// finding or bracket (columns of findings on a long line, a class of many
// methods, a long run of brackets or spaces), this package keeps indexes
// that give the same answers. Lint stops when its context ends.
//
// Source that does not tokenize is never an error: the linter reports
// E901 (pycodestyle's code for tokenizer errors such as "EOF in multi-line
// string") at the same position as pycodestyle, and every check that can
// still run reports too.
//
// # Configuration
//
// The zero linter.Config is pycodestyle's default configuration: every
// code but its default ignore list (DefaultIgnore: E121, E123, E126, E226,
// E24, E704, W503, W504), which applies when neither Select nor Ignore is
// set, and W505, which needs max-doc-length. Select and Ignore follow
// pycodestyle (a Select makes Ignore irrelevant); ExtendIgnore follows
// flake8's --extend-ignore. MaxLineLength 0 means 79. Options takes
// pycodestyle's max-doc-length, hang-closing and indent-size
// (OptionMaxDocLength, OptionHangClosing, OptionIndentSize); any other
// option, or a value pycodestyle would not take, makes New fail. As in
// pycodestyle, a check runs only when a code its docstring names is
// enabled: E117 needs one of E111-E116, E133 one of E121-E131.
//
// ReadConfig reads these options from pycodestyle's configuration files
// (the user's, then setup.cfg and tox.ini of the project), and Files
// expands directories in pycodestyle's order, skipping its exclude list:
// together they make a command line that prints what pycodestyle prints
// (examples/lint).
//
// Three deviations, all in broken or degenerate input, keep positions
// inside the file: pycodestyle can compute a column before the start of
// the line (for a token that spans lines in broken code), reported here
// as column 1; at the end of a file without a final newline, after a
// multi-line string or a backslash continuation, it checks another line
// than the last row but reports on it, with columns past its end (2:10
// for a W291 on a row of 4 characters), reported here relative to that
// row or within it (2:4); and W505 counts a form feed (or another break
// of str.splitlines) in a comment or docstring as a new row, where the
// real row is reported here.
//
// # Concurrency
//
// A *Linter is immutable after New and safe for concurrent use; Lint does
// no I/O and keeps its scratch buffers in a pool owned by the Linter.
//
// # Usage
//
//	l, err := python.New(linter.Config{ExtendIgnore: []string{"E501"}})
//	if err != nil { ... }
//	diags, err := l.Lint(ctx, linter.Source{Name: "app.py", Code: src})
//
// Language returns the rule set for a linter.Registry.
package python
