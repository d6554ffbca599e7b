package java

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file holds the checks of sun_checks.xml about layout and Javadoc
// presence that the parser records facts for: JavadocVariable,
// LeftCurly, ParenPad, OperatorWrap and InnerAssignment.

// javadocBefore reports whether a Javadoc comment ends on the last line
// before line (1-based) that is neither blank nor a // comment, as
// checkstyle's FileContents.getJavadocBefore finds it.
func (f *file) javadocBefore(line int32) bool { return f.javadocIndex(line) >= 0 }

// javadocIndex returns the index in f.lx.comments of the Javadoc
// javadocBefore finds, or -1.
func (f *file) javadocIndex(line int32) int {
	if f.javadocEnds == nil {
		f.javadocEnds = make(map[int32]int)
		for i, c := range f.lx.comments {
			if c.javadocOK {
				f.javadocEnds[c.endLine-1] = i
			}
		}
	}
	idx := line - 2
	for idx > 0 && f.blankOrComment(idx) {
		idx--
	}
	if i, ok := f.javadocEnds[idx]; ok {
		return i
	}
	return -1
}

// blankJava reports whether s is all Character.isWhitespace.
func blankJava(s string) bool {
	for _, r := range s {
		if !javaSpace(r) {
			return false
		}
	}
	return true
}

func (f *file) styleChecks() {
	toks := f.lx.toks
	ps := f.ps
	if f.l.enabled[JavadocVariable] {
		for _, d := range ps.fieldDefs {
			if !f.javadocBefore(toks[d].line) {
				f.reportTok(d, JavadocVariable, "Missing a Javadoc comment.")
			}
		}
	}
	if f.l.enabled[LeftCurly] {
		for _, c := range ps.curlies {
			t := &toks[c.open]
			ln := f.lines[t.line-1]
			if end := t.end(); end < ln.end && f.src[end] == '}' {
				continue
			}
			col := strconv.Itoa(int(t.col) + 1)
			if blankJava(f.src[ln.start:t.off]) {
				f.reportTok(c.open, LeftCurly, "'{' at column "+col+" should be on the previous line.")
			}
			if c.first >= 0 && toks[c.first].line == t.line {
				f.reportTok(c.open, LeftCurly, "'{' at column "+col+" should have line break after.")
			}
		}
	}
	if f.l.enabled[ParenPad] {
		skip := make(map[int32]bool, len(ps.castParens)+len(ps.noPad))
		for _, i := range ps.castParens {
			skip[i] = true
		}
		for _, i := range ps.noPad {
			skip[i] = true
		}
		for i := range toks {
			t := &toks[i]
			if t.kind != tOp || t.text != "(" && t.text != ")" || skip[int32(i)] {
				continue
			}
			ln := f.lines[t.line-1]
			if t.text == "(" {
				if end := t.end(); end < ln.end {
					if r, _ := utf8.DecodeRuneInString(f.src[end:ln.end]); javaSpace(r) {
						f.reportTok(int32(i), ParenPad, "'(' is followed by whitespace.")
					}
				}
				continue
			}
			if t.off > ln.start {
				before := f.src[ln.start:t.off]
				if r, _ := utf8.DecodeLastRuneInString(before); javaSpace(r) && !blankJava(before) {
					f.reportTok(int32(i), ParenPad, "')' is preceded with whitespace.")
				}
			}
		}
	}
	if f.l.enabled[TypecastParenPad] {
		for _, i := range ps.castParens {
			t := &toks[i]
			ln := f.lines[t.line-1]
			if t.text == "(" {
				if end := t.end(); end < ln.end {
					if r, _ := utf8.DecodeRuneInString(f.src[end:ln.end]); javaSpace(r) {
						f.reportTok(i, TypecastParenPad, "'(' is followed by whitespace.")
					}
				}
			} else if t.off > ln.start {
				before := f.src[ln.start:t.off]
				if r, _ := utf8.DecodeLastRuneInString(before); javaSpace(r) && !blankJava(before) {
					f.reportTok(i, TypecastParenPad, "')' is preceded with whitespace.")
				}
			}
		}
	}
	if f.l.enabled[OperatorWrap] {
		check := func(i int32, name string) {
			if !f.l.opWrapTokens[name] {
				return
			}
			t := &toks[i]
			ln := f.lines[t.line-1]
			line := f.src[ln.start:ln.end]
			if strings.Trim(line, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\v\f\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ") == t.text {
				return
			}
			if blankJava(f.src[t.end():ln.end]) {
				f.reportTok(i, OperatorWrap, "'"+t.text+"' should be on a new line.")
			}
		}
		for _, i := range ps.opWraps {
			check(i, operatorTokens[toks[i].text])
		}
		for _, i := range ps.typeAnds {
			check(i, "TYPE_EXTENSION_AND")
		}
		for _, i := range ps.methodRefs {
			check(i, "METHOD_REF")
		}
	}
	if f.l.enabled[InnerAssignment] {
		idiom := f.loopIdiom()
		for _, i := range ps.assigns {
			if !idiom[i] {
				f.reportTok(i, InnerAssignment, "Inner assignments should be avoided.")
			}
		}
	}
}

