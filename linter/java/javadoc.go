package java

import (
	"regexp"
	"strings"
)

// This file holds JavadocMethod: the @param, @return and @throws tags of
// a method's Javadoc, read line by line with checkstyle 8.36's patterns.

// The patterns of JavadocMethodCheck; RE2 has no atomic group, which
// changes nothing for these alternatives.
var (
	jdArg            = regexp.MustCompile(`^\s*(?:\*|/\*\*)?\s*@(throws|exception|param)\s+(\S+)\s+\S*`)
	jdArgMultiStart  = regexp.MustCompile(`^\s*(?:\*|/\*\*)?\s*@(throws|exception|param)\s+(\S[^*]*)(?:(\s+|\*/))?`)
	jdMultiCont      = regexp.MustCompile(`(\*/|@|[^\s*])`)
	jdNoArg          = regexp.MustCompile(`^\s*(?:\*|/\*\*)?\s*@(return|see)\s+\S`)
	jdNoArgMultiline = regexp.MustCompile(`^\s*(?:\*|/\*\*)?\s*@(return|see)\s*$`)
	jdNoArgCurly     = regexp.MustCompile(`\{\s*@(inheritDoc)\s*\}`)
)

// jdTag is a tag of a method's Javadoc.
type jdTag struct {
	line int32
	off  int32 // byte offset of its '@' (or of the '{' of {@inheritDoc}); -1 when unknown
	name string
	arg  string
}

// methodTags is JavadocMethodCheck.getMethodTags over the comment c.
func (f *file) methodTags(c comment) []jdTag {
	startLine, _ := lineOfOffset(f.lx.lines, c.off)
	lines, offs := f.commentLines(c)
	var tags []jdTag
	for i, ln := range lines {
		if strings.IndexByte(ln, '@') < 0 {
			continue // every pattern needs one; most lines have none
		}
		line := startLine + int32(i)
		at := func(m []int) int32 { return offs[i] + int32(m[2]) - 1 }
		// A pattern can match only where its tag name is: the regular
		// expressions run on the few lines that hold one.
		hasArg := strings.Contains(ln, "@param") || strings.Contains(ln, "@throws") || strings.Contains(ln, "@exception")
		hasNoArg := strings.Contains(ln, "@return") || strings.Contains(ln, "@see")
		if m := match(hasArg, jdArg, ln); m != nil {
			tags = append(tags, jdTag{line, at(m), ln[m[2]:m[3]], ln[m[4]:m[5]]})
		} else if m := match(hasArg, jdArgMultiStart, ln); m != nil {
			tags = append(tags, jdTag{line, at(m), ln[m[2]:m[3]], ln[m[4]:m[5]]})
		} else if m := match(hasNoArg, jdNoArg, ln); m != nil {
			tags = append(tags, jdTag{line, at(m), ln[m[2]:m[3]], ""})
		} else if m := match(strings.Contains(ln, "@inheritDoc"), jdNoArgCurly, ln); m != nil {
			tags = append(tags, jdTag{line, at(m), ln[m[2]:m[3]], ""})
		} else if m := match(hasNoArg, jdNoArgMultiline, ln); m != nil {
			// The tag counts when text, not another tag or the end of the
			// comment, follows on a later line.
			for j := i + 1; j < len(lines); j++ {
				if c := jdMultiCont.FindStringSubmatch(lines[j]); c != nil {
					if c[1] != "@" && c[1] != "*/" {
						tags = append(tags, jdTag{line, at(m), ln[m[2]:m[3]], ""})
					}
					break
				}
			}
		}
	}
	return tags
}

// match is re.FindStringSubmatchIndex(s) when may is set, else nil.
func match(may bool, re *regexp.Regexp, s string) []int {
	if !may {
		return nil
	}
	return re.FindStringSubmatchIndex(s)
}

