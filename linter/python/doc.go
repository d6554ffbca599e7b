// Package python is a Go implementation of pycodestyle 2.10, the Python
// style checker: the same codes, messages and positions, produced fast
// enough to lint a large tree in well under a second.
//
// It is faithful at two levels. Tokens come from a model of CPython 3.11's
// pure-Python tokenize module (NEWLINE vs NL, INDENT/DEDENT, f-strings as
// one STRING token, ERRORTOKEN for what does not tokenize), and the checks
// reproduce pycodestyle's: logical lines built from the tokens with strings
// muted and comments left out, the blank_lines/blank_before bookkeeping,
// "# noqa" for exactly the checks that honour it (E501, E402, E711, E712,
// E721, E722, W605), and offsets mapped back to (line, column) the same
// way. Files are read as pycodestyle reads them: UTF-8 BOM stripped,
// universal newlines (CRLF and CR count as LF), columns and lengths counted
// in characters, and files that are not UTF-8, or declare another coding,
// counted in bytes as pycodestyle's latin-1 fallback does. An agreement
// test runs the real pycodestyle on a corpus drawn from the standard
// library and requires 99% agreement per code both ways.
//
// Source that does not tokenize is never an error: the linter reports
// E901 (pycodestyle's code for tokenizer errors such as "EOF in multi-line
// string") at the same position as pycodestyle, and every check that can
// still run reports too.
//
// # Configuration
//
// The zero linter.Config enables every code, including those pycodestyle
// leaves out by default (E121, E123, E126, E226, E24, E704, W503, W504 are
// its default ignore list, applied only when neither --select nor --ignore
// is given); to get pycodestyle's default output, pass
// Ignore: []string{"E226", "E24", "E704"} (the other codes of that list
// are not implemented). MaxLineLength 0 means 79. A check runs only when
// one of its codes is enabled. Unlike pycodestyle, which runs a check only
// when a code named in its docstring is selected, E117 is reported when
// selected on its own.
//
// Columns are never below 1: in broken code pycodestyle can compute a
// column before the start of the line (for a token that spans lines);
// this package reports column 1 there.
//
// Not implemented: the continuation-line checks (E12x, E131, E133), W503,
// W504, W505, W606 and E9 codes other than E901.
//
// # Concurrency
//
// A *Linter is immutable after New and safe for concurrent use; Lint does
// no I/O and keeps its scratch buffers in a pool owned by the Linter.
//
// # Usage
//
//	l, err := python.New(linter.Config{Ignore: []string{"E501"}})
//	if err != nil { ... }
//	diags, err := l.Lint(ctx, linter.Source{Name: "app.py", Code: src})
//
// Language returns the rule set for a linter.Registry.
package python