// loopIdiom returns the assignments of the "assignment in loop" idiom
// InnerAssignment allows: an operand of a comparison that is a while
// loop's condition, possibly under &&, ||, !, | and & (checkstyle 8.36
// allows it in no other loop).
func (f *file) loopIdiom() map[int32]bool {
	ps := f.ps
	toks := f.lx.toks
	allowed := make(map[int32]bool)
	strip := func(i int32) int32 {
		for i >= 0 && toks[i].text == "(" {
			k, ok := ps.kids[i]
			if !ok {
				break
			}
			i = k[0]
		}
		return i
	}
	var walk func(i int32)
	walk = func(i int32) {
		i = strip(i)
		if i < 0 || toks[i].kind != tOp {
			return
		}
		k, ok := ps.kids[i]
		if !ok {
			return
		}
		switch toks[i].text {
		case "&&", "||", "|", "&":
			walk(k[0])
			walk(k[1])
		case "!":
			walk(k[0])
		case "==", "!=", "<", "<=", ">", ">=":
			for _, o := range k {
				if o = strip(o); o >= 0 && toks[o].kind == tOp && isAssignOp(toks[o].text) {
					allowed[o] = true
				}
			}
		}
	}
	for _, r := range ps.loopConds {
		walk(r)
	}
	return allowed
}

// operatorTokens are checkstyle's token names of the operators OperatorWrap
// may check ('&' of type bounds is TYPE_EXTENSION_AND, kept apart).
var operatorTokens = map[string]string{
	"?": "QUESTION", ":": "COLON", "==": "EQUAL", "!=": "NOT_EQUAL", "/": "DIV", "+": "PLUS", "-": "MINUS",
	"*": "STAR", "%": "MOD", ">>": "SR", ">>>": "BSR", ">=": "GE", ">": "GT", "<<": "SL", "<=": "LE", "<": "LT",
	"^": "BXOR", "|": "BOR", "||": "LOR", "&": "BAND", "&&": "LAND", "instanceof": "LITERAL_INSTANCEOF",
}

// defaultOperatorWrapTokens are OperatorWrap's default tokens.
const defaultOperatorWrapTokens = "QUESTION, COLON, EQUAL, NOT_EQUAL, DIV, PLUS, MINUS, STAR, MOD, SR, BSR, GE, GT, SL, LE, LT, " +
	"BXOR, BOR, LOR, BAND, LAND, TYPE_EXTENSION_AND, LITERAL_INSTANCEOF"

// simplifyBoolean is SimplifyBooleanExpression (a true or false operand of
// ==, !=, !, || or &&) and SimplifyBooleanReturn (an if whose branches
// each return a boolean literal first).
func (f *file) simplifyBoolean() {
	toks := f.lx.toks
	ps := f.ps
	if f.l.enabled[SimplifyBooleanExpression] {
		literal := func(i int32) bool {
			for i >= 0 && toks[i].text == "(" {
				k, ok := ps.kids[i]
				if !ok {
					return false
				}
				i = k[0]
			}
			return i >= 0 && toks[i].kind == tKeyword && (toks[i].text == "true" || toks[i].text == "false")
		}
		for op, k := range ps.kids {
			switch toks[op].text {
			case "==", "!=", "||", "&&", "!":
				if literal(k[0]) || k[1] >= 0 && literal(k[1]) {
					f.reportTok(op, SimplifyBooleanExpression, "Expression can be simplified.")
				}
			}
		}
	}
	if f.l.enabled[SimplifyBooleanReturn] {
		for _, i := range ps.boolIfs {
			f.reportTok(i, SimplifyBooleanReturn, "Conditional logic can be removed.")
		}
	}
}
