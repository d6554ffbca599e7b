package java

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file holds JavadocStyle at checkstyle 8.36's defaults: the first
// sentence must end with a period, and HTML tags must be closed
// (checkFirstSentence and checkHtml; checkEmptyJavadoc is off).

// jsDef is a definition whose Javadoc JavadocStyle checks.
type jsDef struct {
	pos                     int32
	typeParams              []int32 // names: tags named like them are not HTML
	method, static, private bool    // where {@inheritDoc} is valid
}

// styleDef records d unless it is in code or in an anonymous class, where
// JavadocStyle looks at nothing.
func (p *parser) styleDef(d jsDef) {
	if n := len(p.scopes); p.codeDepth > 0 || n > 0 && p.scopes[n-1] == scopeAnonInner {
		return
	}
	p.jsDefs = append(p.jsDefs, d)
}

// jsEndsSentence reports whether text holds the end of a sentence as
// checkstyle's JavadocStyle pattern `([.?!][ \t\n\r\f<])|([.?!]$)` finds
// it: '.', '?' or '!' before a space, a '<' or the end. A loop, not that
// pattern: it ran over every Javadoc comment and was a fifth of the time.
func jsEndsSentence(text string) bool {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '.', '?', '!':
			if i+1 == len(text) {
				return true
			}
			switch text[i+1] {
			case ' ', '\t', '\n', '\r', '\f', '<':
				return true
			}
		}
	}
	return false
}

// jsSingleTags may be left open; jsAllowedTags are the tags tracked.
var (
	jsSingleTags  = setOf("br", "li", "dt", "dd", "hr", "img", "p", "td", "tr", "th")
	jsAllowedTags = setOf("a", "abbr", "acronym", "address", "area", "b", "bdo", "big", "blockquote", "br", "caption",
		"cite", "code", "colgroup", "dd", "del", "dfn", "div", "dl", "dt", "em", "fieldset", "font", "h1", "h2", "h3", "h4",
		"h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "ol", "p", "pre", "q", "samp", "small", "span", "strong",
		"style", "sub", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "tt", "u", "ul", "var")
)

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// commentLines splits comment c into its lines and their byte offsets.
func (f *file) commentLines(c comment) ([]string, []int32) {
	text := f.src[c.off:c.end]
	n := strings.Count(text, "\n") + 1
	lines, offs := make([]string, 0, n), make([]int32, 0, n)
	for start := 0; ; {
		k := strings.IndexAny(text[start:], "\r\n")
		if k < 0 {
			return append(lines, text[start:]), append(offs, c.off+int32(start))
		}
		lines, offs = append(lines, text[start:start+k]), append(offs, c.off+int32(start))
		start += k + 1
		if text[start-1] == '\r' && start < len(text) && text[start] == '\n' {
			start++
		}
	}
}

func (f *file) javadocStyle() {
	if !f.l.enabled[JavadocStyle] {
		return
	}
	toks := f.lx.toks
	for _, d := range f.ps.jsDefs {
		ci := f.javadocIndex(toks[d.pos].line)
		if ci < 0 {
			continue
		}
		c := f.lx.comments[ci]
		lines, offs := f.commentLines(c)
		startLine, _ := lineOfOffset(f.lx.lines, c.off)
		text := jsCommentText(lines)
		if text != "" && !jsEndsSentence(text) &&
			!(strings.HasPrefix(text, "{@inheritDoc}") && d.method && !d.static && !d.private) {
			f.report(int(startLine), 0, JavadocStyle, "First sentence should end with a period.")
		}
		f.htmlTags(d, lines, offs, startLine)
	}
}

// jsCommentText is getCommentText: the text before the first block tag,
// without the comment's delimiters and leading stars.
func jsCommentText(lines []string) string {
	var b []byte
	for _, ln := range lines {
		start := jsTextStart(ln)
		if start < 0 {
			continue
		}
		if ln[start] == '@' {
			break
		}
		b = append(b, ln[start:]...)
		b = jsTrimTail(b)
		b = append(b, '\n')
	}
	return strings.TrimFunc(string(b), func(r rune) bool { return r <= ' ' })
}

func jsTextStart(ln string) int {
	for i := 0; i < len(ln); i++ {
		if javaSpace(rune(ln[i])) {
			continue
		}
		switch {
		case strings.HasPrefix(ln[i:], "/**"):
			i += 2
		case strings.HasPrefix(ln[i:], "*/"):
			i++
		case ln[i] != '*':
			return i
		}
	}
	return -1
}

func jsTrimTail(b []byte) []byte {
	for len(b) > 0 {
		i := len(b) - 1
		switch {
		case javaSpace(rune(b[i])):
			b = b[:i]
		case i > 0 && b[i] == '/' && b[i-1] == '*':
			b = b[:i-1]
			for len(b) > 0 && b[len(b)-1] == '*' {
				b = b[:len(b)-1]
			}
		default:
			return b
		}
	}
	return b
}

