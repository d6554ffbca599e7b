package python

// This file is a Go model of CPython 3.11's pure-Python tokenize module,
// the tokenizer pycodestyle runs on. It follows the module's regular
// expressions alternative by alternative (the order matters: "rb" followed
// by an unterminated quote is a NAME, a lone "$" is an ERRORTOKEN, and so
// on) because pycodestyle's checks see exactly those tokens.

// kind is a token type, named as in Python's token module.
type kind uint8

const (
	kEndmarker kind = iota
	kName
	kNumber
	kString
	kNewline
	kIndent
	kDedent
	kOp
	kComment
	kNL
	kErrorToken
)

// token is one token. Rows are 1-based, columns are 0-based byte offsets
// into the row. The text is src[off:end]. The token's "line" (the fourth
// element of a Python TokenInfo) is rows lr0..lr1; lr0 == 0 means "".
type token struct {
	kind     kind
	sr, sc   int32
	er, ec   int32
	off, end int32
	lr0, lr1 int32
}

// tokError is the exception tokenize would raise: pycodestyle reports it
// as E901 and stops tokenizing.
type tokError struct {
	row, col  int // col is a byte column
	msg       string
	linesRead int // how many lines pycodestyle had read when it was raised
}

const tabsize = 8

// quote kinds for the end-of-string scanners.
const (
	qSingle  = iota // '
	qDouble         // "
	qSingle3        // '''
	qDouble3        // """
)

// tokenizer holds the state of _tokenize in tokenize.py.
type tokenizer struct {
	src       []byte
	lineStart []int32 // lineStart[i] is the offset of row i+1; last entry is len(src)
	latin1    bool    // characters are bytes (pycodestyle's latin-1 fallback)
	toks      []token
	// done, when closed, stops the run early (stopped is then set): the
	// caller's context ended.
	done    <-chan struct{}
	stopped bool
}

// checkEvery is how many lines or tokens pass between two looks at a
// done channel: rare enough to cost nothing, often enough to stop within
// a millisecond or so.
const checkEvery = 1 << 12

// isDone reports whether done is closed.
func isDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// emit appends a token whose text runs from (sr, sc) to (er, ec).
func (t *tokenizer) emit(k kind, sr, sc, er, ec int32, lr0, lr1 int32) {
	off := t.lineStart[sr-1] + sc
	end := t.lineStart[er-1] + ec
	t.toks = append(t.toks, token{kind: k, sr: sr, sc: sc, er: er, ec: ec, off: off, end: end, lr0: lr0, lr1: lr1})
}

// emitEmpty appends a token with empty text at (row, col), such as DEDENT
// or ENDMARKER, whose row may be one past the last line.
func (t *tokenizer) emitEmpty(k kind, row, col, ecol int32, line int32) {
	off := int32(len(t.src))
	if int(row) <= len(t.lineStart)-1 {
		off = t.lineStart[row-1] + col
		if off > int32(len(t.src)) {
			off = int32(len(t.src))
		}
	}
	t.toks = append(t.toks, token{kind: k, sr: row, sc: col, er: row, ec: ecol, off: off, end: off, lr0: line, lr1: line})
}

