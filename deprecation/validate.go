package deprecation

import (
	"bytes"
	"unicode/utf8"
)

// This file holds the validator: a line-by-line reader of the block YAML
// that generators write (kubectl, helm template, kustomize, yaml
// libraries), which tells, without building a tree, that a document the
// pre-scan ruled out is well-formed. It answers "certainly valid" or "not
// sure"; not sure sends the document to the YAML parser, which then reports
// the error if there is one. So every invalid document is reported, and the
// common case costs a byte scan instead of a parse.
//
// It accepts a subset of YAML and bails out on everything else: tabs
// outside block scalars, anchors, aliases, tags, directives, multi-line
// quoted or plain scalars, explicit keys, flow collections spanning lines
// or holding anything but plain and quoted scalars and nested collections,
// block scalar indentation indicators, and root nodes that are not block
// mappings at column 0. FuzzValidatorSound holds it to yaml.v3: whenever it
// says valid, yaml.v3 (and readObject) must accept the document.

// maxValidateDepth bounds the nesting the validator follows.
const maxValidateDepth = 64

// valLevel is an open block collection.
type valLevel struct {
	indent int
	seq    bool
	// sameIndent marks a sequence written at its parent key's column
	// ("key:\n- a"): a key at that column ends it.
	sameIndent bool
}

// validator is the state of one run; the zero value is ready.
type validator struct {
	levels [maxValidateDepth]valLevel
	n      int // open levels

	// pending is set after "key:" or "-" with nothing after it: a nested
	// node may follow, indented more than pendingIndent (or, after a key,
	// a sequence at the same column).
	pending       bool
	pendingIndent int
	pendingKey    bool

	// A block scalar ("|", ">") is being read: its lines are indented more
	// than blockParent; blockIndent is the content's column once known.
	inBlock     bool
	blockParent int
	blockIndent int
	blockLead   int // most spaces on the blank lines before the content

	rootKeys [3]bool // apiVersion, kind, metadata seen at the root
}

// validYAML reports whether doc, a document of a block YAML stream that
// starts at the beginning of a line, is certainly parsed by yaml.v3 and
// read by readObject without error. False means not sure.
func validYAML(doc []byte) bool {
	var v validator
	return v.run(doc)
}

func (v *validator) run(d []byte) bool {
	first := true
	for pos := 0; pos < len(d); {
		end := bytes.IndexByte(d[pos:], '\n')
		if end < 0 {
			end = len(d)
		} else {
			end += pos
		}
		line := d[pos:end]
		pos = end + 1
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		tabs, ok := checkChars(line)
		if !ok {
			return false
		}
		ind := skipSpaces(line, 0)
		rest := line[ind:]
		if v.inBlock {
			done, ok := v.blockLine(ind, rest)
			if !ok {
				return false
			}
			if !done {
				continue
			}
		}
		if len(rest) == 0 || rest[0] == '#' {
			continue // blank or comment
		}
		if tabs {
			return false
		}
		if first {
			if ind != 0 || isSeqEntry(rest) {
				return false // the root must be a mapping at column 0
			}
			v.push(valLevel{indent: 0})
			first = false
		} else if !v.place(ind, rest) {
			return false
		}
		if !v.entry(ind, rest) {
			return false
		}
	}
	return !first
}

// checkChars rejects what yaml.v3 refuses anywhere in a stream: control
// characters, invalid UTF-8, characters outside YAML's printable set, and
// the line breaks it knows beyond "\n" (a lone "\r", NEL, LS, PS). It
// reports whether the line holds a tab.
func checkChars(line []byte) (tabs, ok bool) {
	ascii := true
	for _, c := range line {
		switch {
		case c == '\t':
			tabs = true
		case c < 0x20 || c == 0x7F:
			return tabs, false
		case c >= 0x80:
			ascii = false
		}
	}
	if ascii {
		return tabs, true
	}
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRune(line[i:])
		i += size
		switch {
		case r < 0x80:
		case r == utf8.RuneError && size == 1:
			return tabs, false
		case r < 0xA0, r == 0x2028, r == 0x2029, r == 0xFFFE, r == 0xFFFF:
			return tabs, false
		}
	}
	return tabs, true
}

