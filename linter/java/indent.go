package java

import (
	"slices"
	"strconv"
	"strings"
)

// This file holds checkstyle's Indentation check: the statement and
// declaration structure of the file, walked with the level each construct
// is expected at. Like checkstyle's handlers, a construct's level comes
// from its parent's suggestion (never from where the parent actually is),
// so code indented by 4 under a basicOffset of 2 is reported at every
// level. Expressions are not walked: their wrapped lines are accepted
// (checkstyle only reports wrapped lines indented less than required, which
// needs its expression handlers), and so is what lambdas and anonymous
// classes hold.

// indentOpts are the Indentation module's properties.
type indentOpts struct {
	basic, brace, caseIndent, throwsIndent, wrap, arrayInit int
}

// defaultIndentOpts are checkstyle's defaults.
var defaultIndentOpts = indentOpts{basic: 4, brace: 0, caseIndent: 4, throwsIndent: 4, wrap: 4, arrayInit: 4}

// level is the set of columns a construct may start at (checkstyle's
// IndentLevel), ascending; most have one.
type level []int

func (l level) ok(c int) bool { return slices.Contains(l, c) }

// plus returns every column of l moved by d.
func (l level) plus(d int) level {
	out := make(level, len(l))
	for i, c := range l {
		out[i] = c + d
	}
	return out
}

// with returns l with c added.
func (l level) with(c int) level {
	if l.ok(c) {
		return l
	}
	out := append(slices.Clone(l), c)
	slices.Sort(out)
	return out
}

func (l level) String() string {
	if len(l) == 1 {
		return strconv.Itoa(l[0])
	}
	var b strings.Builder
	b.WriteString("one of the following: ")
	for i, c := range l {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(c))
	}
	return b.String()
}

// indenter walks one file for Indentation.
type indenter struct {
	f        *file
	toks     []token
	o        indentOpts
	reported []bool       // per line: it has a finding
	depth    int          // statements being parsed, nested
	callArgs bool         // exprStmt checks what the arguments of a statement's call hold
	ovl      []*overloads // per type body being walked, its methods so far
	noChild  bool         // the statement about to be parsed is not checked as a child (its handler still runs)
	starts   []int32      // per line, the tab-expanded column of its first non-blank character; -1 before it is measured
}

// indentation runs Indentation, and OverloadMethodsDeclarationOrder,
// EmptyLineSeparator and OneTopLevelClass, which need the same walk of
// the declarations.
func (f *file) indentation() {
	if !f.l.enabled[Indentation] && !f.l.enabled[OverloadMethodsDeclarationOrder] && !f.l.enabled[EmptyLineSeparator] &&
		!f.l.enabled[OneTopLevelClass] {
		return
	}
	x := &indenter{f: f, toks: f.lx.toks, o: f.l.indent, starts: make([]int32, len(f.lines)+1), reported: make([]bool, len(f.lines)+2)}
	for i := range x.starts {
		x.starts[i] = -1
	}
	x.unit()
}

func (x *indenter) at(i int, s string) bool {
	if i < 0 || i >= len(x.toks) {
		return false
	}
	t := &x.toks[i]
	return t.text == s && (t.kind == tOp || t.kind == tKeyword || t.kind == tIdent)
}

func (x *indenter) eof(i int) bool { return i >= len(x.toks) || x.toks[i].kind == tEOF }

func (x *indenter) line(i int) int32 { return x.toks[i].line }

// col is token i's 0-based tab-expanded column.
func (x *indenter) col(i int) int { return x.f.tokColumn(&x.toks[i]) - 1 }

// lineStart is the 0-based tab-expanded column of the first non-blank
// character of line ln (comments count).
func (x *indenter) lineStart(ln int32) int {
	if ln < 1 || int(ln) >= len(x.starts) {
		return 0
	}
	if c := x.starts[ln]; c >= 0 {
		return int(c)
	}
	sp := x.f.lines[ln-1]
	off := sp.start
	for off < sp.end {
		switch x.f.src[off] {
		case ' ', '\t', '\f', '\v':
			off++
			continue
		}
		break
	}
	c := x.f.column(ln, off) - 1
	x.starts[ln] = int32(c)
	return c
}

// once tells whether token i's line already has a finding, and marks it.
func (x *indenter) once(i int) bool {
	ln := x.line(i)
	if x.reported[ln] {
		return true
	}
	x.reported[ln] = true
	return false
}

// sol tells whether token i starts its line.
func (x *indenter) sol(i int) bool { return x.lineStart(x.line(i)) == x.col(i) }

