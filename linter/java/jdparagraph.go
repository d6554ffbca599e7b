package java

import (
	"slices"
	"strings"
)

// This file holds JavadocParagraph at checkstyle 8.36's defaults
// (allowNewlineParagraph true): an unclosed <p> must follow an empty line
// and come right before its first word, and an empty line must be
// followed by one. It reads the Javadoc the way checkstyle's Javadoc
// grammar nests it: text before the first block tag is the comment's top
// level, HTML elements hold what is between their tags, and a <p> with a
// </p> is a paragraph element, which the check leaves alone.

// Javadoc items, in source order.
const (
	jpAsterisk = iota // the leading '*' of a line
	jpNewline
	jpText
	jpOther // an inline tag, an HTML comment, a tag that opens or closes nothing checked
	jpStart // an HTML start tag
	jpEnd   // an HTML end tag
	jpTag   // a block tag's name: what follows is its description
)

type jpItem struct {
	kind   uint8
	line   int32
	blank  bool   // jpText: white space only
	space  bool   // jpText: starts with a space; jpTag: on the comment's first line
	name   string // jpStart, jpEnd: the tag's name, lower case; jpTag, and jpOther for an inline tag: the tag, as written
	text   string // jpText: the text
	self   bool   // jpStart: <x/>
	inTags bool   // after the first block tag
	depth  int32  // elements it is in (set by nest)
	single bool   // jpStart: holds nothing (void, self-closed or an unclosed optional-end tag)
	bare   bool   // directly in an optional-end element
}

// jpOptionalEnd are the elements checkstyle's grammar lets go unclosed;
// jpVoid never hold anything.
var (
	jpOptionalEnd = setOf("p", "li", "tr", "td", "th", "body", "colgroup", "dd", "dt", "head", "html", "option", "tbody", "tfoot", "thead")
	jpVoid        = setOf("area", "base", "basefont", "br", "col", "frame", "hr", "img", "input", "isindex", "link", "meta", "param", "embed", "keygen", "source", "track", "wbr")
)

const (
	msgParaLineBefore = "<p> tag should be preceded with an empty line."
	msgParaMisplaced  = "<p> tag should be placed immediately before the first word, with no space after."
	msgParaRedundant  = "Redundant <p> tag."
	msgParaTagAfter   = "Empty line should be followed by <p> tag on the next line."
)

// javadocParagraphs runs JavadocParagraph and
// RequireEmptyLineBeforeBlockTagGroup, which read Javadoc the same way.
func (f *file) javadocParagraphs() {
	para, group := f.l.enabled[JavadocParagraph], f.l.enabled[RequireEmptyLineBeforeBlockTagGroup]
	cont, summary := f.l.enabled[JavadocTagContinuationIndentation], f.l.enabled[SummaryJavadoc]
	atclause, order := f.l.enabled[NonEmptyAtclauseDescription], f.l.enabled[AtclauseOrder]
	if !para && !group && !cont && !summary && !atclause && !order {
		return
	}
	var kinds []uint8
	if order {
		kinds = f.placedJavadocParents()
	}
	for n, c := range f.placedJavadocs() {
		items, ok := f.jpItems(c)
		if !ok || !jpNest(items) {
			continue // checkstyle cannot parse it and checks nothing in it
		}
		if para {
			f.jpCheck(items)
		}
		if group {
			f.tagGroupCheck(items)
		}
		if cont {
			f.tagContinuationCheck(items)
		}
		if summary {
			f.summaryCheck(c, items)
		}
		if atclause {
			f.atclauseDescriptions(items)
		}
		if order && kinds[n] < ckKinds && f.l.atclauseTarget[kinds[n]] {
			f.atclauseOrder(items)
		}
	}
}

// atclauseOrder is AtclauseOrder: the block tags of its tagOrder must come
// in that order; a tag before one that ranks higher is reported (other
// tags are not ranked).
func (f *file) atclauseOrder(items []jpItem) {
	highest := 0
	for _, it := range items {
		if it.kind != jpTag || it.depth != 0 {
			continue
		}
		rank := slices.Index(f.l.atclauseOrder, it.name)
		if rank < 0 {
			continue
		}
		if rank < highest {
			f.report(int(it.line), 0, AtclauseOrder, "At-clauses have to appear in the order '["+strings.Join(f.l.atclauseOrder, ", ")+"]'.")
		} else {
			highest = rank
		}
	}
}

