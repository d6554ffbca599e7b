package java

// This file holds RedundantModifier as checkstyle 8.36 has it.

// typeInfo is a type body being parsed.
type typeInfo struct {
	kind              int
	final             bool
	public            bool // isClassPublic: reachable as public from the file's top level
	protectedModifier bool
}

// pushTypeInfo enters a body of kind, declared with p.typeMods (none for
// anonymous classes and enum constants).
func (p *parser) pushTypeInfo(kind int) {
	m := p.typeMods
	ti := typeInfo{kind: kind, final: p.hasMod(m, "final"), protectedModifier: p.hasMod(m, "protected")}
	public := p.hasMod(m, "public")
	if n := len(p.typeInfos); n == 0 {
		ti.public = public && p.codeDepth == 0
	} else if outer := p.typeInfos[n-1]; public || outer.kind == bodyInterface {
		ti.public = outer.public && outer.kind != bodyAnon
	}
	p.typeMods = modsInfo{}
	p.typeInfos = append(p.typeInfos, ti)
}

// redundantFirst reports the first of mods that is one of words
// (processInterfaceOrAnnotation).
func (p *parser) redundantFirst(mods modsInfo, words ...string) {
	for _, i := range mods.toks {
		for _, w := range words {
			if p.toks[i].text == w {
				p.redundant = append(p.redundant, i)
				return
			}
		}
	}
}

// redundantAll reports every one of mods that is one of words
// (checkForRedundantModifier).
func (p *parser) redundantAll(mods modsInfo, words ...string) {
	for _, i := range mods.toks {
		for _, w := range words {
			if p.toks[i].text == w {
				p.redundant = append(p.redundant, i)
			}
		}
	}
}

func (p *parser) outerKind() int {
	if n := len(p.typeInfos); n > 0 {
		return p.typeInfos[n-1].kind
	}
	return -1
}

// redundantTypeMods checks the modifiers of a member type about to be
// declared.
func (p *parser) redundantTypeMods(mods modsInfo) {
	outer := p.outerKind()
	member := outer == bodyInterface || outer == bodyAnnotation
	switch {
	case p.at("interface"):
		p.redundantAll(mods, "static", "abstract")
	case p.at("enum") && member:
		p.redundantFirst(mods, "public", "abstract", "final", "static")
	case p.at("enum"):
		p.redundantAll(mods, "static")
	case p.at("class") && member:
		p.redundantFirst(mods, "public", "static")
	}
}

// redundantCtorMods checks a constructor of a body of kind.
func (p *parser) redundantCtorMods(mods modsInfo, kind int) {
	switch kind {
	case bodyEnum:
		for _, i := range mods.toks {
			if p.toks[i].text != "@" {
				p.redundant = append(p.redundant, i)
				break
			}
		}
	case bodyClass:
		if n := len(p.typeInfos); n > 0 && !p.typeInfos[n-1].public && !p.typeInfos[n-1].protectedModifier {
			p.redundantAll(mods, "public")
		}
	}
}

// redundantMethodMods checks a method (abstract: without a body) of a
// body of kind.
func (p *parser) redundantMethodMods(mods modsInfo, abstract bool, kind int) {
	checkFinal := p.hasMod(mods, "private")
	for i := len(p.typeInfos) - 1; i >= 0 && !checkFinal; i-- {
		ti := p.typeInfos[i]
		if ti.kind == bodyClass {
			checkFinal = ti.final
			break
		}
		if ti.kind == bodyAnon {
			checkFinal = true
			break
		}
		if ti.kind == bodyEnum {
			checkFinal = p.hasMod(mods, "static")
			break
		}
	}
	safeVarargs := false
	for _, i := range mods.toks {
		if p.toks[i].text == "@" && p.atIdx(int(i)+1, "SafeVarargs") {
			safeVarargs = true
		}
	}
	if checkFinal && !safeVarargs {
		p.redundantAll(mods, "final")
	}
	if abstract {
		p.redundant = append(p.redundant, p.paramFinals...)
	}
	if kind == bodyInterface || kind == bodyAnnotation {
		p.redundantFirst(mods, "public", "abstract", "final")
	}
}

func (f *file) redundantModifiers() {
	if !f.l.enabled[RedundantModifier] {
		return
	}
	for _, i := range f.ps.redundant {
		f.reportTok(i, RedundantModifier, "Redundant '"+f.lx.toks[i].text+"' modifier.")
	}
}
