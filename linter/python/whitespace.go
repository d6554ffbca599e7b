package python

import (
	"bytes"
	"strings"
)

// Whitespace checks: E201-E275.

// extraneousWhitespace is E201/E202/E203, EXTRANEOUS_WHITESPACE_REGEX =
// [\[({][ \t]|[ \t][\]}),;:](?!=).
func (c *checker) extraneousWhitespace(L []byte) {
	for p := 0; p+1 < len(L); {
		a, b := L[p], L[p+1]
		if !ewStart[a] {
			p++
			continue
		}
		switch a {
		case '[', '(', '{':
			if b == ' ' || b == '\t' {
				c.reportOff(p+1, cE201, "whitespace after '"+string(a)+"'")
				p += 2
				continue
			}
		case ' ', '\t':
			switch b {
			case ']', '}', ')', ',', ';', ':':
				if p+2 < len(L) && L[p+2] == '=' {
					break
				}
				prev := L[len(L)-1]
				if p > 0 {
					prev = L[p-1]
				}
				if prev != ',' {
					k := cE203
					if b == '}' || b == ']' || b == ')' {
						k = cE202
					}
					c.reportOff(p, k, "whitespace before '"+string(b)+"'")
				}
				p += 2
				continue
			}
		}
		p++
	}
}

// ewStart marks the characters an E201/E202/E203 match starts with, and
// e231Char those missingWhitespace looks at: table lookups let the loops
// skip the other characters cheaply.
var ewStart, e231Char = [256]bool{'[': true, '(': true, '{': true, ' ': true, '\t': true},
	[256]bool{',': true, ';': true, ':': true, '[': true, ']': true, '{': true}

// whitespaceAroundKeywords is E271-E274, KEYWORD_REGEX =
// (\s*)\b(?:KEYWORDS)\b(\s*).
func (c *checker) whitespaceAroundKeywords(L []byte) {
	for p := 0; p < len(L); {
		k := skipSpace(L, p, c.latin1)
		if k < len(L) && (k > p || !isWordBefore(L, p, c.latin1)) {
			if n := wordLen(L, k, c.latin1); n > 0 && isPycodestyleKeyword(L[k:k+n]) {
				end := k + n
				after := skipSpace(L, end, c.latin1)
				before, aft := L[p:k], L[end:after]
				if bytes.IndexByte(before, '\t') >= 0 {
					c.reportOff(p, cE274, "tab before keyword")
				} else if nchars(before, c.latin1) > 1 {
					c.reportOff(p, cE272, "multiple spaces before keyword")
				}
				if bytes.IndexByte(aft, '\t') >= 0 {
					c.reportOff(end, cE273, "tab after keyword")
				} else if nchars(aft, c.latin1) > 1 {
					c.reportOff(end, cE271, "multiple spaces after keyword")
				}
				p = after
				continue
			}
		}
		if k > p {
			// Every start inside the run of whitespace reaches the same
			// word and fails the same way: skip the run, so that a long
			// run costs its length once, not its length squared.
			p = k
			continue
		}
		p += charLen(L, p, c.latin1)
	}
}

// missingWhitespaceAfterKeyword is E275.
func (c *checker) missingWhitespaceAfterKeyword(ts []token) {
	for i := 0; i+1 < len(ts); i++ {
		t0, t1 := &ts[i], &ts[i+1]
		if t0.kind != kName || t0.er != t1.sr || t0.ec != t1.sc {
			continue // keywords are NAME tokens
		}
		s0, s1 := c.text(t0), c.text(t1)
		if !isKeyword(s0) {
			continue
		}
		switch string(s0) {
		case "True", "False", "None", "async", "await":
			continue
		case "except":
			if string(s1) == "*" {
				continue
			}
		case "yield":
			if string(s1) == ")" {
				continue
			}
		}
		if pyIn(s1, ":\n") {
			continue
		}
		c.report(int(t0.er), int(t0.ec), cE275, "missing whitespace after keyword")
	}
}

