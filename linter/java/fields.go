package java

// This file holds the checks about fields: VisibilityModifier and
// HiddenField.

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
