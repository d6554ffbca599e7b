package python

import (
	"bytes"
	"strings"
)

// Imports (E401, E402), the redundant backslash (E502), statements
// (E701-E743) and invalid escapes (W605).

// importsOnSeparateLines is E401.
func (c *checker) importsOnSeparateLines(L []byte) {
	if !bytes.HasPrefix(L, []byte("import ")) {
		return
	}
	if found := bytes.IndexByte(L, ','); found >= 0 && bytes.IndexByte(L[:found], ';') < 0 {
		c.reportOff(found, cE401, "multiple imports on one line")
	}
}

// isDunderAssign is DUNDER_REGEX:
// ^__([^\s]+)__(?::\s*[a-zA-Z.0-9_\[\]\"]+)? = .
func (c *checker) isDunderAssign(L []byte) bool {
	if !bytes.HasPrefix(L, []byte("__")) {
		return false
	}
	r := 2
	for r < len(L) && spaceLen(L, r, c.latin1) == 0 {
		r += charLen(L, r, c.latin1)
	}
	annot := func(b byte) bool {
		return isWordByte(b) || b == '.' || b == '[' || b == ']' || b == '"'
	}
	for j := r - 2; j >= 3; j-- {
		if L[j] != '_' || L[j+1] != '_' {
			continue
		}
		a := j + 2
		if a < len(L) && L[a] == ':' {
			b := skipSpace(L, a+1, c.latin1)
			e := b
			for e < len(L) && annot(L[e]) {
				e++
			}
			if e > b && bytes.HasPrefix(L[e:], []byte(" = ")) {
				return true
			}
		}
		if bytes.HasPrefix(L[a:], []byte(" = ")) {
			return true
		}
	}
	return false
}

// moduleImportsOnTop is E402.
func (c *checker) moduleImportsOnTop(L []byte) {
	if c.indentLevel != 0 || len(L) == 0 || c.logicalNoqa {
		return
	}
	if bytes.HasPrefix(L, []byte("import ")) || bytes.HasPrefix(L, []byte("from ")) {
		if c.seenNonImports {
			c.reportOff(0, cE402, "module level import not at top of file")
		}
		return
	}
	if c.isDunderAssign(L) {
		return
	}
	for _, kw := range []string{"try", "except", "else", "finally", "with", "if", "elif"} {
		if bytes.HasPrefix(L, []byte(kw)) {
			return
		}
	}
	s := L
	if strings.IndexByte("uUbB", s[0]) >= 0 {
		s = s[1:]
	}
	if len(s) > 0 && (s[0] == 'r' || s[0] == 'R') {
		s = s[1:]
	}
	if len(s) > 0 && (s[0] == '"' || s[0] == '\'') {
		if c.seenDocstring {
			c.seenNonImports = true
		} else {
			c.seenDocstring = true
		}
		return
	}
	c.seenNonImports = true
}

// startsIndentStatement is STARTSWITH_INDENT_STATEMENT_REGEX.
func (c *checker) startsIndentStatement(L []byte) bool {
	s := skipSpace(L, 0, c.latin1)
	n := wordLen(L, s, c.latin1)
	switch string(L[s : s+n]) {
	case "def", "for", "if", "elif", "else", "try", "except", "finally", "with", "class", "while":
		return true
	case "async":
		j := skipSpace(L, s+n, c.latin1)
		if j == s+n {
			return false
		}
		m := wordLen(L, j, c.latin1)
		switch string(L[j : j+m]) {
		case "def", "for", "with":
			return true
		}
	}
	return false
}

// findLambda is LAMBDA_REGEX.search(line): the first \blambda\b, or -1.
// As the character after the match is not a word character, the match
// also ends a search of line[:end] for every end past it.
func (c *checker) findLambda(L []byte) int {
	for i := 0; ; {
		j := bytes.Index(L[i:], []byte("lambda"))
		if j < 0 {
			return -1
		}
		j += i
		if !isWordBefore(L, j, c.latin1) && !isWordAt(L, j+6, c.latin1) {
			return j
		}
		i = j + 1
	}
}