// tagGroupCheck is RequireEmptyLineBeforeBlockTagGroup: the first block
// tag must follow an empty line, unless nothing but white space comes
// before it.
func (f *file) tagGroupCheck(items []jpItem) {
	k := 0
	for k < len(items) && items[k].kind != jpTag {
		k++
	}
	if k == len(items) {
		return
	}
	only := true
	for _, it := range items[:k] {
		if it.kind == jpText && !it.blank || it.kind != jpText && it.kind != jpAsterisk && it.kind != jpNewline {
			only = false
			break
		}
	}
	if only && !items[k].space {
		return
	}
	// Back from the tag: its line's asterisk, the previous line's end,
	// then that line must hold its asterisk and nothing else.
	j := k - 1
	if j >= 0 && items[j].kind == jpText && items[j].blank {
		j--
	}
	if j >= 0 && items[j].kind == jpAsterisk {
		j--
	}
	empty := j >= 1 && items[j].kind == jpNewline && items[j-1].kind == jpAsterisk
	if !empty {
		f.report(int(items[k].line), 0, RequireEmptyLineBeforeBlockTagGroup, "Javadoc tag '"+items[k].name+"' should be preceded with an empty line.")
	}
}

// jpItems splits the Javadoc comment c into items. It reports false for
// a comment it cannot read (unterminated).
func (f *file) jpItems(c comment) ([]jpItem, bool) {
	text := f.src[c.off:c.end]
	if !strings.HasPrefix(text, "/**") || !strings.HasSuffix(text, "*/") || len(text) < 5 {
		return nil, false
	}
	text = text[3 : len(text)-2]
	line, _ := lineOfOffset(f.lx.lines, c.off)
	var items []jpItem
	inTags := false
	textStart := -1
	flush := func(end int) {
		if textStart >= 0 && end > textStart {
			s := text[textStart:end]
			items = append(items, jpItem{kind: jpText, line: line, blank: strings.TrimLeft(s, " \t\f") == "", space: s[0] == ' ', inTags: inTags, text: s})
		}
		textStart = -1
	}
	// A block tag may start the first line too.
	lineStart := strings.HasPrefix(strings.TrimLeft(text, " \t\f"), "@")
	firstLine := line
	for i := 0; i < len(text); {
		ch := text[i]
		if lineStart {
			lineStart = false
			j := i
			for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\f') {
				j++
			}
			if j < len(text) && text[j] == '*' && line != firstLine {
				items = append(items, jpItem{kind: jpAsterisk, line: line, inTags: inTags})
				i = j + 1
				j = i
				for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
					j++
				}
			}
			if j+1 < len(text) && text[j] == '@' && isASCIILetter(text[j+1]) {
				// A block tag: what follows its name (and the name of
				// the parameter or exception it is about) is its
				// description, apart from the rest.
				flush(i)
				inTags = true
				k := j + 1
				for k < len(text) && isASCIILetter(text[k]) {
					k++
				}
				if text[j+1:k] == "serialField" && !jpSerialFieldOK(text[k:]) {
					return nil, false
				}
				items = append(items, jpItem{kind: jpTag, line: line, inTags: true, name: text[j:k], space: line == firstLine})
				switch text[j+1 : k] {
				case "param", "throws", "exception":
					for k < len(text) && (text[k] == ' ' || text[k] == '\t') {
						k++
					}
					for k < len(text) && text[k] != ' ' && text[k] != '\t' && text[k] != '\n' && text[k] != '\r' {
						k++
					}
				}
				i = k
			}
			continue
		}
		switch {
		case ch == '\n' || ch == '\r':
			flush(i)
			items = append(items, jpItem{kind: jpNewline, line: line, inTags: inTags})
			if ch == '\r' && i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			i++
			line++
			lineStart = true
		case ch == '{' && i+1 < len(text) && text[i+1] == '@':
			flush(i)
			depth, j := 0, i
			for ; j < len(text); j++ {
				if text[j] == '{' {
					depth++
				} else if text[j] == '}' {
					if depth--; depth == 0 {
						break
					}
				}
			}
			n := i + 2
			for n < len(text) && isASCIILetter(text[n]) {
				n++
			}
			if tag := text[i+2 : n]; (tag == "link" || tag == "linkplain") && !jpReferenceOK(text[n:min(j+1, len(text))]) {
				return nil, false
			}
			items = append(items, jpItem{kind: jpOther, line: line, inTags: inTags, name: "@" + text[i+2:n]})
			line += int32(jpLines(text[i:min(j+1, len(text))]))
			i = j + 1
		case ch == '<' && strings.HasPrefix(text[i:], "<!--"):
			flush(i)
			j := strings.Index(text[i:], "-->")
			if j < 0 {
				return nil, false
			}
			items = append(items, jpItem{kind: jpOther, line: line, inTags: inTags})
			line += int32(jpLines(text[i : i+j]))
			i += j + 3
		case ch == '<' && i+1 < len(text) && (isASCIILetter(text[i+1]) || text[i+1] == '/' && i+2 < len(text) && isASCIILetter(text[i+2])):
			j := strings.IndexByte(text[i:], '>')
			if j < 0 {
				// Not a tag: text.
				if textStart < 0 {
					textStart = i
				}
				i++
				continue
			}
			flush(i)
			tag := text[i+1 : i+j]
			it := jpItem{kind: jpStart, line: line, inTags: inTags}
			if tag[0] == '/' {
				it.kind = jpEnd
				tag = tag[1:]
			}
			k := 0
			for k < len(tag) && (isASCIILetter(tag[k]) || tag[k] >= '0' && tag[k] <= '9') {
				k++
			}
			it.name = strings.ToLower(tag[:k])
			it.self = strings.HasSuffix(tag, "/")
			items = append(items, it)
			line += int32(jpLines(tag))
			i += j + 1
		default:
			if textStart < 0 {
				textStart = i
			}
			i++
		}
	}
	flush(len(text))
	for k := range items {
		if items[k].kind == jpTag && jpNeedsDescription[items[k].name] && jpBareKind(items, k) == jpBareTag {
			return nil, false // checkstyle's parse error: the comment is not checked
		}
	}
	return items, true
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func jpLines(s string) int {
	return strings.Count(s, "\n") + strings.Count(s, "\r") - strings.Count(s, "\r\n")
}

