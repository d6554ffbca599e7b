package python

import (
	"bytes"
	"fmt"
)

// pycodestyle's physical-line checks: E101, W191, W291, W293, W391, W292
// and E501.

// maybeCheckPhysical runs the physical-line checks when t ends a line,
// and on every line inside a multi-line string.
func (c *checker) maybeCheckPhysical(t *token, prev [2]int32) {
	if c.isEOL(t) {
		if t.lr0 == 0 {
			// The NEWLINE that tokenize adds at the end of a file without
			// one: pycodestyle checks the previous token's line, reported
			// on the last row. That line can span several rows (after a
			// multi-line string) or be an earlier row (after a backslash
			// continuation), and pycodestyle then prints columns past the
			// end of the row it names. Columns are made relative to the
			// reported row when the line holds it (base), and kept within
			// it (-1: limit to the row's width).
			base := -1
			if prev[0] > 0 && int(prev[1]) == c.linesRead {
				base = c.charSpan(int(c.lineStart[prev[0]-1]), int(c.lineStart[prev[1]-1]))
			}
			c.checkPhysical(c.rows(prev[0], prev[1]), c.linesRead, base, false, c.curNoqa)
		} else {
			c.checkPhysical(c.tokLine(t), c.linesRead, 0, false, c.curNoqa)
		}
		return
	}
	if t.kind == kString && t.er > t.sr {
		if c.curNoqa {
			return
		}
		for r := t.sr; r < t.er; r++ {
			c.checkPhysical(c.row(int(r)), int(r), 0, true, false)
		}
	}
}

// isEOL is pycodestyle's _is_eol_token.
func (c *checker) isEOL(t *token) bool {
	if t.kind == kNL || t.kind == kNewline {
		return true
	}
	line := c.tokLine(t)
	if !hasSuffix(line, "\\\n") || int(t.ec) > len(line) {
		return false
	}
	rest := lstripSpace(line[t.ec:], c.latin1)
	return string(rest) == "\\\n"
}

// checkPhysical runs the physical-line checks on line, reported at row.
// base is the number of characters of line before the start of row (line
// can hold several rows, see maybeCheckPhysical); columns before it are
// reported as the row's first. A negative base means that line is not row
// at all: columns are kept within row.
func (c *checker) checkPhysical(line []byte, row, base int, multiline, noqa bool) {
	en := c.en
	report := func(col int, k code, msg string) {
		if base < 0 {
			r := c.row(row)
			col = min(col, c.charCol(row, len(bytes.TrimRight(r, "\n"))))
		} else {
			col -= base
		}
		c.reportChar(row, max(col, 0), k, msg)
	}
	if en[cE101] || en[cW191] {
		n := 0
		for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
			n++
		}
		if en[cE101] {
			for off := 0; off < n; off++ {
				if rune(line[off]) != c.indentChar {
					report(off, cE101, "indentation contains mixed spaces and tabs")
					c.indentChar, _ = charAt(line, 0, c.latin1)
					break
				}
			}
		}
		if en[cW191] {
			if i := bytes.IndexByte(line[:n], '\t'); i >= 0 {
				report(i, cW191, "indentation contains tabs")
			}
		}
	}
	if en[cW291] || en[cW293] {
		p := line
		for _, s := range []byte{'\n', '\r', '\f'} {
			for len(p) > 0 && p[len(p)-1] == s {
				p = p[:len(p)-1]
			}
		}
		st := p
		for len(st) > 0 && (st[len(st)-1] == ' ' || st[len(st)-1] == '\t' || st[len(st)-1] == '\v') {
			st = st[:len(st)-1]
		}
		if len(st) != len(p) {
			if len(st) > 0 {
				report(nchars(st, c.latin1), cW291, "trailing whitespace")
			} else {
				report(0, cW293, "blank line contains whitespace")
			}
		}
	}
	if (en[cW391] || en[cW292]) && row == c.nlines {
		st := line
		for len(st) > 0 && (st[len(st)-1] == '\n' || st[len(st)-1] == '\r') {
			st = st[:len(st)-1]
		}
		if len(line) > 0 && len(st) == 0 {
			c.reportChar(row, 0, cW391, "blank line at end of file")
		}
		if len(st) == len(line) {
			c.reportChar(row, nchars(c.row(c.nlines), c.latin1), cW292, "no newline at end of file")
		}
	}
	if en[cE501] && !noqa && len(line) > c.opt.maxLine {
		c.checkLineLength(line, row, multiline)
	}
}

