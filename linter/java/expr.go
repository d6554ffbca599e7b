package java

func isAssignOp(s string) bool {
	switch s {
	case "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", ">>>=":
		return true
	}
	return false
}

// binPrec is the precedence of a binary operator, 0 if s is none.
func binPrec(s string) int {
	switch s {
	case "||":
		return 3
	case "&&":
		return 4
	case "|":
		return 5
	case "^":
		return 6
	case "&":
		return 7
	case "==", "!=":
		return 8
	case "<", ">", "<=", ">=", "instanceof":
		return 9
	case "<<", ">>", ">>>":
		return 10
	case "+", "-":
		return 11
	case "*", "/", "%":
		return 12
	}
	return 0
}

// expr parses an expression and returns the token index of its AST root,
// or -1 when there is no expression.
func (p *parser) expr() int {
	if p.depth > maxDepth {
		p.next()
		return -1
	}
	p.depth++
	defer func() { p.depth-- }()
	ctx := p.assignCtx
	p.assignCtx = assignNone
	n0 := p.mnN()
	lhs := p.ternary()
	if isAssignOp(p.text()) && p.cur().kind == tOp && p.split == 0 {
		op := p.p
		if ctx != assignAllowed {
			p.assigns = append(p.assigns, int32(op))
		}
		p.ws(op)
		p.next()
		p.expr()
		if p.toks[op].text != "=" {
			p.mnRange(n0)
		}
		return op
	}
	return lhs
}

func (p *parser) ternary() int {
	n0 := p.mnN()
	c := p.binary(3)
	if p.at("?") {
		q := p.p
		p.ws(q)
		p.opWraps = append(p.opWraps, int32(q))
		p.next()
		p.expr()
		if p.at(":") {
			p.opWraps = append(p.opWraps, int32(p.p))
			p.ws(p.p)
			p.next()
			p.expr()
		}
		p.mnRange(n0)
		return q
	}
	return c
}

func (p *parser) binary(minPrec int) int {
	n0 := p.mnN()
	left := p.unary()
	for {
		t := p.cur()
		if t.kind != tOp && !(t.kind == tKeyword && t.text == "instanceof") {
			return left
		}
		s := p.text()
		prec := binPrec(s)
		if prec == 0 || prec < minPrec {
			return left
		}
		op := p.p
		p.opWraps = append(p.opWraps, int32(op))
		if s == "instanceof" {
			p.next()
			mods := p.modifiers()
			if len(mods.toks) > 0 {
				mods.annOK = true
				p.mods = append(p.mods, mods)
			}
			p.typ()
			if p.isIdent(p.p) {
				p.hidden(p.p)
				p.abbrNames = append(p.abbrNames, int32(p.p))
				p.next() // pattern variable
			}
			p.mnRange(n0)
			left = op
			continue
		}
		p.ws(op)
		p.next()
		right := p.binary(prec + 1)
		if prec != 6 && prec < 10 {
			p.kids[int32(op)] = [2]int32{int32(left), int32(right)}
		}
		if !magicWaiver(s) {
			p.mnRange(n0)
		}
		left = op
	}
}

func (p *parser) unary() int {
	t := p.cur()
	if t.kind == tOp {
		switch p.text() {
		case "+", "-", "++", "--", "!", "~":
			op := p.p
			if t.text != "!" && t.text != "~" {
				p.nwAfter = append(p.nwAfter, int32(op))
			}
			p.next()
			n0 := p.mnN()
			operand := p.unary()
			if t.text == "!" {
				p.kids[int32(op)] = [2]int32{int32(operand), -1}
			}
			if t.text == "-" || t.text == "+" {
				p.mnSigned(op, operand)
			} else {
				p.mnRange(n0)
			}
			return op
		case "(":
			if p.isCast() {
				op := p.p
				p.castParens = append(p.castParens, int32(op))
				p.next()
				p.typ()
				for p.at("&") {
					p.ws(p.p)
					p.typeAnds = append(p.typeAnds, int32(p.p))
					p.next()
					p.typ()
				}
				if p.at(")") {
					p.casts = append(p.casts, int32(p.p))
					p.castParens = append(p.castParens, int32(p.p))
				}
				p.accept(")")
				p.unary()
				return op
			}
		}
	}
	n0 := p.mnN()
	return p.postfix(p.primary(), n0)
}