// lineOfOffset returns the 1-based line holding byte offset off.
func lineOfOffset(starts []int32, off int32) (int32, bool) {
	lo, hi := 0, len(starts)
	for lo < hi {
		mid := (lo + hi) / 2
		if starts[mid] <= off {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return int32(lo), lo > 0
}

func (f *file) javadocMethods() {
	if !f.l.enabled[JavadocMethod] {
		return
	}
	toks := f.lx.toks
	for _, m := range f.ps.methods {
		if m.anon {
			continue
		}
		ci := f.javadocIndex(toks[m.pos].line)
		if ci < 0 {
			continue
		}
		tags := f.methodTags(f.lx.comments[ci])
		if len(tags) == 1 && tags[0].name == "inheritDoc" {
			if m.ctor || m.annField || f.ps.hasMod(m.mods, "private") || f.ps.hasMod(m.mods, "static") {
				f.reportTok(m.pos, JavadocMethod, "Invalid use of the {@inheritDoc} tag.")
			}
			continue
		}
		used := make([]bool, len(tags))
		methodLine := int(toks[m.pos].line)
		if m.annField {
			f.returnTag(tags, used, methodLine, true)
		} else {
			inherit := false
			for _, t := range tags {
				inherit = inherit || t.name == "inheritDoc"
			}
			report := !inherit && !f.hasAnnotation(m.mods, "Override")
			params := append([]int32(nil), m.params...)
			typeParams := append([][2]int32(nil), m.typeParams...)
			for i, t := range tags {
				if t.name != "param" {
					continue
				}
				used[i] = true
				found := false
				for k, pi := range params {
					if toks[pi].text == t.arg {
						params = append(params[:k], params[k+1:]...)
						found = true
						break
					}
				}
				if len(t.arg) >= 2 && t.arg[0] == '<' && t.arg[len(t.arg)-1] == '>' {
					found = false
					for k, tp := range typeParams {
						if toks[tp[1]].text == t.arg[1:len(t.arg)-1] {
							typeParams = append(typeParams[:k], typeParams[k+1:]...)
							found = true
							break
						}
					}
				}
				if !found {
					f.report(int(t.line), f.column(t.line, t.off), JavadocMethod, "Unused @param tag for '"+t.arg+"'.")
				}
			}
			if report {
				for _, pi := range params {
					f.reportTok(pi, JavadocMethod, "Expected @param tag for '"+toks[pi].text+"'.")
				}
				for _, tp := range typeParams {
					f.reportTok(tp[0], JavadocMethod, "Expected @param tag for '<"+toks[tp[1]].text+">'.")
				}
			}
			// validateThrows is false: @throws tags are taken, not checked.
			for i, t := range tags {
				if t.name == "throws" || t.name == "exception" {
					used[i] = true
				}
			}
			if !m.ctor && !m.void {
				f.returnTag(tags, used, methodLine, report)
			}
		}
		for i, t := range tags {
			if !used[i] && t.name != "see" && t.name != "inheritDoc" {
				f.report(int(t.line), 0, JavadocMethod, "Unused Javadoc tag.")
			}
		}
	}
}

// returnTag is checkReturnTag: one @return, expected when report is set.
func (f *file) returnTag(tags []jdTag, used []bool, line int, report bool) {
	found := false
	for i, t := range tags {
		if t.name != "return" {
			continue
		}
		if found {
			f.report(int(t.line), f.column(t.line, t.off), JavadocMethod, "Duplicate @return tag.")
		}
		found = true
		used[i] = true
	}
	if !found && report {
		f.report(line, 0, JavadocMethod, "@return tag should be present and have description.")
	}
}

// typeDeclInfo is a class, interface, enum, annotation type or record,
// for JavadocType.
type typeDeclInfo struct {
	kind            int
	methods, fields bool // InterfaceIsType: its methods and fields
	pos             int32
	typeParams      []int32 // names
	generated       bool    // annotated @Generated (allowedAnnotations)
}

var (
	jdBlockTagFirst = regexp.MustCompile(`/\*{2,}\s*@([a-zA-Z]+)\s`)
	jdBlockTag      = regexp.MustCompile(`^\s*\**\s*@([a-zA-Z]+)\s`)
	jdTypeNameInTag = regexp.MustCompile(`^\s*<([^>]+)>`)
)

// validJavadocTags are checkstyle 8.36's JavadocTagInfo names.
var validJavadocTags = map[string]bool{
	"author": true, "code": true, "docRoot": true, "deprecated": true, "exception": true, "inheritDoc": true,
	"link": true, "linkplain": true, "literal": true, "param": true, "return": true, "see": true, "serial": true,
	"serialData": true, "serialField": true, "since": true, "throws": true, "value": true, "version": true,
}

// blockTags is JavadocUtil.getJavadocTags(BLOCK) over c: the valid tags
// (name and trimmed content) and the unknown ones, with the offsets of
// their '@'.
func (f *file) blockTags(c comment) (valid, unknown []jdTag) {
	text := f.src[c.off:c.end]
	startLine, _ := lineOfOffset(f.lx.lines, c.off)
	i := 0
	for start := 0; start <= len(text); i++ {
		end := len(text)
		next := end + 1
		if k := strings.IndexAny(text[start:], "\r\n"); k >= 0 {
			end = start + k
			next = end + 1
			if text[end] == '\r' && next < len(text) && text[next] == '\n' {
				next++
			}
		}
		ln := text[start:end]
		re := jdBlockTag
		if i == 0 {
			re = jdBlockTagFirst
		}
		if m := re.FindStringSubmatchIndex(ln); m != nil {
			name := ln[m[2]:m[3]]
			content := strings.TrimSuffix(ln[m[3]:], "*/")
			t := jdTag{line: startLine + int32(i), off: c.off + int32(start+m[2]-1), name: name, arg: strings.TrimSpace(content)}
			if validJavadocTags[name] {
				valid = append(valid, t)
			} else {
				unknown = append(unknown, t)
			}
		}
		start = next
	}
	return valid, unknown
}

func (f *file) javadocTypes() {
	if !f.l.enabled[JavadocType] {
		return
	}
	toks := f.lx.toks
	for _, td := range f.ps.typeDecls {
		if td.generated {
			continue
		}
		ci := f.javadocIndex(toks[td.pos].line)
		if ci < 0 {
			continue
		}
		tags, unknown := f.blockTags(f.lx.comments[ci])
		for _, t := range unknown {
			f.report(int(t.line), f.column(t.line, t.off), JavadocType, "Unknown tag '"+t.name+"'.")
		}
		names := make(map[string]bool, len(td.typeParams))
		for _, tp := range td.typeParams {
			name := toks[tp].text
			names[name] = true
			found := false
			for _, t := range tags {
				if t.name == "param" && strings.HasPrefix(t.arg, "<"+name+">") {
					found = true
					break
				}
			}
			if !found {
				f.reportTok(td.pos, JavadocType, "Type Javadoc comment is missing @param <"+name+"> tag.")
			}
		}
		for _, t := range tags {
			if t.name != "param" {
				continue
			}
			name := strings.Fields(t.arg + " ")[0]
			if m := jdTypeNameInTag.FindStringSubmatch(t.arg); m != nil {
				name = strings.TrimSpace(m[1])
			}
			if !names[name] {
				f.report(int(t.line), f.column(t.line, t.off), JavadocType, "Unused @param tag for '"+strings.Fields(t.arg + " ")[0]+"'.")
			}
		}
	}
}

// invalidJavadocPositions reports the Javadoc comments that are not right
// before a definition (checkstyle's BlockCommentPosition).
func (f *file) invalidJavadocPositions() {
	if !f.l.enabled[InvalidJavadocPosition] {
		return
	}
	f.javadocPlacement(func(c comment, placed bool, _ uint8, _ int) {
		if !placed {
			line, _ := lineOfOffset(f.lx.lines, c.off)
			f.report(int(line), f.column(line, c.off), InvalidJavadocPosition, "Javadoc comment is placed in the wrong location.")
		}
	})
}

// placedJavadocs returns the Javadoc comments right before a definition:
// those checkstyle's Javadoc checks read.
func (f *file) placedJavadocs() []comment {
	var out []comment
	f.javadocPlacement(func(c comment, placed bool, _ uint8, _ int) {
		if placed {
			out = append(out, c)
		}
	})
	return out
}

// placedJavadocParents returns, for each of placedJavadocs, the kind of
// the definition checkstyle 8.36's AtclauseOrder finds it in (a dk
// constant), or ckKinds for none. In its tree the comment is a child of
// the node of the next token, and only a parent that is the definition,
// its modifiers or its type counts: not an annotation, type parameters,
// a qualified or an array type.
func (f *file) placedJavadocParents() []uint8 {
	toks := f.lx.toks
	var out []uint8
	f.javadocPlacement(func(_ comment, placed bool, kind uint8, k int) {
		if !placed {
			return
		}
		t := &toks[k]
		switch {
		case t.text == "@" && !(k+1 < len(toks) && toks[k+1].text == "interface"):
			kind = ckKinds
		case t.kind == tKeyword && modifierWords[t.text]:
		case kind == ckMethod || kind == ckVariable:
			if t.text == "<" || k+1 < len(toks) && (toks[k+1].text == "." || toks[k+1].text == "[") {
				kind = ckKinds
			}
		}
		out = append(out, kind)
	})
	return out
}

// javadocPlacement calls fn for each Javadoc comment, in order, with
// whether it is right before a definition: the first code token after
// it must start a type, field, method, constructor or enum constant;
// kind is what it starts (a dk constant), tok that first token.
func (f *file) javadocPlacement(fn func(c comment, placed bool, kind uint8, tok int)) {
	toks := f.lx.toks
	starts := make(map[int32]uint8, len(f.ps.defStarts))
	for n, i := range f.ps.defStarts {
		starts[i] = f.ps.defKinds[n] + 1
	}
	// Of several Javadoc comments before one definition only the last
	// is its.
	var jds []comment
	for _, c := range f.lx.comments {
		if c.javadocOK {
			jds = append(jds, c)
		}
	}
	k := 0
	for n, c := range jds {
		for k < len(toks) && toks[k].kind != tEOF && toks[k].off < c.end {
			k++
		}
		last := n+1 == len(jds) || k >= len(toks) || jds[n+1].off > toks[k].off
		kind := starts[int32(k)]
		fn(c, k < len(toks) && toks[k].kind != tEOF && kind > 0 && last, kind-1, k)
	}
}
