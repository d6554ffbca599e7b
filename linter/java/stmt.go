package java

// Kinds of blocks.
const (
	blockNormal = iota
	blockInstanceInit
)

// block parses { statements } and returns the index of '{' and the number
// of statements in it.
func (p *parser) block(kind int) (int, int) {
	open := p.p
	if !p.at("{") {
		return open, 1
	}
	if p.depth > maxDepth {
		p.skipBalanced()
		return open, 1
	}
	p.depth++
	defer func() { p.depth-- }()
	p.ws(open)
	if kind == blockInstanceInit {
		p.flag(open, fNoBefore)
	}
	p.next()
	n, first := p.statements()
	p.blockTerm = p.lastTerm
	p.blockFirst, p.blockLast, p.blockClose = first, p.lastStmt, -1
	if p.at("}") {
		p.blockClose = p.p
		p.ws(p.p)
		p.next()
	}
	return open, n
}

// statements parses statements up to '}' (or a case label) and returns how
// many there were and the AST position of the first (-1 without one).
func (p *parser) statements() (int, int) {
	n := 0
	first := -1
	p.firstBoolReturn = false

	var prevVar *varGroupInfo
	var recs []stmtRec
	hasVar := false
	for !p.eof() && !p.at("}") && !p.at("case") && !(p.at("default") && (p.atIdx(p.p+1, ":") || p.atIdx(p.p+1, "->"))) {
		before := p.p
		if n == 0 && p.at("{") {
			// A block first in a case group is LeftCurly's.
			p.caseBlock = p.inCase
		}
		p.inCase = false
		p.stmtCtx = ctxBlock
		vg := p.statement()
		if n == 0 {
			first = p.stmtPos
			p.firstBoolReturn = p.stmtBoolReturn
		}
		p.lastStmt = p.stmtPos
		p.lastTerm = p.stmtTerm
		n++
		if vg != nil {
			if vg.count > 1 {
				p.multiVar = append(p.multiVar, multiVarDiag{tok: vg.first, comma: true})
			}
			if prevVar != nil && prevVar.lastLine == p.toks[vg.first].line {
				p.multiVar = append(p.multiVar, multiVarDiag{tok: prevVar.first})
			}
		}
		prevVar = vg
		if p.p == before {
			p.next()
		}
		recs = append(recs, stmtRec{start: int32(before), end: int32(p.p), vg: vg})
		hasVar = hasVar || vg != nil && !vg.final
	}
	if hasVar {
		p.varBlocks = append(p.varBlocks, recs)
	}
	p.inCase = false
	if n == 0 {
		p.lastStmt = -1
		p.lastTerm = 0
	}
	return n, first
}

// body parses the body of a control statement. It reports whether it is a
// block, and for blocks the '{' and whether it is empty.
func (p *parser) body() (isBlock bool, open int, empty bool) {
	if p.at("{") {
		open, n := p.block(blockNormal)
		p.bodyBoolReturn = p.firstBoolReturn
		p.curly(open, p.blockFirst)
		p.bodyBlock = true
		p.bodyRC = rcurly{open: int32(open), close: int32(p.blockClose), last: int32(p.blockLast), next: -1}
		p.bodyTerm = p.blockTerm
		return true, open, n == 0
	}
	p.stmtCtx = ctxControl
	p.statement()
	p.bodyTerm = p.stmtTerm
	p.bodyBoolReturn = p.stmtBoolReturn
	p.bodyBlock = false
	return false, -1, false
}

func (p *parser) control(kw int) {
	isBlock, open, empty := p.body()
	if !isBlock {
		p.needBraces = append(p.needBraces, int32(kw))
	} else if empty {
		p.emptyBlocks = append(p.emptyBlocks, int32(open))
		switch p.toks[kw].text {
		case "for", "while", "do":
			p.emptyBodies = append(p.emptyBodies, emptyBody{int32(open), emptyLoop})
		}
	}
}

func (p *parser) kw() int {
	i := p.p
	p.ws(i)
	p.flag(i, fStmtKw)
	p.next()
	return i
}

