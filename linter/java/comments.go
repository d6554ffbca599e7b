package java

import (
	"regexp"
	"sort"
	"strings"
)

// This file holds CommentsIndentation (tokens SINGLE_LINE_COMMENT and
// BLOCK_COMMENT_BEGIN, as google_checks sets them) for its general case:
// a comment alone on its line must start where the line of the code
// after it starts. Its special cases (a comment before a '}', a case or
// a default: ends of blocks, empty blocks, fall-through comments) are not
// implemented, and such comments are not checked.

// commentsIndentation runs CommentsIndentation's general case.
func (f *file) commentsIndentation() {
	if !f.l.enabled[CommentsIndentation] {
		return
	}
	toks := f.lx.toks
	cs := f.lx.comments
	k := 0
	for n, c := range cs {
		line, _ := lineOfOffset(f.lx.lines, c.off)
		ln := f.lines[line-1]
		if !blankJava(f.src[ln.start:c.off]) {
			continue // trailing: code before it on its line
		}
		for k < len(toks) && toks[k].kind != tEOF && toks[k].off < c.end {
			k++
		}
		next := &toks[k]
		block := strings.HasPrefix(f.src[c.off:c.end], "/*")
		if next.kind == tEOF || block && next.line == line {
			continue // the end of the file, or code after the block comment on its line
		}
		col := utf16Len(f.src[ln.start:c.off])
		// A following comment at the same column is what it must line up
		// with; one at another column is passed over.
		if n+1 < len(cs) && cs[n+1].off < next.off {
			nl, _ := lineOfOffset(f.lx.lines, cs[n+1].off)
			if utf16Len(f.src[f.lines[nl-1].start:cs[n+1].off]) == col {
				continue
			}
		}
		switch {
		case next.text == "}":
			continue
		case next.kind == tKeyword && (next.text == "case" || next.text == "default" && k+1 < len(toks) && (toks[k+1].text == ":" || toks[k+1].text == "->")):
			continue
		}
		nln := f.lines[next.line-1]
		start := f.src[nln.start:nln.end]
		lineStart := utf16Len(start[:len(start)-len(strings.TrimLeft(start, " \t\f"))])
		if col == lineStart {
			continue
		}
		msg := "Comment has incorrect indentation level "
		if block {
			msg = "Block comment has incorrect indentation level "
		}
		f.report(int(line), f.column(line, c.off), CommentsIndentation, msg+integer(col)+", expected is "+
			integer(int(next.col))+", indentation should be the same level as line "+integer(int(next.line))+".")
	}
}

// fallThroughRelief is FallThrough's default reliefPattern.
var fallThroughRelief = regexp.MustCompile(`falls?[ -]?thr(u|ough)`)

// fallThrough is FallThrough at checkstyle 8.36's defaults
// (checkLastCaseGroup false): a case group whose statements can complete
// normally falls through to the next, unless a comment matching the
// relief pattern is on the last non-blank line before the next label, or
// before it on its line.
func (f *file) fallThrough() {
	if !f.l.enabled[FallThrough] {
		return
	}
	toks := f.lx.toks
	for _, ft := range f.ps.fallThroughs {
		cur, next := &toks[ft[0]], &toks[ft[1]]
		nl := f.lines[next.line-1]
		if f.reliefIn(nl.start, next.off) {
			continue
		}
		relieved := false
		for ln := next.line - 1; ln > cur.line; ln-- {
			l := f.lines[ln-1]
			if !blankJava(f.src[l.start:l.end]) {
				relieved = f.reliefIn(l.start, l.end)
				break
			}
		}
		if !relieved {
			f.reportTok(ft[1], FallThrough, "Fall through from previous branch of the switch statement.")
		}
	}
}

// reliefIn tells whether the relief pattern matches src[start:end] inside
// a comment.
func (f *file) reliefIn(start, end int32) bool {
	loc := fallThroughRelief.FindStringIndex(f.src[start:end])
	if loc == nil {
		return false
	}
	at := start + int32(loc[0])
	cs := f.lx.comments
	i := sort.Search(len(cs), func(i int) bool { return cs[i].end > at })
	return i < len(cs) && cs[i].off <= at
}
