package java

// This file holds the checks about fields and overriding:
// VisibilityModifier, HiddenField and DesignForExtension.

import (
	"slices"
	"strings"
)

// hfFrame is a class, enum, record or enum constant body: HiddenField's
// FieldFrame.
type hfFrame struct {
	parent int32
	static bool // the type has the static modifier
	fields []hfField
	cands  []hfCand
}

type hfField struct {
	name   string
	static bool
}

// hfCand is a parameter or local variable name that may hide a field.
type hfCand struct {
	tok      int32
	inStatic bool
}

// hidden records the name at i, a parameter or local variable, for
// HiddenField; checkstyle leaves out those of interfaces and annotation
// types.
func (p *parser) hidden(i int) {
	if !p.isIdent(i) || p.inInterface() {
		return
	}
	f := &p.hfFrames[p.hfCur]
	f.cands = append(f.cands, hfCand{tok: int32(i), inStatic: p.hfStatic})
}

// ignoredVisibilityAnnotations are VisibilityModifier's default
// ignoreAnnotationCanonicalNames and their simple names.
var ignoredVisibilityAnnotations = map[string]bool{
	"org.junit.Rule": true, "org.junit.ClassRule": true, "com.google.common.annotations.VisibleForTesting": true,
	"Rule": true, "ClassRule": true, "VisibleForTesting": true,
}

// fieldChecks records the fields just declared (p.declNames) with mods
// for HiddenField's frame and VisibilityModifier.
func (p *parser) fieldChecks(mods modsInfo) {
	static := p.hasMod(mods, "static")
	if n := len(p.hfOwn); n > 0 && p.hfOwn[n-1] {
		f := &p.hfFrames[p.hfCur]
		for _, i := range p.declNames {
			f.fields = append(f.fields, hfField{name: p.toks[i].text, static: static})
		}
	}
	if p.inInterface() || p.hasMod(mods, "private") || static && p.hasMod(mods, "final") {
		return
	}
	for _, i := range mods.toks {
		if p.toks[i].text != "@" {
			continue
		}
		save, saveSplit := p.p, p.split
		p.p = int(i) + 1
		name, _, _ := p.qualifiedName(false)
		p.p, p.split = save, saveSplit
		if ignoredVisibilityAnnotations[name] {
			return
		}
	}
	public := p.hasMod(mods, "public")
	for _, i := range p.declNames {
		if public && p.toks[i].text == "serialVersionUID" {
			continue
		}
		p.visibility = append(p.visibility, i)
	}
}

func (f *file) fieldReports() {
	toks := f.lx.toks
	if f.l.enabled[VisibilityModifier] {
		for _, i := range f.ps.visibility {
			f.reportTok(i, VisibilityModifier, "Variable '"+toks[i].text+"' must be private and have accessor methods.")
		}
	}
	if f.l.enabled[HiddenField] {
		f.hiddenFields()
	}
	f.designForExtension()
}

// hiddenFields walks the frames depth first (they were made in pre-order)
// keeping, per name, the depths of the frames on the path that declare it:
// a candidate hides a static field declared on its path, or an instance
// field declared no higher than the nearest static type, unless it is in a
// static context itself. Linear in frames, fields and candidates.
func (f *file) hiddenFields() {
	frames := f.ps.hfFrames
	toks := f.lx.toks
	statics := map[string][]int32{}
	insts := map[string][]int32{}
	var path []int32         // frame indices from the root
	var staticDepths []int32 // depths of the static types on the path
	pop := func() {
		fr := &frames[path[len(path)-1]]
		for _, fd := range fr.fields {
			m := insts
			if fd.static {
				m = statics
			}
			m[fd.name] = m[fd.name][:len(m[fd.name])-1]
		}
		if fr.static {
			staticDepths = staticDepths[:len(staticDepths)-1]
		}
		path = path[:len(path)-1]
	}
	for i := range frames {
		fr := &frames[i]
		for len(path) > 0 && path[len(path)-1] != fr.parent {
			pop()
		}
		depth := int32(len(path))
		path = append(path, int32(i))
		if fr.static {
			staticDepths = append(staticDepths, depth)
		}
		for _, fd := range fr.fields {
			if fd.static {
				statics[fd.name] = append(statics[fd.name], depth)
			} else {
				insts[fd.name] = append(insts[fd.name], depth)
			}
		}
		boundary := int32(-1)
		if n := len(staticDepths); n > 0 {
			boundary = staticDepths[n-1]
		}
		for _, c := range fr.cands {
			name := toks[c.tok].text
			hides := len(statics[name]) > 0
			if d := insts[name]; !hides && !c.inStatic && len(d) > 0 && d[len(d)-1] >= boundary {
				hides = true
			}
			if hides {
				f.reportTok(c.tok, HiddenField, "'"+name+"' hides a field.")
			}
		}
	}
}