// parenExpr parses ( expr ) and returns the root of expr, or -1.
func (p *parser) parenExpr() int {
	if !p.at("(") {
		return -1
	}
	p.next()
	root := p.expr()
	p.accept(")")
	return root
}

// statement parses one statement. For local variable declarations it
// returns their group. It leaves the statement's AST position in stmtPos.
func (p *parser) statement() *varGroupInfo {
	start := p.p
	ctx := p.stmtCtx
	p.stmtCtx = ctxNone
	p.boolReturn = false
	vg := p.statement0(start, ctx)
	if p.termFor == start {
		p.stmtTerm = p.term
	} else {
		p.stmtTerm = 0
	}
	p.termFor = -1
	// boolReturn is set by the return branch, last: for any other
	// statement it was reset above or by the statements nested in it.
	p.stmtBoolReturn = p.boolReturn && p.ownFor == start
	p.boolReturn = false
	if p.ownFor != start {
		p.stmtPos = start
	}
	p.ownFor = -1
	return vg
}

// own sets the AST position of the statement starting at start.
func (p *parser) own(start, pos int) {
	p.ownFor, p.stmtPos = start, pos
}

func (p *parser) statement0(start, ctx int) *varGroupInfo {
	if p.depth > maxDepth {
		p.next()
		return nil
	}
	p.depth++
	defer func() { p.depth-- }()
	t := p.cur()
	if t.kind == tKeyword || t.kind == tOp {
		switch t.text {
		case "{":
			if ctx == ctxBlock {
				p.nestedBlocks = append(p.nestedBlocks, int32(p.p))
			}
			open, _ := p.block(blockNormal)
			p.setTerm(start, p.blockTerm)
			if p.caseBlock {
				p.curly(open, p.blockFirst)
			}
			p.caseBlock = false
			return nil
		case ";":
			p.emptyStmts = append(p.emptyStmts, int32(p.p))
			p.next()
			return nil
		case "if":
			kw := p.kw()
			p.parenExpr()
			p.bodyBlock = false
			p.control(kw)
			thenTerm := p.bodyTerm
			thenReturns := p.bodyBoolReturn
			rc := p.lastBody()
			rc.kind = ckIf
			if p.at("else") {
				rc.next = int32(p.p)
				p.rightCurly(rc)
				ekw := p.kw()
				if p.at("if") {
					p.elseIfs = append(p.elseIfs, [2]int32{int32(kw), int32(p.p)})
					p.statement()
					p.setTerm(start, thenTerm&p.stmtTerm)
				} else {
					p.bodyBlock = false
					p.control(ekw)
					erc := p.lastBody()
					erc.kind = ckElse
					p.rightCurly(erc)
					p.setTerm(start, thenTerm&p.bodyTerm)
					if thenReturns && p.bodyBoolReturn {
						p.boolIfs = append(p.boolIfs, int32(kw))
					}
				}
			} else {
				p.rightCurly(rc)
			}
			return nil
		case "while":
			kw := p.kw()
			p.loopConds = append(p.loopConds, int32(p.parenExpr()))
			p.bodyBlock = false
			p.control(kw)
			p.setTerm(start, loopTerm(p.bodyTerm))
			rc := p.lastBody()
			rc.kind = ckWhile
			p.rightCurly(rc)
			return nil
		case "do":
			kw := p.kw()
			p.bodyBlock = false
			p.control(kw)
			p.setTerm(start, loopTerm(p.bodyTerm))
			rc := p.lastBody()
			rc.kind = ckDo
			if p.at("while") {
				rc.next = int32(p.p)
				p.doWhiles = append(p.doWhiles, [2]int32{int32(kw), int32(p.p)})
			}
			p.rightCurly(rc)
			if p.at("while") {
				p.kw()
				p.parenExpr()
				p.semi(p.p - 1)
			}
			return nil
		case "for":
			return p.forStmt()
		case "try":
			p.setTerm(start, p.tryStmt())
			return nil
		case "switch":
			p.switchExpr()
			p.setTerm(start, p.switchTerm)
			return nil
		case "synchronized":
			p.kw()
			p.parenExpr()
			if isBlock, open, empty := p.body(); isBlock && empty {
				p.emptyBlocks = append(p.emptyBlocks, int32(open))
			}
			p.setTerm(start, p.bodyTerm)
			return nil
		case "return":
			kw := p.kw()
			if p.at(";") {
				p.flag(kw, fNoAfter)
				p.semi(-1)
				p.setTerm(start, termAll)
				return nil
			}
			lit := p.toks[p.p].kind == tKeyword && (p.at("true") || p.at("false")) && p.atIdx(p.p+1, ";")
			root := p.expr()
			p.semi(root)
			p.boolReturn = lit
			p.own(start, kw)
			p.setTerm(start, termAll)
			return nil
		case "throw":
			p.next()
			root := p.expr()
			p.semi(root)
			p.setTerm(start, termAll)
			return nil
		case "break", "continue":
			mask := termBreak
			if p.at("continue") {
				mask = termContinue
			}
			p.next()
			stmt := -1
			if p.isIdent(p.p) {
				stmt = p.p
				p.next()
				mask = termAll
			}
			p.semi(stmt)
			p.setTerm(start, mask)
			return nil
		case "assert":
			p.kw()
			root := p.expr()
			if p.at(":") {
				p.opWraps = append(p.opWraps, int32(p.p))
				p.ws(p.p)
				p.next()
				root = p.expr()
			}
			p.semi(root)
			return nil
		case "this", "super":
			if p.atIdx(p.p+1, "(") {
				super := t.text == "super"
				p.next()
				lp := p.p
				if super {
					p.paramPads = append(p.paramPads, int32(lp))
				}
				p.args()
				p.semi(p.p - 1)
				p.own(start, lp)
				return nil
			}
		case "class", "interface", "enum", "abstract", "final", "static", "strictfp", "@":
			return p.localDecl()
		}
	}
	if t.kind == tIdent {
		switch {
		case p.atIdx(p.p+1, ":"):
			// labeled statement
			p.next()
			colon := p.p
			p.labelColons = append(p.labelColons, int32(colon))
			p.next()
			p.statement()
			p.own(start, colon)
			return nil
		case t.text == "yield" && !p.atIdx(p.p+1, "=") && !p.atIdx(p.p+1, ".") && !p.atIdx(p.p+1, "[") &&
			!p.atIdx(p.p+1, "++") && !p.atIdx(p.p+1, "--") && !p.atIdx(p.p+1, ";") && !isAssignOp(p.toks[p.p+1].text):
			p.next()
			root := p.expr()
			p.semi(root)
			return nil
		case p.isTypeDeclStart():
			return p.localDecl()
		}
	}
	if p.isLocalVarDecl(p.p) {
		return p.localDecl()
	}
	if ctx == ctxBlock || ctx == ctxControl {
		p.assignCtx = assignAllowed
	}
	root := p.expr()
	p.semi(root)
	p.own(start, root)
	return nil
}