// jpNest sets each item's depth and whether a start tag holds anything,
// and reports false where checkstyle's grammar fails: an element left
// open or an end tag that closes nothing open. An optional-end element
// holds what follows it up to its end tag; it holds nothing when a start
// tag like it or the end of what holds it comes first.
func jpNest(items []jpItem) bool {
	// First pass: which start tags hold anything. open holds the indices
	// of the elements open; optional-end ones are tentative.
	var open []int
	for i := range items {
		it := &items[i]
		switch it.kind {
		case jpStart:
			if it.self || jpVoid[it.name] {
				it.single = true
				continue
			}
			if jpOptionalEnd[it.name] {
				// A tentative element like it, above which only
				// tentative ones are open, ends here unclosed.
				for j := len(open) - 1; j >= 0 && jpOptionalEnd[items[open[j]].name]; j-- {
					if items[open[j]].name == it.name {
						for _, k := range open[j:] {
							items[k].single = true
						}
						open = open[:j]
						break
					}
				}
			}
			open = append(open, i)
		case jpEnd:
			j := len(open) - 1
			for j >= 0 && items[open[j]].name != it.name && jpOptionalEnd[items[open[j]].name] {
				j--
			}
			if j < 0 || items[open[j]].name != it.name {
				return false
			}
			for _, k := range open[j+1:] {
				items[k].single = true
			}
			open = open[:j]
		}
	}
	for _, k := range open {
		if !jpOptionalEnd[items[k].name] {
			return false
		}
		items[k].single = true
	}
	// Second pass: depths, and which elements an optional-end element
	// holds (its grammar takes an unclosed <p> in it bare, not as an
	// HTML element the check looks at).
	var names []string
	for i := range items {
		it := &items[i]
		it.depth = int32(len(names))
		it.bare = len(names) > 0 && jpOptionalEnd[names[len(names)-1]]
		switch {
		case it.kind == jpStart && !it.single:
			names = append(names, it.name)
		case it.kind == jpEnd:
			names = names[:len(names)-1]
			it.depth = int32(len(names))
		}
	}
	return true
}

