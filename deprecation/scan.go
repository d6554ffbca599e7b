package deprecation

import "bytes"

// This file holds the pre-scanner: it splits a YAML or JSON stream into
// documents and reads each document's top-level apiVersion and kind
// without parsing it, so that only documents a rule can match are handed
// to the YAML parser. It works on bytes and allocates nothing.
//
// The scanner is conservative: whenever a document is written in a way it
// does not fully understand (anchors, tags, escapes, block scalars, values
// on the next line, unquoted flow keys, duplicate keys...), it marks the
// document ambiguous and the checker parses it fully. It never guesses.

// document is one document of a stream.
type document struct {
	data []byte // the document's text
	line int    // 1-based line of its first non-blank, non-comment line
	// apiVersion and kind are the top-level values; nil when absent.
	apiVersion, kind []byte
	// ambiguous is set when the pre-scan could not decide; the document
	// must then be parsed fully.
	ambiguous bool
	// inline is set when the content starts on the "---" line.
	inline bool
}

// scanner yields the documents of a stream. The zero value is not ready:
// use newScanner.
type scanner struct {
	data []byte
	pos  int // start of the text not yet scanned
	line int // 1-based line number at pos
}

func newScanner(data []byte) *scanner {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // UTF-8 byte order mark
	return &scanner{data: data, line: 1}
}

// next returns the next document that has content; ok is false at the end
// of the stream.
func (s *scanner) next() (doc document, ok bool) {
	indented, ok := s.skipToContent()
	if !ok {
		return document{}, false
	}
	doc.line = s.line
	// Content on the "---" line ("--- a: b", "--- |") is a form the
	// scanner does not read.
	doc.inline = !indented && s.pos > 0 && s.data[s.pos-1] != '\n'
	if s.data[s.pos] == '{' {
		s.scanJSON(&doc)
	} else {
		// A root mapping may be indented as a whole; the scanner only
		// reads keys at column 0, so the parser must read it, from the
		// start of its line.
		if indented {
			doc.ambiguous = true
			s.pos = bytes.LastIndexByte(s.data[:s.pos], '\n') + 1
		}
		doc.ambiguous = doc.ambiguous || doc.inline
		s.scanBlock(&doc)
	}
	return doc, true
}

// skipToContent moves pos to the first byte of the next document's
// content, skipping blank lines, comments, directives and document
// markers. pos may be in the middle of a line (after "---"). It reports
// whether the content is indented on its line, and false at the end of the
// stream.
func (s *scanner) skipToContent() (indented, ok bool) {
	d := s.data
	lineStart := s.pos == 0 || d[s.pos-1] == '\n'
	for s.pos < len(d) {
		if lineStart && (d[s.pos] == '%' || isMarker(d, s.pos, '.')) {
			s.skipLine() // directive, or "..." document end marker
			continue
		}
		if lineStart && isMarker(d, s.pos, '-') {
			s.pos += 3
			lineStart, indented = false, false
			continue
		}
		switch c := d[s.pos]; c {
		case ' ', '\t', '\r':
			s.pos++
			indented = indented || (lineStart && c != '\r')
			lineStart = false
		case '\n':
			s.pos++
			s.line++
			lineStart, indented = true, false
		case '#':
			s.skipLine()
			lineStart, indented = true, false
		default:
			return indented, true
		}
	}
	return false, false
}

// skipLine moves pos past the end of the current line.
func (s *scanner) skipLine() {
	i := bytes.IndexByte(s.data[s.pos:], '\n')
	if i < 0 {
		s.pos = len(s.data)
		return
	}
	s.pos += i + 1
	s.line++
}