// isLocalVarDecl reports whether a local variable declaration starts at i.
func (p *parser) isLocalVarDecl(i int) bool {
	j := p.skipType(i)
	if j < 0 || !p.isIdent(j) {
		return false
	}
	switch p.toks[j+1].text {
	case "=", ";", ",", "[", ":":
		return p.toks[j+1].kind == tOp
	}
	return false
}

// localDecl parses a local variable or class declaration.
func (p *parser) localDecl() *varGroupInfo {
	start := p.p
	mods := p.modifiers()
	modPos := -1
	if len(mods.toks) > 0 {
		modPos = int(mods.toks[0])
	}
	if p.isTypeDeclStart() {
		p.defStart(start, p.typeDeclKind())
		mods.annOK = false
		p.mods = append(p.mods, mods)
		p.typeMods = mods
		p.typeDecl(modPos)
		return nil
	}
	mods.annOK = true
	p.mods = append(p.mods, mods)
	typePos := p.typ()
	pos := typePos
	if modPos >= 0 {
		pos = modPos
	}
	kind := uint8(declLocal)
	if p.hasMod(mods, "final") {
		kind = declLocalFinal
	}
	vg := &varGroupInfo{first: int32(start), pos: int32(pos), final: kind == declLocalFinal}
	p.varFinal = kind == declLocalFinal
	r := p.declarators(kind, pos)
	for _, n := range p.declNames {
		p.hidden(int(n))
	}
	p.abbrNames = append(p.abbrNames, p.declNames...)
	if kind == declLocalFinal {
		p.abbrFinals = append(p.abbrFinals, p.declNames...)
	}
	vg.count = r.count
	vg.lastLine = r.lastLine
	vg.names = r.names
	p.semi(pos)
	p.own(start, pos)
	return vg
}

