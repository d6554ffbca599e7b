package python

import (
	"bytes"
	"context"
	"strings"
	"unicode/utf8"

	"github.com/fleetkit/fleetkit/linter"
)

// mapEntry maps an offset in the logical line to a source position, as
// the mapping list of pycodestyle's build_tokens_line.
type mapEntry struct {
	off      int32
	row, col int32
}

// checker is the state of one Lint call: pycodestyle's Checker. It is
// reused through the Linter's pool, so its slices keep their capacity.
type checker struct {
	en     *enabledSet
	groups *checkGroups
	opt    *options
	cont   contState // continuedIndentation's scratch state

	src       []byte
	lineStart []int32
	nlines    int
	latin1    bool
	// ascii means no byte of src is 0x80 or above, so that character
	// columns are byte columns. Otherwise charIdx[k] counts the characters
	// of src[:k*charBlock], built on first use, so that converting a column
	// costs at most one block, whatever the line's length.
	ascii    bool
	charIdx  []int32
	toks     []token
	noqaRows []bool
	diags    []linter.Diagnostic
	scratch  []byte

	// Physical-line state.
	linesRead   int
	indentChar  rune // 0 is None
	firstWSRow  int
	firstWSChar rune
	curNoqa     bool

	// Logical-line state.
	logical         []byte
	mapping         []mapEntry
	logicalNoqa     bool
	indentLevel     int
	prevIndentLevel int
	hasPrevLogical  bool
	prevColon       bool // previous_logical.endswith(':')
	prevDecorator   bool // previous_logical.startswith('@')
	prevDocstring   bool // DOCSTRING_REGEX.match(previous_logical)
	prevUnindentDef bool // previous_unindented_logical_line.startswith(('def ', 'class '))
	blankLines      int
	blankBefore     int
	seenNonImports  bool
	seenDocstring   bool

	// Searches of blank_lines over the file's rows, remembered or
	// indexed so that they cost the file's length once (indent.go).
	nextDef, nextNonBlank nextMatch
	parentsBuilt          bool
	rowIndent             []int32 // expand_indent of each row, -1 when blank
	prevNonBlank          []int32 // closest non-blank row at or before each row
	parent                []int32 // closest row before each row that is indented less
	scratchRows           []int32
}