// isMarker reports whether d[i:] starts with a document marker line:
// three c ("---" or "...") followed by white space or the end.
func isMarker(d []byte, i int, c byte) bool {
	if len(d)-i < 3 || d[i] != c || d[i+1] != c || d[i+2] != c {
		return false
	}
	return len(d)-i == 3 || isSpace(d[i+3])
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// scanBlock scans a block-style YAML document starting at pos and leaves
// pos at the start of the line that ends it ("---", "..." or the end).
func (s *scanner) scanBlock(doc *document) {
	d := s.data
	start := s.pos
	// pending is set just after a top-level apiVersion or kind line: an
	// indented line right after it would continue its plain value.
	pending := false
	for s.pos < len(d) {
		lineStart := s.pos
		if lineStart > start && (isMarker(d, lineStart, '-') || isMarker(d, lineStart, '.')) {
			break
		}
		if !pending && (doc.ambiguous || (doc.apiVersion != nil && doc.kind != nil)) {
			// Decided: the rest of the document is not read.
			s.skipToMarker()
			break
		}
		end := bytes.IndexByte(d[lineStart:], '\n')
		if end < 0 {
			end = len(d)
			s.pos = len(d)
		} else {
			end += lineStart
			s.pos = end + 1
			s.line++
		}
		line := bytes.TrimSuffix(d[lineStart:end], []byte{'\r'})
		if pending && isContinuation(line) {
			doc.ambiguous = true
		}
		pending = false
		if len(line) == 0 {
			continue
		}
		switch line[0] {
		case '#':
			continue
		case ' ', '\t', '-':
			// Nested content, or an item of a top-level key's sequence
			// written at column 0. A quoted scalar or flow collection it
			// leaves open may go on over lines at column 0 that read as
			// keys: the parser must judge.
			if nestedOpen(line) {
				doc.ambiguous = true
			}
			continue
		case '&', '!', '?', '*', '|', '>', '{', '[', '@', '`':
			// Anchor, tag, complex key, alias or block scalar on the root,
			// or a flow collection: leave it to the parser.
			doc.ambiguous = true
			continue
		}
		key, val, ok, open := splitTopLevel(line)
		if !ok {
			continue
		}
		if key == nil || open {
			// A key the scanner cannot read, or a value that may go on
			// over the next lines (a quoted scalar or flow collection left
			// open, where "kind: x" at column 0 is text, not a key).
			doc.ambiguous = true
			if key == nil {
				continue
			}
		}
		if setTopLevel(doc, key, val) {
			pending = true
		}
	}
	doc.data = d[start:s.pos]
}

// skipToMarker moves pos, at the start of a line, to the start of the next
// document marker line ("---" or "...") or to the end, counting lines.
func (s *scanner) skipToMarker() {
	d := s.data
	from := s.pos
	for {
		next := len(d)
		if i := bytes.Index(d[s.pos:], dashMarker); i >= 0 {
			next = s.pos + i + 1
		}
		// A "..." marker can only matter before the next "---"; searching
		// just that far keeps the scan linear.
		if j := bytes.Index(d[s.pos:next], dotMarker); j >= 0 {
			next = s.pos + j + 1
		}
		s.pos = next
		if next == len(d) || isMarker(d, next, '-') || isMarker(d, next, '.') {
			break
		}
	}
	s.line += bytes.Count(d[from:s.pos], newline)
}

var (
	dashMarker = []byte("\n---")
	dotMarker  = []byte("\n...")
	newline    = []byte{'\n'}
)

// isContinuation reports whether line, following a plain top-level value,
// continues it: an indented line that is neither blank nor a comment.
func isContinuation(line []byte) bool {
	if len(line) == 0 || (line[0] != ' ' && line[0] != '\t') {
		return false
	}
	t := bytes.TrimLeft(line, " \t")
	return len(t) > 0 && t[0] != '#'
}

// splitTopLevel splits a column-0 line "key: value"; ok is false for a
// line that is not a key. key is nil for a quoted key the scanner cannot
// read (escapes, or an unterminated quote). val is nil when the value is
// empty, on the next line, or written in a form the scanner does not read
// (anchors, tags, escapes, block scalars, flow collections). open is set
// when the value may continue on the next lines or is not one the scanner
// understands: a quoted scalar or flow collection not closed on this line,
// an anchor, tag or alias, or a character that cannot start a value.
func splitTopLevel(line []byte) (key, val []byte, ok, open bool) {
	var rest []byte
	switch line[0] {
	case '"', '\'':
		k, r, closed := cutQuoted(line)
		if !closed {
			return nil, nil, true, true // a key the scanner cannot read
		}
		key, rest = k, bytes.TrimLeft(r, " \t")
		if len(rest) == 0 || rest[0] != ':' {
			return nil, nil, false, false
		}
		rest = rest[1:]
	default:
		i := indexColon(line)
		if i < 0 {
			return nil, nil, false, false
		}
		key, rest = bytes.TrimRight(line[:i], " \t"), line[i+1:]
	}
	if len(rest) > 0 && rest[0] != ' ' && rest[0] != '\t' {
		return nil, nil, false, false
	}
	rest = bytes.TrimLeft(rest, " \t")
	if len(rest) == 0 || rest[0] == '#' {
		return key, nil, true, false
	}
	switch rest[0] {
	case '"', '\'':
		v, r, closed := cutQuoted(rest)
		if !closed {
			// Escapes (read by the parser) or a scalar left open.
			return key, nil, true, valueOpen(rest)
		}
		r = bytes.TrimLeft(r, " \t")
		if len(r) > 0 && r[0] != '#' {
			return key, nil, true, true
		}
		return key, v, true, false
	case '|', '>':
		// A block scalar's lines are indented: column-0 lines end it.
		return key, nil, true, false
	case '{', '[', '&', '*', '!', '@', '`', '%', ',', ']', '}':
		return key, nil, true, valueOpen(rest)
	case '?', '-':
		if len(rest) == 1 || rest[1] == ' ' || rest[1] == '\t' {
			return key, nil, true, true
		}
	}
	// Plain scalar: up to a comment (" #") or the end of the line.
	end := len(rest)
	for i := 1; i < len(rest); i++ {
		if rest[i] == '#' && (rest[i-1] == ' ' || rest[i-1] == '\t') {
			end = i
			break
		}
	}
	return key, bytes.TrimRight(rest[:end], " \t"), true, false
}

// nestedOpen reports whether a nested line ("  key: value", "- item")
// leaves a quoted scalar or flow collection open, or holds a value the
// scanner does not read (an anchor, tag or alias before it).
func nestedOpen(line []byte) bool {
	t := bytes.TrimLeft(line, " \t")
	for len(t) > 0 && t[0] == '-' && (len(t) == 1 || t[1] == ' ' || t[1] == '\t') {
		t = bytes.TrimLeft(t[1:], " \t")
	}
	if len(t) == 0 || t[0] == '#' {
		return false
	}
	val := t
	switch t[0] {
	case '"', '\'':
		end, closed := quoted(t, 0)
		if !closed {
			return true
		}
		rest := bytes.TrimLeft(t[end:], " \t")
		if len(rest) == 0 || rest[0] != ':' {
			return !trailing(rest)
		}
		val = rest[1:]
	default:
		if i := indexColon(t); i >= 0 {
			val = t[i+1:]
		} else {
			return false // a plain scalar item
		}
	}
	return valueOpen(bytes.TrimLeft(val, " \t"))
}

// valueOpen reports whether a value, on the line of its key, may go on
// over the next lines or is in a form the scanner does not read.
func valueOpen(val []byte) bool {
	if len(val) == 0 || val[0] == '#' {
		return false
	}
	switch val[0] {
	case '"', '\'':
		end, closed := quoted(val, 0)
		return !closed || !trailing(val[end:])
	case '{', '[':
		end, closed := flowNode(val, 0, 0)
		return !closed || !trailing(val[end:])
	case '&', '*', '!', '@', '`', '%', ',', ']', '}':
		return true
	}
	return false
}

// indexColon returns the index of the ':' that ends a plain key: the first
// ':' followed by white space or the end of the line.
func indexColon(line []byte) int {
	for i := 0; i < len(line); i++ {
		if line[i] == ':' && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t') {
			return i
		}
		if line[i] == '#' && i > 0 && (line[i-1] == ' ' || line[i-1] == '\t') {
			return -1 // comment before any key
		}
	}
	return -1
}

