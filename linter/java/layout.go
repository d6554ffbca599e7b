package java

import (
	"strconv"
	"unicode/utf8"
)

// This file holds sun_checks' checks of braces, padding and sizes that
// the parser records tokens for: RightCurly, AvoidNestedBlocks,
// NoWhitespaceBefore, EmptyForIteratorPad, MethodParamPad,
// MissingSwitchDefault, ParameterNumber, MethodLength and
// MissingJavadocMethod.

// rcurly is a block RightCurly checks: its braces, the AST position of its
// last statement (-1 for none), the else, catch, finally or do's while
// after it (-1 when the block ends its statement) and the token whose
// block it is (an rc constant).
type rcurly struct {
	open, close, last, next int32
	kind                    uint8
}

// Checkstyle's tokens for the blocks RightCurly checks and the
// definitions AtclauseOrder's target names (a Javadoc comment's place).
const (
	ckTry uint8 = iota
	ckCatch
	ckFinally
	ckIf
	ckElse
	ckDo
	ckFor
	ckWhile
	ckMethod
	ckCtor
	ckStaticInit
	ckInstanceInit
	ckClass // the type bodies, in the order of the body constants
	ckInterface
	ckAnnotation
	ckEnum
	ckRecord
	ckCompactCtor
	ckVariable // the definitions with no block of their own
	ckEnumConstant
	ckAnnField
	ckPackage
	ckKinds
)

var ckTokens = map[string]uint8{
	"LITERAL_TRY": ckTry, "LITERAL_CATCH": ckCatch, "LITERAL_FINALLY": ckFinally, "LITERAL_IF": ckIf,
	"LITERAL_ELSE": ckElse, "LITERAL_DO": ckDo, "LITERAL_FOR": ckFor, "LITERAL_WHILE": ckWhile,
	"METHOD_DEF": ckMethod, "CTOR_DEF": ckCtor, "STATIC_INIT": ckStaticInit, "INSTANCE_INIT": ckInstanceInit,
	"CLASS_DEF": ckClass, "INTERFACE_DEF": ckInterface, "ANNOTATION_DEF": ckAnnotation, "ENUM_DEF": ckEnum,
	"RECORD_DEF": ckRecord, "COMPACT_CTOR_DEF": ckCompactCtor, "VARIABLE_DEF": ckVariable,
	"ENUM_CONSTANT_DEF": ckEnumConstant, "ANNOTATION_FIELD_DEF": ckAnnField, "PACKAGE_DEF": ckPackage,
}

// rcOption is RightCurly's option.
type rcOption uint8

const (
	rcSame rcOption = iota
	rcAlone
	rcAloneOrSingleline
)

// rightCurlyRule is one RightCurly module: what it prints as its name
// (its id, or RightCurly), its option and tokens, and whether
// google_checks' XPath suppression of empty bodies applies to it.
type rightCurlyRule struct {
	code      string
	option    rcOption
	tokens    [ckKinds]bool
	skipEmpty bool
}

type switchInfo struct {
	kw         int32
	hasDefault bool
}

// methodInfo is a method, constructor or annotation element.
type methodInfo struct {
	pos, name   int32 // AST position and name
	nparams     int
	open, close int32 // the braces of the body, or -1
	mods        modsInfo
	annField    bool
	public      bool // MissingJavadocMethod's scope: public, in public types
	anon        bool // in an anonymous class: out of JavadocMethod's scope
	ctor, void  bool
	params      []int32    // parameter names
	typeParams  [][2]int32 // type parameters: first token and name
}

// lastBody returns the block the last body parsed was, or one with no
// close when it was not a block.
func (p *parser) lastBody() rcurly {
	if !p.bodyBlock {
		return rcurly{close: -1}
	}
	return p.bodyRC
}

func (p *parser) rightCurly(rc rcurly) {
	if rc.close >= 0 {
		p.rcurlies = append(p.rcurlies, rc)
	}
}

// tryCurly records the block of a try, catch or finally just parsed.
func (p *parser) tryCurly(open int, kind uint8) {
	rc := rcurly{open: int32(open), close: int32(p.blockClose), last: int32(p.blockLast), next: -1, kind: kind}
	if p.at("catch") || p.at("finally") {
		rc.next = int32(p.p)
	}
	p.rightCurly(rc)
}

