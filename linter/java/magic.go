package java

import (
	"math"
	"strconv"
	"strings"
)

// This file holds checkstyle's MagicNumber. A number is magic unless it is
// in ignoreNumbers (-1, 0, 1, 2) or sits in the initializer of a constant
// (a final variable, a variable of an interface or an enum constant's
// arguments) with only waiver nodes between them: checkstyle walks the AST
// from the number up to the nearest variable definition. The parser has no
// tree, so it records, per variable definition, the spans (in numbers) of
// the non-waiver nodes it parses in the initializer; a number inside one
// is magic. Spans are counted with a difference array, so the check stays
// linear.

// magicNum is one numeric literal.
type magicNum struct {
	tok    int32
	ctx    int32 // the innermost variable definition around it, or -1
	local  int32 // its index among the numbers of ctx
	sign   int32 // the unary '-' or '+' whose operand it is, or -1
	forced bool  // in an annotation: a non-waiver parent whatever the context
	skip   bool  // in an annotation element's default value (ignoreAnnotationElementDefaults)
}

// mnCtx is a variable definition or enum constant holding numbers.
type mnCtx struct {
	constant bool
	n        int32
}

// mnSpan is the numbers [from, to) of ctx under a non-waiver node.
type mnSpan struct{ ctx, from, to int32 }

// magicWaiver reports whether the binary operator s is one of MagicNumber's
// default constantWaiverParentToken (PLUS, MINUS, STAR, DIV).
func magicWaiver(s string) bool {
	switch s {
	case "+", "-", "*", "/":
		return true
	}
	return false
}

// mnN returns how many numbers the innermost variable definition has so far.
func (p *parser) mnN() int32 {
	if p.mnCur < 0 {
		return 0
	}
	return p.mnCtxs[p.mnCur].n
}

// mnRange records that the numbers from `from` on, up to now, are under a
// non-waiver node.
func (p *parser) mnRange(from int32) {
	if p.mnCur < 0 {
		return
	}
	if n := p.mnCtxs[p.mnCur].n; from < n {
		p.mnRanges = append(p.mnRanges, mnSpan{p.mnCur, from, n})
	}
}

// mnPush enters a variable definition's initializer and returns the
// context to restore after it.
func (p *parser) mnPush(constant bool) int32 {
	save := p.mnCur
	p.mnCtxs = append(p.mnCtxs, mnCtx{constant: constant})
	p.mnCur = int32(len(p.mnCtxs) - 1)
	return save
}

func (p *parser) mnNumber(i int) {
	n := magicNum{tok: int32(i), ctx: p.mnCur, sign: -1, forced: p.inAnnotation > 0, skip: p.annDefault > 0}
	if p.mnCur >= 0 {
		c := &p.mnCtxs[p.mnCur]
		n.local = c.n
		c.n++
	}
	p.numbers = append(p.numbers, n)
}

// mnSigned notes a unary '-' or '+' at op whose operand (root) may be a
// number, possibly parenthesized: checkstyle reports the number with its
// sign, at the sign.
func (p *parser) mnSigned(op, operand int) {
	for operand >= 0 && p.toks[operand].text == "(" {
		k, ok := p.kids[int32(operand)]
		if !ok {
			return
		}
		operand = int(k[0])
	}
	if operand < 0 || p.toks[operand].kind != tNumber || len(p.numbers) == 0 {
		return
	}
	if last := &p.numbers[len(p.numbers)-1]; last.tok == int32(operand) {
		last.sign = int32(op)
	}
}

// inInterface is ScopeUtil.isInInterfaceOrAnnotationBlock: the nearest
// enclosing class, enum, anonymous class, interface or annotation type is
// one of the last two (records do not count).
func (p *parser) inInterface() bool {
	for i := len(p.bodyKinds) - 1; i >= 0; i-- {
		switch p.bodyKinds[i] {
		case bodyRecord:
			continue
		case bodyInterface, bodyAnnotation:
			return true
		}
		return false
	}
	return false
}

// magicValue is CheckUtil.parseDouble: the value of a numeric literal, an
// int or long literal read as its two's complement bits (0xFFFFFFFF is -1).
func magicValue(text string) (float64, bool) {
	s := strings.ReplaceAll(text, "_", "")
	lower := strings.ToLower(s)
	hex := strings.HasPrefix(lower, "0x")
	isFloat := hex && strings.ContainsAny(lower, ".p") ||
		!hex && (strings.ContainsAny(lower, ".e") || strings.HasSuffix(lower, "f") || strings.HasSuffix(lower, "d"))
	if isFloat {
		s = strings.TrimRight(s, "fFdD")
		v, err := strconv.ParseFloat(s, 64)
		return v, err == nil
	}
	long := strings.HasSuffix(lower, "l")
	s = strings.TrimRight(s, "lL")
	base := 10
	switch {
	case hex:
		base, s = 16, s[2:]
	case strings.HasPrefix(lower, "0b"):
		base, s = 2, s[2:]
	case strings.HasPrefix(s, "0"):
		base, s = 8, s[1:]
	}
	if s == "" {
		return 0, true
	}
	bits := 32
	if long {
		bits = 64
	}
	u, err := strconv.ParseUint(s, base, bits)
	if err != nil {
		return 0, false
	}
	if long {
		return float64(int64(u)), true
	}
	return float64(int32(uint32(u))), true
}

// magicIgnored reports whether v is in MagicNumber's default ignoreNumbers
// as Arrays.binarySearch finds it (-0.0 is not 0.0 there).
func magicIgnored(v float64) bool {
	switch v {
	case -1, 1, 2:
		return true
	case 0:
		return !math.Signbit(v)
	}
	return false
}

func (f *file) magicNumbers() {
	if !f.l.enabled[MagicNumber] {
		return
	}
	ps := f.ps
	toks := f.lx.toks
	offs := make([]int32, len(ps.mnCtxs)+1)
	for i, c := range ps.mnCtxs {
		offs[i+1] = offs[i] + c.n + 1
	}
	under := make([]int32, offs[len(ps.mnCtxs)])
	for _, r := range ps.mnRanges {
		under[offs[r.ctx]+r.from]++
		under[offs[r.ctx]+r.to]--
	}
	for i := range ps.mnCtxs {
		var run int32
		for j := offs[i]; j < offs[i+1]; j++ {
			run += under[j]
			under[j] = run
		}
	}
	for _, n := range ps.numbers {
		if n.skip {
			continue
		}
		t := &toks[n.tok]
		v, ok := magicValue(t.text)
		if n.sign >= 0 && toks[n.sign].text == "-" {
			v = -v
		}
		if ok && magicIgnored(v) {
			continue
		}
		if !n.forced && n.ctx >= 0 && ps.mnCtxs[n.ctx].constant && under[offs[n.ctx]+n.local] == 0 {
			continue
		}
		at, text := n.tok, t.text
		if n.sign >= 0 {
			at, text = n.sign, toks[n.sign].text+text
		}
		f.reportTok(at, MagicNumber, "'"+text+"' is a magic number.")
	}
}