// compoundStatements is E701-E704 and E731. What pycodestyle recomputes
// at every colon (the first lambda before it, the statement's start) is
// computed once, so a line of many colons costs its length.
func (c *checker) compoundStatements(L []byte) {
	last := len(L) - 1
	found := bytes.IndexByte(L, ':')
	prevFound := 0
	var braces, brackets, parens int // opened minus closed
	lam, start := -2, -1             // not computed yet
	for found > -1 && found < last {
		for _, ch := range L[prevFound:found] {
			switch ch {
			case '{':
				braces++
			case '}':
				braces--
			case '[':
				brackets++
			case ']':
				brackets--
			case '(':
				parens++
			case ')':
				parens--
			}
		}
		if braces <= 0 && brackets <= 0 && parens <= 0 && L[found+1] != '=' {
			if lam == -2 {
				lam = c.findLambda(L)
			}
			if lam >= 0 && lam+6 <= found {
				before := rstripSpace(L[:lam], c.latin1)
				if len(before) > 0 && before[len(before)-1] == '=' && isIdentifier(c.stripSpace(before[:len(before)-1]), c.latin1) {
					c.reportOff(0, cE731, "do not assign a lambda expression, use a def")
				}
				break
			}
			if start < 0 {
				start = 0
				if c.startsDef(L) {
					start = 1
				} else if c.startsIndentStatement(L) {
					start = 2
				}
			}
			switch start {
			case 1:
				c.reportOff(0, cE704, "multiple statements on one line (def)")
			case 2:
				c.reportOff(found, cE701, "multiple statements on one line (colon)")
			}
		}
		prevFound = found
		if next := bytes.IndexByte(L[found+1:], ':'); next >= 0 {
			found += 1 + next
		} else {
			found = -1
		}
	}
	for i, ch := range L {
		if ch != ';' {
			continue
		}
		if i < last {
			c.reportOff(i, cE702, "multiple statements on one line (semicolon)")
		} else {
			c.reportOff(i, cE703, "statement ends with a semicolon")
		}
	}
}

// isSplitlinesBreak reports the characters str.splitlines splits on.
func isSplitlinesBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// explicitLineJoin is E502.
func (c *checker) explicitLineJoin(ts []token) {
	if ts[0].sr == ts[len(ts)-1].er {
		return // a backslash continuation spans rows
	}
	var prevStart, prevEnd int32
	parens := 0
	comment := false
	hasBackslash := false
	var bsRow int32
	var bsCol int
	for i := range ts {
		t := &ts[i]
		if t.kind == kComment {
			comment = true
		}
		if t.sr != prevStart && parens != 0 && hasBackslash && !comment {
			c.reportChar(int(bsRow), bsCol, cE502, "the backslash is redundant between brackets")
		}
		if t.er != prevEnd {
			line := c.tokLine(t)
			st := bytes.TrimRight(line, "\r\n")
			if len(st) > 0 && st[len(st)-1] == '\\' {
				seg := line
				if n := len(seg); n > 0 && seg[n-1] == '\n' {
					seg = seg[:n-1]
				}
				for j := len(seg); j > 0; {
					r, n := charBefore(seg, j, c.latin1)
					if isSplitlinesBreak(r) {
						seg = seg[j:]
						break
					}
					j -= n
				}
				hasBackslash, bsRow, bsCol = true, t.er, nchars(seg, c.latin1)-1
			} else {
				hasBackslash = false
			}
			prevStart, prevEnd = t.er, t.er
		} else {
			prevStart = t.sr
		}
		if t.kind == kOp {
			switch c.src[t.off] {
			case '(', '[', '{':
				parens++
			case ')', ']', '}':
				parens--
			}
		}
	}
}

var singletons = [...]string{"None", "False", "True"}

// singletonAt returns the singleton L[i:] starts with, if any.
func singletonAt(L []byte, i int) string {
	if i >= len(L) || (L[i] != 'N' && L[i] != 'F' && L[i] != 'T') {
		return ""
	}
	for _, s := range singletons {
		if len(L)-i >= len(s) && string(L[i:i+len(s)]) == s {
			return s
		}
	}
	return ""
}

// isBoundary is \b at i.
func (c *checker) isBoundary(L []byte, i int) bool {
	return isWordBefore(L, i, c.latin1) != isWordAt(L, i, c.latin1)
}

