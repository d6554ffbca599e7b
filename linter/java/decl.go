package java

// This file parses declarations: types, their bodies and members.

func (p *parser) isTypeDeclStart() bool {
	switch {
	case p.at("class") || p.at("interface") || p.at("enum"):
		return true
	case p.at("@") && p.atIdx(p.p+1, "interface"):
		return true
	case p.at("record") && p.isIdent(p.p) && p.isIdent(p.p+1) && (p.atIdx(p.p+2, "(") || p.atIdx(p.p+2, "<")):
		return true
	}
	return false
}

// defStart records that the definition of kind (a dk constant) starts at
// token i.
func (p *parser) defStart(i int, kind uint8) {
	p.defStarts = append(p.defStarts, int32(i))
	p.defKinds = append(p.defKinds, kind)
}

// typeDeclKind is the kind of the type declaration at the parser's
// position (isTypeDeclStart holds).
func (p *parser) typeDeclKind() uint8 {
	switch {
	case p.at("interface"):
		return ckInterface
	case p.at("@"):
		return ckAnnotation
	case p.at("enum"):
		return ckEnum
	case p.at("record"):
		return ckRecord
	}
	return ckClass
}

// member parses one member of a type body (or a top-level declaration) and
// returns its AST position and, for fields, the variable group.
func (p *parser) member(cls *classCtx) (pos int, vg *varGroupInfo) {
	if p.depth > maxDepth {
		p.next()
		return -1, nil
	}
	p.depth++
	defer func() { p.depth-- }()
	start := p.p
	if p.at("{") {
		// instance initializer
		if c := p.curClass(); c >= 0 && p.topKind() == bodyClass {
			p.dfeClasses[c].nonStatic = true
		}
		p.codeDepth++
		open, n := p.block(blockInstanceInit)
		p.codeDepth--
		p.rightCurly(rcurly{open: int32(open), close: int32(p.blockClose), last: int32(p.blockLast), next: -1, kind: ckInstanceInit})
		if n == 0 {
			p.emptyBlocks = append(p.emptyBlocks, int32(open))
		}
		if cls != nil {
			cls.lastInit = open
		}
		return open, nil
	}
	if p.at("static") && p.atIdx(p.p+1, "{") {
		p.next()
		saveStatic := p.hfStatic
		p.hfStatic = true
		defer func() { p.hfStatic = saveStatic }()
		p.codeDepth++
		open, n := p.block(blockNormal)
		p.curly(open, p.blockFirst)
		p.codeDepth--
		p.rightCurly(rcurly{open: int32(open), close: int32(p.blockClose), last: int32(p.blockLast), next: -1, kind: ckStaticInit})
		if n == 0 {
			p.emptyBlocks = append(p.emptyBlocks, int32(open))
		}
		return start, nil
	}
	mods := p.modifiers()
	modPos := -1
	if len(mods.toks) > 0 {
		modPos = int(mods.toks[0])
	}
	if p.isTypeDeclStart() {
		p.defStart(start, p.typeDeclKind())
		mods.annOK = false
		p.mods = append(p.mods, mods)
		p.typeStatic = p.hasMod(mods, "static")
		p.typeMods = mods
		p.redundantTypeMods(mods)
		pos = p.typeDecl(modPos)
		return pos, nil
	}
	var typeParams [][2]int32
	if p.at("<") {
		p.genMethodDef = true
		p.typeParams()
		typeParams = append(typeParams, p.typeParamToks...)
	}
	kind := bodyClass
	if len(p.bodyKinds) > 0 {
		kind = p.bodyKinds[len(p.bodyKinds)-1]
	}
	// constructor (or compact constructor of a record)
	if p.isIdent(p.p) && (p.atIdx(p.p+1, "(") || kind == bodyRecord && p.atIdx(p.p+1, "{")) {
		if p.atIdx(p.p+1, "(") {
			p.defStart(start, ckCtor)
		} else {
			p.defStart(start, ckCompactCtor)
		}
		if c := p.curClass(); kind == bodyClass && c >= 0 {
			d := &p.dfeClasses[c]
			d.ctor = true
			private := p.hasMod(mods, "private")
			d.openCtor = d.openCtor || !private
			d.privateCtor = d.privateCtor || private
			d.publicCtor = d.publicCtor || !private && !p.hasMod(mods, "protected")
		}
		mods.annOK = true
		p.mods = append(p.mods, mods)
		pos = p.p
		if modPos >= 0 {
			pos = modPos
		}
		p.defs = append(p.defs, int32(pos))
		m := methodInfo{pos: int32(pos), name: int32(p.p), open: -1, close: -1, mods: mods, ctor: true, typeParams: typeParams}
		p.redundantCtorMods(mods, kind)
		p.next()
		p.lastParams = p.lastParams[:0]
		compact := !p.at("(")
		if p.at("(") {
			p.paramPads = append(p.paramPads, int32(p.p))
			m.nparams, _ = p.params(true)
			m.params = append(m.params, p.paramNames...)
		}
		p.throws()
		if p.at("{") {
			p.finalParameters(kind)
			p.codeDepth++
			open, n := p.block(blockNormal)
			p.curly(open, p.blockFirst)
			p.codeDepth--
			m.open, m.close = int32(open), int32(p.blockClose)
			rk := ckCtor
			if compact {
				rk = ckCompactCtor
			}
			p.rightCurly(rcurly{open: m.open, close: m.close, last: int32(p.blockLast), next: -1, kind: rk})
			if n == 0 {
				p.emptyBodies = append(p.emptyBodies, emptyBody{int32(open), emptyCtor})
			}
		} else {
			p.semi(p.p - 1)
		}
		p.method(m)
		return pos, nil
	}
	typePos := p.typ()
	if p.p == start {
		// Not a declaration we understand: skip a token.
		p.next()
		return -1, nil
	}
	isVoid := p.toks[typePos].text == "void"
	pos = typePos
	if modPos >= 0 {
		pos = modPos
	}
	if !p.isIdent(p.p) {
		mods.annOK = true
		p.mods = append(p.mods, mods)
		return pos, nil
	}
	name := p.p
	if p.isIdent(p.p) {
		switch {
		case !p.atIdx(p.p+1, "("):
			p.defStart(start, ckVariable)
		case kind == bodyAnnotation:
			p.defStart(start, ckAnnField)
		default:
			p.defStart(start, ckMethod)
		}
	}
	if p.atIdx(p.p+1, "(") {
		// method
		for _, tp := range typeParams {
			p.decls = append(p.decls, decl{kind: declMethodTP, name: tp[1]})
		}
		mods.annOK = !isVoid
		p.mods = append(p.mods, mods)
		p.memberFacts(mods, kind, true)
		p.defs = append(p.defs, int32(pos))
		p.toks[name].flags |= fNotRef
		p.next()
		// HiddenField's isInStatic stops at a method outside anonymous
		// classes.
		if p.anonDepth == 0 {
			saveStatic := p.hfStatic
			p.hfStatic = p.hasMod(mods, "static")
			defer func() { p.hfStatic = saveStatic }()
		}
		override := hasOverride(p, mods)
		p.lastParams = p.lastParams[:0]
		m := methodInfo{pos: int32(pos), name: int32(name), open: -1, close: -1, mods: mods, annField: kind == bodyAnnotation,
			void: isVoid, typeParams: typeParams}
		if kind == bodyAnnotation || !override {
			p.abbrNames = append(p.abbrNames, int32(name))
		}
		if kind == bodyAnnotation {
			p.params(false)
		} else {
			p.paramPads = append(p.paramPads, int32(p.p))
			p.decls = append(p.decls, decl{kind: declMethod, name: int32(name), aux: override, clsName: p.currentClass()})
			nparams, objParam := p.params(true)
			m.nparams = nparams
			m.params = append(m.params, p.paramNames...)
			if cls != nil {
				p.recordEqualsHashCode(cls, mods, pos, name, typePos, nparams, objParam)
			}
		}
		p.cDims()
		throwsTok := p.throws()
		var defTok = -1
		if p.at("default") {
			defTok = p.p
			p.next()
			p.annDefault++
			p.elementValue()
			p.annDefault--
		}
		if p.at("{") {
			p.finalParameters(kind)
			p.codeDepth++
			open, n := p.block(blockNormal)
			p.curly(open, p.blockFirst)
			p.codeDepth--
			m.open, m.close = int32(open), int32(p.blockClose)
			p.rightCurly(rcurly{open: m.open, close: m.close, last: int32(p.blockLast), next: -1, kind: ckMethod})
			if n > 0 {
				p.designForExtension(start, name, mods, kind)
			} else {
				p.emptyBodies = append(p.emptyBodies, emptyBody{int32(open), emptyMethod})
			}
			if cls != nil && cls.pendingMethod != nil {
				cls.pendingMethod.hasBody = true
			}
		} else {
			if p.hasMod(mods, "native") {
				p.designForExtension(start, name, mods, kind)
			}
			stmt := p.p - 1
			if defTok >= 0 {
				stmt = defTok
			} else if throwsTok >= 0 {
				stmt = throwsTok
			}
			p.semi(stmt)
		}
		if cls != nil && cls.pendingMethod != nil {
			cls.flushMethod()
		}
		p.redundantMethodMods(mods, m.open < 0, kind)
		p.method(m)
		return pos, nil
	}
	// field(s)
	mods.annOK = true
	p.mods = append(p.mods, mods)
	p.memberFacts(mods, kind, false)
	fk := p.fieldKind(mods)
	p.styleDef(jsDef{pos: int32(pos)})
	// JavadocVariable leaves serialVersionUID out.
	if p.codeDepth == 0 && p.cur().text != "serialVersionUID" {
		p.fieldDefs = append(p.fieldDefs, int32(pos))
	}
	vg = &varGroupInfo{first: int32(start)}
	p.varFinal = p.hasMod(mods, "final")
	p.varStatic = p.hasMod(mods, "static")
	if kind == bodyInterface || kind == bodyAnnotation {
		p.redundantFirst(mods, "public", "abstract", "final", "static")
	}
	last := p.declarators(fk, pos)
	p.fieldChecks(mods)
	// AbbreviationAsWordInName leaves out static fields (ignoreStatic,
	// ignoreStaticFinal) and those of interfaces.
	if !p.hasMod(mods, "static") && kind != bodyInterface && kind != bodyAnnotation {
		p.abbrNames = append(p.abbrNames, p.declNames...)
		if p.hasMod(mods, "final") {
			p.abbrFinals = append(p.abbrFinals, p.declNames...)
		}
	}
	vg.count = last.count
	if p.at(";") {
		vg.lastLine = p.cur().line
		p.semi(last.stmt)
	} else {
		vg.lastLine = last.lastLine
	}
	return pos, vg
}