// isCast decides whether '(' at p.p starts a cast.
func (p *parser) isCast() bool {
	i := p.p + 1
	j := p.skipType(i)
	if j < 0 {
		return false
	}
	for p.atIdx(j, "&") {
		j = p.skipType(j + 1)
		if j < 0 {
			return false
		}
	}
	if !p.atIdx(j, ")") {
		return false
	}
	if p.toks[i].kind == tKeyword && primitives[p.toks[i].text] && j == i+1 {
		return true
	}
	if p.toks[i].kind == tKeyword && primitives[p.toks[i].text] {
		// primitive array type
		return true
	}
	n := &p.toks[j+1]
	switch n.kind {
	case tIdent, tNumber, tChar, tString, tTextBlock:
		return true
	case tKeyword:
		switch n.text {
		case "this", "super", "new", "true", "false", "null", "switch":
			return true
		}
		return primitives[n.text]
	case tOp:
		switch n.text {
		case "(", "!", "~":
			return true
		}
	}
	return false
}

// lambdaAhead reports whether a lambda starts at p.p.
func (p *parser) lambdaAhead() bool {
	if p.noLambda > 0 {
		return false
	}
	if p.isIdent(p.p) {
		return p.atIdx(p.p+1, "->")
	}
	if p.at("(") {
		j := p.matching(p.p)
		return j > 0 && p.atIdx(j+1, "->")
	}
	return false
}

func (p *parser) lambda() int {
	if p.isIdent(p.p) {
		p.hidden(p.p)
		p.next()
	} else {
		p.next() // '('
		for !p.eof() && !p.at(")") {
			before := p.p
			if p.isIdent(p.p) && (p.atIdx(p.p+1, ",") || p.atIdx(p.p+1, ")")) {
				p.hidden(p.p)
				p.abbrNames = append(p.abbrNames, int32(p.p))
				p.next()
			} else {
				mods := p.modifiers()
				mods.annOK = true
				p.mods = append(p.mods, mods)
				p.typ()
				if p.at("...") {
					p.nwBefore = append(p.nwBefore, int32(p.p))
				}
				p.accept("...")
				if p.isIdent(p.p) {
					p.hidden(p.p)
					p.abbrNames = append(p.abbrNames, int32(p.p))
					p.next()
				}
				p.cDims()
			}
			if !p.accept(",") && p.p == before {
				p.next()
			}
		}
		p.accept(")")
	}
	arrow := p.p
	line := p.cur().line
	n0 := p.mnN()
	defer p.mnRange(n0)
	p.ws(arrow)
	p.next()
	p.events = append(p.events, event{kind: evLambdaVisit, line: line})
	p.codeDepth++
	if p.at("{") {
		open, n := p.block(blockNormal)
		p.curly(open, p.blockFirst)
		if n == 0 {
			p.emptyBodies = append(p.emptyBodies, emptyBody{int32(open), emptyLambda})
		}
	} else {
		p.assignCtx = assignAllowed
		p.expr()
	}
	p.codeDepth--
	p.events = append(p.events, event{kind: evLambdaLeave, line: line})
	return arrow
}

func (p *parser) primary() int {
	if p.lambdaAhead() {
		return p.lambda()
	}
	t := p.cur()
	i := p.p
	switch t.kind {
	case tNumber:
		p.mnNumber(i)
		p.next()
		return i
	case tString, tChar, tTextBlock:
		p.next()
		return i
	case tIdent:
		if p.atIdx(i+1, "<") {
			// Foo<Bar>::new is a type in expression position.
			if j, rest := p.skipTypeArgs(i + 1); j > 0 && rest == 0 {
				for p.atIdx(j, "[") && p.atIdx(j+1, "]") {
					j += 2
				}
				if p.atIdx(j, "::") {
					p.typ()
					return i
				}
			}
		}
		p.next()
		return i
	case tKeyword:
		switch t.text {
		case "this", "super", "true", "false", "null", "class":
			p.next()
			return i
		case "new":
			return p.creator()
		case "switch":
			n0 := p.mnN()
			defer p.mnRange(n0)
			return p.switchExpr()
		}
		if primitives[t.text] {
			p.typ()
			return i
		}
		return -1
	case tOp:
		switch t.text {
		case "(":
			p.next()
			inner := p.expr()
			p.kids[int32(i)] = [2]int32{int32(inner), -1}
			p.accept(")")
			return i
		case "@":
			p.annotation()
			return p.primary()
		case "{":
			p.arrayInit()
			return i
		case "<":
			// generic method call prefix <T>foo()
			p.typeArgs()
			return p.primary()
		}
	}
	return -1
}