// match returns the index of the bracket closing the one at i, or -1.
func (x *indenter) match(i int) int { return x.f.ps.matching(i) }

// errorf reports the first error of a line, as checkstyle logs at most
// one Indentation finding per line.
func (x *indenter) errorf(i int, name string, actual int, want level) {
	if x.once(i) {
		return
	}
	x.f.reportTok(int32(i), Indentation, "'"+name+"' has incorrect indentation level "+strconv.Itoa(actual)+
		", expected level should be "+want.String()+".")
}

func (x *indenter) childError(i int, name string, actual int, want level) {
	if x.once(i) {
		return
	}
	x.f.reportTok(int32(i), Indentation, "'"+name+"' child has incorrect indentation level "+strconv.Itoa(actual)+
		", expected level should be "+want.String()+".")
}

// top checks a construct's first token, which must be at lv when it
// starts its line.
func (x *indenter) top(i int, name string, lv level) {
	if c := x.col(i); !lv.ok(c) && x.sol(i) {
		x.errorf(i, name, c, lv)
	}
}

// --- declarations ---

func (x *indenter) unit() {
	i := 0
	var sibs []span
	for !x.eof(i) {
		before := i
		switch {
		case x.at(i, ";"):
			i++
		case x.at(i, "package") || x.at(i, "import"):
			i = x.skipStmt(i)
		default:
			i = x.member(i, level{0}, bodyClass)
		}
		if i <= before {
			i = before + 1
		}
		sibs = append(sibs, span{before, i})
	}
	x.separation(sibs, -1)
	x.oneTopLevelClass(sibs)
}

// oneTopLevelClass is OneTopLevelClass: every top-level type but the
// public one (or, without one, the first) is reported.
func (x *indenter) oneTopLevelClass(sibs []span) {
	if !x.f.l.enabled[OneTopLevelClass] {
		return
	}
	type topType struct{ pos, name int }
	var others []topType
	public := false
	for _, sp := range sibs {
		k, mods := x.modifiers(sp.start)
		name, kw := x.typeKind(k)
		if name == "" || kw+1 >= len(x.toks) {
			continue
		}
		isPublic := false
		for _, m := range mods {
			isPublic = isPublic || x.at(m, "public")
		}
		if isPublic {
			public = true
			continue
		}
		pos := kw
		switch {
		case len(mods) > 0:
			pos = mods[0]
		case name == "annotation def":
			pos = kw - 1
		}
		others = append(others, topType{pos, kw + 1})
	}
	if !public && len(others) > 0 {
		others = others[1:]
	}
	for _, t := range others {
		x.f.reportTok(int32(t.pos), OneTopLevelClass, "Top-level class "+x.toks[t.name].text+" has to reside in its own source file.")
	}
}

// skipStmt returns the index after the ';' ending the statement or
// declaration at i, skipping bracketed parts; it stops before a '}' that
// closes an enclosing block.
func (x *indenter) skipStmt(i int) int {
	for !x.eof(i) {
		switch {
		case x.at(i, ";"):
			return i + 1
		case x.at(i, "}"):
			return i
		case x.at(i, "(") || x.at(i, "[") || x.at(i, "{"):
			i = x.pastBracket(i)
			continue
		}
		i++
	}
	return i
}

// pastBracket returns the index after the bracket closing the one at i
// (the last token, EOF, when it is not closed).
func (x *indenter) pastBracket(i int) int {
	if j := x.match(i); j >= 0 {
		return j + 1
	}
	return len(x.toks) - 1
}

// modifiers returns the index after the modifiers and annotations at i
// and the first token of each.
func (x *indenter) modifiers(i int) (int, []int) {
	var mods []int
	for !x.eof(i) {
		t := &x.toks[i]
		switch {
		case t.kind == tKeyword && modifierWords[t.text]:
			if t.text == "default" && (x.at(i+1, ":") || x.at(i+1, "->")) ||
				t.text == "static" && x.at(i+1, "{") || t.text == "synchronized" && x.at(i+1, "(") {
				return i, mods
			}
			mods = append(mods, i)
			i++
		case x.at(i, "@") && !x.at(i+1, "interface"):
			mods = append(mods, i)
			i = x.f.ps.skipAnnotationAt(i)
		default:
			return i, mods
		}
	}
	return i, mods
}

// checkMods reports each modifier that starts its line away from lv.
func (x *indenter) checkMods(mods []int, name string, lv level) {
	for _, m := range mods {
		x.top(m, name+" modifier", lv)
	}
}