func hasOverride(p *parser, m modsInfo) bool {
	for _, i := range m.toks {
		if p.toks[i].text != "@" {
			continue
		}
		j := int(i) + 1
		if p.atIdx(j, "Override") && !p.atIdx(j+1, ".") {
			return true
		}
		if p.atIdx(j, "java") && p.atIdx(j+2, "lang") && p.atIdx(j+4, "Override") && !p.atIdx(j+5, ".") {
			return true
		}
	}
	return false
}

func (p *parser) hasMod(m modsInfo, word string) bool {
	for _, i := range m.toks {
		if p.toks[i].text == word {
			return true
		}
	}
	return false
}

func (p *parser) fieldKind(m modsInfo) uint8 {
	kind := bodyClass
	if len(p.bodyKinds) > 0 {
		kind = p.bodyKinds[len(p.bodyKinds)-1]
	}
	static, final := p.hasMod(m, "static"), p.hasMod(m, "final")
	switch {
	case static && final:
		return declConstant
	case kind == bodyAnnotation:
		return declConstant
	case kind == bodyInterface && p.codeDepth == 0:
		return declConstant
	case kind == bodyInterface:
		return 255
	case static:
		return declStatic
	}
	return declMember
}

func (p *parser) currentClass() string {
	if len(p.className) == 0 {
		return ""
	}
	return p.className[len(p.className)-1]
}