// run tokenizes the whole source. It returns the error tokenize would
// raise, if any; the tokens produced before it are kept.
func (t *tokenizer) run() *tokError {
	nlines := int32(len(t.lineStart) - 1)
	var (
		lnum      int32
		parenlev  int
		continued bool
		indents   = make([]int, 1, 16)

		contstr        bool
		needcont       bool
		strRow, strCol int32
		contRow        int32
		endQuote       int
		lastLineRow    int32 // row of last_line, 0 for none
		line           []byte
		lineRow        int32
	)
	for {
		lastLineRow = lineRow
		lnum++
		if lnum%checkEvery == 0 && isDone(t.done) {
			t.stopped = true
			return nil
		}
		if lnum <= nlines {
			line = t.src[t.lineStart[lnum-1]:t.lineStart[lnum]]
			lineRow = lnum
		} else {
			line = nil
			lineRow = 0
		}
		pos, max := 0, len(line)

		if contstr {
			if line == nil {
				return &tokError{row: int(strRow), col: int(strCol), msg: "TokenError: EOF in multi-line string", linesRead: int(nlines)}
			}
			if end := scanStringEnd(line, 0, endQuote); end >= 0 {
				pos = end
				t.emit(kString, strRow, strCol, lnum, int32(end), contRow, lnum)
				contstr, needcont = false, false
			} else if needcont && !hasSuffix(line, "\\\n") {
				t.emit(kErrorToken, strRow, strCol, lnum, int32(len(line)), contRow, lnum-1)
				contstr = false
				continue
			} else {
				continue
			}
		} else if parenlev == 0 && !continued {
			if line == nil {
				break
			}
			column := 0
			for pos < max {
				switch line[pos] {
				case ' ':
					column++
				case '\t':
					column = (column/tabsize + 1) * tabsize
				case '\f':
					column = 0
				default:
					goto measured
				}
				pos++
			}
		measured:
			if pos == max {
				break
			}
			if c := line[pos]; c == '#' || c == '\r' || c == '\n' {
				if c == '#' {
					end := len(line)
					for end > pos && (line[end-1] == '\n' || line[end-1] == '\r') {
						end--
					}
					t.emit(kComment, lnum, int32(pos), lnum, int32(end), lnum, lnum)
					pos = end
				}
				t.emit(kNL, lnum, int32(pos), lnum, int32(len(line)), lnum, lnum)
				continue
			}
			if column > indents[len(indents)-1] {
				indents = append(indents, column)
				t.emit(kIndent, lnum, 0, lnum, int32(pos), lnum, lnum)
			}
			for column < indents[len(indents)-1] {
				found := false
				for _, in := range indents {
					if in == column {
						found = true
						break
					}
				}
				if !found {
					return &tokError{row: int(lnum), col: pos, msg: "IndentationError: unindent does not match any outer indentation level", linesRead: int(lnum)}
				}
				indents = indents[:len(indents)-1]
				t.emitEmpty(kDedent, lnum, int32(pos), int32(pos), lnum)
			}
		} else {
			if line == nil {
				return &tokError{row: int(lnum), col: 0, msg: "TokenError: EOF in multi-line statement", linesRead: int(nlines)}
			}
			continued = false
		}

		for pos < max {
			start := pos
			for start < max && (line[start] == ' ' || line[start] == '\f' || line[start] == '\t') {
				start++
			}
			if start == max { // \Z
				pos = max
				continue
			}
			c := line[start]
			// PseudoExtras: backslash-newline, comment, triple-quoted string.
			if c == '\\' && start+1 < max && line[start+1] == '\n' {
				continued = true
				pos = start + 2
				continue
			}
			if c == '#' {
				end := start
				for end < max && line[end] != '\n' && line[end] != '\r' {
					end++
				}
				t.emit(kComment, lnum, int32(start), lnum, int32(end), lnum, lnum)
				pos = end
				continue
			}
			if q, qk, ok := stringStart(line, start); ok && qk >= qSingle3 {
				if end := scanStringEnd(line, q+3, qk); end >= 0 {
					t.emit(kString, lnum, int32(start), lnum, int32(end), lnum, lnum)
					pos = end
					continue
				}
				// needcont is left as it is: tokenize.py resets it only when
				// a string completes, so a triple-quoted string after an
				// unterminated single-quoted one inherits it.
				strRow, strCol, contRow = lnum, int32(start), lnum
				contstr, endQuote = true, qk
				break
			}
			if isDigit(c) || (c == '.' && start+1 < max && isDigit(line[start+1])) {
				end := scanNumber(line, start)
				t.emit(kNumber, lnum, int32(start), lnum, int32(end), lnum, lnum)
				pos = end
				continue
			}
			if c == '\n' {
				k := kNewline
				if parenlev > 0 {
					k = kNL
				}
				t.emit(k, lnum, int32(start), lnum, int32(start+1), lnum, lnum)
				pos = start + 1
				continue
			}
			if n := operatorLen(line, start); n > 0 {
				switch c {
				case '(', '[', '{':
					parenlev++
				case ')', ']', '}':
					parenlev--
				}
				t.emit(kOp, lnum, int32(start), lnum, int32(start+n), lnum, lnum)
				pos = start + n
				continue
			}
			if q, qk, ok := stringStart(line, start); ok {
				end, cont := scanContStr(line, q+1, qk)
				if end >= 0 {
					if cont {
						strRow, strCol, contRow = lnum, int32(start), lnum
						contstr, needcont, endQuote = true, true, qk
						pos = max
						break
					}
					t.emit(kString, lnum, int32(start), lnum, int32(end), lnum, lnum)
					pos = end
					continue
				}
			}
			if n := wordLen(line, start, t.latin1); n > 0 {
				k := kName
				if !isIdentStart(line, start, t.latin1) {
					k = kOp // tokenize.py: a \w match that is no identifier is an OP
				}
				t.emit(k, lnum, int32(start), lnum, int32(start+n), lnum, lnum)
				pos = start + n
				continue
			}
			// No alternative matched: one ERRORTOKEN at pos, which may be
			// the whitespace before the offending character.
			n := charLen(line, pos, t.latin1)
			t.emit(kErrorToken, lnum, int32(pos), lnum, int32(pos+n), lnum, lnum)
			pos += n
		}
	}

	if lastLineRow > 0 {
		last := t.src[t.lineStart[lastLineRow-1]:t.lineStart[lastLineRow]]
		if n := len(last); n > 0 && last[n-1] != '\n' && last[n-1] != '\r' && !isCommentLine(last) {
			off := t.lineStart[lastLineRow-1] + int32(n)
			t.toks = append(t.toks, token{kind: kNewline, sr: lastLineRow, sc: int32(n), er: lastLineRow, ec: int32(n + 1), off: off, end: off})
		}
	}
	for range indents[1:] {
		t.emitEmpty(kDedent, lnum, 0, 0, 0)
	}
	t.emitEmpty(kEndmarker, lnum, 0, 0, 0)
	return nil
}