func (p *parser) forStmt() *varGroupInfo {
	kw := p.kw()
	if !p.at("(") {
		return nil
	}
	lparen := p.p
	p.next()
	// enhanced for: [mods] Type name :
	save := p.p
	isEach := false
	{
		i := p.p
		for p.atIdx(i, "final") || p.atIdx(i, "@") {
			if p.atIdx(i, "@") {
				i = p.skipAnnotationAt(i)
			} else {
				i++
			}
		}
		if j := p.skipType(i); j >= 0 && p.isIdent(j) && p.atIdx(j+1, ":") {
			isEach = true
		}
	}
	p.p = save
	if isEach {
		mods := p.modifiers()
		mods.annOK = true
		p.mods = append(p.mods, mods)
		typePos := p.typ()
		pos := typePos
		if len(mods.toks) > 0 {
			pos = int(mods.toks[0])
		}
		if !p.hasMod(mods, "final") {
			p.decls = append(p.decls, decl{kind: declLocal, name: int32(p.p)})
		} else {
			p.decls = append(p.decls, decl{kind: declLocalFinal, name: int32(p.p)})
		}
		p.hidden(p.p)
		p.abbrNames = append(p.abbrNames, int32(p.p))
		if p.hasMod(mods, "final") {
			p.abbrFinals = append(p.abbrFinals, int32(p.p))
		}
		p.defs = append(p.defs, int32(pos))
		p.next()
		p.opWraps = append(p.opWraps, int32(p.p))
		p.forEachColons = append(p.forEachColons, int32(p.p))
		p.next() // ':'
		p.expr()
	} else {
		p.events = append(p.events, event{kind: evForInit})
		if p.at(";") {
			p.noPad = append(p.noPad, int32(lparen))
			p.noSemiPad = append(p.noSemiPad, int32(p.p))
		} else {
			if p.isLocalVarDecl(p.p) || p.at("final") || p.at("@") {
				// int i = 0, j = 1 is allowed here: MultipleVariableDeclarations
				// exempts FOR_INIT, so no group is recorded.
				mods := p.modifiers()
				mods.annOK = true
				p.mods = append(p.mods, mods)
				typePos := p.typ()
				pos := typePos
				if len(mods.toks) > 0 {
					pos = int(mods.toks[0])
				}
				kind := uint8(declLocal)
				if p.hasMod(mods, "final") {
					kind = declLocalFinal
				}
				p.varFinal = kind == declLocalFinal
				p.declarators(kind, pos)
				for _, n := range p.declNames {
					p.hidden(int(n))
				}
				p.abbrNames = append(p.abbrNames, p.declNames...)
				if kind == declLocalFinal {
					p.abbrFinals = append(p.abbrFinals, p.declNames...)
				}
			} else {
				p.forExprs = true
				p.exprList()
			}
		}
		p.forSemi()
		if !p.at(";") {
			p.expr()
		} else {
			p.noSemiPad = append(p.noSemiPad, int32(p.p))
		}
		p.forSemi()
		iterLine := p.cur().line
		if !p.at(")") {
			save := len(p.events)
			p.events = append(p.events, event{kind: evForIterVisit})
			p.forExprs = true
			root := p.exprList()
			p.events[save].line = p.line(root)
		} else {
			p.noPad = append(p.noPad, int32(p.p))
			p.emptyIters = append(p.emptyIters, int32(p.p))
			p.events = append(p.events, event{kind: evForIterVisit, line: iterLine})
		}
		p.events = append(p.events, event{kind: evForIterLeave})
	}
	p.accept(")")
	p.bodyBlock = false
	p.control(kw)
	p.setTerm(kw, loopTerm(p.bodyTerm))
	rc := p.lastBody()
	rc.kind = ckFor
	p.rightCurly(rc)
	return nil
}