// Scopes as checkstyle orders them: a scope "is in" those after it.
const (
	scopePublic int8 = iota
	scopeProtected
	scopePackage
	scopePrivate
	scopeAnonInner
)

// dfeClass is a class DesignForExtension may report.
// It also holds what FinalClass and HideUtilityClassConstructor ask.
type dfeClass struct {
	name           string
	final          bool
	ctor, openCtor bool // it declares a constructor; a non-private one

	pos                         int32
	qualified                   string
	abstract, static, extends   bool
	inInterface                 bool // declared in an interface or annotation type
	privateCtor, publicCtor     bool // a private constructor; a package or public one
	nonStatic, nonPrivateStatic bool // members (and instance initializers) of each kind
	nestedSub                   bool // subclassed by a class nested in it (checkstyle 8.36 ignores anonymous ones)
}

// dfeMethod is a method that can be overridden and is not empty, without
// its javadoc decided yet.
type dfeMethod struct {
	first, name int32 // the method's first token and name
	class       int32
	noJavadoc   bool // type parameters without modifiers: a Javadoc before them is not the method's
}

func (p *parser) modScope(m modsInfo) int8 {
	switch {
	case p.hasMod(m, "public"):
		return scopePublic
	case p.hasMod(m, "protected"):
		return scopeProtected
	case p.hasMod(m, "private"):
		return scopePrivate
	}
	return scopePackage
}

// typeScope sets the scope and class of the body of the type declared
// with mods, of kind, that is about to be parsed.
func (p *parser) typeScope(kind int, name string, mods modsInfo) {
	p.bodyScope = p.modScope(mods)
	switch kind {
	case bodyClass:
		p.dfeClasses = append(p.dfeClasses, dfeClass{name: name, final: p.hasMod(mods, "final")})
		p.bodyClass = int32(len(p.dfeClasses) - 1)
	case bodyEnum:
		p.bodyClass = -1
	default:
		p.bodyClass = p.curClass()
	}
}

func (p *parser) curClass() int32 {
	if n := len(p.classes); n > 0 {
		return p.classes[n-1]
	}
	return -1
}

// enterScope pushes the surrounding scope (ScopeUtil.getSurroundingScope:
// the least visible of the enclosing types, anonymous classes last) and
// nearest class of a type body. Enum constant bodies keep their enum's.
func (p *parser) enterScope() {
	outer, class := scopePublic, p.curClass()
	if n := len(p.scopes); n > 0 {
		outer = p.scopes[n-1]
	}
	scope := outer
	switch {
	case p.newAnon:
		scope = scopeAnonInner
	case p.bodyScope >= 0:
		scope = max(outer, p.bodyScope)
		class = p.bodyClass
	}
	p.newAnon, p.bodyScope = false, -1
	p.scopes = append(p.scopes, scope)
	p.classes = append(p.classes, class)
}

func (p *parser) leaveScope() {
	p.scopes = p.scopes[:len(p.scopes)-1]
	p.classes = p.classes[:len(p.classes)-1]
}

// dfeIgnoredAnnotations are DesignForExtension's default ignoredAnnotations.
var dfeIgnoredAnnotations = map[string]bool{"After": true, "AfterClass": true, "Before": true, "BeforeClass": true, "Test": true}

// designForExtension records the method starting at start, named at
// name, with a body that is not empty (or native), in a body of kind, if
// checkstyle's canBeOverridden holds for it.
func (p *parser) designForExtension(start, name int, mods modsInfo, kind int) {
	n := len(p.scopes)
	if n == 0 || p.scopes[n-1] > scopeProtected || kind != bodyClass && kind != bodyEnum || p.inInterface() {
		return
	}
	for _, w := range []string{"private", "abstract", "final", "static"} {
		if p.hasMod(mods, w) {
			return
		}
	}
	for _, i := range mods.toks {
		if p.toks[i].text == "@" && dfeIgnoredAnnotations[p.toks[i+1].text] && !p.atIdx(int(i)+2, ".") {
			return
		}
	}
	c := p.curClass()
	if c < 0 {
		return
	}
	p.dfeMethods = append(p.dfeMethods, dfeMethod{first: int32(start), name: int32(name), class: c,
		noJavadoc: len(mods.toks) == 0 && p.atIdx(start, "<")})
}

