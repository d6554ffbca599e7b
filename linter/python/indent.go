package python

import (
	"fmt"
	"strconv"
)

// Indentation (E111-E117) and blank lines (E301-E306).

// indentation is E111-E117 (E114-E116 for comment lines).
func (c *checker) indentation(L []byte) {
	comment := len(L) == 0
	suffix := ""
	k111, k112, k113 := cE111, cE112, cE113
	if comment {
		suffix = " (comment)"
		k111, k112, k113 = cE114, cE115, cE116
	}
	if c.indentLevel%c.opt.indentSize != 0 {
		c.reportOff(0, k111, "indentation is not a multiple of "+strconv.Itoa(c.opt.indentSize)+suffix)
	}
	expect := c.prevColon
	if expect && c.indentLevel <= c.prevIndentLevel {
		c.reportOff(0, k112, "expected an indented block"+suffix)
	} else if !expect && c.indentLevel > c.prevIndentLevel {
		c.reportOff(0, k113, "unexpected indentation"+suffix)
	}
	if expect {
		amount := 4
		if c.indentChar == '\t' {
			amount = 8
		}
		if c.indentLevel > c.prevIndentLevel+amount {
			c.reportOff(0, cE117, "over-indented"+suffix)
		}
	}
}

// startsTopLevel is STARTSWITH_TOP_LEVEL_REGEX: ^(async\s+def\s+|def\s+|class\s+|@).
func (c *checker) startsTopLevel(b []byte) bool {
	if len(b) > 0 && b[0] == '@' {
		return true
	}
	word := func(w string, i int) int { // w\s+ at i, returning the end
		if len(b)-i < len(w) || string(b[i:i+len(w)]) != w {
			return -1
		}
		j := skipSpace(b, i+len(w), c.latin1)
		if j == i+len(w) {
			return -1
		}
		return j
	}
	if word("def", 0) >= 0 || word("class", 0) >= 0 {
		return true
	}
	if j := word("async", 0); j >= 0 {
		return word("def", j) >= 0
	}
	return false
}

// startsDef is STARTSWITH_DEF_REGEX: ^(async\s+def|def)\b.
func (c *checker) startsDef(b []byte) bool {
	if hasPrefixWord(b, "def", c.latin1) {
		return true
	}
	if len(b) > 5 && string(b[:5]) == "async" {
		j := skipSpace(b, 5, c.latin1)
		return j > 5 && hasPrefixWord(b[j:], "def", c.latin1)
	}
	return false
}

// stripSpace is str.strip().
func (c *checker) stripSpace(b []byte) []byte {
	return rstripSpace(lstripSpace(b, c.latin1), c.latin1)
}

// isOneLiner is _is_one_liner.
func (c *checker) isOneLiner(L []byte, lineNumber int) bool {
	if !c.startsTopLevel(L) {
		return false
	}
	n := c.nlines
	idx := lineNumber - 1
	prevIndent := 0
	if idx >= 1 {
		prevIndent = c.expandIndent(c.row(idx))
	}
	if prevIndent > c.indentLevel {
		return false
	}
	// The two forward scans are remembered (nextMatch): many one-line
	// candidates before the same definition scan its rows once.
	idx = c.nextDef.find(idx, func(i int) int {
		for ; i < n; i++ {
			line := c.stripSpace(c.row(i + 1))
			if !(len(line) > 0 && line[0] == '@') && c.startsTopLevel(line) {
				return i
			}
		}
		return -1
	})
	if idx < 0 {
		return false
	}
	next := c.nextNonBlank.find(idx+1, func(i int) int {
		for ; i < n; i++ {
			if len(c.stripSpace(c.row(i+1))) > 0 {
				return i
			}
		}
		return -1
	})
	if next < 0 {
		return true
	}
	return c.expandIndent(c.row(next+1)) <= c.indentLevel
}

// blankLinesCheck is blank_lines (E301-E306).
func (c *checker) blankLinesCheck(L []byte) {
	const topLevel, method = 2, 1
	if !c.hasPrevLogical && c.blankBefore < topLevel {
		return
	}
	switch {
	case c.prevDecorator:
		if c.blankLines != 0 {
			c.reportOff(0, cE304, "blank lines found after function decorator")
		}
	case c.blankLines > topLevel || (c.indentLevel != 0 && c.blankLines == method+1):
		c.reportOff(0, cE303, fmt.Sprintf("too many blank lines (%d)", c.blankLines))
	case c.startsTopLevel(L):
		if c.blankBefore == 0 && c.isOneLiner(L, c.linesRead) {
			return
		}
		if c.indentLevel != 0 {
			if c.blankBefore == method || c.prevIndentLevel < c.indentLevel || c.prevDocstring {
				return
			}
			n := c.nlines
			idx := c.linesRead - topLevel
			if idx < 0 {
				idx += n
			}
			if idx >= n {
				idx = n - 1
			}
			if c.nestedDef(idx) {
				c.reportOff(0, cE306, "expected 1 blank line before a nested definition, found 0")
			} else {
				c.reportOff(0, cE301, "expected 1 blank line, found 0")
			}
		} else if c.blankBefore != topLevel {
			c.reportOff(0, cE302, fmt.Sprintf("expected 2 blank lines, found %d", c.blankBefore))
		}
	case len(L) > 0 && c.indentLevel == 0 && c.blankBefore != topLevel && c.prevUnindentDef:
		c.reportOff(0, cE305, fmt.Sprintf("expected 2 blank lines after class or function definition, found %d", c.blankBefore))
	}
}

// nestedDef is the backward search of blank_lines: from row index idx
// (0-based) back, each non-blank row indented less than the last one
// found (starting from the logical line's indent) is an ancestor, until
// one starts a def (nested) or is at indent 0. Rather than every row, it
// visits the ancestors only, through each row's parent (the closest row
// before it indented less), so that a class of many methods costs its
// length once.
func (c *checker) nestedDef(idx int) bool {
	c.buildParents()
	ancestor := c.indentLevel
	j := -1
	if idx >= 0 {
		j = int(c.prevNonBlank[idx])
	}
	for j >= 0 {
		if ind := int(c.rowIndent[j]); ind < ancestor {
			ancestor = ind
			if c.startsDef(lstripSpace(c.row(j+1), c.latin1)) {
				return true
			}
			if ancestor == 0 {
				return false
			}
		}
		j = int(c.parent[j])
	}
	return false
}

// buildParents computes, once per file, each row's indent (-1 when blank),
// the closest non-blank row at or before it, and its parent.
func (c *checker) buildParents() {
	if c.parentsBuilt {
		return
	}
	n := c.nlines
	c.rowIndent = grow(c.rowIndent, n)
	c.prevNonBlank = grow(c.prevNonBlank, n)
	c.parent = grow(c.parent, n)
	stack := c.scratchRows[:0]
	last := int32(-1)
	for i := range n {
		line := c.row(i + 1)
		if len(c.stripSpace(line)) == 0 {
			c.rowIndent[i], c.parent[i], c.prevNonBlank[i] = -1, -1, last
			continue
		}
		ind := int32(c.expandIndent(line))
		for len(stack) > 0 && c.rowIndent[stack[len(stack)-1]] >= ind {
			stack = stack[:len(stack)-1]
		}
		c.parent[i] = -1
		if len(stack) > 0 {
			c.parent[i] = stack[len(stack)-1]
		}
		stack = append(stack, int32(i))
		c.rowIndent[i], last = ind, int32(i)
		c.prevNonBlank[i] = last
	}
	c.scratchRows = stack
	c.parentsBuilt = true
}

// grow returns s with length n, reusing its capacity.
func grow(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}