// typeKind returns the name of the type declaration at i ("" for none)
// and the index of its keyword.
func (x *indenter) typeKind(i int) (string, int) {
	switch {
	case x.at(i, "class"):
		return "class def", i
	case x.at(i, "interface"):
		return "interface def", i
	case x.at(i, "enum") && x.toks[i+1].kind == tIdent:
		return "enum def", i
	case x.at(i, "@") && x.at(i+1, "interface"):
		return "annotation def", i + 1
	case x.at(i, "record") && x.toks[i+1].kind == tIdent && (x.at(i+2, "(") || x.at(i+2, "<")):
		return "record def", i
	}
	return "", -1
}

// member parses a member of a type body (or a top-level type) at i,
// expected at lv, and returns the index after it.
func (x *indenter) member(i int, lv level, body int) int {
	start := i
	i, mods := x.modifiers(i)
	if x.at(i, "static") && x.at(i+1, "{") {
		x.top(i, "static initialization", lv)
		return x.blockParent(i+1, "static initialization", lv, false, false)
	}
	if name, kw := x.typeKind(i); name != "" {
		return x.typeDecl(start, mods, kw, name, lv)
	}
	if x.at(i, "{") {
		return x.blockParent(i, "instance initialization", lv, true, false)
	}
	// A method, constructor or field: find its '(' or its end.
	j, method := x.declKind(i, len(x.toks))
	switch {
	case method:
		return x.method(start, mods, j, lv, body)
	case j < len(x.toks) && !x.eof(j):
		return x.field(start, mods, lv)
	}
	return j
}

// declKind looks at a method, constructor or field declaration whose
// type (or name) starts at i, up to limit: it returns the index of the
// parameters' '(' and true, or of the first token after the first
// variable's name and dimensions and false.
func (x *indenter) declKind(i, limit int) (int, bool) {
	j := i
	if x.at(j, "<") {
		j = x.skipAngles(j)
	}
	for j < limit && !x.eof(j) {
		switch {
		case x.at(j, "("):
			return j, true
		case x.at(j, "=") || x.at(j, ";") || x.at(j, ",") || x.at(j, "{") || x.at(j, "}"):
			return j, false
		case x.at(j, "<"):
			j = x.skipAngles(j)
			continue
		case x.at(j, "["):
			if k := x.match(j); k > 0 {
				j = k + 1
				continue
			}
		}
		j++
	}
	return j, false
}

// skipAngles returns the index after type arguments or parameters at i.
func (x *indenter) skipAngles(i int) int {
	depth := 0
	for !x.eof(i) {
		t := x.toks[i].text
		switch {
		case x.toks[i].kind != tOp && x.toks[i].kind != tIdent && x.toks[i].kind != tKeyword:
			return i
		case t == "<":
			depth++
		case t == ">" || t == ">>" || t == ">>>":
			depth -= len(t)
			if depth <= 0 {
				return i + 1
			}
		case t == "(" || t == ")" || t == "{" || t == "}" || t == ";" || t == "=":
			return i
		}
		i++
	}
	return i
}

func (x *indenter) field(start int, mods []int, lv level) int {
	if len(mods) > 0 {
		x.top(mods[0], "member def modifier", lv)
	} else if c := x.col(start); x.sol(start) && !lv.ok(c) {
		x.errorf(start, "member def type", c, lv)
	}
	return x.exprStmt(start, len(x.toks), lv)
}

// method parses a method or constructor whose parameters open at lp.
func (x *indenter) method(start int, mods []int, lp int, lv level, body int) int {
	name := "method def"
	first := start
	if len(mods) > 0 {
		first = mods[0]
	}
	if k, _ := x.modifiers(start); k == lp-1 {
		name = "ctor def"
	}
	if body == bodyAnnotation {
		name = "annotation field def"
	}
	if name == "method def" {
		x.overload(start, mods, lp-1)
	}
	if len(mods) > 0 || !x.typeNodeElsewhere(start, lp-1) {
		x.top(first, name+" modifier", lv)
	}
	rp := x.match(lp)
	if rp < 0 {
		return len(x.toks) - 1
	}
	i := rp + 1
	for !x.eof(i) && !x.at(i, "{") && !x.at(i, ";") && !x.at(i, "}") {
		if x.at(i, "(") || x.at(i, "[") {
			if k := x.match(i); k > 0 {
				i = k
			}
		}
		i++
	}
	if !x.at(i, "{") {
		return x.skipStmt(i)
	}
	return x.blockParent(i, name, lv, true, false)
}