// htmlTag is one tag TagParser finds.
type htmlTag struct {
	id                      string
	line                    int   // index in the comment's lines
	col                     int   // byte index in that line
	closed, close, complete bool  // <x/>, </x>, has its '>'
	off                     int32 // byte offset of '<'
}

type jsPoint struct{ line, col int }

// jsNext is TagParser.getNextCharPos: the next character, skipping the
// leading white space and stars of a new line.
func jsNext(lines []string, p jsPoint) jsPoint {
	line, col := p.line, p.col+1
	for line < len(lines) && col >= len(lines[line]) {
		line++
		col = 0
		if line < len(lines) {
			cur := lines[line]
			for col < len(cur) && (javaSpace(rune(cur[col])) || cur[col] == '*') {
				col++
				if col < len(cur) && cur[col-1] == '*' && cur[col] == '/' {
					col = len(cur)
				}
			}
		}
	}
	return jsPoint{line, col}
}

func jsFind(lines []string, c byte, p jsPoint) jsPoint {
	for p.line < len(lines) && (p.col >= len(lines[p.line]) || lines[p.line][p.col] != c) {
		p = jsNext(lines, p)
	}
	return p
}

// jsTags is TagParser over the comment's lines.
func jsTags(lines []string, offs []int32) []htmlTag {
	var tags []htmlTag
	p := jsFind(lines, '<', jsPoint{0, 0})
	for p.line < len(lines) {
		ln := lines[p.line]
		switch {
		case strings.HasPrefix(ln[p.col:], "<!--"):
			// skip the HTML comment
			q := jsPoint{p.line, p.col + 3}
			for q.line < len(lines) && !strings.HasPrefix(lines[q.line][min(q.col, len(lines[q.line])):], "-->") {
				q = jsNext(lines, q)
			}
			p = jsNext(lines, jsPoint{q.line, q.col + 2})
		case p.col+1 >= len(ln) || jsIdentStart(ln[p.col+1:]) || ln[p.col+1] == '/':
			end := jsFind(lines, '>', p)
			t := htmlTag{line: p.line, col: p.col, off: offs[p.line] + int32(p.col), complete: end.line < len(lines)}
			t.closed = t.complete && end.col > 0 && lines[end.line][end.col-1] == '/'
			t.close = p.col+1 < len(ln) && ln[p.col+1] == '/'
			if c := p.col + 1; c < len(ln) {
				if ln[c] == '/' {
					c++
				}
				rest := strings.TrimSpace(ln[c:])
				n := 0
				for n < len(rest) {
					r, size := utf8.DecodeRuneInString(rest[n:])
					if !(r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
						break
					}
					n += size
				}
				t.id = rest[:n]
			}
			tags = append(tags, t)
			p = end
		default:
			p = jsNext(lines, p)
		}
		p = jsFind(lines, '<', p)
	}
	return tags
}

func jsIdentStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return r == '_' || r == '$' || unicode.IsLetter(r)
}

// jsTagText is HtmlTag's text: the line from the tag on, at most 60
// characters.
func jsTagText(ln string, col int) string {
	s := ln[col:]
	if utf8.RuneCountInString(s) > 60 {
		n := 0
		for i := range s {
			if n == 60 {
				return s[:i]
			}
			n++
		}
	}
	return s
}

// htmlTags is checkHtmlTags.
func (f *file) htmlTags(d jsDef, lines []string, offs []int32, startLine int32) {
	var stack []htmlTag
	unclosed := func(t htmlTag) {
		line := startLine + int32(t.line)
		f.report(int(line), f.column(line, t.off), JavadocStyle, "Unclosed HTML tag found: "+jsTagText(lines[t.line], t.col))
	}
	for _, t := range jsTags(lines, offs) {
		switch {
		case !t.complete:
			f.report(int(startLine)+t.line, 0, JavadocStyle, "Incomplete HTML tag found: "+lines[t.line])
			return
		case t.closed:
		case t.close:
			open := -1
			for i := len(stack) - 1; i >= 0; i-- {
				if strings.EqualFold(stack[i].id, t.id) {
					open = i
					break
				}
			}
			if open < 0 {
				line := startLine + int32(t.line)
				f.report(int(line), f.column(line, t.off), JavadocStyle, "Extra HTML tag found: "+jsTagText(lines[t.line], t.col))
				continue
			}
			// The tags opened after it and left open, reported in order,
			// a repeated one once.
			last := ""
			for _, u := range stack[open+1:] {
				if jsSingleTags[strings.ToLower(u.id)] || u.id == last {
					continue
				}
				last = u.id
				unclosed(u)
			}
			stack = stack[:open]
		case jsAllowedTags[strings.ToLower(t.id)]:
			stack = append(stack, t)
		}
	}
	typeParams := make(map[string]bool, len(d.typeParams))
	for _, i := range d.typeParams {
		typeParams[f.lx.toks[i].text] = true
	}
	last := ""
	for i := len(stack) - 1; i >= 0; i-- {
		t := stack[i]
		if jsSingleTags[strings.ToLower(t.id)] || t.id == last || typeParams[t.id] {
			continue
		}
		unclosed(t)
		last = t.id
	}
}