// comparisonToSingleton is E711/E712, COMPARE_SINGLETON_REGEX =
// (\bNone|\bFalse|\bTrue)?\s*([=!]=)\s*(?(1)|(None|False|True))\b.
func (c *checker) comparisonToSingleton(L []byte) {
	if !bytes.Contains(L, []byte("==")) && !bytes.Contains(L, []byte("!=")) {
		return // the regex needs one of the operators
	}
	isCmp := func(i int) bool {
		return i+1 < len(L) && (L[i] == '=' || L[i] == '!') && L[i+1] == '='
	}
	for p := 0; p < len(L); {
		single, op, end := "", -1, -1
		// With the first group: a singleton before the operator.
		if s := singletonAt(L, p); s != "" && !isWordBefore(L, p, c.latin1) {
			if q := skipSpace(L, p+len(s), c.latin1); isCmp(q) {
				r := skipSpace(L, q+2, c.latin1)
				for e := r; e >= q+2; e-- {
					if c.isBoundary(L, e) {
						single, op, end = s, q, e
						break
					}
				}
			}
		}
		// Without it: a singleton after the operator.
		q := p
		if end < 0 {
			if q = skipSpace(L, p, c.latin1); isCmp(q) {
				r := skipSpace(L, q+2, c.latin1)
				if s := singletonAt(L, r); s != "" && !isWordAt(L, r+len(s), c.latin1) {
					single, op, end = s, q, r+len(s)
				}
			}
		}
		if end < 0 {
			if q > p {
				// Starts inside a run of whitespace fail alike (see
				// whitespaceAroundKeywords).
				p = q
				continue
			}
			p += charLen(L, p, c.latin1)
			continue
		}
		same := L[op] == '='
		not := "not "
		if same {
			not = ""
		}
		msg := "'if cond is " + not + single + ":'"
		k := cE711
		if single != "None" {
			k = cE712
			nonzero := (single == "True" && same) || (single == "False" && !same)
			if nonzero {
				msg += " or 'if cond:'"
			} else {
				msg += " or 'if not cond:'"
			}
		}
		c.reportOff(op, k, "comparison to "+single+" should be "+msg)
		if end <= p {
			end = p + 1
		}
		p = end
	}
}

// comparisonNegative is E713/E714, COMPARE_NEGATIVE_REGEX =
// \b(?<!is\s)(not)\s+[^][)(}{ ]+\s+(in|is)\s (first match only).
func (c *checker) comparisonNegative(L []byte) {
	for i := 0; ; {
		j := bytes.Index(L[i:], []byte("not"))
		if j < 0 {
			return
		}
		p := i + j
		i = p + 1
		if isWordBefore(L, p, c.latin1) {
			continue
		}
		if p > 0 {
			if r, n := charBefore(L, p, c.latin1); isPySpace(r) && p-n >= 2 && string(L[p-n-2:p-n]) == "is" {
				continue
			}
		}
		if op := c.negativeTail(L, p+3); op != "" {
			if op == "in" {
				c.reportOff(p, cE713, "test for membership should be 'not in'")
			} else {
				c.reportOff(p, cE714, "test for object identity should be 'is not'")
			}
			return
		}
	}
}

// isNegClass is the class [^][)(}{ ] of COMPARE_NEGATIVE_REGEX.
func isNegClass(b byte) bool { return strings.IndexByte("][)(}{ ", b) < 0 }

// negativeTail matches \s+[^][)(}{ ]+\s+(in|is)\s at i, with the regex's
// backtracking order, and returns the operator.
func (c *checker) negativeTail(L []byte, i int) string {
	j := skipSpace(L, i, c.latin1)
	for k := j; k > i; {
		m := k
		for m < len(L) && isNegClass(L[m]) {
			m++
		}
		for e := m; e > k; e-- {
			f := skipSpace(L, e, c.latin1)
			for g := f; g > e; g-- {
				if g+2 < len(L) && L[g] == 'i' && (L[g+1] == 'n' || L[g+1] == 's') && spaceLen(L, g+2, c.latin1) > 0 {
					return string(L[g : g+2])
				}
			}
		}
		_, n := charBefore(L, k, c.latin1)
		k -= n
	}
	return ""
}