// typeNodeElsewhere tells whether the return type from i to name has its
// AST node away from its first token: at the '[' of an array type or the
// last '.' of a qualified one. checkstyle checks a method without
// modifiers there, which never starts a line.
func (x *indenter) typeNodeElsewhere(i, name int) bool {
	if x.at(i, "<") {
		return false
	}
	depth := 0
	for ; i < name; i++ {
		switch t := x.toks[i].text; {
		case t == "<":
			depth++
		case t == ">" || t == ">>" || t == ">>>":
			depth -= len(t)
		case depth <= 0 && (t == "[" || t == "."):
			return true
		}
	}
	return false
}

// typeDecl parses a class, interface, enum, annotation type or record
// whose keyword is at kw.
func (x *indenter) typeDecl(start int, mods []int, kw int, name string, lv level) int {
	if len(mods) > 0 {
		x.checkMods(mods, name, lv)
	} else if id := kw + 1; !x.eof(id) {
		if c := x.lineStart(x.line(id)); !lv.ok(c) {
			x.errorf(id, name+" ident", c, lv)
		}
	}
	i := kw + 1
	for !x.eof(i) && !x.at(i, "{") && !x.at(i, ";") {
		if x.at(i, "(") {
			if k := x.match(i); k > 0 {
				i = k
			}
		}
		i++
	}
	if !x.at(i, "{") {
		return i + 1
	}
	body := bodyClass
	switch name {
	case "interface def":
		body = bodyInterface
	case "annotation def":
		body = bodyAnnotation
	case "enum def":
		body = bodyEnum
	case "record def":
		body = bodyRecord
	}
	return x.typeBody(i, name, lv, body)
}

// typeBody parses the body of a type opening at open; the type is at lv.
func (x *indenter) typeBody(open int, name string, lv level, body int) int {
	end := x.match(open)
	x.curlies(open, end, name, lv)
	if end < 0 {
		end = len(x.toks) - 1
	}
	kids := lv.plus(x.o.basic)
	i := open + 1
	if body != bodyAnnotation {
		defer x.overloadScope()()
	}
	if body == bodyEnum {
		i = x.enumConstants(i, end)
	}
	x.members(i, end, kids, body)
	return end + 1
}

// members parses the members of a type body of kind body from i to end,
// each at lv, and checks how they are separated.
func (x *indenter) members(i, end int, lv level, body int) {
	var sibs []span
	for i < end {
		before := i
		if x.at(i, ";") {
			i++
		} else {
			i = x.member(i, lv, body)
		}
		if i <= before {
			i = before + 1
		}
		sibs = append(sibs, span{before, i})
	}
	x.separation(sibs, body)
}

// enumConstants skips an enum's constants, to the ';' that ends them or
// the body's end.
func (x *indenter) enumConstants(i, end int) int {
	for i < end {
		switch {
		case x.at(i, ";"):
			return i + 1
		case x.at(i, "(") || x.at(i, "{") || x.at(i, "["):
			if k := x.match(i); k > 0 {
				i = k
			}
		}
		i++
	}
	return i
}

// curlies checks the braces of a construct at lv.
func (x *indenter) curlies(open, end int, name string, lv level) {
	want := lv.plus(x.o.brace)
	if open >= 0 {
		x.top(open, name+" lcurly", want)
	}
	if end >= 0 {
		x.top(end, name+" rcurly", want)
	}
}

// blockParent parses the block at open of a construct at lv: its braces
// and its statements. lcurlyChecked tells whether the '{' is checked
// (not when it is the construct's own first token).
func (x *indenter) blockParent(open int, name string, lv level, lcurlyChecked, _ bool) int {
	end := x.match(open)
	if lcurlyChecked {
		x.top(open, name+" lcurly", lv.plus(x.o.brace))
	}
	if end < 0 {
		return len(x.toks) - 1
	}
	x.top(end, name+" rcurly", lv.plus(x.o.brace))
	if x.line(open) != x.line(end) {
		x.stmts(open+1, end, name, x.kidsLevel(open, end, lv))
	}
	return end + 1
}

// kidsLevel is where the statements of a block at lv go
// (getChildrenExpectedIndent): a construct with several acceptable levels
// suggests one from where its braces are.
func (x *indenter) kidsLevel(open, end int, lv level) level {
	kids := lv.plus(x.o.basic)
	if len(lv) > 1 {
		switch {
		case x.sol(open):
			kids = level{x.col(open) + x.o.basic}
		case x.sol(end):
			kids = lv.plus(x.o.brace + x.o.basic)
			kids = kids.with(kids[0] + x.o.wrap)
		}
	}
	return kids
}

// --- statements ---