// checkLineLength is maximum_line_length (E501).
func (c *checker) checkLineLength(line []byte, row int, multiline bool) {
	l := rstripSpace(line, c.latin1)
	length := nchars(l, c.latin1)
	if length <= c.opt.maxLine {
		return
	}
	if row == 1 && bytes.HasPrefix(l, []byte("#!")) {
		return
	}
	// Count the whitespace-separated chunks (up to 3) and find the last.
	chunks, lastStart := 0, 0
	var first []byte
	for i := 0; i < len(l); {
		i = skipSpace(l, i, c.latin1)
		if i >= len(l) {
			break
		}
		j := i
		for j < len(l) && spaceLen(l, j, c.latin1) == 0 {
			j += charLen(l, j, c.latin1)
		}
		if chunks == 0 {
			first = l[i:j]
		}
		chunks++
		lastStart = i
		i = j
	}
	if (chunks == 1 && multiline) || (chunks == 2 && string(first) == "#") {
		if length-nchars(l[lastStart:], c.latin1) < c.opt.maxLine-7 {
			return
		}
	}
	c.reportChar(row, c.opt.maxLine, cE501, fmt.Sprintf("line too long (%d > %d characters)", length, c.opt.maxLine))
}

// maximumDocLength is maximum_doc_length (W505): the lines of comments
// and docstrings longer than max-doc-length, when that option is set.
func (c *checker) maximumDocLength(ts []token) {
	if c.logicalNoqa {
		return
	}
	// pycodestyle's skip_lines, of which only being empty matters: a
	// string in a line that holds code is no docstring.
	code := false
	for i := range ts {
		switch ts[i].kind {
		case kNL, kNewline, kIndent, kDedent, kComment, kErrorToken, kString:
		default:
			code = true
		}
	}
	hasPrev := false
	var prev kind
	for i := range ts {
		t := &ts[i]
		if t.kind == kString && code {
			continue
		}
		if (t.kind == kString || t.kind == kComment) &&
			(!hasPrev || prev == kNL || prev == kNewline || prev == kIndent || prev == kDedent) {
			if !c.docLines(t) {
				return
			}
		}
		prev, hasPrev = t.kind, true
	}
}

// docLines checks the lines of token t's line, split as str.splitlines
// splits them. It returns false where pycodestyle stops checking the
// logical line (a shebang on the first line).
func (c *checker) docLines(t *token) bool {
	const maxDocLength = 72 // pycodestyle's MAX_DOC_LENGTH, not the option
	line := c.tokLine(t)
	n := 0
	forLines(line, c.latin1, func(int, int, []byte) bool { n++; return true })
	// pycodestyle reports the num-th piece of str.splitlines() on row
	// start+num, which is past the real row when a line holds another
	// break (\f, \v, \x1c...); the real row is reported instead.
	row, counted := int(t.lr0), 0
	return forLines(line, c.latin1, func(num, start int, l []byte) bool {
		row += bytes.Count(line[counted:start], []byte("\n"))
		counted = start
		if int(t.sr)+num == 1 && len(line) >= 2 && line[0] == '#' && line[1] == '!' {
			return false
		}
		length := nchars(l, c.latin1)
		chunks, last := c.splitWords(l)
		if t.kind == kComment && chunks == 2 && length-last < maxDocLength {
			return true
		}
		if chunks == 1 && num+1 < n && length-last < maxDocLength {
			return true
		}
		if length > c.opt.maxDoc {
			c.reportChar(row, c.opt.maxDoc, cW505, fmt.Sprintf("doc line too long (%d > %d characters)", length, c.opt.maxDoc))
		}
		return true
	})
}

// forLines calls f with each line of b, numbered from 0, and its offset, as
// str.splitlines() splits them: at \n, \r\n, \r, \v, \f, \x1c-\x1e, \x85,
// U+2028 and U+2029, the break left out, and no empty line after a final
// break. It stops, returning false, when f does.
func forLines(b []byte, latin1 bool, f func(num, start int, line []byte) bool) bool {
	start, num := 0, 0
	for i := 0; i < len(b); {
		r, n := charAt(b, i, latin1)
		if !isSplitlinesBreak(r) {
			i += n
			continue
		}
		if !f(num, start, b[start:i]) {
			return false
		}
		num++
		i += n
		if r == '\r' && i < len(b) && b[i] == '\n' {
			i++
		}
		start = i
	}
	if start < len(b) {
		return f(num, start, b[start:])
	}
	return true
}

// splitWords returns how many words str.split() finds in b and the length
// in characters of the last.
func (c *checker) splitWords(b []byte) (n, last int) {
	for i := 0; i < len(b); {
		i = skipSpace(b, i, c.latin1)
		if i >= len(b) {
			break
		}
		j, chars := i, 0
		for j < len(b) {
			r, k := charAt(b, j, c.latin1)
			if isPySpace(r) {
				break
			}
			j += k
			chars++
		}
		n, last, i = n+1, chars, j
	}
	return n, last
}