type declResult struct {
	stmt     int // AST position of the node before the ';'
	lastLine int32
	count    int
	names    []int32 // the declarators' names (declNames is reset by declarators nested in initializers)
}

// declarators parses name [dims] [= init] {, ...} for fields (kind is the
// naming rule) or locals; pos is the declaration's AST position.
func (p *parser) declarators(kind uint8, pos int) declResult {
	var r declResult
	final, static := p.varFinal, p.varStatic
	p.varFinal, p.varStatic = false, false
	p.declNames = p.declNames[:0]
	for {
		if !p.isIdent(p.p) {
			break
		}
		r.count++
		name := p.p
		p.declNames = append(p.declNames, int32(name))
		r.names = append(r.names, int32(name))
		if kind != 255 {
			p.decls = append(p.decls, decl{kind: kind, name: int32(name)})
		}
		p.defs = append(p.defs, int32(pos))
		r.stmt = name
		r.lastLine = p.cur().line
		p.next()
		last := -1
		for p.at("[") && p.atIdx(p.p+1, "]") {
			p.brackets = append(p.brackets, int32(p.p))
			last = p.p
			p.next()
			r.lastLine = p.cur().line
			p.next()
		}
		if last >= 0 {
			p.cArrays = append(p.cArrays, int32(last))
		}
		if p.at("=") {
			r.stmt = p.p
			p.ws(p.p)
			p.next()
			save := p.mnPush(final || p.inInterface())
			saveStatic := p.hfStatic
			p.hfStatic = static
			if p.at("{") {
				p.arrayInit()
			} else {
				p.expr()
			}
			p.hfStatic = saveStatic
			p.mnCur = save
			r.lastLine = p.toks[p.p-1].line
		}
		if !p.accept(",") {
			break
		}
	}
	return r
}