// reset prepares c for src, normalising it as pycodestyle reads files:
// BOM stripped, universal newlines.
func (c *checker) reset(src []byte) {
	src = bytes.TrimPrefix(src, []byte("\xef\xbb\xbf"))
	if bytes.IndexByte(src, '\r') >= 0 {
		buf := c.scratch[:0]
		for i := 0; i < len(src); i++ {
			if src[i] == '\r' {
				if i+1 < len(src) && src[i+1] == '\n' {
					continue
				}
				buf = append(buf, '\n')
				continue
			}
			buf = append(buf, src[i])
		}
		c.scratch = buf
		src = buf
	}
	c.src = src
	c.ascii = isASCII(src)
	c.latin1 = !c.ascii && (!utf8.Valid(src) || declaresSingleByteCoding(src))
	c.charIdx = c.charIdx[:0]
	// Size the big slices once from the source (Python averages about 7
	// bytes a token and 30 a line) rather than growing them by copying.
	if n := len(src)/6 + 64; cap(c.toks) < n {
		c.toks = make([]token, 0, n)
	}
	if n := len(src)/24 + 2; cap(c.lineStart) < n {
		c.lineStart = make([]int32, 0, n)
	}
	c.lineStart = c.lineStart[:0]
	for i := 0; i < len(src); {
		c.lineStart = append(c.lineStart, int32(i))
		j := bytes.IndexByte(src[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	c.nlines = len(c.lineStart)
	c.lineStart = append(c.lineStart, int32(len(src)))
	c.toks = c.toks[:0]
	c.diags = c.diags[:0]
	c.noqaRows = c.noqaRows[:0]
	c.linesRead, c.indentChar, c.firstWSRow, c.firstWSChar, c.curNoqa = 0, 0, 0, 0, false
	c.indentLevel, c.prevIndentLevel = 0, 0
	c.hasPrevLogical, c.prevColon, c.prevDecorator, c.prevDocstring, c.prevUnindentDef = false, false, false, false, false
	c.blankLines, c.blankBefore = 0, 0
	c.seenNonImports, c.seenDocstring = false, false
	c.nextDef, c.nextNonBlank, c.parentsBuilt = nextMatch{}, nextMatch{}, false

	// readline sets indent_char from the first line that starts with
	// whitespace; remember which one that is.
	for r := 1; r <= c.nlines; r++ {
		line := c.row(r)
		if len(line) == 0 {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			c.firstWSRow, c.firstWSChar = r, rune(line[0])
			break
		}
		if ch, _ := charAt(line, 0, c.latin1); ch == 0xa0 {
			c.firstWSRow, c.firstWSChar = r, 0xa0
			break
		}
	}
	// Rows that match the noqa regex.
	for i := 0; i < len(src); {
		j := bytes.IndexByte(src[i:], '#')
		if j < 0 {
			break
		}
		i += j
		if noqaAt(src, i) {
			if len(c.noqaRows) == 0 {
				n := c.nlines + 2
				if cap(c.noqaRows) >= n {
					c.noqaRows = c.noqaRows[:n]
					clear(c.noqaRows)
				} else {
					c.noqaRows = make([]bool, n)
				}
			}
			c.noqaRows[c.rowOf(i)] = true
		}
		i++
	}
}

// declaresSingleByteCoding reports a PEP 263 cookie for an encoding other
// than UTF-8: Python then decodes one character per byte. As in
// tokenize.detect_encoding, the second line counts only when the first is
// blank or a comment.
func declaresSingleByteCoding(src []byte) bool {
	for n := 0; n < 2 && len(src) > 0; n++ {
		line := src
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			line, src = src[:i], src[i+1:]
		} else {
			src = nil
		}
		t := bytes.TrimLeft(line, " \t\f")
		if len(t) == 0 {
			continue
		}
		if t[0] != '#' {
			return false
		}
		if name := codingCookie(t); name != nil {
			return !isUTF8Codec(string(name))
		}
	}
	return false
}

// codingCookie matches the rest of tokenize's cookie_re,
// coding[:=][ \t]*([-\w.]+), in a comment and returns the name.
func codingCookie(comment []byte) []byte {
	for i := 0; ; i++ {
		j := bytes.Index(comment[i:], []byte("coding"))
		if j < 0 {
			return nil
		}
		i += j
		k := i + 6
		if k >= len(comment) || (comment[k] != ':' && comment[k] != '=') {
			continue
		}
		rest := bytes.TrimLeft(comment[k+1:], " \t")
		end := 0
		for end < len(rest) && (isWordByte(rest[end]) || rest[end] == '-' || rest[end] == '.') {
			end++
		}
		if end > 0 {
			return rest[:end]
		}
	}
}

// isUTF8Codec reports whether Python's codecs.lookup(name) is UTF-8: the
// name normalised as encodings.normalize_encoding does, then the aliases
// of utf_8 (and utf_8_sig, which decodes the same once the BOM is gone).
func isUTF8Codec(name string) bool {
	var b strings.Builder
	punct := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r < utf8.RuneSelf && (isWordByte(byte(r)) && r != '_' || r == '.'):
			if punct && b.Len() > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
			punct = false
		case r >= utf8.RuneSelf && isWordRune(r):
			punct = false // alphanumeric, but not kept
		default:
			punct = true
		}
	}
	switch b.String() {
	case "u8", "utf", "utf8", "utf_8", "utf8_ucs2", "utf8_ucs4", "cp65001", "utf_8_sig":
		return true
	}
	return false
}