// missingWhitespace is E231.
func (c *checker) missingWhitespace(L []byte) {
	opens, closes, lastBrace, lastBracket := 0, 0, -1, -1
	for i := 0; i+1 < len(L); i++ {
		ch := L[i]
		if !e231Char[ch] {
			continue
		}
		if ch == ',' || ch == ';' || ch == ':' {
			next := L[i+1]
			ws := next == ' ' || next == '\t'
			if !ws && next >= 0x80 {
				r, _ := charAt(L, i+1, c.latin1)
				ws = r == 0xa0
			}
			switch {
			case ws:
			case ch == ':' && opens > closes && lastBrace < lastBracket: // slice
			case ch == ',' && (next == ')' || next == ']'): // (3,)
			case ch == ':' && next == '=': // :=
			default:
				c.reportOff(i, cE231, "missing whitespace after '"+string(ch)+"'")
			}
		}
		switch ch {
		case '[':
			opens++
			lastBracket = i
		case ']':
			closes++
		case '{':
			lastBrace = i
		}
	}
}

// whitespaceBeforeParameters is E211.
func (c *checker) whitespaceBeforeParameters(ts []token) {
	prev := &ts[0]
	for i := 1; i < len(ts); i++ {
		t := &ts[i]
		if t.kind != kOp || (t.sr == prev.er && t.sc == prev.ec) {
			prev = t
			continue
		}
		text, ptext := c.text(t), c.text(prev)
		if pyIn(text, "([") &&
			(t.sr != prev.er || t.sc != prev.ec) &&
			(prev.kind == kName || pyIn(ptext, "}])")) &&
			(i < 2 || string(c.text(&ts[i-2])) != "class") &&
			!isKeyword(ptext) && !isSoftKeyword(ptext) {
			c.report(int(prev.er), int(prev.ec), cE211, "whitespace before '"+string(text)+"'")
		}
		prev = t
	}
}

// isOperatorChar is the class [-+*/|!<=>%&^] of OPERATOR_REGEX.
func isOperatorChar(b byte) bool { return strings.IndexByte("-+*/|!<=>%&^", b) >= 0 }

// whitespaceAroundOperator is E221-E224, OPERATOR_REGEX =
// (?:[^,\s])(\s*)(?:[-+*/|!<=>%&^]+|:=)(\s*).
func (c *checker) whitespaceAroundOperator(L []byte) {
	for p := 0; p < len(L); {
		if L[p] == ',' || spaceLen(L, p, c.latin1) > 0 {
			p += charLen(L, p, c.latin1)
			continue
		}
		q := p + charLen(L, p, c.latin1)
		b1 := skipSpace(L, q, c.latin1)
		oend := -1
		if b1 < len(L) && isOperatorChar(L[b1]) {
			oend = b1 + 1
			for oend < len(L) && isOperatorChar(L[oend]) {
				oend++
			}
		} else if b1+1 < len(L) && L[b1] == ':' && L[b1+1] == '=' {
			oend = b1 + 2
		}
		if oend < 0 {
			p = q
			continue
		}
		a1 := skipSpace(L, oend, c.latin1)
		before, after := L[q:b1], L[oend:a1]
		if bytes.IndexByte(before, '\t') >= 0 {
			c.reportOff(q, cE223, "tab before operator")
		} else if nchars(before, c.latin1) > 1 {
			c.reportOff(q, cE221, "multiple spaces before operator")
		}
		if bytes.IndexByte(after, '\t') >= 0 {
			c.reportOff(oend, cE224, "tab after operator")
		} else if nchars(after, c.latin1) > 1 {
			c.reportOff(oend, cE222, "multiple spaces after operator")
		}
		p = a1
	}
}

// wsNeeded is membership in WS_NEEDED_OPERATORS.
func wsNeeded(s []byte) bool {
	switch string(s) {
	case "**=", "*=", "/=", "//=", "+=", "-=", "!=", "<>", "<", ">",
		"%=", "^=", "&=", "|=", "==", "<=", ">=", "<<=", ">>=", "=",
		"and", "in", "is", "or", "->", ":=":
		return true
	}
	return false
}