// jpCheck applies the check to a comment's items.
func (f *file) jpCheck(items []jpItem) {
	top := func(k int) bool { return items[k].depth == 0 && !items[k].inTags }
	// prevSib and nextSib are the items next to k in what holds it.
	prevSib := func(k int) int {
		d := items[k].depth
		for j := k - 1; j >= 0; j-- {
			if items[j].depth < d || items[j].inTags != items[k].inTags || items[j].kind == jpTag {
				return -1
			}
			if items[j].depth == d {
				return j
			}
		}
		return -1
	}
	nextSib := func(k int) int {
		d := items[k].depth
		for j := k + 1; j < len(items); j++ {
			if items[j].depth < d || items[j].inTags != items[k].inTags || items[j].kind == jpTag {
				return -1
			}
			if items[j].depth == d {
				return j
			}
		}
		return -1
	}
	emptyLine := func(k int) bool {
		if !top(k) {
			return false
		}
		p := prevSib(k)
		if p >= 0 && items[p].kind == jpText && items[p].blank {
			p = prevSib(p)
		}
		return p >= 0 && items[p].kind == jpAsterisk
	}
	for k := range items {
		it := &items[k]
		switch {
		case it.kind == jpNewline && emptyLine(k):
			n := nextSib(k)
			for n >= 0 && (items[n].kind == jpAsterisk || items[n].kind == jpNewline) {
				n = nextSib(n)
			}
			if n >= 0 && items[n].kind == jpText && !items[n].blank {
				f.report(int(it.line), 0, JavadocParagraph, msgParaTagAfter)
			}
		case it.kind == jpStart && it.name == "p" && it.single && !it.self && !it.bare:
			// In an element, it follows the element's start tag, so it
			// is never the first paragraph; in a block tag's
			// description it may be.
			first := items[k].depth == 0
			for p := prevSib(k); first && p >= 0; p = prevSib(p) {
				if pk := items[p].kind; pk == jpText && !items[p].blank || pk != jpAsterisk && pk != jpNewline && pk != jpText {
					first = false
					break
				}
			}
			if first {
				f.report(int(it.line), 0, JavadocParagraph, msgParaRedundant)
			} else {
				nl := -1
				for p := prevSib(k); p >= 0; p = prevSib(p) {
					if items[p].kind == jpNewline && emptyLine(p) {
						nl = p
						break
					}
				}
				if nl < 0 || it.line-items[nl].line != 1 {
					f.report(int(it.line), 0, JavadocParagraph, msgParaLineBefore)
				}
			}
			n := nextSib(k)
			if n < 0 && top(k) || n >= 0 && (items[n].kind == jpNewline || items[n].kind == jpText && items[n].space) {
				f.report(int(it.line), 0, JavadocParagraph, msgParaMisplaced)
			}
		}
	}
}

// tagContinuationCheck is JavadocTagContinuationIndentation (offset 4):
// a line that continues a block tag's description must be indented at
// least 4 spaces past the one after its '*'. Like checkstyle, it looks
// at the text two items after each line end in the descriptions.
func (f *file) tagContinuationCheck(items []jpItem) {
	const offset = 4
	for k := range items {
		// Only line ends directly in a description count, not those in
		// HTML elements.
		if items[k].kind != jpNewline || !items[k].inTags || items[k].depth != 0 || k+2 >= len(items) {
			continue
		}
		t := &items[k+2]
		if t.kind != jpText || !t.inTags || strings.TrimSpace(t.text) == "" {
			continue
		}
		if len(t.text) <= offset || strings.TrimSpace(t.text[1:offset+1]) != "" {
			f.report(int(t.line), 0, JavadocTagContinuationIndentation, "Line continuation have incorrect indentation level, expected level should be 4.")
		}
	}
}

// jpSerialFieldOK tells whether checkstyle's grammar reads the arguments
// of a @serialField tag followed by rest: its field type is a name, so
// an array type ("long[]") is a parse error that leaves the whole comment
// unchecked; so is a qualified one.
func jpSerialFieldOK(rest string) bool {
	line := rest
	if k := strings.IndexAny(line, "\r\n"); k >= 0 {
		line = line[:k]
	}
	fields := strings.Fields(line)
	return len(fields) < 2 || !strings.ContainsAny(fields[1], "[].")
}

// jpReferenceOK tells whether checkstyle's grammar reads the reference
// of a {@link} or {@linkplain} inline tag whose text after the tag name
// is rest: parentheses only after a '#member', closed once, and followed
// by white space or the tag's end.
func jpReferenceOK(rest string) bool {
	rest = strings.TrimLeft(rest, " \t")
	hash := false
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		case c == '#':
			hash = true
		case c == '(':
			if !hash {
				return false
			}
			k := strings.IndexByte(rest[i:], ')')
			if k < 0 {
				return false
			}
			i += k + 1
			return i >= len(rest) || rest[i] == ' ' || rest[i] == '\t' || rest[i] == '}' || rest[i] == '\n' || rest[i] == '\r'
		case c == ' ' || c == '\t' || c == '}' || c == '\n' || c == '\r':
			return true
		}
	}
	return true
}