// comparisonType is E721, COMPARE_TYPE_REGEX = (?:[=!]=|is(?:\s+not)?)\s+
// type(?:s.\w+Type|\s*\(\s*([^)]*[^ )])\s*\)) (first match only).
func (c *checker) comparisonType(L []byte) {
	if !bytes.Contains(L, []byte("type")) {
		return
	}
	var close nextMatch
	for p := 0; p+1 < len(L); p++ {
		var ok bool
		var inst []byte
		switch {
		case (L[p] == '=' || L[p] == '!') && L[p+1] == '=':
			ok, inst = c.typeTail(L, p+2, &close)
		case L[p] == 'i' && L[p+1] == 's':
			if k := skipSpace(L, p+2, c.latin1); k > p+2 && bytes.HasPrefix(L[k:], []byte("not")) {
				ok, inst = c.typeTail(L, k+3, &close)
			}
			if !ok {
				ok, inst = c.typeTail(L, p+2, &close)
			}
		}
		if !ok {
			continue
		}
		if inst != nil && isIdentifier(inst, c.latin1) {
			switch string(inst) {
			case "None", "False", "True":
			default:
				return
			}
		}
		c.reportOff(p, cE721, "do not compare types, use 'isinstance()'")
		return
	}
}

// typeTail matches \s+type(?:s.\w+Type|\s*\(\s*([^)]*[^ )])\s*\)) at i.
func (c *checker) typeTail(L []byte, i int, close *nextMatch) (bool, []byte) {
	s := skipSpace(L, i, c.latin1)
	if s == i || !bytes.HasPrefix(L[s:], []byte("type")) {
		return false, nil
	}
	u := s + 4
	if u+1 < len(L) && L[u] == 's' && L[u+1] != '\n' {
		v := u + 1 + charLen(L, u+1, c.latin1)
		w := wordLen(L, v, c.latin1)
		if t := bytes.Index(L[v+1:v+w], []byte("Type")); w > 0 && t >= 0 && v+1+t+4 <= v+w {
			return true, nil
		}
	}
	s2 := skipSpace(L, u, c.latin1)
	if s2 >= len(L) || L[s2] != '(' {
		return false, nil
	}
	s3 := skipSpace(L, s2+1, c.latin1)
	cp := close.find(s3, func(i int) int {
		if j := bytes.IndexByte(L[i:], ')'); j >= 0 {
			return i + j
		}
		return -1
	})
	if cp < 0 {
		return false, nil
	}
	g := bytes.TrimRight(L[s3:cp], " ")
	if len(g) == 0 {
		return false, nil
	}
	return true, g
}

// bareExcept is E722, BLANK_EXCEPT_REGEX = except\s*: at the start.
func (c *checker) bareExcept(L []byte) {
	if !bytes.HasPrefix(L, []byte("except")) {
		return
	}
	if j := skipSpace(L, 6, c.latin1); j < len(L) && L[j] == ':' {
		c.reportOff(0, cE722, "do not use bare 'except'")
	}
}

// isAmbiguous reports the names E741-E743 look for: l, O and I.
func isAmbiguous(s []byte) bool {
	return len(s) == 1 && (s[0] == 'l' || s[0] == 'O' || s[0] == 'I')
}

// ambiguousIdentifier is E741/E742/E743.
func (c *checker) ambiguousIdentifier(ts []token) {
	// Nothing can be reported unless some token is l, O or I.
	found := false
	for i := range ts {
		if t := &ts[i]; t.end-t.off == 1 && t.kind == kName && isAmbiguous(c.src[t.off:t.end]) {
			found = true
			break
		}
	}
	if !found {
		return
	}
	funcDepth, inFunc := 0, false // func_depth, and whether it is not None
	seenColon := false
	braceDepth := 0
	prevText := c.text(&ts[0])
	prevRow, prevCol := ts[0].sr, ts[0].sc
	for i := 1; i < len(ts); i++ {
		t := &ts[i]
		text := c.text(t)
		var ident []byte
		var identRow, identCol int32
		switch string(prevText) {
		case "def", "lambda":
			funcDepth, inFunc, seenColon = braceDepth, true, false
		default:
			if inFunc && string(text) == ":" && braceDepth == funcDepth {
				seenColon = true
			}
		}
		if pyIn(text, "([{") {
			braceDepth++
		} else if pyIn(text, ")]}") {
			braceDepth--
		}
		if string(text) == ":=" || (string(text) == "=" && braceDepth == 0) {
			if isAmbiguous(prevText) {
				ident, identRow, identCol = prevText, prevRow, prevCol
			}
		}
		switch string(prevText) {
		case "as", "for", "global", "nonlocal":
			if isAmbiguous(text) {
				ident, identRow, identCol = text, t.sr, t.sc
			}
		}
		if inFunc && !seenColon && i < len(ts)-1 && pyIn(c.text(&ts[i+1]), ":,=)") && isAmbiguous(text) {
			switch string(prevText) {
			case "lambda", ",", "*", "**", "(":
				ident, identRow, identCol = text, t.sr, t.sc
			}
		}
		if string(prevText) == "class" && isAmbiguous(text) {
			c.report(int(t.sr), int(t.sc), cE742, "ambiguous class definition '"+string(text)+"'")
		}
		if string(prevText) == "def" && isAmbiguous(text) {
			c.report(int(t.sr), int(t.sc), cE743, "ambiguous function definition '"+string(text)+"'")
		}
		if ident != nil {
			c.report(int(identRow), int(identCol), cE741, "ambiguous variable name '"+string(ident)+"'")
		}
		prevText, prevRow, prevCol = text, t.sr, t.sc
	}
}

