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
			// one: pycodestyle checks the previous token's line, which
			// spans several rows after a multi-line string, as one line
			// reported on its last row. Columns are made relative to that
			// row, so that they point into it.
			base := 0
			if prev[1] > prev[0] && prev[0] > 0 {
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
// reported as the row's first.
func (c *checker) checkPhysical(line []byte, row, base int, multiline, noqa bool) {
	en := c.en
	report := func(col int, k code, msg string) { c.reportChar(row, max(col-base, 0), k, msg) }
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
	if en[cE501] && !noqa && len(line) > c.maxLine {
		c.checkLineLength(line, row, multiline)
	}
}

// checkLineLength is maximum_line_length (E501).
func (c *checker) checkLineLength(line []byte, row int, multiline bool) {
	l := rstripSpace(line, c.latin1)
	length := nchars(l, c.latin1)
	if length <= c.maxLine {
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
		if length-nchars(l[lastStart:], c.latin1) < c.maxLine-7 {
			return
		}
	}
	c.reportChar(row, c.maxLine, cE501, fmt.Sprintf("line too long (%d > %d characters)", length, c.maxLine))
}