// cutQuoted reads a single- or double-quoted scalar at the start of b. It
// reports closed=false for an unterminated scalar or one with escapes
// (backslashes in double quotes, doubled quotes in single quotes), which the scanner
// leaves to the parser.
func cutQuoted(b []byte) (val, rest []byte, closed bool) {
	q := b[0]
	i := bytes.IndexByte(b[1:], q)
	if i < 0 {
		return nil, nil, false
	}
	val, rest = b[1:1+i], b[2+i:]
	if q == '"' && bytes.IndexByte(val, '\\') >= 0 {
		return nil, nil, false
	}
	if q == '\'' && len(rest) > 0 && rest[0] == '\'' {
		return nil, nil, false
	}
	return val, rest, true
}

// scanJSON scans a document that starts with '{': a JSON object (or a YAML
// flow mapping). It reads the object's top-level "apiVersion" and "kind"
// and ends the document at the closing brace, so a stream of concatenated
// JSON objects yields one document per object. Anything that is not plain
// JSON makes the document ambiguous and extends it to the next "---".
func (s *scanner) scanJSON(doc *document) {
	d := s.data
	start := s.pos
	depth := 0
	expectKey := false // at depth 1, the next string is a key
	var key []byte     // the depth-1 key whose value comes next
	i := s.pos
	line := s.line
loop:
	for i < len(d) {
		c := d[i]
		switch c {
		case '\n':
			line++
			i++
			if depth > 0 && (isMarker(d, i, '-') || isMarker(d, i, '.')) {
				break loop // unterminated object before the next document
			}
			continue
		case ' ', '\t', '\r':
			i++
			continue
		case '"':
			j, escaped, ok := endOfJSONString(d, i)
			if !ok {
				break loop
			}
			str := d[i+1 : j]
			i = j + 1
			if depth != 1 {
				continue
			}
			if expectKey {
				key, expectKey = str, false
				continue
			}
			if key != nil {
				if escaped {
					str = nil
				}
				setTopLevel(doc, key, str)
				key = nil
			}
			continue
		case '{', '[':
			depth++
			if depth == 1 {
				expectKey = true
			} else if depth == 2 && key != nil {
				setTopLevel(doc, key, nil) // non-string apiVersion or kind
				key = nil
			}
		case '}', ']':
			depth--
			if depth == 0 {
				i++
				s.line = line
				s.pos = i
				doc.data = d[start:i]
				return
			}
		case ',':
			if depth == 1 {
				expectKey = true
				key = nil
			}
		case ':':
		case '#', '\'':
			break loop // not JSON
		default:
			if depth == 1 {
				if expectKey {
					break loop // unquoted key: a YAML flow mapping
				}
				if key != nil {
					setTopLevel(doc, key, nil) // number, true, null...
					key = nil
				}
			}
		}
		i++
	}
	// Not a well-formed JSON object: let the parser judge the whole
	// document, up to the next document marker.
	doc.ambiguous = true
	s.pos, s.line = start, doc.line
	s.skipToMarker()
	doc.data = d[start:s.pos]
}

// setTopLevel records val for key if key is apiVersion or kind, and
// reports whether it was one of them. val nil stands for a value the
// scanner cannot read (not a plain or simply quoted string); it and a
// duplicate key make the document ambiguous.
func setTopLevel(doc *document, key, val []byte) bool {
	var dst *[]byte
	switch string(key) {
	case "apiVersion":
		dst = &doc.apiVersion
	case "kind":
		dst = &doc.kind
	default:
		return false
	}
	if *dst != nil || val == nil {
		doc.ambiguous = true
		return true
	}
	*dst = val
	return true
}

// endOfJSONString returns the index of the quote closing the JSON string
// that starts at d[i], and whether it contains escapes. ok is false for a
// string not closed on its line.
func endOfJSONString(d []byte, i int) (end int, escaped, ok bool) {
	for j := i + 1; j < len(d); j++ {
		switch d[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j, escaped, true
		case '\n':
			return 0, false, false
		}
	}
	return 0, false, false
}
