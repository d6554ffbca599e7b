package java

import "unicode/utf8"

// This file holds GenericWhitespace.

// genEvent is a '<' or '>' of generics: a token and the byte of it ('>>'
// closes two).
type genEvent struct {
	tok                     int32
	off                     uint8
	start                   bool
	methodDef, beforeMethod bool
}

// genericStart records the '<' at p.p and returns its event for the
// matching genericEnd.
func (p *parser) genericStart() genEvent {
	ev := genEvent{tok: int32(p.p), start: true, methodDef: p.genMethodDef, beforeMethod: p.genBeforeMethod}
	p.genMethodDef, p.genBeforeMethod = false, false
	p.generics = append(p.generics, ev)
	return ev
}

// genericEnd records the '>' at p.p (and p.split) closing start's.
func (p *parser) genericEnd(start genEvent) {
	if t := p.text(); len(t) == 0 || t[0] != '>' {
		return
	}
	ev := start
	ev.start, ev.tok, ev.off = false, int32(p.p), uint8(p.split)
	p.generics = append(p.generics, ev)
}

// gwDefaultMessages are GenericWhitespace's messages by key, as
// MessageFormat patterns of the bracket.
var gwDefaultMessages = map[string]string{
	"ws.followed":      "''{0}'' is followed by whitespace.",
	"ws.preceded":      "''{0}'' is preceded with whitespace.",
	"ws.illegalFollow": "''{0}'' is followed by an illegal character.",
	"ws.notPreceded":   "''{0}'' is not preceded with whitespace.",
}

func (f *file) genericWhitespace() {
	if !f.l.enabled[GenericWhitespace] {
		return
	}
	toks := f.lx.toks
	depth := 0
	for _, ev := range f.ps.generics {
		t := &toks[ev.tok]
		off := t.off + int32(ev.off)
		ln := f.lines[t.line-1]
		before, after := f.src[ln.start:off], f.src[off+1:ln.end]
		rb, _ := utf8.DecodeLastRuneInString(before)
		ra, _ := utf8.DecodeRuneInString(after)
		wsBefore := before != "" && javaSpace(rb)
		report := func(key, text string) {
			pattern := f.l.gwMessages[key]
			if pattern == "" {
				pattern = gwDefaultMessages[key]
			}
			f.report(int(t.line), f.column(t.line, off), GenericWhitespace, messageFormat(pattern, text))
		}
		if ev.start {
			switch {
			case before == "":
			case ev.methodDef:
				if !javaSpace(rb) {
					report("ws.notPreceded", "<")
				}
			case wsBefore && !blankJava(before):
				report("ws.preceded", "<")
			}
			if after != "" && javaSpace(ra) {
				report("ws.followed", "<")
			}
			depth++
			continue
		}
		if wsBefore && !blankJava(before) {
			report("ws.preceded", ">")
		}
		if after != "" {
			if depth == 1 {
				switch {
				case ev.beforeMethod:
					if javaSpace(ra) {
						report("ws.followed", ">")
					}
				case !(ra == '(' || ra == ')' || ra == ',' || ra == '[' || ra == '.' || ra == ':' || ra == ';' || javaSpace(ra)):
					report("ws.illegalFollow", ">")
				}
			} else {
				amp := -1
				for i := 0; i < len(after); i++ {
					if after[i] == '&' {
						amp = i
						break
					}
				}
				if amp >= 0 && blankJava(after[:amp]) {
					if amp == 0 {
						report("ws.notPreceded", "&")
					} else if amp != 1 {
						report("ws.followed", ">")
					}
				} else if after[0] == ' ' {
					report("ws.followed", ">")
				}
			}
		}
		depth--
	}
}
