package python

import "math"

// Continuation lines (E121-E131, E133): pycodestyle's continued_indentation,
// step for step, with its columns in characters. pycodestyle's own
// bookkeeping is quadratic in places (it rescans every open row at every
// new line, every indent chance and every depth at every closing bracket,
// and every row back to the last one that opened a bracket); here each of
// these is a structure that answers the same question in constant or
// logarithmic time, so a logical line costs its length:
//
//   - the open rows of a depth are indexed by their relative indent, so
//     the latest one a valid hang starts from is a lookup;
//   - indent chances live in an array indexed by column, with a max-heap of
//     the columns set, so "delete every chance at or after a column" pops
//     exactly the chances it deletes;
//   - the visual indents of the depths have a max-heap too, for "reset every
//     indent past a column";
//   - the rows that still have an open bracket are a stack.

// Values of an indent chance, pycodestyle's indent_chances[col]: absent
// (or None), True, the type str, or the text of a token (chanceText + the
// token's index in the logical line).
const (
	chanceNone int32 = iota
	chanceTrue
	chanceStr
	chanceText
)

// noHang is pycodestyle's None in hangs.
const noHang = math.MinInt32

// contState is the scratch state of continuedIndentation, kept in the
// checker so that its slices keep their capacity from line to line.
type contState struct {
	parens    []int32 // brackets opened on each row, not yet closed
	relIndent []int32 // each row's indent relative to the logical line's
	openRows  []openRows
	hangs     []int32
	indent    []int32
	chances   []int32 // indexed by column
	chanceSet maxHeap // columns whose chance is set (some may be stale)
	nChances  int
	indentSet maxHeap // (indent, depth) of non-zero indents (some stale)
	parenRows []int32 // rows with parens > 0, in order
}

// openRows is open_rows[depth]: the rows where a bracket of that depth
// opened or a line ended in a colon, with the latest row of each relative
// indent once the list is long enough to be worth indexing.
type openRows struct {
	rows  []int32
	byRel map[int32]int32
}

// indexAfter is the length from which an openRows is indexed.
const indexAfter = 8

func (o *openRows) add(row int32, rel []int32) {
	o.rows = append(o.rows, row)
	if o.byRel != nil {
		o.byRel[rel[row]] = row
	}
}

// latest returns the latest row whose relative indent is v, or -1.
func (o *openRows) latest(v int32, rel []int32) int32 {
	if len(o.rows) <= indexAfter {
		for i := len(o.rows) - 1; i >= 0; i-- {
			if rel[o.rows[i]] == v {
				return o.rows[i]
			}
		}
		return -1
	}
	if o.byRel == nil {
		o.byRel = make(map[int32]int32, len(o.rows))
		for _, r := range o.rows {
			o.byRel[rel[r]] = r
		}
	}
	if r, ok := o.byRel[v]; ok {
		return r
	}
	return -1
}

// maxHeap is a binary max-heap of (key, val) pairs.
type maxHeap []heapItem

type heapItem struct{ key, val int32 }

func (h *maxHeap) push(key, val int32) {
	*h = append(*h, heapItem{key, val})
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p].key >= s[i].key {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

// top returns the item with the largest key; the heap must not be empty.
func (h maxHeap) top() heapItem { return h[0] }

func (h *maxHeap) pop() {
	s := *h
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		l, big := 2*i+1, i
		if l < n && s[l].key > s[big].key {
			big = l
		}
		if l+1 < n && s[l+1].key > s[big].key {
			big = l + 1
		}
		if big == i {
			break
		}
		s[i], s[big] = s[big], s[i]
		i = big
	}
	*h = s
}

// chance returns indent_chances.get(col).
func (s *contState) chance(col int32) int32 {
	if col < 0 || int(col) >= len(s.chances) {
		return chanceNone
	}
	return s.chances[col]
}

// setChance is indent_chances[col] = v.
func (s *contState) setChance(col, v int32) {
	if col < 0 {
		return // columns are never negative; nothing could look one up
	}
	for int(col) >= len(s.chances) {
		s.chances = append(s.chances, chanceNone)
	}
	if s.chances[col] == chanceNone {
		s.nChances++
		s.chanceSet.push(col, 0)
	}
	s.chances[col] = v
}

// dropChancesFrom deletes every chance at a column of at least col.
func (s *contState) dropChancesFrom(col int32) {
	for len(s.chanceSet) > 0 && s.chanceSet.top().key >= col {
		c := s.chanceSet.top().key
		s.chanceSet.pop()
		if s.chances[c] != chanceNone {
			s.chances[c] = chanceNone
			s.nChances--
		}
	}
}

// setIndent is indent[d] = v.
func (s *contState) setIndent(d int, v int32) {
	s.indent[d] = v
	if v != 0 {
		s.indentSet.push(v, int32(d))
	}
}

// resetIndentsPast zeroes indent[d] for every d whose indent exceeds col.
func (s *contState) resetIndentsPast(col int32) {
	for len(s.indentSet) > 0 && s.indentSet.top().key > col {
		it := s.indentSet.top()
		s.indentSet.pop()
		if int(it.val) < len(s.indent) && s.indent[it.val] == it.key {
			s.indent[it.val] = 0
		}
	}
}