func (p *parser) arrayInit() {
	p.nwAfter = append(p.nwAfter, int32(p.p))
	p.next() // '{'
	for !p.eof() && !p.at("}") {
		before := p.p
		if p.at("{") {
			p.arrayInit()
		} else {
			p.expr()
		}
		if !p.accept(",") && p.p == before {
			p.next()
		}
	}
	p.accept("}")
}

// params parses a formal parameter list; named reports the names to
// ParameterName. It returns the count and whether a lone parameter is of
// type Object.
func (p *parser) params(named bool) (int, bool) {
	p.next() // '('
	n := 0
	obj := false
	p.lastParams = p.lastParams[:0]
	p.paramNames = p.paramNames[:0]
	p.paramFinals = p.paramFinals[:0]
	for !p.eof() && !p.at(")") {
		before := p.p
		mods := p.modifiers()
		final := p.hasMod(mods, "final")
		mods.annOK = true
		p.mods = append(p.mods, mods)
		tstart := p.p
		p.typ()
		tname := p.src[p.toks[tstart].off:p.toks[max(p.p-1, tstart)].end()]
		if p.at("...") {
			p.nwBefore = append(p.nwBefore, int32(p.p))
		}
		p.accept("...")
		for _, i := range mods.toks {
			if p.toks[i].text == "final" {
				p.paramFinals = append(p.paramFinals, i)
			}
		}
		if p.at("this") {
			p.next() // receiver parameter
		} else if p.isIdent(p.p) {
			if p.atIdx(p.p+1, ".") && p.atIdx(p.p+2, "this") {
				p.next()
				p.next()
				p.next()
			} else {
				if named {
					p.decls = append(p.decls, decl{kind: declParam, name: int32(p.p)})
				}
				p.paramNames = append(p.paramNames, int32(p.p))
				p.abbrNames = append(p.abbrNames, int32(p.p))
				p.hidden(p.p)
				if !final {
					p.lastParams = append(p.lastParams, paramInfo{first: int32(before), name: int32(p.p)})
				}
				p.next()
			}
		}
		p.cDims()
		n++
		obj = tname == "Object" || tname == "java.lang.Object"
		if !p.accept(",") && p.p == before {
			p.next()
		}
	}
	p.accept(")")
	return n, obj && n == 1
}

