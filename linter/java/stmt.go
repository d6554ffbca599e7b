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
	n := p.statements()
	if p.at("}") {
		p.ws(p.p)
		p.next()
	}
	return open, n
}

// statements parses statements up to '}' (or a case label) and returns how
// many there were.
func (p *parser) statements() int {
	n := 0
	var prevVar *varGroupInfo
	for !p.eof() && !p.at("}") && !p.at("case") && !(p.at("default") && (p.atIdx(p.p+1, ":") || p.atIdx(p.p+1, "->"))) {
		before := p.p
		vg := p.statement()
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
	}
	return n
}

// body parses the body of a control statement. It reports whether it is a
// block, and for blocks the '{' and whether it is empty.
func (p *parser) body() (isBlock bool, open int, empty bool) {
	if p.at("{") {
		open, n := p.block(blockNormal)
		return true, open, n == 0
	}
	p.statement()
	return false, -1, false
}

func (p *parser) control(kw int) {
	isBlock, open, empty := p.body()
	if !isBlock {
		p.needBraces = append(p.needBraces, int32(kw))
	} else if empty {
		p.emptyBlocks = append(p.emptyBlocks, int32(open))
	}
}

func (p *parser) kw() int {
	i := p.p
	p.ws(i)
	p.flag(i, fStmtKw)
	p.next()
	return i
}

func (p *parser) parenExpr() {
	if !p.at("(") {
		return
	}
	p.next()
	p.expr()
	p.accept(")")
}

// statement parses one statement. For local variable declarations it
// returns their group.
func (p *parser) statement() *varGroupInfo {
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
			p.block(blockNormal)
			return nil
		case ";":
			p.emptyStmts = append(p.emptyStmts, int32(p.p))
			p.next()
			return nil
		case "if":
			kw := p.kw()
			p.parenExpr()
			p.control(kw)
			if p.at("else") {
				ekw := p.kw()
				if p.at("if") {
					p.statement()
				} else {
					p.control(ekw)
				}
			}
			return nil
		case "while":
			kw := p.kw()
			p.parenExpr()
			p.control(kw)
			return nil
		case "do":
			kw := p.kw()
			p.control(kw)
			if p.at("while") {
				p.kw()
				p.parenExpr()
				p.semi(p.p - 1)
			}
			return nil
		case "for":
			return p.forStmt()
		case "try":
			p.tryStmt()
			return nil
		case "switch":
			p.switchExpr()
			return nil
		case "synchronized":
			p.kw()
			p.parenExpr()
			if isBlock, open, empty := p.body(); isBlock && empty {
				p.emptyBlocks = append(p.emptyBlocks, int32(open))
			}
			return nil
		case "return":
			kw := p.kw()
			if p.at(";") {
				p.flag(kw, fNoAfter)
				p.semi(-1)
				return nil
			}
			root := p.expr()
			p.semi(root)
			return nil
		case "throw":
			p.next()
			root := p.expr()
			p.semi(root)
			return nil
		case "break", "continue":
			p.next()
			stmt := -1
			if p.isIdent(p.p) {
				stmt = p.p
				p.next()
			}
			p.semi(stmt)
			return nil
		case "assert":
			p.kw()
			root := p.expr()
			if p.at(":") {
				p.ws(p.p)
				p.next()
				root = p.expr()
			}
			p.semi(root)
			return nil
		case "this", "super":
			if p.atIdx(p.p+1, "(") {
				p.next()
				p.args()
				p.semi(p.p - 1)
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
			p.next()
			p.statement()
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
	root := p.expr()
	p.semi(root)
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
		mods.annOK = false
		p.mods = append(p.mods, mods)
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
		kind = 255
	}
	vg := &varGroupInfo{first: int32(start)}
	r := p.declarators(kind, pos)
	vg.count = r.count
	vg.lastLine = r.lastLine
	p.semi(pos)
	return vg
}

func (p *parser) forStmt() *varGroupInfo {
	kw := p.kw()
	if !p.at("(") {
		return nil
	}
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
		}
		p.defs = append(p.defs, int32(pos))
		p.next()
		p.next() // ':'
		p.expr()
	} else {
		p.events = append(p.events, event{kind: evForInit})
		if !p.at(";") {
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
					kind = 255
				}
				p.declarators(kind, pos)
			} else {
				p.exprList()
			}
		}
		p.forSemi()
		if !p.at(";") {
			p.expr()
		}
		p.forSemi()
		iterLine := p.cur().line
		if !p.at(")") {
			save := len(p.events)
			p.events = append(p.events, event{kind: evForIterVisit})
			root := p.exprList()
			p.events[save].line = p.line(root)
		} else {
			p.events = append(p.events, event{kind: evForIterVisit, line: iterLine})
		}
		p.events = append(p.events, event{kind: evForIterLeave})
	}
	p.accept(")")
	p.control(kw)
	return nil
}

func (p *parser) forSemi() {
	if p.at(";") {
		p.events = append(p.events, event{kind: evSemi, tok: int32(p.p), line: p.cur().line})
		p.next()
	}
}

// exprList parses e1, e2, ... and returns the root of the first.
func (p *parser) exprList() int {
	first := p.expr()
	for p.accept(",") {
		p.expr()
	}
	return first
}

func (p *parser) tryStmt() {
	p.kw()
	if p.at("(") {
		p.next()
		for !p.eof() && !p.at(")") {
			before := p.p
			if p.isLocalVarDecl(p.p) || p.at("final") || p.at("@") {
				mods := p.modifiers()
				mods.annOK = true
				p.mods = append(p.mods, mods)
				p.typ()
				if p.isIdent(p.p) {
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
		if n == 0 {
			p.emptyBlocks = append(p.emptyBlocks, int32(open))
		}
	}
	for p.at("catch") {
		p.kw()
		if p.at("(") {
			p.next()
			mods := p.modifiers()
			mods.annOK = true
			p.mods = append(p.mods, mods)
			p.typ()
			for p.at("|") {
				p.ws(p.p)
				p.next()
				p.typ()
			}
			if p.isIdent(p.p) {
				p.next()
			}
			p.accept(")")
		}
		if p.at("{") {
			p.block(blockNormal)
		}
	}
	if p.at("finally") {
		p.kw()
		if p.at("{") {
			open, n := p.block(blockNormal)
			if n == 0 {
				p.emptyBlocks = append(p.emptyBlocks, int32(open))
			}
		}
	}
}

// switchExpr parses a switch statement or expression and returns the
// index of the 'switch' keyword.
func (p *parser) switchExpr() int {
	kw := p.kw()
	p.parenExpr()
	if !p.at("{") {
		return kw
	}
	open := p.p
	p.ws(open)
	p.next()
	if p.at("}") {
		p.emptyBlocks = append(p.emptyBlocks, int32(open))
	}
	for !p.eof() && !p.at("}") {
		before := p.p
		if p.at("case") || p.at("default") {
			p.next()
			if !p.at(":") && !p.at("->") {
				p.noLambda++
				p.exprList()
				p.noLambda--
			}
			if p.at("->") {
				arrow := p.p
				p.ws(arrow)
				line := p.cur().line
				p.events = append(p.events, event{kind: evLambdaVisit, line: line}, event{kind: evLambdaLeave, line: line})
				p.next()
				switch {
				case p.at("{"):
					p.block(blockNormal)
				case p.at("throw"):
					p.statement()
				default:
					root := p.expr()
					p.semi(root)
				}
				continue
			}
			p.accept(":")
			continue
		}
		p.statements()
		if p.p == before {
			p.next()
		}
	}
	if p.at("}") {
		p.ws(p.p)
		p.next()
	}
	return kw
}
