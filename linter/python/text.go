package python

import (
	"unicode"
	"unicode/utf8"
)

// The source is kept as bytes; these helpers give Python's view of it,
// where a character is a code point (or a byte, in pycodestyle's latin-1
// fallback for files that are not valid UTF-8). ASCII takes the fast path.

// charAt decodes the character at b[i].
func charAt(b []byte, i int, latin1 bool) (rune, int) {
	c := b[i]
	if c < utf8.RuneSelf || latin1 {
		return rune(c), 1
	}
	return utf8.DecodeRune(b[i:])
}

// charBefore decodes the character that ends at b[i].
func charBefore(b []byte, i int, latin1 bool) (rune, int) {
	c := b[i-1]
	if c < utf8.RuneSelf || latin1 {
		return rune(c), 1
	}
	return utf8.DecodeLastRune(b[:i])
}

// charLen is the byte length of the character at b[i].
func charLen(b []byte, i int, latin1 bool) int {
	_, n := charAt(b, i, latin1)
	return n
}

// nchars is len() of b as a Python string.
func nchars(b []byte, latin1 bool) int {
	if latin1 {
		return len(b)
	}
	for _, c := range b {
		if c >= utf8.RuneSelf {
			return utf8.RuneCount(b)
		}
	}
	return len(b)
}

// isPySpace is str.isspace for one character.
func isPySpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || ('\t' <= r && r <= '\r') || (0x1c <= r && r <= 0x1f)
	}
	return unicode.IsSpace(r)
}

// asciiSpace marks the ASCII characters str.isspace accepts.
var asciiSpace = [utf8.RuneSelf]bool{' ': true, '\t': true, '\n': true, '\v': true, '\f': true, '\r': true, 0x1c: true, 0x1d: true, 0x1e: true, 0x1f: true}

// spaceLen returns the byte length of the whitespace character at b[i],
// or 0 when it is no whitespace (the regex class \s).
func spaceLen(b []byte, i int, latin1 bool) int {
	c := b[i]
	if c < utf8.RuneSelf {
		if asciiSpace[c] {
			return 1
		}
		return 0
	}
	r, n := charAt(b, i, latin1)
	if unicode.IsSpace(r) {
		return n
	}
	return 0
}

// skipSpace returns the end of the run of \s characters starting at i.
func skipSpace(b []byte, i int, latin1 bool) int {
	for i < len(b) {
		n := spaceLen(b, i, latin1)
		if n == 0 {
			break
		}
		i += n
	}
	return i
}

// rstripSpace is str.rstrip().
func rstripSpace(b []byte, latin1 bool) []byte {
	for len(b) > 0 {
		r, n := charBefore(b, len(b), latin1)
		if !isPySpace(r) {
			break
		}
		b = b[:len(b)-n]
	}
	return b
}

// lstripSpace is str.lstrip().
func lstripSpace(b []byte, latin1 bool) []byte {
	return b[skipSpace(b, 0, latin1):]
}

// isWordRune is the regex class \w for a non-ASCII character.
func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r)
}

// isWordByte is \w for an ASCII byte.
func isWordByte(c byte) bool {
	return c == '_' || ('0' <= c && c <= '9') || ('a' <= c|0x20 && c|0x20 <= 'z')
}

// isWordAt reports whether b[i] starts a \w character.
func isWordAt(b []byte, i int, latin1 bool) bool {
	if i < 0 || i >= len(b) {
		return false
	}
	if b[i] < utf8.RuneSelf {
		return isWordByte(b[i])
	}
	r, _ := charAt(b, i, latin1)
	return isWordRune(r)
}

// isWordBefore reports whether the character ending at b[i] is \w.
func isWordBefore(b []byte, i int, latin1 bool) bool {
	if i <= 0 || i > len(b) {
		return false
	}
	if b[i-1] < utf8.RuneSelf {
		return isWordByte(b[i-1])
	}
	r, _ := charBefore(b, i, latin1)
	return isWordRune(r)
}

// wordLen returns the length of the \w+ run at i.
func wordLen(b []byte, i int, latin1 bool) int {
	j := i
	for j < len(b) {
		if b[j] < utf8.RuneSelf {
			if !isWordByte(b[j]) {
				break
			}
			j++
			continue
		}
		r, n := charAt(b, j, latin1)
		if !isWordRune(r) {
			break
		}
		j += n
	}
	return j - i
}