// method records m with what MissingJavadocMethod needs to know of where
// it is.
func (p *parser) method(m methodInfo) {
	n := len(p.scopes)
	public := p.inInterface() || p.hasMod(m.mods, "public")
	m.public = public && n > 0 && p.scopes[n-1] == scopePublic
	m.anon = n > 0 && p.scopes[n-1] == scopeAnonInner
	var tps []int32
	for _, tp := range m.typeParams {
		tps = append(tps, tp[1])
	}
	p.styleDef(jsDef{pos: m.pos, typeParams: tps, method: !m.ctor && !m.annField,
		static: p.hasMod(m.mods, "static"), private: p.hasMod(m.mods, "private")})
	m.mods.toks = append([]int32(nil), m.mods.toks...)
	p.methods = append(p.methods, m)
}

func (f *file) layoutChecks() {
	toks := f.lx.toks
	ps := f.ps
	for _, rule := range f.l.rightCurlies {
		if f.l.enabled[rule.code] {
			f.rightCurly(rule)
		}
	}
	if f.l.enabled[AvoidNestedBlocks] {
		for _, i := range ps.nestedBlocks {
			f.reportTok(i, AvoidNestedBlocks, "Avoid nested blocks.")
		}
	}
	if f.l.enabled[NoWhitespaceBefore] {
		skip := make(map[int32]bool, len(ps.emptyStmts)+len(ps.noSemiPad))
		for _, i := range ps.emptyStmts {
			skip[i] = true
		}
		for _, i := range ps.noSemiPad {
			skip[i] = true
		}
		set := f.l.nwBeforeTokens
		check := func(i int32, name string) {
			if !set[name] {
				return
			}
			t := &toks[i]
			ln := f.lines[t.line-1]
			before := f.src[ln.start:t.off]
			if before != "" {
				if r, _ := utf8.DecodeLastRuneInString(before); !javaSpace(r) {
					return
				}
			}
			// With allowLineBreaks a token first on its line is fine.
			if f.l.nwBeforeLineBreaks && blankJava(before) {
				return
			}
			f.reportTok(i, NoWhitespaceBefore, "'"+t.text+"' is preceded with whitespace.")
		}
		for i := range toks {
			t := &toks[i]
			if t.kind != tOp || skip[int32(i)] {
				continue
			}
			switch t.text {
			case ",":
				check(int32(i), "COMMA")
			case ";":
				check(int32(i), "SEMI")
			case ".":
				check(int32(i), "DOT")
			}
		}
		for _, i := range ps.nwBefore {
			switch toks[i].text {
			case "...":
				check(i, "ELLIPSIS")
			case "++":
				check(i, "POST_INC")
			case "--":
				check(i, "POST_DEC")
			}
		}
		for _, i := range ps.methodRefs {
			check(i, "METHOD_REF")
		}
		for _, i := range ps.labelColons {
			check(i, "LABELED_STAT")
		}
	}
	if f.l.enabled[NoWhitespaceAfter] {
		followed := func(t *token) bool {
			ln := f.lines[t.line-1]
			end := t.end()
			if end >= ln.end {
				return false // allowLineBreaks
			}
			r, _ := utf8.DecodeRuneInString(f.src[end:ln.end])
			return javaSpace(r)
		}
		for i := range toks {
			t := &toks[i]
			if t.kind == tOp && (t.text == "!" || t.text == "~" || t.text == "." || t.text == "@") && followed(t) {
				f.reportTok(int32(i), NoWhitespaceAfter, "'"+t.text+"' is followed by whitespace.")
			}
		}
		for _, i := range ps.nwAfter {
			if t := &toks[i]; followed(t) {
				f.reportTok(i, NoWhitespaceAfter, "'"+t.text+"' is followed by whitespace.")
			}
		}
		// An array declarator or index: what precedes the '[' must not be
		// followed by white space on its line.
		for _, i := range ps.brackets {
			if i == 0 {
				continue
			}
			prev := &toks[i-1]
			if prev.line == toks[i].line && followed(prev) {
				f.reportTok(i, NoWhitespaceAfter, "'"+prev.text+"' is followed by whitespace.")
			}
		}
	}
	if f.l.enabled[EmptyForIteratorPad] {
		// checkstyle looks at what follows the semicolon and reports at
		// the empty iterator, which is where the ')' is.
		for _, i := range ps.emptyIters {
			semi := &toks[i-1]
			ln := f.lines[semi.line-1]
			if end := semi.end(); end < ln.end {
				if r, _ := utf8.DecodeRuneInString(f.src[end:ln.end]); javaSpace(r) {
					f.reportTok(i, EmptyForIteratorPad, "';' is followed by whitespace.")
				}
			}
		}
	}
	if f.l.enabled[MethodParamPad] {
		for _, i := range ps.paramPads {
			t := &toks[i]
			ln := f.lines[t.line-1]
			before := f.src[ln.start:t.off]
			if blankJava(before) {
				f.reportTok(i, MethodParamPad, "'(' should be on the previous line.")
			} else if r, _ := utf8.DecodeLastRuneInString(before); javaSpace(r) {
				f.reportTok(i, MethodParamPad, "'(' is preceded with whitespace.")
			}
		}
	}
	if f.l.enabled[MissingSwitchDefault] {
		for _, s := range ps.switches {
			if !s.hasDefault {
				f.reportTok(s.kw, MissingSwitchDefault, `switch without "default" clause.`)
			}
		}
	}
	for _, m := range ps.methods {
		if m.annField {
			continue
		}
		if f.l.enabled[ParameterNumber] && m.nparams > 7 {
			f.reportTok(m.name, ParameterNumber, "More than 7 parameters (found "+integer(m.nparams)+").")
		}
		if f.l.enabled[MethodLength] && m.close >= 0 {
			if n := int(toks[m.close].line-toks[m.open].line) + 1; n > 150 {
				f.reportTok(m.pos, MethodLength, "Method length is "+integer(n)+" lines (max allowed is 150).")
			}
		}
	}
	if f.l.enabled[MissingJavadocMethod] {
		for _, m := range ps.methods {
			if !m.public || f.javadocBefore(toks[m.pos].line) {
				continue
			}
			if !m.annField {
				// The lines between the braces (-1 for a body on one line),
				// 1 for an empty body or none, up to minLineCount, or an
				// allowed annotation, let a method go without Javadoc.
				lines := 1
				if m.open >= 0 && m.close >= 0 && m.close != m.open+1 {
					lines = int(toks[m.close].line-toks[m.open].line) - 1
				}
				if lines <= f.l.mjmMinLines {
					continue
				}
				allowed := false
				for a := range f.l.mjmAnnotations {
					allowed = allowed || f.hasAnnotation(m.mods, a)
				}
				if allowed {
					continue
				}
			}
			f.reportTok(m.pos, MissingJavadocMethod, "Missing a Javadoc comment.")
		}
	}
}