// finalParameters records the parameters just read of a method or
// constructor with a body in a body of kind: checkstyle's FinalParameters
// leaves out abstract and native methods (no body) and every method of an
// interface.
func (p *parser) finalParameters(kind int) {
	if kind != bodyInterface && kind != bodyAnnotation {
		p.finalParams = append(p.finalParams, p.lastParams...)
	}
	p.lastParams = p.lastParams[:0]
}

// cDims skips the brackets after a name (int a[]) and records the last
// '[': checkstyle's outermost ARRAY_DECLARATOR, where ArrayTypeStyle
// reports.
func (p *parser) cDims() {
	last := -1
	for p.at("[") && p.atIdx(p.p+1, "]") {
		p.brackets = append(p.brackets, int32(p.p))
		last = p.p
		p.next()
		p.next()
	}
	if last >= 0 {
		p.cArrays = append(p.cArrays, int32(last))
	}
}

func (p *parser) throws() int {
	if !p.at("throws") {
		return -1
	}
	t := p.p
	p.next()
	for {
		p.typ()
		if !p.accept(",") {
			return t
		}
	}
}

// classCtx tracks one type body for EqualsHashCode and double-brace
// initialisation.
type classCtx struct {
	equals, hashCode int // position of the method or -1
	pendingMethod    *pendingMethod
	lastInit         int
}

type pendingMethod struct {
	pos              int
	equals, hashCode bool
	native, hasBody  bool
}

func (c *classCtx) flushMethod() {
	m := c.pendingMethod
	c.pendingMethod = nil
	if !(m.hasBody || m.native) {
		return
	}
	if m.equals {
		c.equals = m.pos
	}
	if m.hashCode {
		c.hashCode = m.pos
	}
}

func (p *parser) recordEqualsHashCode(c *classCtx, m modsInfo, pos, name, typePos, nparams int, objParam bool) {
	static := p.hasMod(m, "static")
	pm := &pendingMethod{pos: pos, native: p.hasMod(m, "native")}
	switch p.toks[name].text {
	case "equals":
		pm.equals = !static && !p.hasMod(m, "abstract") && nparams == 1 && objParam
	case "hashCode":
		pm.hashCode = !static && p.hasMod(m, "public") && nparams == 0 &&
			p.toks[typePos].text == "int" && p.toks[typePos].kind == tKeyword
	}
	c.pendingMethod = pm
}