// javadocRightBefore reports whether a Javadoc comment lies between token
// i and the code token before it: checkstyle's comment-aware checks see
// only such a comment as a definition's Javadoc.
func (f *file) javadocRightBefore(i int32) bool {
	toks := f.lx.toks
	from := int32(0)
	if i > 0 {
		from = toks[i-1].end()
	}
	cs := f.lx.comments
	k, _ := slices.BinarySearchFunc(cs, from, func(c comment, off int32) int { return int(c.off - off) })
	for ; k < len(cs) && cs[k].off < toks[i].off; k++ {
		if cs[k].javadocOK {
			return true
		}
	}
	return false
}

func (f *file) designForExtension() {
	if !f.l.enabled[DesignForExtension] {
		return
	}
	toks := f.lx.toks
	for _, m := range f.ps.dfeMethods {
		c := &f.ps.dfeClasses[m.class]
		if c.final || c.ctor && !c.openCtor {
			continue
		}
		if !m.noJavadoc && f.javadocRightBefore(m.first) {
			continue
		}
		cls, meth := c.name, toks[m.name].text
		f.reportTok(m.first, DesignForExtension, "Class '"+cls+"' looks like designed for extension (can be subclassed), but the method '"+meth+
			"' does not have javadoc that explains how to do that safely. If class is not designed for extension consider making the class '"+cls+
			"' final or making the method '"+meth+"' static/final/abstract/empty, or adding allowed annotation for the method.")
	}
}

func (p *parser) topKind() int {
	if n := len(p.bodyKinds); n > 0 {
		return p.bodyKinds[n-1]
	}
	return -1
}

// classDecl completes the class p.bodyClass about to be parsed (named
// name, extending superName, at pos) and marks the enclosing classes it
// subclasses (FinalClass).
func (p *parser) classDecl(name, superName string, mods modsInfo, pos int32) {
	c := &p.dfeClasses[p.bodyClass]
	c.pos = pos
	c.abstract, c.static, c.extends = p.hasMod(mods, "abstract"), p.hasMod(mods, "static"), superName != ""
	c.inInterface = p.inInterface()
	if n := len(p.fcStack); n > 0 {
		c.qualified = p.dfeClasses[p.fcStack[n-1]].qualified + "." + name
	} else if p.hasPackage {
		c.qualified = p.pkgName + "." + name
	} else {
		c.qualified = name
	}
	if superName == "" {
		return
	}
	for _, o := range p.fcStack {
		oc := &p.dfeClasses[o]
		q := oc.qualified
		if !strings.Contains(superName, ".") {
			q = oc.name
		}
		if q == superName {
			oc.nestedSub = true
		}
	}
}

// memberFacts notes a method or field of a class body for
// HideUtilityClassConstructor.
func (p *parser) memberFacts(mods modsInfo, kind int, method bool) {
	if n := len(p.declStack); n > 0 && p.declStack[n-1] >= 0 {
		td := &p.typeDecls[p.declStack[n-1]]
		td.methods = td.methods || method
		td.fields = td.fields || !method
	}
	c := p.curClass()
	if c < 0 || kind != bodyClass {
		return
	}
	d := &p.dfeClasses[c]
	if p.hasMod(mods, "static") {
		d.nonPrivateStatic = d.nonPrivateStatic || !p.hasMod(mods, "private")
	} else {
		d.nonStatic = true
	}
}

func (f *file) classChecks() {
	for i := range f.ps.dfeClasses {
		c := &f.ps.dfeClasses[i]
		if f.l.enabled[FinalClass] && c.privateCtor && !c.abstract && !c.final && !c.openCtor && !c.nestedSub && !c.inInterface {
			f.reportTok(c.pos, FinalClass, "Class "+c.name+" should be declared as final.")
		}
		if f.l.enabled[HideUtilityClassConstructor] && !c.abstract && !c.extends && !c.nonStatic && c.nonPrivateStatic &&
			(!c.ctor || c.publicCtor) && !c.static {
			f.reportTok(c.pos, HideUtilityClassConstructor, "Utility classes should not have a public or default constructor.")
		}
	}
	if f.l.enabled[InterfaceIsType] {
		for _, td := range f.ps.typeDecls {
			if td.kind == bodyInterface && td.fields && !td.methods {
				f.reportTok(td.pos, InterfaceIsType, "interfaces should describe a type and hence have methods.")
			}
		}
	}
}