func (p *parser) forSemi() {
	if p.at(";") {
		p.events = append(p.events, event{kind: evSemi, tok: int32(p.p), line: p.cur().line})
		p.next()
	}
}

// exprList parses e1, e2, ... and returns the root of the first.
// In a for loop's init or iterator (forExprs) assignments are allowed.
func (p *parser) exprList() int {
	inFor := p.forExprs
	p.forExprs = false
	if inFor {
		p.assignCtx = assignAllowed
	}
	first := p.expr()
	for p.accept(",") {
		if inFor {
			p.assignCtx = assignAllowed
		}
		p.expr()
	}
	return first
}

// tryStmt parses a try statement and returns FallThrough's termination
// mask of it: its finally terminates, or its block and every catch do.
func (p *parser) tryStmt() uint8 {
	p.kw()
	tryTerm, finTerm := uint8(0), uint8(0)
	if p.at("(") {
		p.next()
		for !p.eof() && !p.at(")") {
			before := p.p
			if p.isLocalVarDecl(p.p) || p.at("final") || p.at("@") {
				mods := p.modifiers()
				mods.annOK = true
				p.mods = append(p.mods, mods)
				p.redundantAll(mods, "final")
				p.typ()
				if p.isIdent(p.p) {
					p.decls = append(p.decls, decl{kind: declLocalFinal, name: int32(p.p)})
					p.next()
				}
				if p.at("=") {
					p.ws(p.p)
					p.next()
					p.expr()
				}
			} else {
				p.expr()
			}
			if p.at(";") {
				p.events = append(p.events, event{kind: evSemiResource, tok: int32(p.p), line: p.cur().line})
				p.next()
			} else if p.p == before {
				p.next()
			}
		}
		p.accept(")")
	}
	if p.at("{") {
		open, n := p.block(blockNormal)
		p.curly(open, p.blockFirst)
		if n == 0 {
			p.emptyBlocks = append(p.emptyBlocks, int32(open))
		}
		p.tryCurly(open, ckTry)
		tryTerm = p.blockTerm
	}
	for p.at("catch") {
		kw := p.kw()
		param := -1
		if p.at("(") {
			p.next()
			mods := p.modifiers()
			mods.annOK = true
			p.mods = append(p.mods, mods)
			p.typ()
			for p.at("|") {
				p.opWraps = append(p.opWraps, int32(p.p))
				p.ws(p.p)
				p.next()
				p.typ()
			}
			if p.isIdent(p.p) && p.hasMod(mods, "final") {
				p.decls = append(p.decls, decl{kind: declLocalFinal, name: int32(p.p)})
			}
			if p.isIdent(p.p) {
				param = p.p
				p.abbrNames = append(p.abbrNames, int32(p.p))
				p.hidden(p.p)
				p.next()
			}
			p.accept(")")
		}
		if p.at("{") {
			open, n := p.block(blockNormal)
			p.curly(open, p.blockFirst)
			p.tryCurly(open, ckCatch)
			tryTerm &= p.blockTerm
			if n == 0 && p.blockClose >= 0 {
				p.emptyCatches = append(p.emptyCatches, emptyCatch{int32(kw), int32(param), int32(open), int32(p.blockClose)})
			}
		}
	}
	if p.at("finally") {
		p.kw()
		if p.at("{") {
			open, n := p.block(blockNormal)
			p.curly(open, p.blockFirst)
			p.tryCurly(open, ckFinally)
			finTerm = p.blockTerm
			if n == 0 {
				p.emptyBlocks = append(p.emptyBlocks, int32(open))
			}
		}
	}
	return tryTerm | finTerm
}