// stmts parses the statements from i to end, each expected at lv, in a
// construct named name.
func (x *indenter) stmts(i, end int, name string, lv level) {
	for i < end && !x.eof(i) {
		before := i
		i = x.stmt(i, end, name, lv, true)
		if i <= before {
			i = before + 1
		}
	}
}

// stmt parses the statement at i, expected at lv in a construct named
// name; list tells whether it is in braces (its line must start at lv) or
// a body without braces (it may be deeper).
func (x *indenter) stmt(i, end int, name string, lv level, list bool) int {
	noChild := x.noChild
	x.noChild = false
	if x.depth++; x.depth > maxDepth {
		// Pathological nesting: leave the rest of it unchecked.
		x.depth--
		return x.skipStmt(i)
	}
	defer func() { x.depth-- }()
	if x.toks[i].kind == tIdent && x.at(i+1, ":") && !x.at(i+2, ":") {
		return x.label(i, end, name, lv, list)
	}
	switch {
	case x.at(i, "{"):
		x.top(i, "block lcurly", lv)
		return x.blockParent(i, "block", lv, false, false)
	case x.at(i, "if"):
		return x.ifStmt(i, end, lv, false)
	case x.at(i, "for"):
		return x.loop(i, end, "for", lv)
	case x.at(i, "while"):
		return x.loop(i, end, "while", lv)
	case x.at(i, "do"):
		return x.doWhile(i, end, lv)
	case x.at(i, "try"):
		return x.tryStmt(i, end, lv)
	case x.at(i, "synchronized") && x.at(i+1, "("):
		x.top(i, "synchronized", lv)
		return x.afterParens(i, end, "synchronized", lv)
	case x.at(i, "switch"):
		return x.switchStmt(i, end, lv)
	case x.at(i, "yield") && !x.at(i+1, "=") && !x.at(i+1, ".") && !x.at(i+1, "[") && !x.at(i+1, "++") && !x.at(i+1, "--"):
		// Java 14 reserves yield: `yield (x);` is a yield statement.
		x.top(i, "yield", lv)
		return x.skipStmt(i)
	case x.at(i, ";"):
		return i + 1
	}
	k, mods := x.modifiers(i)
	if tn, kw := x.typeKind(k); tn != "" {
		return x.typeDecl(i, mods, kw, tn, lv)
	}
	if !x.at(i, "assert") && !noChild {
		x.child(i, name, lv, list)
	}
	x.callArgs = !x.varDecl(i)
	defer func() { x.callArgs = false }()
	return x.exprStmt(i, end, lv)
}

// lambdaLevel is the level of the lambda whose arrow is at arrow and
// which is not in parentheses (LambdaHandler): the start of the line of
// what holds it (where it is, not where it should be), one line wrap
// further when the lambda starts its line.
func (x *indenter) lambdaLevel(arrow int) level {
	first := arrow - 1
	if x.at(first, ")") {
		for k := first - 1; k >= 0 && k > first-maxTypeTokens; k-- {
			if x.match(k) == first {
				first = k
				break
			}
		}
	}
	parent := first
	if first > 0 {
		parent = first - 1
	}
	lv := level{x.lineStart(x.line(parent))}
	if x.sol(first) {
		lv = lv.plus(x.o.wrap)
	}
	return lv
}

// anonOpen returns the '{' of the anonymous class body that the
// instance creation at kw has, or -1.
func (x *indenter) anonOpen(kw int) int {
	for j := kw + 1; !x.eof(j) && j < kw+maxTypeTokens; j++ {
		switch t := &x.toks[j]; {
		case x.at(j, "("):
			k := x.match(j)
			if k > 0 && x.at(k+1, "{") && x.match(k+1) > 0 {
				return k + 1
			}
			return -1
		case t.kind == tIdent || x.at(j, ".") || x.at(j, "<") || x.at(j, ">") || x.at(j, ">>") ||
			x.at(j, ">>>") || x.at(j, ",") || x.at(j, "?") || x.at(j, "extends") || x.at(j, "super"):
		default:
			return -1
		}
	}
	return -1
}

// anonBody parses the body of an anonymous class at open, whose 'new' is
// at lv (ObjectBlockHandler): the body is at lv or one level in, its
// braces there or one line wrap in, and its members where kidsLevel puts
// them.
func (x *indenter) anonBody(open int, lv level) int {
	end := x.match(open)
	defer x.overloadScope()()
	body := lv
	for _, c := range lv {
		body = body.with(c + x.o.basic)
	}
	curly := body.plus(x.o.brace).with(body[0] + x.o.brace + x.o.wrap)
	x.top(open, "object def lcurly", curly)
	x.top(end, "object def rcurly", curly)
	x.members(open+1, end, x.kidsLevel(open, end, body), bodyAnon)
	return end + 1
}