// blockLine reads a line while a block scalar is open. done reports that
// the scalar ended before this line, which is then read as usual.
func (v *validator) blockLine(ind int, rest []byte) (done, ok bool) {
	if len(rest) == 0 {
		if v.blockIndent == 0 {
			v.blockLead = max(v.blockLead, ind)
		}
		return false, true
	}
	if v.blockIndent == 0 {
		if ind > v.blockParent {
			if v.blockLead > ind || rest[0] == '\t' {
				return false, false
			}
			v.blockIndent = ind
			return false, true
		}
		if v.blockLead > v.blockParent {
			return false, false // spaces-only lines then an empty scalar: let the parser judge
		}
		v.inBlock = false
		return true, true
	}
	if ind >= v.blockIndent {
		return false, true
	}
	if ind > v.blockParent || rest[0] == '\t' {
		return false, false // less indented than the content, more than the parent
	}
	v.inBlock = false
	return true, true
}

func (v *validator) push(l valLevel) bool {
	if v.n == maxValidateDepth {
		return false
	}
	v.levels[v.n] = l
	v.n++
	return true
}

func (v *validator) top() *valLevel { return &v.levels[v.n-1] }

// place finds the collection a line at column ind belongs to, opening a
// nested one after a pending key or dash, and closing deeper ones.
func (v *validator) place(ind int, rest []byte) bool {
	if v.pending {
		v.pending = false
		switch {
		case ind > v.pendingIndent:
			if !isSeqEntry(rest) && !startsKey(rest) {
				return false // a scalar on its own line
			}
			return v.push(valLevel{indent: ind, seq: isSeqEntry(rest)})
		case ind == v.pendingIndent && v.pendingKey && isSeqEntry(rest):
			return v.push(valLevel{indent: ind, seq: true, sameIndent: true})
		}
		// Nothing nested: the value was null.
	}
	for v.n > 0 && v.top().indent > ind {
		v.n--
	}
	if v.n == 0 || v.top().indent != ind {
		return false
	}
	t := v.top()
	if t.seq && !isSeqEntry(rest) {
		if !t.sameIndent {
			return false
		}
		v.n--
		t = v.top()
		if t.indent != ind || t.seq {
			return false
		}
	}
	return t.seq == isSeqEntry(rest)
}

// entry reads the content of a line at column col in the innermost open
// collection: a sequence entry or a key and its value.
func (v *validator) entry(col int, rest []byte) bool {
	for {
		if !v.top().seq {
			return v.mapEntry(col, rest)
		}
		// "-" then the entry's content, possibly more entries or a key.
		i := skipSpaces(rest, 1)
		if i == len(rest) || rest[i] == '#' {
			v.pending, v.pendingIndent, v.pendingKey = true, col, false
			return true
		}
		inner := rest[i:]
		icol := col + i
		switch {
		case isSeqEntry(inner):
			if !v.push(valLevel{indent: icol, seq: true}) {
				return false
			}
		case startsKey(inner):
			if !v.push(valLevel{indent: icol}) {
				return false
			}
		default:
			return v.value(inner, col, false)
		}
		col, rest = icol, inner
	}
}

// mapEntry reads "key: value" at column col.
func (v *validator) mapEntry(col int, rest []byte) bool {
	key, after, ok := cutKey(rest)
	if !ok {
		return false
	}
	if v.n == 1 {
		field := -1
		switch string(key) {
		case "apiVersion":
			field = 0
		case "kind":
			field = 1
		case "metadata":
			field = 2
		}
		if field >= 0 {
			if v.rootKeys[field] {
				return false // readObject refuses it: let it say so
			}
			v.rootKeys[field] = true
		}
	}
	return v.value(after, col, true)
}