// validEscape reports the characters W605 accepts after a backslash.
func validEscape(r rune) bool {
	switch r {
	case '\n', '\\', '\'', '"', 'a', 'b', 'f', 'n', 'r', 't', 'v', 'x', 'N', 'u', 'U':
		return true
	}
	return '0' <= r && r <= '7'
}

// invalidEscapeSequence is W605.
func (c *checker) invalidEscapeSequence(ts []token) {
	for i := range ts {
		t := &ts[i]
		if t.kind != kString {
			continue
		}
		text := c.text(t)
		if len(text) < 2 || bytes.IndexByte(text, '\\') < 0 {
			continue
		}
		quote := text[len(text)-1:]
		if n := len(text); n >= 3 && (string(text[n-3:]) == `"""` || string(text[n-3:]) == "'''") {
			quote = text[n-3:]
		}
		qpos := bytes.Index(text, quote)
		prefix := text[:qpos]
		if bytes.IndexByte(prefix, 'r') >= 0 || bytes.IndexByte(prefix, 'R') >= 0 {
			continue
		}
		start := qpos + len(quote)
		if start > len(text)-len(quote) {
			continue
		}
		s := text[start : len(text)-len(quote)]
		pos := bytes.IndexByte(s, '\\')
		// The newlines before pos are counted as pos advances, not from
		// the start of the string for every escape.
		nl, lastNL, counted := 0, -1, 0
		for pos >= 0 {
			pos++
			if pos >= len(s) {
				break
			}
			if r, _ := charAt(s, pos, c.latin1); !validEscape(r) {
				for {
					i := bytes.IndexByte(s[counted:pos], '\n')
					if i < 0 {
						break
					}
					nl, lastNL, counted = nl+1, counted+i, counted+i+1
				}
				counted = pos
				row := int(t.sr) + nl
				var col int
				if nl == 0 {
					col = int(t.sc) + len(prefix) + len(quote) + pos
				} else {
					col = pos - lastNL - 1
				}
				c.report(row, col-1, cW605, "invalid escape sequence '\\"+string(r)+"'")
			}
			next := bytes.IndexByte(s[pos+1:], '\\')
			if next < 0 {
				break
			}
			pos += 1 + next
		}
	}
}

// asyncAwaitKeywords is python_3000_async_await_keywords (W606): async and
// await where they cannot be the keywords.
func (c *checker) asyncAwaitKeywords(ts []token) {
	const (
		none = iota
		asyncStmt
		await
		define
	)
	state := none
	var sr, sc int32
	for i := range ts {
		t := &ts[i]
		if t.kind == kNL {
			continue
		}
		text := c.text(t)
		isName := t.kind == kName
		failed := false
		switch state {
		case none:
			if isName {
				switch string(text) {
				case "async":
					state = asyncStmt
				case "await":
					state = await
				case "def", "for":
					state = define
				}
				sr, sc = t.sr, t.sc
			}
		case asyncStmt:
			if isName && (string(text) == "def" || string(text) == "with" || string(text) == "for") {
				state = none
			} else {
				failed = true
			}
		case await:
			if isName || (t.kind == kOp && string(text) == "(") {
				state = none
			} else {
				failed = true
			}
		case define:
			if isName && (string(text) == "async" || string(text) == "await") {
				failed = true
			} else {
				state = none
			}
		}
		if failed {
			c.report(int(sr), int(sc), cW606, "'async' and 'await' are reserved keywords starting with Python 3.7")
			state = none
		}
	}
	if state != none {
		c.report(int(sr), int(sc), cW606, "'async' and 'await' are reserved keywords starting with Python 3.7")
	}
}