// summaryCheck is SummaryJavadoc (period "."): the text before the block
// tags, inline tags left out, must hold a period, and its first sentence
// no forbidden fragment. A comment starting with {@inheritDoc} is left
// alone.
func (f *file) summaryCheck(c comment, items []jpItem) {
	for _, it := range items {
		if it.kind == jpAsterisk || it.kind == jpNewline || it.kind == jpText && it.blank {
			continue
		}
		if it.kind == jpOther && it.name == "@inheritDoc" {
			return
		}
		break
	}
	var sum strings.Builder
	for k := 0; k < len(items); k++ {
		it := &items[k]
		if it.kind == jpTag {
			break
		}
		switch {
		case it.depth != 0:
		case it.kind == jpText:
			sum.WriteString(it.text)
		case it.kind == jpStart && strings.TrimSpace(sum.String()) == "":
			// An HTML element first: the text directly in it.
			for j := k + 1; j < len(items) && items[j].depth > it.depth; j++ {
				if items[j].kind == jpText && items[j].depth == it.depth+1 {
					sum.WriteString(items[j].text)
				}
			}
		}
	}
	line, _ := lineOfOffset(f.lx.lines, c.off)
	s := strings.TrimSpace(sum.String())
	switch {
	case s == "":
		f.report(int(line), 0, SummaryJavadoc, "Summary javadoc is missing.")
		return
	case !strings.Contains(s, "."):
		f.report(int(line), 0, SummaryJavadoc, "First sentence of Javadoc is missing an ending period.")
	}
	if f.l.summaryForbidden == nil {
		return
	}
	// The first sentence, as checkstyle cuts it: the raw text up to the
	// first ". ", its leading asterisks dropped and white space
	// collapsed, up to its last period.
	raw := f.src[c.off+3 : c.end-2]
	if k := strings.Index(raw, ". "); k >= 0 {
		raw = raw[:k+1]
	}
	end := strings.LastIndexByte(raw, '.')
	if end < 0 {
		return
	}
	raw = raw[:end]
	lines := strings.Split(strings.ReplaceAll(raw, "\r\n", "\n"), "\n")
	for i, ln := range lines {
		t := strings.TrimLeft(ln, " \t")
		if i > 0 || strings.HasPrefix(ln, " ") {
			t = strings.TrimPrefix(t, "*")
		}
		lines[i] = t
	}
	text := strings.Join(strings.Fields(strings.Join(lines, " ")), " ")
	if f.l.summaryForbidden.MatchString(text) {
		f.report(int(line), 0, SummaryJavadoc, "Forbidden summary fragment.")
	}
}

// atclauseTags are the block tags NonEmptyAtclauseDescription checks.
var atclauseTags = setOf("@param", "@return", "@throws", "@exception", "@deprecated")

// atclauseDescriptions is NonEmptyAtclauseDescription: those tags need
// a description. As checkstyle 8.36 reads them, one is missing when the
// tag's line ends after it (and its argument) and the next line holds
// another block tag, or ends the comment (but for @return).
func (f *file) atclauseDescriptions(items []jpItem) {
	for k := range items {
		if items[k].kind != jpTag || !atclauseTags[items[k].name] {
			continue
		}
		if jpBareKind(items, k) != jpBareNone && !(items[k].name == "@return" && jpBareKind(items, k) == jpBareEnd) {
			f.report(int(items[k].line), 0, NonEmptyAtclauseDescription, "At-clause should have a non-empty description.")
		}
	}
}

// What follows a block tag whose line ends after it (and its argument).
const (
	jpBareNone = iota // its line goes on, or the next line is text
	jpBareTag         // the next line holds another block tag
	jpBareEnd         // the comment ends
)

// jpBareKind tells what follows the block tag at k when nothing does on
// its line.
func jpBareKind(items []jpItem, k int) int {
	j := k + 1
	for j < len(items) && items[j].kind == jpText && items[j].blank {
		j++
	}
	if j == len(items) {
		return jpBareEnd
	}
	if items[j].kind != jpNewline {
		return jpBareNone
	}
	j++
	for j < len(items) && (items[j].kind == jpAsterisk || items[j].kind == jpText && items[j].blank) {
		if items[j].kind == jpAsterisk && j+1 < len(items) && items[j+1].kind == jpNewline {
			return jpBareNone // an empty line: a description of line ends
		}
		j++
	}
	switch {
	case j == len(items):
		return jpBareEnd
	case items[j].kind == jpTag:
		return jpBareTag
	}
	return jpBareNone
}

// jpNeedsDescription are the block tags checkstyle's grammar cannot read
// without a description on their line when another block tag follows.
var jpNeedsDescription = setOf("@return", "@since", "@see", "@author", "@version")