// startsKey reports whether rest begins with a key the validator reads: a
// plain or simply quoted scalar followed by ": " or ":" at the end.
func startsKey(rest []byte) bool {
	_, _, ok := cutKey(rest)
	return ok
}

// cutKey splits "key: rest" and returns the key's value and what follows
// the colon.
func cutKey(rest []byte) (key, after []byte, ok bool) {
	if len(rest) == 0 {
		return nil, nil, false
	}
	var i int
	switch rest[0] {
	case '"', '\'':
		var end int
		if end, ok = quoted(rest, 0); !ok {
			return nil, nil, false
		}
		if end > 1000 {
			return nil, nil, false // yaml.v3 limits simple keys to 1024 characters
		}
		key = rest[1 : end-1]
		if rest[0] == '"' && bytes.IndexByte(key, '\\') >= 0 || rest[0] == '\'' && bytes.Contains(key, []byte("''")) {
			key = nil // escapes: the value is not the text; never apiVersion
		}
		i = skipSpaces(rest, end)
		if i == len(rest) || rest[i] != ':' {
			return nil, nil, false
		}
	default:
		if !plainStart(rest) {
			return nil, nil, false
		}
		i = -1
		for j := 1; j < len(rest); j++ {
			if rest[j] == ':' && (j+1 == len(rest) || rest[j+1] == ' ') {
				i = j
				break
			}
			if rest[j] == '#' && rest[j-1] == ' ' {
				return nil, nil, false
			}
		}
		if i < 0 || i > 1000 {
			return nil, nil, false
		}
		key = bytes.TrimRight(rest[:i], " ")
	}
	after = rest[i+1:]
	if len(after) > 0 && after[0] != ' ' {
		return nil, nil, false
	}
	return key, after, true
}

// plainStart reports whether a plain scalar may start with rest's first
// characters: not an indicator, except "-", "?" and ":" before a
// non-space.
func plainStart(rest []byte) bool {
	switch rest[0] {
	case '-', '?', ':':
		return len(rest) > 1 && rest[1] != ' '
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ':
		return false
	}
	return true
}

func isSeqEntry(rest []byte) bool {
	return len(rest) > 0 && rest[0] == '-' && (len(rest) == 1 || rest[1] == ' ')
}

// value reads what follows a key's colon or a dash: nothing (a nested
// node may follow), a scalar, a flow collection on this line, or a block
// scalar header. parent is the column of the key or dash.
func (v *validator) value(s []byte, parent int, afterKey bool) bool {
	i := skipSpaces(s, 0)
	if i == len(s) || s[i] == '#' {
		v.pending, v.pendingIndent, v.pendingKey = true, parent, afterKey
		return true
	}
	s = s[i:]
	switch s[0] {
	case '"', '\'':
		end, ok := quoted(s, 0)
		return ok && trailing(s[end:])
	case '[', '{':
		end, ok := flowNode(s, 0, 0)
		return ok && trailing(s[end:])
	case '|', '>':
		for _, c := range s[1:] {
			if c == '+' || c == '-' {
				continue
			}
			if c >= '0' && c <= '9' {
				return false // explicit indentation
			}
			break
		}
		j := 1
		for j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j > 2 || !trailing(s[j:]) {
			return false
		}
		v.inBlock, v.blockParent, v.blockIndent, v.blockLead = true, parent, 0, 0
		return true
	}
	if !plainStart(s) {
		return false
	}
	for j := 1; j < len(s); j++ {
		switch {
		case s[j] == ':' && (j+1 == len(s) || s[j+1] == ' '):
			return false // "a: b: c"
		case s[j] == '#' && s[j-1] == ' ':
			return true
		}
	}
	return true
}

// trailing reports whether s, after a node, holds only spaces and a
// comment.
func trailing(s []byte) bool {
	i := skipSpaces(s, 0)
	return i == len(s) || (s[i] == '#' && i > 0)
}