// isUnaryOperator is membership in UNARY_OPERATORS.
func isUnaryOperator(s []byte) bool {
	switch string(s) {
	case ">>", "**", "*", "+", "-":
		return true
	}
	return false
}

// isArithmetic is membership in ARITHMETIC_OP.
func isArithmetic(s []byte) bool {
	switch string(s) {
	case "**", "*", "/", "//", "+", "-", "@":
		return true
	}
	return false
}

// wsOptional is membership in WS_OPTIONAL_OPERATORS.
func wsOptional(s []byte) bool {
	if isArithmetic(s) {
		return true
	}
	switch string(s) {
	case "^", "&", "|", "<<", ">>", "%":
		return true
	}
	return false
}

// missingWhitespaceAroundOperator is E225-E228.
func (c *checker) missingWhitespaceAroundOperator(ts []token) {
	const (
		nsFalse = iota
		nsTrue
		nsTuple // (position, whether a space preceded the operator)
	)
	parens := 0
	need := nsFalse
	var nsRow, nsCol int32
	nsHad := false
	prevKind := kOp
	var prevText []byte
	var prevRow, prevCol int32
	hasPrev := false
	for i := range ts {
		t := &ts[i]
		switch t.kind {
		case kNL, kNewline, kIndent, kDedent, kComment, kErrorToken:
			continue
		}
		text := c.text(t)
		if len(text) > 0 {
			switch {
			case text[0] == '(' && len(text) == 1, text[0] == 'l' && string(text) == "lambda":
				parens++
			case text[0] == ')' && len(text) == 1:
				parens--
			}
		}
		spaced := t.sr != prevRow || t.sc != prevCol
		if need != nsFalse {
			switch {
			case spaced:
				if need == nsTuple && !nsHad {
					c.report(int(nsRow), int(nsCol), cE225, "missing whitespace around operator")
				}
				need = nsFalse
			case string(text) == ">" && (string(prevText) == "<" || string(prevText) == "-"):
			case string(prevText) == "/" && (string(text) == "," || string(text) == ")" || string(text) == ":"),
				string(prevText) == ")" && string(text) == ":":
			default:
				if need == nsTrue || nsHad {
					c.report(int(prevRow), int(prevCol), cE225, "missing whitespace around operator")
				} else if string(prevText) != "**" {
					k, kind := cE226, "arithmetic"
					if string(prevText) == "%" {
						k, kind = cE228, "modulo"
					} else if !isArithmetic(prevText) {
						k, kind = cE227, "bitwise or shift"
					}
					c.report(int(nsRow), int(nsCol), k, "missing whitespace around "+kind+" operator")
				}
				need = nsFalse
			}
		} else if t.kind == kName && hasPrev {
			// Of the operators, only and/in/is/or are names.
			if len(text) <= 3 && wsNeeded(text) {
				need = nsTrue
				if !spaced {
					c.report(int(prevRow), int(prevCol), cE225, "missing whitespace around operator")
					need = nsFalse
				}
			}
		} else if t.kind == kOp && hasPrev {
			optional := false
			switch {
			case string(text) == "=" && parens != 0:
			case wsNeeded(text):
				need = nsTrue
			case isUnaryOperator(text):
				if (prevKind == kOp && pyIn(prevText, "}])")) ||
					(prevKind != kOp && !isPycodestyleKeyword(prevText) && !isSoftKeyword(prevText)) {
					optional = true
				}
			case wsOptional(text):
				optional = true
			}
			if optional {
				need, nsRow, nsCol, nsHad = nsTuple, prevRow, prevCol, spaced
			} else if need == nsTrue && !spaced {
				c.report(int(prevRow), int(prevCol), cE225, "missing whitespace around operator")
				need = nsFalse
			}
		}
		prevKind, prevText, prevRow, prevCol, hasPrev = t.kind, text, t.er, t.ec, true
	}
}

