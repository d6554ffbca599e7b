package java

import "strconv"

// This file holds VariableDeclarationUsageDistance at checkstyle 8.36's
// defaults (allowedDistance 3, validateBetweenScopes false, ignoreFinal
// true, no ignoreVariablePattern): a local variable must be used within
// three statements of its block after its declaration.

// stmtRec is one statement of a block: its tokens [start, end) and, for a
// local variable declaration, its group.
type stmtRec struct {
	start, end int32
	vg         *varGroupInfo
}

const vdudAllowed = 3

// variableDistance runs VariableDeclarationUsageDistance over the blocks
// that declare locals. For each block it scans the statements once,
// noting where each name declared so far is first used after its
// declaration, so it stays linear in the block's tokens.
func (f *file) variableDistance() {
	if !f.l.enabled[VariableDeclarationUsageDistance] || len(f.ps.varBlocks) == 0 {
		return
	}
	toks := f.lx.toks
	elseIf := make(map[int32]int32, len(f.ps.elseIfs))
	for _, e := range f.ps.elseIfs {
		elseIf[e[0]] = e[1]
	}
	doWhile := make(map[int32]int32, len(f.ps.doWhiles))
	for _, d := range f.ps.doWhiles {
		doWhile[d[0]] = d[1]
	}
	for _, recs := range f.ps.varBlocks {
		// counted[i]: statements before i that count towards a distance
		// (any but empty statements and declarations).
		counted := make([]int, len(recs)+1)
		for i, r := range recs {
			c := 0
			if r.vg == nil && toks[r.start].text != ";" {
				c = 1
			}
			counted[i+1] = counted[i] + c
		}
		// pending: declared names not yet used, each with its statement
		// and declarator.
		pending := map[string][2]int{}
		var seq []int // initSequences, computed on the first distance too long
		for i, r := range recs {
			if len(pending) > 0 {
				for k := r.start; k < r.end && len(pending) > 0; k++ {
					if toks[k].kind != tIdent {
						continue
					}
					d, ok := pending[toks[k].text]
					if !ok {
						continue
					}
					delete(pending, toks[k].text)
					f.vdudReport(recs, d[0], d[1], i, counted, &seq, elseIf, doWhile)
				}
			}
			if r.vg == nil || r.vg.final {
				continue
			}
			// A use by a later declarator of the statement is at distance
			// 1: one pass over the statement finds those.
			decl := make(map[string]int, len(r.vg.names))
			used := make([]bool, len(r.vg.names))
			for j, n := range r.vg.names {
				decl[toks[n].text] = j
			}
			if len(r.vg.names) > 0 {
				for k := r.vg.names[0] + 1; k < r.end; k++ {
					if j, ok := decl[toks[k].text]; ok && toks[k].kind == tIdent && r.vg.names[j] < k {
						used[j] = true
					}
				}
			}
			for j, n := range r.vg.names {
				if !used[j] {
					pending[toks[n].text] = [2]int{i, j}
				}
			}
		}
	}
}

// vdudReport reports the declarator j of the declaration recs[d] when
// its first use, in recs[u], is too far from it; seq holds the block's
// initSequences once needed.
func (f *file) vdudReport(recs []stmtRec, d, j, u int, counted []int, seq *[]int, elseIf, doWhile map[int32]int32) {
	toks := f.lx.toks
	name := toks[recs[d].vg.names[j]].text
	dist := counted[u] - counted[d+1]
	r := recs[u]
	s := r.start
	// A labelled statement is examined as the statement it labels.
	if toks[s].kind == tIdent && s+1 < r.end && toks[s+1].text == ":" {
		s += 2
	}
	switch {
	case r.vg != nil:
		dist++
	case toks[s].text == "{", toks[s].text == "try", toks[s].text == "synchronized":
		return // used in an inner scope: checkstyle cannot tell the distance
	case toks[s].kind == tKeyword && (toks[s].text == "if" || toks[s].text == "for" || toks[s].text == "while" || toks[s].text == "do" || toks[s].text == "switch"):
		if !f.usedInConditions(s, name, elseIf, doWhile) {
			return
		}
		dist++
	default:
		dist++
	}
	if dist <= vdudAllowed {
		return
	}
	if *seq == nil {
		*seq = f.initSequences(recs)
	}
	if (*seq)[u] <= d+1 {
		return
	}
	pos := recs[d].vg.pos
	// Without modifiers the declaration is at its type, which for
	// C-style dimensions is the '[' after the name.
	if p := &toks[pos]; p.text != "@" && !(p.kind == tKeyword && modifierWords[p.text]) && toks[recs[d].vg.names[j]+1].text == "[" {
		pos = recs[d].vg.names[j] + 1
	}
	f.reportTok(pos, VariableDeclarationUsageDistance, "Distance between variable '"+name+"' declaration and its first usage is "+
		strconv.Itoa(dist)+", but allowed "+strconv.Itoa(vdudAllowed)+".  Consider making that variable final if you still need to store its value in advance (before method calls that might have side effects on the original value).")
}

