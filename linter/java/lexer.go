package java

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tKeyword
	tNumber
	tChar
	tString
	tTextBlock
	tOp
	tOther // a byte no Java token starts with; kept so the parser can skip it
)

// role is what the parser decided a token is, as far as the checks care.
type role uint8

const (
	rNone role = iota
	rWS        // checked by WhitespaceAround
)

// Token flags set by the parser.
const (
	fNoBefore uint8 = 1 << iota // WhitespaceAround: do not check the preceding char
	fNoAfter                    // WhitespaceAround: do not check the following char
	fNotRef                     // UnusedImports: identifier does not reference a type
	fStmtKw                     // keyword starting a statement
)

// token is one lexical token. Offsets are byte offsets into the source;
// col is the 0-based column in UTF-16 code units, tabs counting as one, as
// checkstyle's lexer counts them.
type token struct {
	text  string
	off   int32
	line  int32
	col   int32
	kind  tokKind
	role  role
	flags uint8
}

func (t *token) end() int32 { return t.off + int32(len(t.text)) }

// comment is a comment, kept apart from the code tokens.
type comment struct {
	off, end  int32
	endLine   int32
	javadocOK bool // a /** */ comment other than /**/
}

// lexer splits Java source into tokens. It never fails: bytes that start no
// token become tOther tokens and unterminated literals or comments end at
// the end of the line or file.
type lexer struct {
	src       string
	pos       int
	line      int32
	lineStart int
	ascii     bool // the current line has been pure ASCII so far
	hasCR     bool // the source has a '\r': lines may end in \r or \r\n
	toks      []token
	comments  []comment
	lines     []int32 // byte offset of the start of each line

	// colOff and colN resume col on a line that is not pure ASCII: the
	// UTF-16 column colN of byte offset colOff on the current line, so
	// that a long line with many tokens is measured once, not once per
	// token (issue 13).
	colOff, colN int
	steps        int // bytes measured by col: counted by the linearity test
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isKeyword reports whether s is a reserved word (or literal) of Java 17.
// Contextual words (var, yield, record, sealed, permits) are identifiers.
func isKeyword(s string) bool {
	switch s {
	case "abstract", "assert", "boolean", "break", "byte", "case", "catch", "char", "class",
		"const", "continue", "default", "do", "double", "else", "enum", "extends", "final",
		"finally", "float", "for", "goto", "if", "implements", "import", "instanceof", "int",
		"interface", "long", "native", "new", "package", "private", "protected", "public",
		"return", "short", "static", "strictfp", "super", "switch", "synchronized", "this",
		"throw", "throws", "transient", "try", "void", "volatile", "while", "true", "false", "null":
		return true
	}
	return false
}

// ops lists operators longest first within each leading byte, so a linear
// scan picks the longest match (>>>= before >>> before >>= before >> ...).
var ops = [256][]string{
	'>': {">>>=", ">>>", ">>=", ">>", ">=", ">"},
	'<': {"<<=", "<<", "<=", "<"},
	'=': {"==", "="},
	'!': {"!=", "!"},
	'&': {"&&", "&=", "&"},
	'|': {"||", "|=", "|"},
	'+': {"++", "+=", "+"},
	'-': {"--", "-=", "->", "-"},
	'*': {"*=", "*"},
	'/': {"/=", "/"},
	'%': {"%=", "%"},
	'^': {"^=", "^"},
	':': {"::", ":"},
	'.': {"...", "."},
	'(': {"("}, ')': {")"}, '{': {"{"}, '}': {"}"}, '[': {"["}, ']': {"]"},
	';': {";"}, ',': {","}, '@': {"@"}, '~': {"~"}, '?': {"?"},
}

func tokenize(src string) *lexer {
	lx := &lexer{src: src, line: 1, ascii: true, hasCR: strings.IndexByte(src, '\r') >= 0}
	lx.toks = make([]token, 0, len(src)/8+16)
	lx.lines = append(make([]int32, 0, len(src)/40+2), 0)
	lx.run()
	return lx
}

func (lx *lexer) newline(next int) {
	lx.line++
	lx.lineStart = next
	lx.colOff, lx.colN = next, 0
	lx.ascii = true
	lx.lines = append(lx.lines, int32(next))
}

// col returns the UTF-16 column of byte offset off on the current line.
func (lx *lexer) col(off int) int32 {
	if lx.ascii {
		return int32(off - lx.lineStart)
	}
	from, n := lx.lineStart, 0
	if lx.colOff >= lx.lineStart && lx.colOff <= off {
		from, n = lx.colOff, lx.colN
	}
	lx.steps += off - from
	n += utf16Len(lx.src[from:off])
	lx.colOff, lx.colN = off, n
	return int32(n)
}

func utf16Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func (lx *lexer) emit(kind tokKind, start int, line int32, col int32) {
	lx.toks = append(lx.toks, token{text: lx.src[start:lx.pos], off: int32(start), line: line, col: col, kind: kind})
}

func (lx *lexer) run() {
	src := lx.src
	for lx.pos < len(src) {
		c := src[lx.pos]
		switch {
		case c == '\n':
			lx.pos++
			lx.newline(lx.pos)
			continue
		case c == '\r':
			lx.pos++
			if lx.pos < len(src) && src[lx.pos] == '\n' {
				lx.pos++
			}
			lx.newline(lx.pos)
			continue
		case c == ' ' || c == '\t' || c == '\f':
			lx.pos++
			continue
		}
		start, line := lx.pos, lx.line
		if c >= 0x80 {
			lx.ascii = false
		}
		col := lx.col(start)
		switch {
		case c == '/' && lx.pos+1 < len(src) && src[lx.pos+1] == '/':
			stop := len(src)
			if k := lx.lineEnd(lx.pos); k >= 0 {
				stop = k
			}
			lx.advanceTo(stop)
			lx.comments = append(lx.comments, comment{off: int32(start), end: int32(lx.pos), endLine: line})
		case c == '/' && lx.pos+1 < len(src) && src[lx.pos+1] == '*':
			stop := len(src)
			if k := strings.Index(src[lx.pos+2:], "*/"); k >= 0 {
				stop = lx.pos + 2 + k + 2
			}
			lx.advanceTo(stop)
			text := src[start:lx.pos]
			jd := len(text) >= 3 && text[2] == '*' && text != "/**/"
			lx.comments = append(lx.comments, comment{off: int32(start), end: int32(lx.pos), endLine: lx.line, javadocOK: jd})
		case isIdentStart(c) && !(c >= 0x80 && lx.isSpaceRune()):
			for lx.pos < len(src) && isIdentPart(src[lx.pos]) {
				if src[lx.pos] >= 0x80 {
					if lx.isSpaceRune() {
						break
					}
					lx.ascii = false
				}
				lx.pos++
			}
			kind := tIdent
			// Keywords are 2 to 12 lower-case letters; skip the map otherwise.
			if n := lx.pos - start; n >= 2 && n <= 12 && c >= 'a' && c <= 'z' && isKeyword(src[start:lx.pos]) {
				kind = tKeyword
			}
			lx.emit(kind, start, line, col)
		case isDigit(c) || c == '.' && lx.pos+1 < len(src) && isDigit(src[lx.pos+1]):
			lx.number()
			lx.emit(tNumber, start, line, col)
		case c == '"':
			if lx.pos+2 < len(src) && src[lx.pos+1] == '"' && src[lx.pos+2] == '"' {
				lx.textBlock()
				lx.emit(tTextBlock, start, line, col)
			} else {
				lx.quoted('"')
				lx.emit(tString, start, line, col)
			}
		case c == '\'':
			lx.quoted('\'')
			lx.emit(tChar, start, line, col)
		case ops[c] != nil:
			for _, op := range ops[c] {
				if len(src)-lx.pos >= len(op) && src[lx.pos:lx.pos+len(op)] == op {
					lx.pos += len(op)
					break
				}
			}
			lx.emit(tOp, start, line, col)
		default:
			if c >= 0x80 {
				_, size := utf8.DecodeRuneInString(src[lx.pos:])
				lx.pos += size
			} else {
				lx.pos++
			}
			lx.emit(tOther, start, line, col)
		}
	}
	lx.toks = append(lx.toks, token{off: int32(len(src)), line: lx.line, col: lx.col(len(src)), kind: tEOF})
}

// lineEnd returns the offset of the first line terminator at or after
// from, or -1.
func (lx *lexer) lineEnd(from int) int {
	if !lx.hasCR {
		if k := strings.IndexByte(lx.src[from:], '\n'); k >= 0 {
			return from + k
		}
		return -1
	}
	if k := strings.IndexAny(lx.src[from:], "\r\n"); k >= 0 {
		return from + k
	}
	return -1
}

// advanceTo moves to stop, counting the line breaks on the way, and notes
// whether the last line so far holds non-ASCII text (for columns).
func (lx *lexer) advanceTo(stop int) {
	src := lx.src
	for lx.pos < stop {
		k := lx.lineEnd(lx.pos)
		if k < 0 || k >= stop {
			break
		}
		lx.pos = k + 1
		if src[k] == '\r' && lx.pos < len(src) && src[lx.pos] == '\n' {
			lx.pos++
		}
		lx.newline(lx.pos)
	}
	if lx.ascii {
		for i := max(lx.pos, lx.lineStart); i < stop; i++ {
			if src[i] >= 0x80 {
				lx.ascii = false
				break
			}
		}
	}
	lx.pos = max(lx.pos, stop)
}

// isSpaceRune reports whether the non-ASCII rune at pos is white space,
// which ends an identifier.
func (lx *lexer) isSpaceRune() bool {
	r, _ := utf8.DecodeRuneInString(lx.src[lx.pos:])
	return unicode.IsSpace(r)
}

// skipByte advances over one byte, counting line breaks.
func (lx *lexer) skipByte() {
	c := lx.src[lx.pos]
	lx.pos++
	switch {
	case c == '\n':
		lx.newline(lx.pos)
	case c == '\r':
		if lx.pos < len(lx.src) && lx.src[lx.pos] == '\n' {
			lx.pos++
		}
		lx.newline(lx.pos)
	case c >= 0x80:
		lx.ascii = false
	}
}

// number scans an integer or floating-point literal with its suffix.
func (lx *lexer) number() {
	src := lx.src
	p := lx.pos
	if src[p] == '0' && p+1 < len(src) && (src[p+1]|0x20 == 'x' || src[p+1]|0x20 == 'b') {
		hex := src[p+1]|0x20 == 'x'
		p += 2
		for p < len(src) && (isHex(src[p]) || src[p] == '_' || src[p] == '.' && hex) {
			p++
		}
		if hex && p < len(src) && src[p]|0x20 == 'p' {
			p = exponent(src, p)
		}
	} else {
		for p < len(src) && (isDigit(src[p]) || src[p] == '_') {
			p++
		}
		if p < len(src) && src[p] == '.' && !(p+1 < len(src) && src[p+1] == '.') {
			p++
			for p < len(src) && (isDigit(src[p]) || src[p] == '_') {
				p++
			}
		}
		if p < len(src) && src[p]|0x20 == 'e' {
			p = exponent(src, p)
		}
	}
	if p < len(src) {
		switch src[p] | 0x20 {
		case 'l', 'f', 'd':
			p++
		}
	}
	lx.pos = p
}

func isHex(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }

func exponent(src string, p int) int {
	p++
	if p < len(src) && (src[p] == '+' || src[p] == '-') {
		p++
	}
	for p < len(src) && (isDigit(src[p]) || src[p] == '_') {
		p++
	}
	return p
}

// quoted scans a string or char literal; it ends at the closing quote or,
// unterminated, at the end of the line.
func (lx *lexer) quoted(q byte) {
	src := lx.src
	p := lx.pos + 1
	for p < len(src) {
		c := src[p]
		if c == q {
			p++
			break
		}
		if c == '\n' || c == '\r' {
			break
		}
		if c >= 0x80 {
			lx.ascii = false
		}
		if c == '\\' && p+1 < len(src) && src[p+1] != '\n' && src[p+1] != '\r' {
			p++
		}
		p++
	}
	lx.pos = p
}

// textBlock scans a Java 15 text block """...""".
func (lx *lexer) textBlock() {
	lx.pos += 3
	for lx.pos < len(lx.src) {
		if lx.src[lx.pos] == '\\' && lx.pos+1 < len(lx.src) {
			lx.pos++
			lx.skipByte()
			continue
		}
		if lx.src[lx.pos] == '"' && lx.pos+2 < len(lx.src) && lx.src[lx.pos+1] == '"' && lx.src[lx.pos+2] == '"' {
			lx.pos += 3
			return
		}
		lx.skipByte()
	}
}