// quoted reads a quoted scalar that opens at s[i] and closes on the same
// line; end is the index after the closing quote.
func quoted(s []byte, i int) (end int, ok bool) {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case s[j] == q && q == '\'':
			if j+1 < len(s) && s[j+1] == '\'' {
				j++
				continue
			}
			return j + 1, true
		case s[j] == q:
			return j + 1, true
		case s[j] == '\\' && q == '"':
			n, ok := escape(s[j+1:])
			if !ok {
				return 0, false
			}
			j += n
		}
	}
	return 0, false
}

// escape checks the escape after a backslash in a double-quoted scalar and
// returns its length.
func escape(s []byte) (int, bool) {
	if len(s) == 0 {
		return 0, false // a line continuation
	}
	digits := 0
	switch s[0] {
	case '0', 'a', 'b', 't', 'n', 'v', 'f', 'r', 'e', ' ', '"', '/', '\\', 'N', '_', 'L', 'P':
		return 1, true
	case 'x':
		digits = 2
	case 'u':
		digits = 4
	case 'U':
		digits = 8
	default:
		return 0, false
	}
	if len(s) < 1+digits {
		return 0, false
	}
	var r rune
	for _, c := range s[1 : 1+digits] {
		var d rune
		switch {
		case c >= '0' && c <= '9':
			d = rune(c - '0')
		case c >= 'a' && c <= 'f':
			d = rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = rune(c-'A') + 10
		default:
			return 0, false
		}
		r = r<<4 | d
	}
	if r >= 0xD800 && r <= 0xDFFF || r > utf8.MaxRune {
		return 0, false
	}
	return 1 + digits, true
}

// flowNode reads a flow node on one line starting at s[i] (after spaces)
// and returns the index after it. Only plain and quoted scalars, "[...]"
// of nodes and "{...}" of key: value pairs are read.
func flowNode(s []byte, i, depth int) (int, bool) {
	if depth > 32 {
		return 0, false
	}
	i = skipSpaces(s, i)
	if i == len(s) {
		return 0, false
	}
	switch s[i] {
	case '[', '{':
		closer, isMap := byte(']'), s[i] == '{'
		if isMap {
			closer = '}'
		}
		i = skipSpaces(s, i+1)
		if i < len(s) && s[i] == closer {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = flowNode(s, i, depth+1); !ok {
				return 0, false
			}
			i = skipSpaces(s, i)
			if isMap {
				if i+1 >= len(s) || s[i] != ':' || (s[i+1] != ' ' && s[i+1] != ',' && s[i+1] != '}') {
					return 0, false
				}
				i = skipSpaces(s, i+1)
				if i < len(s) && s[i] != ',' && s[i] != '}' {
					if i, ok = flowNode(s, i, depth+1); !ok {
						return 0, false
					}
					i = skipSpaces(s, i)
				}
			}
			if i == len(s) {
				return 0, false
			}
			switch s[i] {
			case ',':
				i = skipSpaces(s, i+1)
				if i == len(s) || s[i] == closer || s[i] == ',' {
					return 0, false // trailing or empty entries: let the parser judge
				}
			case closer:
				return i + 1, true
			default:
				return 0, false
			}
		}
	case '"', '\'':
		return quoted(s, i)
	}
	if !plainStart(s[i:]) {
		return 0, false
	}
	j := i
	for j < len(s) {
		switch c := s[j]; {
		case c == ',' || c == '[' || c == ']' || c == '{' || c == '}' || c == ':':
			return j, j > i
		case c == '#' && j > i && s[j-1] == ' ':
			return 0, false
		case c == ' ':
			k := skipSpaces(s, j)
			if k == len(s) || s[k] == ',' || s[k] == ']' || s[k] == '}' || s[k] == ':' || s[k] == '#' {
				return j, j > i
			}
			j = k
			continue
		}
		j++
	}
	return 0, false // the line ended inside the collection
}

func skipSpaces(s []byte, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}