// row returns the text of 1-based row r, with its newline.
func (c *checker) row(r int) []byte {
	if r < 1 || r > c.nlines {
		return nil
	}
	return c.src[c.lineStart[r-1]:c.lineStart[r]]
}

// rows returns the text of rows r0..r1.
func (c *checker) rows(r0, r1 int32) []byte {
	if r0 < 1 || int(r0) > c.nlines {
		return nil
	}
	if int(r1) > c.nlines {
		r1 = int32(c.nlines)
	}
	return c.src[c.lineStart[r0-1]:c.lineStart[r1]]
}

// rowOf returns the 1-based row holding offset off.
func (c *checker) rowOf(off int) int {
	lo, hi := 0, c.nlines
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(c.lineStart[m+1]) <= off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo + 1
}

// rowsNoqa reports whether the noqa regex matches any of rows r0..r1.
func (c *checker) rowsNoqa(r0, r1 int32) bool {
	if len(c.noqaRows) == 0 || r0 == 0 {
		return false
	}
	for r := r0; r <= r1 && int(r) < len(c.noqaRows); r++ {
		if c.noqaRows[r] {
			return true
		}
	}
	return false
}

// tokLine is the token's line attribute.
func (c *checker) tokLine(t *token) []byte {
	if t.lr0 == 0 {
		return nil
	}
	return c.rows(t.lr0, t.lr1)
}

// text is the token's string.
func (c *checker) text(t *token) []byte { return c.src[t.off:t.end] }

// charCol converts a byte column on row to a character column. Columns
// past the end of the row (the implicit NEWLINE ends one past it) keep
// their distance to the end.
func (c *checker) charCol(row, col int) int {
	if c.ascii || c.latin1 || col <= 0 || row < 1 || row > c.nlines {
		return col
	}
	start := int(c.lineStart[row-1])
	n := int(c.lineStart[row]) - start
	if col > n {
		return c.charSpan(start, start+n) + col - n
	}
	return c.charSpan(start, start+col)
}

// charSpan is the number of characters in src[off:end].
func (c *checker) charSpan(off, end int) int {
	if c.ascii || c.latin1 {
		return end - off
	}
	return c.charsBefore(end) - c.charsBefore(off)
}

// charBlock is the stride of checker.charIdx.
const charBlock = 64

// charsBefore returns the number of characters in src[:off] of a valid
// UTF-8 source: the bytes that are not continuation bytes.
func (c *checker) charsBefore(off int) int {
	if len(c.charIdx) == 0 {
		n := len(c.src)/charBlock + 1
		if cap(c.charIdx) < n {
			c.charIdx = make([]int32, n)
		}
		c.charIdx = c.charIdx[:n]
		chars := 0
		for k := range n {
			c.charIdx[k] = int32(chars)
			chars += countChars(c.src[k*charBlock : min((k+1)*charBlock, len(c.src))])
		}
	}
	k := off / charBlock
	return int(c.charIdx[k]) + countChars(c.src[k*charBlock:off])
}

// countChars counts the bytes of b that start a UTF-8 sequence.
func countChars(b []byte) int {
	n := 0
	for _, ch := range b {
		if ch&0xc0 != 0x80 {
			n++
		}
	}
	return n
}

