package python

// Line breaks around binary operators (W503, W504): pycodestyle's
// _break_around_binary_operators and the two checks built on it, in one
// pass.

// isBinaryOperator is _is_binary_operator: an operator (or and/or) that is
// not one of the symbols pycodestyle leaves out.
func isBinaryOperator(k kind, text []byte) bool {
	if k != kOp && string(text) != "and" && string(text) != "or" {
		return false
	}
	switch string(text) {
	case "(", ")", "[", "]", "{", "}", ",", ":", ".", ";", "@", "=", "%", "~", "...":
		return false
	}
	return true
}

// breakAroundBinaryOperators is break_before_binary_operator (W503) and
// break_after_binary_operator (W504).
func (c *checker) breakAroundBinaryOperators(ts []token) {
	lineBreak, unary := false, true
	var prevKind kind
	var prevText []byte
	hasPrev := false
	var prevRow, prevCol int32
	for i := range ts {
		t := &ts[i]
		if t.kind == kComment {
			continue
		}
		text := c.text(t)
		if t.kind != kString && hasNewline(text) {
			lineBreak = true
			continue
		}
		if lineBreak && !unary {
			bin := isBinaryOperator(t.kind, text)
			prevBin := hasPrev && isBinaryOperator(prevKind, prevText)
			if bin && !prevBin {
				c.report(int(t.sr), int(t.sc), cW503, "line break before binary operator")
			}
			if prevBin && !bin {
				c.report(int(prevRow), int(prevCol), cW504, "line break after binary operator")
			}
		}
		unary = pyIn(text, "([{,;")
		lineBreak = false
		prevKind, prevText, hasPrev, prevRow, prevCol = t.kind, text, true, t.sr, t.sc
	}
}

// hasNewline reports a '\n' or '\r' in b.
func hasNewline(b []byte) bool {
	for _, ch := range b {
		if ch == '\n' || ch == '\r' {
			return true
		}
	}
	return false
}