// simpleCallee tells whether name, the token before a '(', ends a
// method name that is qualified only by names (no call chain, no cast)
// and that starts the statement at start or follows its '=', return or
// throw: a call whose handler's parent is the statement's block.
func (x *indenter) simpleCallee(start, name int) bool {
	if name < start || x.toks[name].kind != tIdent {
		return false
	}
	k := name
	for k > start && (x.at(k-1, ".") && (x.toks[k-2].kind == tIdent || x.at(k-2, "this") || x.at(k-2, "super"))) {
		k -= 2
	}
	if k == start {
		return true
	}
	p := k - 1
	return p == start && (x.at(p, "return") || x.at(p, "throw")) ||
		x.at(p, "=") && x.toks[p-1].kind == tIdent && p-1 == start
}

// callArgsAt checks the anonymous classes and block lambdas that are
// arguments of the call whose '(' is at lp and whose statement's block
// suggests lv (MethodCallHandler.getSuggestedChildIndent). It returns the
// index after the ')', or -1 when the call has none.
func (x *indenter) callArgsAt(lp int, lv level) int {
	rp := x.match(lp)
	if rp < 0 {
		return -1
	}
	found := false
	ls := x.lineStart(x.line(lp - 1))
	suggest := func(first int) level {
		l := level{ls}
		if x.line(first) != x.line(lp-1) {
			l = level{ls + x.o.basic, ls + x.o.wrap}
			if x.o.wrap < x.o.basic {
				l = level{ls + x.o.wrap, ls + x.o.basic}
			}
		}
		if x.sol(rp) {
			for _, c := range lv {
				l = l.with(c + x.o.wrap)
			}
		}
		return l
	}
	for a := lp + 1; a < rp; {
		// a is the first token of an argument.
		next := a
		for next < rp && !x.at(next, ",") {
			if x.at(next, "(") || x.at(next, "[") || x.at(next, "{") {
				if m := x.match(next); m > 0 {
					next = m
				}
			}
			next++
		}
		switch {
		case x.at(a, "new"):
			if open := x.anonOpen(a); open > 0 && x.match(open) < next {
				nl := level{x.lineStart(x.line(a))}
				if x.sol(a) {
					nl = suggest(a + 1)
				}
				x.anonBody(open, nl)
				found = true
			}
		default:
			arrow := -1
			if x.toks[a].kind == tIdent && x.at(a+1, "->") {
				arrow = a + 1
			} else if x.at(a, "(") && x.at(x.match(a)+1, "->") {
				arrow = x.match(a) + 1
			}
			if arrow > 0 && x.at(arrow+1, "{") && x.match(arrow+1) > 0 && x.match(arrow+1) < next {
				x.blockParent(arrow+1, "block", suggest(a), false, false)
				found = true
			}
		}
		a = next + 1
	}
	if !found {
		return -1
	}
	return rp + 1
}

// exprStmt skips the statement at i like skipStmt, checking the switch
// expressions directly in it, which checkstyle places at the statement's
// level lv.
func (x *indenter) exprStmt(i, end int, lv level) int {
	start := i
	for !x.eof(i) && i < end {
		switch {
		case x.at(i, "(") && x.callArgs && x.simpleCallee(start, i-1):
			if j := x.callArgsAt(i, lv); j > 0 {
				i = j
				continue
			}
			i = x.match(i) + 1
			if i <= 0 {
				return len(x.toks) - 1
			}
			continue
		case x.at(i, ";"):
			return i + 1
		case x.at(i, "}"):
			return i
		case x.at(i, "switch") && x.at(i+1, "("):
			i = x.switchStmt(i, end, lv)
			continue
		case x.at(i, "new") && !x.sol(i):
			if open := x.anonOpen(i); open > 0 {
				i = x.anonBody(open, level{x.lineStart(x.line(i))})
				continue
			}
			i++
			continue
		case x.at(i, "->") && x.at(i+1, "{") && x.match(i+1) > 0:
			i = x.blockParent(i+1, "block", x.lambdaLevel(i), false, false)
			continue
		case x.at(i, "(") || x.at(i, "[") || x.at(i, "{"):
			i = x.pastBracket(i)
			continue
		}
		i++
	}
	return i
}