// usedInConditions tells whether name is in the parentheses of the if,
// for, while, do or switch at kw (for an if, or of the ifs of its else
// ifs).
func (f *file) usedInConditions(kw int32, name string, elseIf, doWhile map[int32]int32) bool {
	toks := f.lx.toks
	for {
		open := kw + 1
		if w, ok := doWhile[kw]; ok {
			open = w + 1
		} else if toks[kw].text == "do" {
			return false
		}
		if int(open) >= len(toks) || toks[open].text != "(" {
			return false
		}
		close := int32(f.ps.matching(int(open)))
		if close < 0 {
			return false
		}
		for k := open + 1; k < close; k++ {
			if toks[k].kind == tIdent && toks[k].text == name {
				return true
			}
		}
		next, ok := elseIf[kw]
		if !ok || toks[kw].text != "if" {
			return false
		}
		kw = next
	}
}

// initSequences returns, for each statement of recs, the first index
// from which every statement up to it is a declaration or a call of a
// method on one and the same instance: checkstyle's exemption of an
// initialization sequence, from the use back to the declaration.
func (f *file) initSequences(recs []stmtRec) []int {
	from := make([]int, len(recs))
	start, lastCall, inst := 0, -1, ""
	for i, r := range recs {
		if r.vg == nil {
			in, ok := f.callInstance(r)
			switch {
			case !ok || in == "":
				start, inst = i+1, ""
			case inst != "" && in != inst:
				start, inst = lastCall+1, in
			default:
				inst = in
			}
			lastCall = i
		}
		from[i] = start
	}
	return from
}

// callInstance tells whether the statement r is a method call, and
// names its instance as checkstyle's FullIdent does: the dotted names
// before the method's, a call or parenthesis among them read as "(" and
// an index as "[".
func (f *file) callInstance(r stmtRec) (string, bool) {
	toks := f.lx.toks
	end := r.end - 1
	if end <= r.start || toks[end].text != ";" || toks[end-1].text != ")" {
		return "", false
	}
	// The '(' of the last call: back from its ')'.
	open, depth := end-1, 0
	for ; open >= r.start; open-- {
		switch toks[open].text {
		case ")":
			depth++
		case "(":
			depth--
		}
		if depth == 0 {
			break
		}
	}
	if open <= r.start || toks[open-1].kind != tIdent {
		return "", false
	}
	// Segments between top-level dots, up to the method's name.
	inst := ""
	segStart := r.start
	k := r.start
	for k < open-1 {
		t := &toks[k]
		switch {
		case t.text == "(" || t.text == "[":
			m := int32(f.ps.matching(int(k)))
			if m < 0 {
				return "", false
			}
			k = m + 1
			continue
		case t.text == ".":
			inst = joinSegment(inst, toks[segStart:k])
			segStart = k + 1
		case t.text == "<" || t.text == ">":
		case t.kind == tIdent || t.kind == tKeyword && (t.text == "this" || t.text == "super" || t.text == "new") || t.kind == tString || t.kind == tNumber:
		default:
			return "", false
		}
		k++
	}
	if segStart != open-1 {
		if toks[open-2].text != "." {
			return "", false
		}
	}
	return inst, true
}

// joinSegment appends one dotted segment to the instance name so far.
func joinSegment(inst string, seg []token) string {
	if len(seg) == 0 {
		return inst
	}
	last := seg[len(seg)-1].text
	switch {
	case last == ")" && seg[0].text == "new":
		if len(seg) > 1 {
			return seg[1].text
		}
		return "("
	case last == ")":
		return "("
	case last == "]":
		return "["
	case seg[0].text == "<":
		// Type arguments of a generic call: a.<T>b()
		return inst
	}
	if inst == "" {
		return seg[0].text
	}
	return inst + "." + seg[0].text
}