// hasAnnotation reports whether mods has the annotation @name (unqualified).
func (f *file) hasAnnotation(mods modsInfo, name string) bool {
	toks := f.lx.toks
	for _, i := range mods.toks {
		if toks[i].text == "@" && int(i)+1 < len(toks) && toks[i+1].text == name && (int(i)+2 >= len(toks) || toks[i+2].text != ".") {
			return true
		}
	}
	return false
}

// rightCurly runs one RightCurly module over the blocks of its tokens.
func (f *file) rightCurly(rule rightCurlyRule) {
	toks := f.lx.toks
	for _, rc := range f.ps.rcurlies {
		if !rule.tokens[rc.kind] {
			continue
		}
		// google_checks' filter exempts a '}' right after its '{' (an empty
		// body; a comment between them counts as a child in its tree).
		if rule.skipEmpty && rc.last < 0 && blankJava(f.src[toks[rc.open].off+1:toks[rc.close].off]) {
			continue
		}
		t := &toks[rc.close]
		ln := f.lines[t.line-1]
		next := &toks[rc.close+1]
		nextOther := next.kind == tEOF || next.line != t.line
		alone := nextOther && blankJava(f.src[ln.start:t.off])
		msg := ""
		switch rule.option {
		case rcSame:
			switch {
			case rc.last >= 0 && toks[rc.last].line == t.line && toks[rc.open].line != t.line:
				msg = "should have line break before."
			case rc.next >= 0 && toks[rc.next].line != t.line:
				msg = "should be on the same line as the next part of a multi-block statement (one that directly contains multiple blocks: if/else-if/else, do/while or try/catch/finally)."
			case rc.next < 0:
				single := toks[rc.open].line == t.line && (nextOther || next.text == ";")
				if !alone && !single {
					msg = "should be alone on a line."
				}
			}
		case rcAlone:
			if !alone {
				msg = "should be alone on a line."
			}
		case rcAloneOrSingleline:
			single := toks[rc.open].line == t.line && (nextOther || next.text == ";")
			if !alone && !single {
				msg = "should be alone on a line."
			}
		}
		if msg != "" {
			f.reportTok(rc.close, rule.code, "'}' at column "+strconv.Itoa(int(t.col)+1)+" "+msg)
		}
	}
}