// isCommentLine reports whether line.strip() starts with "#".
func isCommentLine(line []byte) bool {
	for _, c := range line {
		switch c {
		case ' ', '\t', '\f', '\v', '\r', '\n', 0x1c, 0x1d, 0x1e, 0x1f:
			continue
		}
		return c == '#'
	}
	return false
}

// hasSuffix is bytes.HasSuffix for a string suffix.
func hasSuffix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[len(b)-len(s):]) == s
}

// isDigit reports an ASCII digit.
func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// stringStart matches StringPrefix followed by a quote at i. It returns the
// index of the (first) quote and the quote kind.
func stringStart(line []byte, i int) (q, qk int, ok bool) {
	j := i
	for j < len(line) && j-i < 3 {
		c := line[j]
		if c == '\'' || c == '"' {
			break
		}
		switch c | 0x20 {
		case 'b', 'r', 'u', 'f':
		default:
			return 0, 0, false
		}
		j++
	}
	if j >= len(line) || (line[j] != '\'' && line[j] != '"') || !validPrefix(line[i:j]) {
		return 0, 0, false
	}
	qk = qSingle
	if line[j] == '"' {
		qk = qDouble
	}
	if j+2 < len(line) && line[j+1] == line[j] && line[j+2] == line[j] {
		qk += 2
	}
	return j, qk, true
}

// validPrefix reports whether p is one of Python 3's string prefixes, in
// any case and order.
func validPrefix(p []byte) bool {
	switch len(p) {
	case 0:
		return true
	case 1:
		switch p[0] | 0x20 {
		case 'b', 'r', 'u', 'f':
			return true
		}
	case 2:
		a, b := p[0]|0x20, p[1]|0x20
		return (a == 'r' && (b == 'b' || b == 'f')) || (b == 'r' && (a == 'b' || a == 'f'))
	}
	return false
}

// scanStringEnd matches the endpats regex for qk at i: it returns the index
// just past the closing quote(s), or -1 when the string does not end on
// this line. As in the regex, "\\." does not match a backslash-newline.
func scanStringEnd(line []byte, i, qk int) int {
	q := byte('\'')
	if qk == qDouble || qk == qDouble3 {
		q = '"'
	}
	triple := qk >= qSingle3
	for i < len(line) {
		c := line[i]
		switch {
		case c == '\\':
			if i+1 >= len(line) || line[i+1] == '\n' {
				return -1
			}
			i += 2
		case c == q:
			if !triple {
				return i + 1
			}
			if i+2 < len(line) && line[i+1] == q && line[i+2] == q {
				return i + 3
			}
			i++
		default:
			i++
		}
	}
	return -1
}

// scanContStr matches the rest of ContStr after the opening quote at i-1:
// a single-quoted string that ends on this line, or one that continues with
// a backslash-newline (cont). It returns -1 when neither matches.
func scanContStr(line []byte, i, qk int) (end int, cont bool) {
	q := byte('\'')
	if qk == qDouble || qk == qDouble3 {
		q = '"'
	}
	for i < len(line) {
		c := line[i]
		switch {
		case c == '\n':
			return -1, false
		case c == q:
			return i + 1, false
		case c == '\\':
			if i+1 < len(line) && line[i+1] == '\n' {
				return i + 2, true
			}
			if i+1 >= len(line) {
				return -1, false
			}
			i += 2
		default:
			i++
		}
	}
	return -1, false
}