// typeDecl parses class/interface/enum/@interface/record declarations.
func (p *parser) typeDecl(modPos int) int {
	static := p.typeStatic
	p.typeStatic = false
	mods := p.typeMods
	p.typeMods = modsInfo{}
	kw := p.p
	kind := bodyClass
	switch {
	case p.at("interface"):
		kind = bodyInterface
	case p.at("enum"):
		kind = bodyEnum
	case p.at("@"):
		kind = bodyAnnotation
		p.next()
	case p.at("record"):
		kind = bodyRecord
	}
	pos := kw
	if modPos >= 0 {
		pos = modPos
	}
	p.defs = append(p.defs, int32(pos))
	p.next()
	name := ""
	if p.isIdent(p.p) {
		p.decls = append(p.decls, decl{kind: declType, name: int32(p.p)})
		p.abbrNames = append(p.abbrNames, int32(p.p))
		name = p.cur().text
		p.next()
	}
	td := typeDeclInfo{pos: int32(pos)}
	for _, i := range mods.toks {
		if p.toks[i].text == "@" && p.atIdx(int(i)+1, "Generated") && !p.atIdx(int(i)+2, ".") {
			td.generated = true
		}
	}
	if p.at("<") {
		p.typeParams()
		for _, tp := range p.typeParamToks {
			td.typeParams = append(td.typeParams, tp[1])
			switch kind {
			case bodyClass:
				p.decls = append(p.decls, decl{kind: declClassTP, name: tp[1]})
			case bodyInterface:
				p.decls = append(p.decls, decl{kind: declInterfaceTP, name: tp[1]})
			case bodyRecord:
				p.decls = append(p.decls, decl{kind: declRecordTP, name: tp[1]})
			}
		}
	}
	p.typeDecls = append(p.typeDecls, td)
	p.styleDef(jsDef{pos: int32(pos), typeParams: td.typeParams})
	if kind == bodyRecord && p.at("(") {
		p.recordHeader()
	}
	superName := ""
	for p.at("extends") || p.at("implements") || p.at("permits") || p.isIdent(p.p) && p.cur().text == "permits" {
		extends := p.at("extends")
		p.next()
		for {
			if extends && superName == "" && p.isIdent(p.p) {
				save := p.p
				superName, _, _ = p.qualifiedName(false)
				p.p, p.split = save, 0
			}
			p.typ()
			if !p.accept(",") {
				break
			}
		}
	}
	td.kind = kind
	p.typeDecls[len(p.typeDecls)-1] = td
	if p.at("{") {
		p.hfNewFrame = kind == bodyClass || kind == bodyEnum || kind == bodyRecord
		p.typeStatic = static
		p.typeScope(kind, name, mods)
		if kind == bodyClass {
			p.classDecl(name, superName, mods, int32(pos))
		}
		p.typeMods = mods
		p.curTypeDecl = int32(len(p.typeDecls) - 1)
		p.classBody(kind, name)
	}
	return pos
}

func (p *parser) recordHeader() {
	p.next()
	for !p.eof() && !p.at(")") {
		before := p.p
		mods := p.modifiers()
		mods.annOK = true
		p.mods = append(p.mods, mods)
		p.typ()
		p.accept("...")
		if p.isIdent(p.p) {
			p.next()
		}
		if !p.accept(",") && p.p == before {
			p.next()
		}
	}
	p.accept(")")
}