// postfix parses the selectors, calls and indices after a primary whose
// numbers start at n0 (MagicNumber).
func (p *parser) postfix(root int, n0 int32) int {
	if root < 0 {
		return root
	}
	for {
		t := p.cur()
		if t.kind != tOp || p.split > 0 {
			return root
		}
		switch t.text {
		case ".":
			dot := p.p
			p.mnRange(n0)
			p.next()
			if p.at("<") {
				p.genBeforeMethod = true
				p.typeArgs()
			}
			switch {
			case p.isIdent(p.p):
				p.flag(p.p, fNotRef)
				p.next()
			case p.at("new"):
				p.creator()
			case p.cur().kind == tKeyword:
				p.next() // this, super, class
			}
			root = dot
		case "(":
			root = p.p
			p.paramPads = append(p.paramPads, int32(p.p))
			p.args()
		case "[":
			root = p.p
			p.brackets = append(p.brackets, int32(p.p))
			p.next()
			p.expr()
			p.accept("]")
			p.mnRange(n0)
		case "++", "--":
			root = p.p
			p.nwBefore = append(p.nwBefore, int32(p.p))
			p.next()
			p.mnRange(n0)
		case "::":
			root = p.p
			p.methodRefs = append(p.methodRefs, int32(p.p))
			p.mnRange(n0)
			p.next()
			if p.at("<") {
				p.genBeforeMethod = true
				p.typeArgs()
			}
			if p.isIdent(p.p) || p.at("new") {
				p.next()
			}
		default:
			return root
		}
	}
}

func (p *parser) args() {
	if !p.at("(") {
		return
	}
	p.next()
	for !p.eof() && !p.at(")") {
		before := p.p
		p.expr()
		if !p.accept(",") && p.p == before {
			if p.at(";") || p.at("}") {
				return
			}
			p.next()
		}
	}
	p.accept(")")
}

// creator parses new ... and returns the index of 'new'.
func (p *parser) creator() int {
	kw := p.p
	p.next()
	if p.at("<") {
		p.typeArgs()
	}
	for p.at("@") && p.isIdent(p.p+1) {
		p.annotation()
	}
	// type name without dims
	t := p.cur()
	switch {
	case t.kind == tKeyword && primitives[t.text]:
		p.next()
	case t.kind == tIdent:
		p.next()
		for {
			if p.at("<") {
				p.typeArgs()
			}
			if p.at(".") && p.isIdent(p.p+1) {
				p.next()
				if !p.atIdx(p.p+1, "<") {
					p.flag(p.p, fNotRef)
				}
				p.next()
				continue
			}
			break
		}
	}
	switch {
	case p.at("["):
		for p.at("[") {
			p.brackets = append(p.brackets, int32(p.p))
			p.next()
			if !p.at("]") {
				n0 := p.mnN()
				p.expr()
				p.mnRange(n0)
			}
			p.accept("]")
		}
		if p.at("{") {
			p.arrayInit()
		}
	case p.at("("):
		p.paramPads = append(p.paramPads, int32(p.p))
		p.args()
		if p.at("{") {
			// checkstyle compares method names with the IDENT under
			// LITERAL_NEW, which a qualified name (a DOT) does not have.
			name := ""
			if p.isIdent(kw+1) && !p.atIdx(kw+2, ".") {
				name = p.toks[kw+1].text
			}
			n0 := p.mnN()
			p.anonDepth++
			p.newAnon = true
			p.classBody(bodyAnon, name)
			p.anonDepth--
			p.mnRange(n0)
		}
	}
	return kw
}