// varDecl tells whether the statement at i declares local variables.
func (x *indenter) varDecl(i int) bool {
	k, _ := x.modifiers(i)
	if x.at(k, "var") {
		return true
	}
	k = x.f.ps.skipType(k)
	return k > 0 && x.toks[k].kind == tIdent && (x.at(k+1, "=") || x.at(k+1, ";") || x.at(k+1, ",") || x.at(k+1, "["))
}

// child checks a statement no handler of its own checks.
func (x *indenter) child(i int, name string, lv level, list bool) {
	start := x.lineStart(x.line(i))
	if list {
		if !lv.ok(start) {
			x.childError(i, name, start, lv)
		}
		return
	}
	if x.col(i) == start && lv[0] > start {
		x.childError(i, name, start, lv)
	}
}

// body parses the body of a control statement at lv: a block, or a
// statement that may be deeper than its suggested level.
func (x *indenter) body(i, end int, name string, lv level) int {
	if x.eof(i) || i >= end {
		return i
	}
	if x.at(i, "{") {
		return x.blockParent(i, name, lv, true, false)
	}
	return x.stmt(i, end, name, lv.plus(x.o.basic), false)
}

// afterParens parses `kw (...) body`.
func (x *indenter) afterParens(i, end int, name string, lv level) int {
	j := i + 1
	if !x.at(j, "(") {
		return x.skipStmt(i)
	}
	rp := x.match(j)
	if rp < 0 {
		return len(x.toks) - 1
	}
	return x.body(rp+1, end, name, lv)
}

func (x *indenter) loop(i, end int, name string, lv level) int {
	x.top(i, name, lv)
	return x.afterParens(i, end, name, lv)
}

func (x *indenter) ifStmt(i, end int, lv level, afterElse bool) int {
	if !afterElse {
		x.top(i, "if", lv)
	}
	j := x.afterParens(i, end, "if", lv)
	if !x.at(j, "else") {
		return j
	}
	e := j
	if !(x.at(e-1, "}") && x.line(e-1) == x.line(e)) {
		x.top(e, "else", lv)
	}
	if x.at(e+1, "if") {
		if x.line(e+1) == x.line(e) {
			return x.ifStmt(e+1, end, lv, true)
		}
	}
	return x.body(e+1, end, "else", lv)
}

func (x *indenter) doWhile(i, end int, lv level) int {
	name := "do..while"
	x.top(i, name, lv)
	j := x.body(i+1, end, name, lv)
	if x.at(j, "while") {
		x.top(j, "do..while while", lv)
		return x.skipStmt(j)
	}
	return j
}

func (x *indenter) tryStmt(i, end int, lv level) int {
	x.top(i, "try", lv)
	j := i + 1
	if x.at(j, "(") {
		rp := x.match(j)
		if rp < 0 {
			return len(x.toks) - 1
		}
		j = rp + 1
	}
	if !x.at(j, "{") {
		return x.skipStmt(i)
	}
	j = x.blockParent(j, "try", lv, true, false)
	for x.at(j, "catch") || x.at(j, "finally") {
		name := x.toks[j].text
		if !(x.at(j-1, "}") && x.line(j-1) == x.line(j)) {
			x.top(j, name, lv)
		}
		k := j + 1
		if x.at(k, "(") {
			rp := x.match(k)
			if rp < 0 {
				return len(x.toks) - 1
			}
			k = rp + 1
		}
		if !x.at(k, "{") {
			return k
		}
		j = x.blockParent(k, name, lv, true, false)
	}
	return j
}

func (x *indenter) label(i, end int, name string, lv level, list bool) int {
	// checkstyle's label may sit one level out.
	ll := lv.plus(-x.o.basic).with(lv[0])
	for _, c := range lv[1:] {
		ll = ll.with(c)
	}
	if c := x.lineStart(x.line(i)); !ll.ok(c) {
		x.childError(i, "label", c, ll)
	}
	j := i + 2
	if x.eof(j) || j >= end {
		return j
	}
	kid := ll.plus(x.o.basic)
	if c := x.lineStart(x.line(j)); x.line(j) != x.line(i) && !kid.ok(c) {
		x.childError(j, "label", c, kid)
	}
	return x.stmtNoTop(j, end, kid)
}

// stmtNoTop parses a labeled statement, whose first line the label checks.
func (x *indenter) stmtNoTop(i, end int, lv level) int {
	switch {
	case x.at(i, "for"), x.at(i, "while"):
		return x.afterParens(i, end, x.toks[i].text, lv)
	case x.at(i, "do"):
		j := x.body(i+1, end, "do..while", lv)
		return x.skipStmt(j)
	case x.at(i, "{"):
		return x.blockParent(i, "block", lv, false, false)
	}
	return x.skipStmt(i)
}