// reset prepares s for a logical line of nrows rows whose longest row has
// width characters.
func (s *contState) reset(nrows, width int) {
	s.parens = grow(s.parens, nrows)
	clear(s.parens)
	s.relIndent = grow(s.relIndent, nrows)
	clear(s.relIndent)
	s.openRows = s.openRows[:0]
	s.pushOpenRows()
	s.openRows[0].rows = append(s.openRows[0].rows, 0)
	s.hangs = append(s.hangs[:0], noHang)
	s.indent = s.indent[:0]
	s.chances = grow(s.chances, width+2)
	clear(s.chances)
	s.chanceSet, s.indentSet, s.nChances = s.chanceSet[:0], s.indentSet[:0], 0
	s.parenRows = s.parenRows[:0]
}

// pushOpenRows appends an empty list to openRows, reusing the memory of
// one dropped before.
func (s *contState) pushOpenRows() {
	if len(s.openRows) < cap(s.openRows) {
		s.openRows = s.openRows[:len(s.openRows)+1]
		o := &s.openRows[len(s.openRows)-1]
		o.rows, o.byRel = o.rows[:0], nil
		return
	}
	s.openRows = append(s.openRows, openRows{})
}

// continuedIndentation is continued_indentation (E121-E131, E133).
func (c *checker) continuedIndentation(ts []token) {
	firstRow := ts[0].sr
	nrows := 1 + int(ts[len(ts)-1].sr-firstRow)
	if c.logicalNoqa || nrows == 1 {
		return
	}
	indentSize := int32(c.opt.indentSize)
	L := c.logical
	indentNext := len(L) > 0 && L[len(L)-1] == ':'
	hang1, hang2 := indentSize, indentSize // valid_hangs
	if c.indentChar == '\t' {
		hang2 = 2 * indentSize
	}
	width := 0
	for r := firstRow; r <= ts[len(ts)-1].er && int(r) <= c.nlines; r++ {
		width = max(width, c.charCol(int(r), len(c.row(int(r)))))
	}
	s := &c.cont
	s.reset(nrows, width)
	indentLevel := int32(c.indentLevel)

	var row int32
	depth := 0
	lastIndent := [2]int32{ts[0].sr, int32(c.charCol(int(ts[0].sr), int(ts[0].sc)))}
	visualIndent := chanceNone
	lastMultiline := false
	s.indent = append(s.indent, 0)
	s.setIndent(0, lastIndent[1])
	var hang int32
	var start [2]int32
	var line []byte
	for i := range ts {
		t := &ts[i]
		text := c.text(t)
		line = c.tokLine(t)
		start = [2]int32{t.sr, int32(c.charCol(int(t.sr), int(t.sc)))}
		endCol := int32(c.charCol(int(t.er), int(t.ec)))

		newline := row < t.sr-firstRow
		if newline {
			row = t.sr - firstRow
			newline = !lastMultiline && t.kind != kNL && t.kind != kNewline
		}
		if newline {
			// The beginning of a continuation line.
			lastIndent = start
			s.relIndent[row] = int32(c.expandIndent(line)) - indentLevel
			closeBracket := t.kind == kOp && pyIn(text, "]})")

			// Is the indent relative to an opening bracket's line?
			open := &s.openRows[depth]
			hangingIndent := false
			r1 := open.latest(s.relIndent[row]-hang1, s.relIndent)
			r2 := r1
			if hang2 != hang1 {
				r2 = open.latest(s.relIndent[row]-hang2, s.relIndent)
			}
			if r := max(r1, r2); r >= 0 {
				hang, hangingIndent = s.relIndent[row]-s.relIndent[r], true
			} else {
				hang = s.relIndent[row] - s.relIndent[open.rows[0]]
			}
			if h := s.hangs[depth]; h != noHang && h != 0 {
				hangingIndent = hang == h
			}
			// Is there any chance of visual indent?
			visualIndent = chanceNone
			if !closeBracket && hang > 0 {
				visualIndent = s.chance(start[1])
			}

			switch ind := s.indent[depth]; {
			case closeBracket && ind != 0:
				// Closing bracket for visual indent.
				if start[1] != ind {
					c.reportChar(int(start[0]), int(start[1]), cE124, "closing bracket does not match visual indentation")
				}
			case closeBracket && hang == 0:
				// Closing bracket matches indentation of opening bracket's line.
				if c.opt.hangClosing {
					c.reportChar(int(start[0]), int(start[1]), cE133, "closing bracket is missing indentation")
				}
			case ind != 0 && start[1] < ind:
				if visualIndent != chanceTrue {
					// Visual indent is broken.
					c.reportChar(int(start[0]), int(start[1]), cE128, "continuation line under-indented for visual indent")
				}
			case hangingIndent || (indentNext && s.relIndent[row] == 2*indentSize):
				// Hanging indent is verified.
				if closeBracket && !c.opt.hangClosing {
					c.reportChar(int(start[0]), int(start[1]), cE123, "closing bracket does not match indentation of opening bracket's line")
				}
				s.hangs[depth] = hang
			case visualIndent == chanceTrue:
				// Visual indent is verified.
				s.setIndent(depth, start[1])
			case visualIndent == chanceStr || (visualIndent >= chanceText && string(c.text(&ts[visualIndent-chanceText])) == string(text)):
				// Ignore token lined up with matching one from a previous line.
			default:
				// Indent is broken.
				var k code
				var msg string
				switch h := s.hangs[depth]; {
				case hang <= 0:
					k, msg = cE122, "missing indentation or outdented"
				case ind != 0:
					k, msg = cE127, "over-indented for visual indent"
				case !closeBracket && h != noHang && h != 0:
					k, msg = cE131, "unaligned for hanging indent"
				default:
					s.hangs[depth] = hang
					if hang > indentSize {
						k, msg = cE126, "over-indented for hanging indent"
					} else {
						k, msg = cE121, "under-indented for hanging indent"
					}
				}
				if c.en[k] {
					c.reportChar(int(start[0]), int(start[1]), k, "continuation line "+msg)
				}
			}
		}

		// Look for visual indenting.
		switch {
		case s.parens[row] != 0 && t.kind != kNL && t.kind != kComment && s.indent[depth] == 0:
			s.setIndent(depth, start[1])
			s.setChance(start[1], chanceTrue)
		case t.kind == kString || t.kind == kComment || isStringPrefixName(text):
			// Implicit string concatenation.
			s.setChance(start[1], chanceStr)
		case row == 0 && depth == 0 && (string(text) == "assert" || string(text) == "raise" || string(text) == "with"):
			// Visual indent after assert/raise/with.
			s.setChance(endCol+1, chanceTrue)
		case s.nChances == 0 && row == 0 && depth == 0 && string(text) == "if":
			// Special case for the "if" statement because len("if (") == 4.
			s.setChance(endCol+1, chanceTrue)
		case string(text) == ":" && c.restIsSpace(t):
			s.openRows[depth].add(row, s.relIndent)
		}

		// Keep track of bracket depth.
		if t.kind == kOp {
			switch {
			case pyIn(text, "([{"):
				depth++
				s.indent = append(s.indent, 0)
				s.hangs = append(s.hangs, noHang)
				if len(s.openRows) == depth {
					s.pushOpenRows()
				}
				s.openRows[depth].add(row, s.relIndent)
				if s.parens[row] == 0 {
					s.parenRows = append(s.parenRows, row)
				}
				s.parens[row]++
			case pyIn(text, ")]}") && depth > 0:
				// Parent indents should not be more than this one.
				prevIndent := s.indent[len(s.indent)-1]
				s.indent = s.indent[:len(s.indent)-1]
				if prevIndent == 0 {
					prevIndent = lastIndent[1]
				}
				s.hangs = s.hangs[:len(s.hangs)-1]
				s.resetIndentsPast(prevIndent)
				s.dropChancesFrom(prevIndent)
				s.openRows = s.openRows[:min(depth+1, len(s.openRows))]
				depth--
				if depth != 0 {
					s.setChance(s.indent[depth], chanceTrue)
				}
				if n := len(s.parenRows); n > 0 {
					r := s.parenRows[n-1]
					if s.parens[r]--; s.parens[r] == 0 {
						s.parenRows = s.parenRows[:n-1]
					}
				}
			}
			if s.chance(start[1]) == chanceNone {
				// Allow lining up tokens.
				s.setChance(start[1], chanceText+int32(i))
			}
		}

		lastMultiline = t.sr != t.er
		if lastMultiline {
			if r := t.er - firstRow; int(r) < nrows {
				s.relIndent[r] = s.relIndent[row]
			}
		}
	}

	if indentNext && int32(c.expandIndent(line)) == indentLevel+indentSize {
		col := int(s.indent[0] + indentSize)
		if visualIndent != chanceNone {
			c.reportChar(int(start[0]), col, cE129, "visually indented line with same indent as next logical line")
		} else {
			c.reportChar(int(start[0]), col, cE125, "continuation line with same indent as next logical line")
		}
	}
}

// isStringPrefixName reports the names pycodestyle takes for the prefix
// of a string (u, ur, b, br), a leftover of Python 2's tokenizer.
func isStringPrefixName(text []byte) bool {
	switch string(text) {
	case "u", "ur", "b", "br":
		return true
	}
	return false
}

// restIsSpace is line[end[1]:].isspace() for the token's row: true when
// what follows it is whitespace only, and not nothing.
func (c *checker) restIsSpace(t *token) bool {
	rest := c.row(int(t.er))
	if int(t.ec) >= len(rest) {
		return false
	}
	rest = rest[t.ec:]
	for i := 0; i < len(rest); {
		r, n := charAt(rest, i, c.latin1)
		if !isPySpace(r) {
			return false
		}
		i += n
	}
	return true
}