// whitespaceAroundComma is E241/E242, [,;:]\s*(?:  |\t).
func (c *checker) whitespaceAroundComma(L []byte) {
	for p := 0; p < len(L); p++ {
		ch := L[p]
		if ch != ',' && ch != ';' && ch != ':' {
			continue
		}
		e := skipSpace(L, p+1, c.latin1)
		run := L[p+1 : e]
		if bytes.IndexByte(run, '\t') >= 0 {
			c.reportOff(p+1, cE242, "tab after '"+string(ch)+"'")
		} else if bytes.Contains(run, []byte("  ")) {
			c.reportOff(p+1, cE241, "multiple spaces after '"+string(ch)+"'")
		}
		p = e - 1
	}
}

// namedParameterEquals is E251/E252.
func (c *checker) namedParameterEquals(L []byte, ts []token) {
	if bytes.IndexByte(L, '=') < 0 {
		return // nothing to report without an equals sign
	}
	parens := 0
	noSpace, requireSpace, annotated := false, false, false
	inDef := c.startsDef(L)
	var prevRow, prevCol int32 = -1, -1
	for i := range ts {
		t := &ts[i]
		if t.kind == kNL {
			continue
		}
		spaced := t.sr != prevRow || t.sc != prevCol
		if noSpace {
			noSpace = false
			if spaced {
				c.report(int(prevRow), int(prevCol), cE251, "unexpected spaces around keyword / parameter equals")
			}
		}
		if requireSpace {
			requireSpace = false
			if !spaced {
				c.report(int(prevRow), int(prevCol), cE252, "missing whitespace around parameter equals")
			}
		}
		if t.kind == kOp {
			text := c.text(t)
			switch {
			case pyIn(text, "(["):
				parens++
			case pyIn(text, ")]"):
				parens--
			case inDef && string(text) == ":" && parens == 1:
				annotated = true
			case parens == 1 && string(text) == ",":
				annotated = false
			case parens != 0 && string(text) == "=":
				if annotated && parens == 1 {
					requireSpace = true
					if !spaced {
						c.report(int(prevRow), int(prevCol), cE252, "missing whitespace around parameter equals")
					}
				} else {
					noSpace = true
					if spaced {
						c.report(int(prevRow), int(prevCol), cE251, "unexpected spaces around keyword / parameter equals")
					}
				}
			}
			if parens == 0 {
				annotated = false
			}
		}
		prevRow, prevCol = t.er, t.ec
	}
}

// whitespaceBeforeComment is E261/E262/E265/E266.
func (c *checker) whitespaceBeforeComment(ts []token) {
	var prevRow, prevCol int32
	for i := range ts {
		t := &ts[i]
		if t.kind != kComment {
			if t.kind != kNL {
				prevRow, prevCol = t.er, t.ec
			}
			continue
		}
		line := c.tokLine(t)
		inline := len(c.stripSpace(line[:min(int(t.sc), len(line))])) > 0
		if inline && prevRow == t.sr && t.sc < prevCol+2 {
			c.report(int(prevRow), int(prevCol), cE261, "at least two spaces before inline comment")
		}
		text := c.text(t)
		symbol, comment := text, []byte(nil)
		if i := bytes.IndexByte(text, ' '); i >= 0 {
			symbol, comment = text[:i], text[i+1:]
		}
		// bad_prefix: the first character after the leading #'s, or '#'.
		var bad rune
		hasBad := false
		if s := string(symbol); s != "#" && s != "#:" {
			rest := bytes.TrimLeft(symbol, "#")
			bad, hasBad = '#', true
			if len(rest) > 0 {
				bad, _ = charAt(rest, 0, c.latin1)
			}
		}
		if inline {
			startsWS := false
			if len(comment) > 0 {
				r, _ := charAt(comment, 0, c.latin1)
				startsWS = r == ' ' || r == '\t' || r == 0xa0
			}
			if hasBad || startsWS {
				c.report(int(t.sr), int(t.sc), cE262, "inline comment should start with '# '")
			}
		} else if hasBad && (bad != '!' || t.sr > 1) {
			if bad != '#' {
				c.report(int(t.sr), int(t.sc), cE265, "block comment should start with '# '")
			} else if len(comment) > 0 {
				c.report(int(t.sr), int(t.sc), cE266, "too many leading '#' for block comment")
			}
		}
	}
}