// isASCII reports whether b has no byte of 0x80 or above.
func isASCII(b []byte) bool {
	for _, ch := range b {
		if ch >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// report records a diagnostic at a byte column.
func (c *checker) report(row, col int, k code, msg string) {
	c.reportChar(row, c.charCol(row, col), k, msg)
}

// reportChar records a diagnostic at a character column. pycodestyle
// can compute a column before the start of the line for a token that
// spans lines in broken code; such columns are reported as 1.
func (c *checker) reportChar(row, col int, k code, msg string) {
	if !c.en[k] {
		return
	}
	col = max(col, 0)
	c.diags = append(c.diags, linter.Diagnostic{Line: row, Column: col + 1, Code: codeNames[k], Message: msg})
}

// run is pycodestyle's Checker.check_all. It stops early, returning
// ctx.Err(), when ctx ends.
func (c *checker) run(ctx context.Context) error {
	tk := tokenizer{src: c.src, lineStart: c.lineStart, latin1: c.latin1, toks: c.toks[:0], done: ctx.Done()}
	terr := tk.run()
	c.toks = tk.toks
	if tk.stopped {
		return ctx.Err()
	}
	toks := c.toks
	total := int32(c.nlines)

	lstart, parens := 0, 0
	var prevLine [2]int32
	i := 0
	stopped := false
	for ; i < len(toks); i++ {
		if i%checkEvery == 0 && isDone(tk.done) {
			return ctx.Err()
		}
		t := &toks[i]
		if t.sr > total {
			stopped = true
			break
		}
		c.setLinesRead(int(t.er))
		c.curNoqa = c.rowsNoqa(t.lr0, t.lr1)
		c.maybeCheckPhysical(t, prevLine)
		prevLine = [2]int32{t.lr0, t.lr1}

		if t.kind == kOp {
			switch c.src[t.off] {
			case '(', '[', '{':
				parens++
			case ')', ']', '}':
				parens--
			}
			continue
		}
		if parens != 0 {
			continue
		}
		switch t.kind {
		case kNewline:
			if c.checkLogical(toks[lstart : i+1]) {
				lstart = i + 1
			}
			c.blankBefore = 0
		case kNL:
			if i+1-lstart == 1 {
				c.blankLines++
				lstart = i + 1
			} else if c.checkLogical(toks[lstart : i+1]) {
				lstart = i + 1
			}
		}
	}
	if terr != nil && !stopped {
		c.setLinesRead(terr.linesRead)
		c.report(terr.row, terr.col, cE901, terr.msg)
	} else {
		c.setLinesRead(c.nlines)
	}
	if lstart < i {
		if c.nlines > 0 {
			c.checkPhysical(c.row(c.nlines), c.linesRead, 0, false, c.curNoqa)
		}
		c.checkLogical(toks[lstart:i])
	}
	return nil
}

// setLinesRead records how far readline has got, which decides when
// indent_char is set.
func (c *checker) setLinesRead(n int) {
	c.linesRead = n
	if c.indentChar == 0 && c.firstWSRow > 0 && c.firstWSRow <= n {
		c.indentChar = c.firstWSChar
	}
}

// expandIndent is pycodestyle's expand_indent.
func (c *checker) expandIndent(line []byte) int {
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	if bytes.IndexByte(line, '\t') < 0 {
		return nchars(line[:skipSpace(line, 0, c.latin1)], c.latin1)
	}
	n := 0
	for _, ch := range line {
		if ch == '\t' {
			n = n/8*8 + 8
		} else if ch == ' ' {
			n++
		} else {
			break
		}
	}
	return n
}

// buildLogical is build_tokens_line: it joins the tokens into the logical
// line, strings muted and comments left out, and records the mapping.
func (c *checker) buildLogical(ts []token) bool {
	c.logical = c.logical[:0]
	c.mapping = c.mapping[:0]
	c.logicalNoqa = false
	var prevRow, prevCol int32
	for i := range ts {
		t := &ts[i]
		switch t.kind {
		case kNL, kNewline, kIndent, kDedent:
			continue
		}
		if len(c.mapping) == 0 {
			c.mapping = append(c.mapping, mapEntry{0, t.sr, t.sc})
		}
		text := c.text(t)
		if t.kind == kComment {
			if !c.logicalNoqa && hasNoqa(text) {
				c.logicalNoqa = true
			}
			continue
		}
		if prevRow != 0 {
			if prevRow != t.sr {
				pline := c.row(int(prevRow))
				var pc byte
				if len(pline) > 0 {
					k := int(prevCol) - 1
					if k < 0 {
						k += len(pline)
					}
					if k >= 0 && k < len(pline) {
						pc = pline[k]
					}
				}
				if pc == ',' || (pc != '{' && pc != '[' && pc != '(' && !pyIn(text, "}])")) {
					c.logical = append(c.logical, ' ')
				}
			} else if prevCol != t.sc {
				line := c.tokLine(t)
				lo, hi := min(int(prevCol), len(line)), min(int(t.sc), len(line))
				if lo < hi {
					c.logical = append(c.logical, line[lo:hi]...)
				}
			}
		}
		if t.kind == kString {
			c.logical = appendMuted(c.logical, text, c.latin1)
		} else {
			c.logical = append(c.logical, text...)
		}
		c.mapping = append(c.mapping, mapEntry{int32(len(c.logical)), t.er, t.ec})
		prevRow, prevCol = t.er, t.ec
	}
	return len(c.mapping) > 0
}

// appendMuted is mute_string: the contents of a string literal become x's,
// one per character, so that no check matches inside them.
func appendMuted(dst, text []byte, latin1 bool) []byte {
	if len(text) == 0 {
		return dst
	}
	start := bytes.IndexByte(text, text[len(text)-1]) + 1
	end := len(text) - 1
	if len(text) >= 3 && (string(text[len(text)-3:]) == `"""` || string(text[len(text)-3:]) == "'''") {
		start += 2
		end -= 2
	}
	if end <= start {
		return append(dst, text...)
	}
	dst = append(dst, text[:start]...)
	for range nchars(text[start:end], latin1) {
		dst = append(dst, 'x')
	}
	return append(dst, text[end:]...)
}

// offsetPos maps an offset in the logical line to (row, character col):
// the position of the end of the first token that ends at or after off,
// moved back by the characters between off and that end.
func (c *checker) offsetPos(off int) (int, int) {
	m := c.mapping
	lo, hi := 0, len(m)
	for lo < hi {
		h := int(uint(lo+hi) >> 1)
		if int(m[h].off) < off {
			lo = h + 1
		} else {
			hi = h
		}
	}
	if lo == len(m) {
		lo = len(m) - 1
	}
	e := m[lo]
	col := c.charCol(int(e.row), int(e.col))
	if int(e.off) >= off {
		col -= nchars(c.logical[max(off, 0):e.off], c.latin1)
	} else {
		col += off - int(e.off)
	}
	return int(e.row), col
}

// reportOff records a diagnostic at an offset of the logical line.
func (c *checker) reportOff(off int, k code, msg string) {
	if !c.en[k] {
		return
	}
	row, col := c.offsetPos(off)
	c.reportChar(row, col, k, msg)
}

// checkLogical is check_logical. It returns false, leaving the pending
// tokens and blank-line count alone, when the tokens hold no logical line.
func (c *checker) checkLogical(ts []token) bool {
	if !c.buildLogical(ts) {
		return false
	}
	start := c.mapping[0]
	sl := c.row(int(start.row))
	c.indentLevel = c.expandIndent(sl[:min(int(start.col), len(sl))])
	if c.blankBefore < c.blankLines {
		c.blankBefore = c.blankLines
	}
	c.logicalChecks(ts)
	if L := c.logical; len(L) > 0 {
		c.prevIndentLevel = c.indentLevel
		c.hasPrevLogical = true
		c.prevColon = L[len(L)-1] == ':'
		c.prevDecorator = L[0] == '@'
		c.prevDocstring = isDocstringStart(L)
		if c.indentLevel == 0 {
			c.prevUnindentDef = bytes.HasPrefix(L, []byte("def ")) || bytes.HasPrefix(L, []byte("class "))
		}
	}
	c.blankLines = 0
	return true
}

// isDocstringStart is DOCSTRING_REGEX.match: u?r?["'].
func isDocstringStart(L []byte) bool {
	i := 0
	if i < len(L) && L[i] == 'u' {
		i++
	}
	if i < len(L) && L[i] == 'r' {
		i++
	}
	return i < len(L) && (L[i] == '"' || L[i] == '\'')
}