// switchExpr parses a switch statement or expression and returns the
// index of the 'switch' keyword.
func (p *parser) switchExpr() int {
	kw := p.kw()
	p.switches = append(p.switches, switchInfo{kw: int32(kw)})
	sw := len(p.switches) - 1
	p.parenExpr()
	if !p.at("{") {
		return kw
	}
	open := p.p
	p.ws(open)
	p.curly(open, curlyNoBreak)
	p.next()
	if p.at("}") {
		p.emptyBlocks = append(p.emptyBlocks, int32(open))
	}
	// FallThrough: each case group's first label and the termination
	// of its statements; all groups terminate (with break not counting)
	// for the switch to.
	group, groupTerm, groups, hasStmts := -1, uint8(0), 0, false
	all := termAll
	rules := false
	for !p.eof() && !p.at("}") {
		before := p.p
		if p.at("case") || p.at("default") {
			if group >= 0 && p.p > group && groupTerm&termBit(true, true) == 0 && hasStmts {
				p.fallThroughs = append(p.fallThroughs, [2]int32{int32(group), int32(p.p)})
			}
			if group < 0 || hasStmts {
				group = p.p
			}
			hasStmts = false
			if p.at("default") {
				p.switches[sw].hasDefault = true
			}
			p.next()
			if !p.at(":") && !p.at("->") {
				p.noLambda++
				p.exprList()
				p.noLambda--
			}
			if p.at("->") {
				rules = true
				arrow := p.p
				p.ws(arrow)
				line := p.cur().line
				p.events = append(p.events, event{kind: evLambdaVisit, line: line}, event{kind: evLambdaLeave, line: line})
				p.next()
				switch {
				case p.at("{"):
					open, _ := p.block(blockNormal)
					p.curly(open, p.blockFirst)
				case p.at("throw"):
					p.statement()
				default:
					root := p.expr()
					p.semi(root)
				}
				continue
			}
			p.accept(":")
			p.inCase = true
			continue
		}
		if n, _ := p.statements(); n > 0 {
			hasStmts = true
			groups++
			groupTerm = p.lastTerm
			all &= groupTerm
		}
		if p.p == before {
			p.next()
		}
	}
	lastHasStmts := hasStmts
	if p.at("}") {
		p.ws(p.p)
		p.next()
	}
	// A switch terminates when every group does, a break ending one
	// only the group.
	p.switchTerm = 0
	if groups > 0 && !rules && lastHasStmts {
		if all&termBit(false, false) != 0 {
			p.switchTerm |= termBit(false, false) | termBit(true, false)
		}
		if all&termBit(false, true) != 0 {
			p.switchTerm |= termBit(false, true) | termBit(true, true)
		}
	}
	return kw
}

// FallThrough's termination of a statement, as checkstyle 8.36 computes
// it: one bit per (break counts, continue counts).
const (
	termAll      uint8 = 0xF
	termBreak    uint8 = 1<<1 | 1<<3 // a break ends it when break counts
	termContinue uint8 = 1<<2 | 1<<3
)

// termBit is the bit of the mask for useBreak and useContinue.
func termBit(useBreak, useContinue bool) uint8 {
	i := 0
	if useBreak {
		i |= 1
	}
	if useContinue {
		i |= 2
	}
	return 1 << i
}

// loopTerm is a loop's termination: its body's with neither break nor
// continue counting.
func loopTerm(body uint8) uint8 {
	if body&termBit(false, false) != 0 {
		return termAll
	}
	return 0
}

// setTerm records the termination mask of the statement starting at start.
func (p *parser) setTerm(start int, mask uint8) {
	p.termFor, p.term = start, mask
}