// classBody parses { members } of a type; the braces are checked by
// WhitespaceAround.
func (p *parser) classBody(kind int, name string) {
	if p.depth > maxDepth {
		p.skipBalanced()
		return
	}
	p.depth++
	defer func() { p.depth-- }()
	p.pushTypeInfo(kind)
	defer func() { p.typeInfos = p.typeInfos[:len(p.typeInfos)-1] }()
	p.declStack = append(p.declStack, p.curTypeDecl)
	p.curTypeDecl = -1
	defer func() { p.declStack = p.declStack[:len(p.declStack)-1] }()
	if kind == bodyClass && p.bodyScope >= 0 {
		p.fcStack = append(p.fcStack, p.bodyClass)
		defer func() { p.fcStack = p.fcStack[:len(p.fcStack)-1] }()
	}
	own := p.hfNewFrame
	p.hfNewFrame = false
	if own {
		p.hfFrames = append(p.hfFrames, hfFrame{parent: p.hfCur, static: p.typeStatic})
		saveFrame := p.hfCur
		p.hfCur = int32(len(p.hfFrames) - 1)
		defer func() { p.hfCur = saveFrame }()
	}
	p.typeStatic = false
	p.hfOwn = append(p.hfOwn, own)
	defer func() { p.hfOwn = p.hfOwn[:len(p.hfOwn)-1] }()
	p.enterScope()
	defer p.leaveScope()
	open := p.p
	p.ws(open)
	p.curly(open, curlyNoBreak)
	if p.atIdx(open+1, "}") {
		p.emptyBodies = append(p.emptyBodies, emptyBody{int32(open), emptyType})
	}
	p.next()
	p.bodyKinds = append(p.bodyKinds, kind)
	p.className = append(p.className, name)
	c := &classCtx{equals: -1, hashCode: -1, lastInit: -1}
	prevPos := open // AST position of the previous sibling
	var prevVar *varGroupInfo
	strayAfterVar := 0
	first := true
	if kind == bodyEnum {
		prevPos = p.enumConstants(open)
		first = prevPos == open
	}
	for !p.eof() && !p.at("}") {
		before := p.p
		if p.at(";") {
			p.semi(prevPos)
			prevPos = before
			strayAfterVar++
			first = false
			continue
		}
		c.lastInit = -1
		pos, vg := p.member(c)
		if first && c.lastInit >= 0 {
			p.flag(open, fNoAfter)
		}
		first = false
		if vg != nil {
			if vg.count > 1 {
				p.multiVar = append(p.multiVar, multiVarDiag{tok: vg.first, comma: true})
			}
			if prevVar != nil && strayAfterVar <= 1 && prevVar.lastLine == p.toks[vg.first].line {
				p.multiVar = append(p.multiVar, multiVarDiag{tok: prevVar.first})
			}
			prevVar = vg
		} else {
			prevVar = nil
		}
		strayAfterVar = 0
		if pos >= 0 {
			prevPos = pos
		}
		if p.p == before {
			p.next()
		}
		if c.lastInit >= 0 && p.at("}") {
			p.lastInitBeforeClose(c.lastInit)
		}
	}
	if p.at("}") {
		p.ws(p.p)
		if c.lastInit >= 0 {
			p.flag(p.p, fNoBefore)
		}
		if kind != bodyAnon {
			p.rightCurly(rcurly{open: int32(open), close: int32(p.p), last: -1, next: -1, kind: ckClass + uint8(kind)})
		}
		p.next()
	}
	p.bodyKinds = p.bodyKinds[:len(p.bodyKinds)-1]
	p.className = p.className[:len(p.className)-1]
	if c.equals >= 0 && c.hashCode < 0 {
		p.equalsDiags = append(p.equalsDiags, equalsDiag{tok: int32(c.equals)})
	}
	if c.hashCode >= 0 && c.equals < 0 {
		p.equalsDiags = append(p.equalsDiags, equalsDiag{tok: int32(c.hashCode), noEquals: true})
	}
}

// lastInitBeforeClose handles an instance initializer that ends its class
// body: checkstyle does not check what follows its direct children.
func (p *parser) lastInitBeforeClose(open int) {
	close := p.matching(open)
	if close < 0 {
		return
	}
	p.flag(close, fNoAfter)
	depth := 0
	for i := open + 1; i < close; i++ {
		t := &p.toks[i]
		if t.kind == tOp {
			switch t.text {
			case "{", "(", "[":
				depth++
			case "}", ")", "]":
				depth--
			}
		}
		if depth == 0 && t.role == rWS && t.kind == tKeyword && t.flags&fStmtKw != 0 {
			t.flags |= fNoAfter
		}
	}
}

// enumConstants parses the constants of an enum body and returns the AST
// position of the last one (or of its trailing comma).
func (p *parser) enumConstants(open int) int {
	prev := open
	for !p.eof() && !p.at(";") && !p.at("}") {
		before := p.p
		start := p.p
		for p.at("@") {
			p.annotation()
		}
		if !p.isIdent(p.p) {
			if p.p == before {
				p.next()
			}
			continue
		}
		p.defs = append(p.defs, int32(start))
		p.defStart(start, ckEnumConstant)
		p.styleDef(jsDef{pos: int32(start)})
		if p.codeDepth == 0 {
			p.fieldDefs = append(p.fieldDefs, int32(start))
		}
		name := p.cur().text
		p.next()
		save := p.mnPush(true)
		if p.at("(") {
			p.paramPads = append(p.paramPads, int32(p.p))
			p.args()
		}
		if p.at("{") {
			// checkstyle compares method names with the constant's name.
			n0 := p.mnN()
			p.hfNewFrame = true
			p.classBody(bodyAnon, name)
			p.mnRange(n0)
		}
		p.mnCur = save
		prev = start
		if p.at(",") {
			prev = p.p
			p.next()
		}
	}
	if p.at(";") {
		p.semi(prev)
		prev = p.p - 1
	}
	return prev
}