// digitPart matches [0-9](?:_?[0-9])* at i and returns its end, or -1.
func digitPart(b []byte, i int) int {
	if i >= len(b) || !isDigit(b[i]) {
		return -1
	}
	i++
	for i < len(b) {
		if isDigit(b[i]) {
			i++
		} else if b[i] == '_' && i+1 < len(b) && isDigit(b[i+1]) {
			i += 2
		} else {
			break
		}
	}
	return i
}

// isHex reports an ASCII hexadecimal digit.
func isHex(c byte) bool { return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'f') }

// exponent matches [eE][-+]?[0-9](?:_?[0-9])* at i.
func exponent(b []byte, i int) int {
	if i >= len(b) || b[i]|0x20 != 'e' {
		return -1
	}
	i++
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	return digitPart(b, i)
}

// floatNumber matches Floatnumber (Pointfloat | Expfloat) at i.
func floatNumber(b []byte, i int) int {
	end := -1
	if d := digitPart(b, i); d >= 0 && d < len(b) && b[d] == '.' {
		end = d + 1
		if f := digitPart(b, end); f >= 0 {
			end = f
		}
	} else if i < len(b) && b[i] == '.' {
		end = digitPart(b, i+1)
	}
	if end >= 0 {
		if e := exponent(b, end); e >= 0 {
			end = e
		}
		return end
	}
	if d := digitPart(b, i); d >= 0 {
		return exponent(b, d)
	}
	return -1
}

// scanNumber matches Number (Imagnumber | Floatnumber | Intnumber) at i,
// which holds a digit or a '.' followed by a digit.
func scanNumber(b []byte, i int) int {
	if d := digitPart(b, i); d >= 0 && d < len(b) && b[d]|0x20 == 'j' {
		return d + 1
	}
	if f := floatNumber(b, i); f >= 0 {
		if f < len(b) && b[f]|0x20 == 'j' {
			return f + 1
		}
		return f
	}
	if b[i] == '0' && i+1 < len(b) {
		var ok func(byte) bool
		switch b[i+1] | 0x20 {
		case 'x':
			ok = isHex
		case 'b':
			ok = func(c byte) bool { return c == '0' || c == '1' }
		case 'o':
			ok = func(c byte) bool { return '0' <= c && c <= '7' }
		}
		if ok != nil {
			j := i + 2
			for j < len(b) {
				if ok(b[j]) {
					j++
				} else if b[j] == '_' && j+1 < len(b) && ok(b[j+1]) {
					j += 2
				} else {
					break
				}
			}
			if j > i+2 {
				return j
			}
		}
	}
	if b[i] == '0' {
		j := i + 1
		for j < len(b) {
			if b[j] == '0' {
				j++
			} else if b[j] == '_' && j+1 < len(b) && b[j+1] == '0' {
				j += 2
			} else {
				break
			}
		}
		return j
	}
	return digitPart(b, i)
}

// operatorLen returns the length of the operator at i (the longest of
// token.EXACT_TOKEN_TYPES), or 0.
func operatorLen(b []byte, i int) int {
	c := b[i]
	var n1, n2 byte
	if i+1 < len(b) {
		n1 = b[i+1]
	}
	if i+2 < len(b) {
		n2 = b[i+2]
	}
	switch c {
	case '(', ')', '[', ']', '{', '}', ',', ';', '~':
		return 1
	case '.':
		if n1 == '.' && n2 == '.' {
			return 3
		}
		return 1
	case ':':
		if n1 == '=' {
			return 2
		}
		return 1
	case '-':
		if n1 == '=' || n1 == '>' {
			return 2
		}
		return 1
	case '*', '/', '<', '>':
		if n1 == c { // **, //, <<, >>
			if n2 == '=' {
				return 3
			}
			return 2
		}
		if n1 == '=' {
			return 2
		}
		return 1
	case '+', '%', '&', '|', '^', '@', '=':
		if n1 == '=' {
			return 2
		}
		return 1
	case '!':
		if n1 == '=' {
			return 2
		}
	}
	return 0
}