func (x *indenter) switchStmt(i, end int, lv level) int {
	x.top(i, "switch", lv)
	j := i + 1
	if !x.at(j, "(") {
		return x.skipStmt(i)
	}
	rp := x.match(j)
	if rp < 0 || !x.at(rp+1, "{") {
		return x.skipStmt(i)
	}
	open := rp + 1
	close := x.match(open)
	x.top(open, "switch lcurly", lv.plus(x.o.brace))
	if close < 0 {
		return len(x.toks) - 1
	}
	x.top(close, "switch rcurly", lv.plus(x.o.brace))
	cl := lv.plus(x.o.caseIndent)
	k := open + 1
	// group is the line of the first label of the case group being
	// parsed, or -1 after a statement; sameLine tells that the group's
	// statements start on it, which leaves them unchecked
	// (SlistHandler's isSameLineCaseGroup).
	group, sameLine := int32(-1), false
	for k < close {
		before := k
		if x.at(k, "case") || x.at(k, "default") {
			if group < 0 {
				group = x.line(k)
			}
			if c := x.lineStart(x.line(k)); !cl.ok(c) {
				x.childError(k, "case", c, cl)
			}
			// to the label's ':' or '->'
			for k < close && !x.at(k, ":") && !x.at(k, "->") {
				if x.at(k, "(") || x.at(k, "[") || x.at(k, "{") {
					if m := x.match(k); m > 0 {
						k = m
					}
				}
				k++
			}
			if x.at(k, "->") {
				if x.at(k+1, "{") && x.match(k+1) > 0 {
					k = x.blockParent(k+1, "block", cl, false, false)
				} else {
					k = x.skipStmt(k + 1)
				}
				group = -1
				continue
			}
			k++
			continue
		}
		if group >= 0 {
			sameLine = x.line(k) == group
			group = -1
		}
		if x.at(k, "{") {
			// A block in a case group sits at the label's level.
			x.top(k, "block lcurly", cl)
			k = x.blockParent(k, "block", cl, false, false)
		} else {
			x.noChild = sameLine
			k = x.stmt(k, close, "block", cl.plus(x.o.basic), true)
			x.noChild = false
		}
		if k <= before {
			k = before + 1
		}
	}
	return close + 1
}

// overloads are the methods of one type body seen so far, for
// OverloadMethodsDeclarationOrder: per name, the index among the body's
// methods and the token of the last one.
type overloads struct {
	n     int
	index map[string]int
	tok   map[string]int
}

// overloadScope starts a type body's methods and returns what ends it.
func (x *indenter) overloadScope() func() {
	x.ovl = append(x.ovl, &overloads{})
	return func() { x.ovl = x.ovl[:len(x.ovl)-1] }
}

// overload records the method named at name, whose declaration starts at
// start, and reports it when a method of the same name came before, but
// not right before (other methods in between).
func (x *indenter) overload(start int, mods []int, name int) {
	if len(x.ovl) == 0 {
		return
	}
	o := x.ovl[len(x.ovl)-1]
	if o.index == nil {
		o.index, o.tok = make(map[string]int), make(map[string]int)
	}
	o.n++
	pos := x.methodPos(start, mods, name)
	id := x.toks[name].text
	if prev, ok := o.index[id]; ok && o.n-prev > 1 {
		x.f.reportTok(int32(pos), OverloadMethodsDeclarationOrder, "All overloaded methods should be placed next to each other. "+
			"Placing non-overloaded methods in between overloaded methods with the same type is a violation. "+
			"Previous overloaded method located at line '"+integer(int(x.line(o.tok[id])))+"'.")
	}
	o.index[id], o.tok[id] = o.n, pos
}

// methodPos is the token where checkstyle places a method definition: its
// first modifier or annotation, its type parameters, or its return type's
// node (the last '[' of an array type, the last '.' of a qualified one).
func (x *indenter) methodPos(start int, mods []int, name int) int {
	if len(mods) > 0 {
		return mods[0]
	}
	if x.at(start, "<") {
		return start
	}
	bracket, dot, depth := -1, -1, 0
	for i := start; i < name; i++ {
		switch t := x.toks[i].text; {
		case t == "<":
			depth++
		case t == ">" || t == ">>" || t == ">>>":
			depth -= len(t)
		case depth <= 0 && t == "[":
			bracket = i
		case depth <= 0 && t == ".":
			dot = i
		}
	}
	switch {
	case bracket >= 0:
		return bracket
	case dot >= 0:
		return dot
	}
	return start
}