// isIdentStart approximates str.isidentifier() for the first character.
func isIdentStart(b []byte, i int, latin1 bool) bool {
	if b[i] < utf8.RuneSelf {
		return b[i] == '_' || ('a' <= b[i]|0x20 && b[i]|0x20 <= 'z')
	}
	r, _ := charAt(b, i, latin1)
	return unicode.IsLetter(r) || unicode.Is(unicode.Nl, r)
}

// isIdentifier approximates str.isidentifier().
func isIdentifier(b []byte, latin1 bool) bool {
	if len(b) == 0 || !isIdentStart(b, 0, latin1) {
		return false
	}
	return wordLen(b, 0, latin1) == len(b)
}

// pyIn is Python's `s in set` for strings: a substring test, so the empty
// string is in every set. pycodestyle relies on it with DEDENT and
// ENDMARKER tokens, whose text is empty.
func pyIn(s []byte, set string) bool {
	switch len(s) {
	case 0:
		return true
	case 1:
		for i := 0; i < len(set); i++ {
			if set[i] == s[0] {
				return true
			}
		}
		return false
	}
	for i := 0; i+len(s) <= len(set); i++ {
		if set[i:i+len(s)] == string(s) {
			return true
		}
	}
	return false
}

// hasPrefixWord reports whether b starts with w followed by a non-word
// character or the end (the regex w\b).
func hasPrefixWord(b []byte, w string, latin1 bool) bool {
	return len(b) >= len(w) && string(b[:len(w)]) == w && !isWordAt(b, len(w), latin1)
}

// isKeyword is keyword.iskeyword in Python 3.11.
func isKeyword(s []byte) bool {
	switch string(s) {
	case "False", "None", "True", "and", "as", "assert", "async", "await",
		"break", "class", "continue", "def", "del", "elif", "else", "except",
		"finally", "for", "from", "global", "if", "import", "in", "is",
		"lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
		"while", "with", "yield":
		return true
	}
	return false
}

// isSoftKeyword is keyword.issoftkeyword in Python 3.11.
func isSoftKeyword(s []byte) bool {
	switch string(s) {
	case "_", "case", "match":
		return true
	}
	return false
}

// isPycodestyleKeyword reports membership in pycodestyle's KEYWORDS: the
// Python keywords plus print, minus the singletons.
func isPycodestyleKeyword(s []byte) bool {
	switch string(s) {
	case "False", "None", "True":
		return false
	case "print":
		return true
	}
	return isKeyword(s)
}

// hasNoqa is pycodestyle's noqa regex, `# no(?:qa|pep8)\b` ignoring case.
func hasNoqa(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] == '#' && noqaAt(b, i) {
			return true
		}
	}
	return false
}

// noqaAt reports whether the noqa regex matches at b[i].
func noqaAt(b []byte, i int) bool {
	if i+4 > len(b) || b[i] != '#' || b[i+1] != ' ' || b[i+2]|0x20 != 'n' || b[i+3]|0x20 != 'o' {
		return false
	}
	j := i + 4
	switch {
	case j+2 <= len(b) && b[j]|0x20 == 'q' && b[j+1]|0x20 == 'a':
		j += 2
	case j+4 <= len(b) && b[j]|0x20 == 'p' && b[j+1]|0x20 == 'e' && b[j+2]|0x20 == 'p' && b[j+3] == '8':
		j += 4
	default:
		return false
	}
	return !isWordAt(b, j, false)
}

// nextMatch remembers the answer of a forward search, the first index at
// or after a start that matches a fixed condition: as no index between
// the start and the answer matches, a later search from a start in that
// range has the same answer. Searches whose starts only grow thus cost
// the length of the text once in all, not once each.
type nextMatch struct {
	from, at int // the first match at or after from is at (-1: none)
	ok       bool
}

// find returns the first match at or after i, calling search(i) (which
// returns it, or -1) only when no earlier answer covers i.
func (m *nextMatch) find(i int, search func(int) int) int {
	if !m.ok || i < m.from || (m.at >= 0 && i > m.at) {
		m.from, m.at, m.ok = i, search(i), true
	}
	return m.at
}
