package java

import "strings"

// This file holds EmptyLineSeparator as google_checks.xml configures it
// (allowNoEmptyLineBetweenFields; multiple empty lines allowed): a
// package, import, type, initializer, constructor, method or field
// definition must be followed by an empty line before the next
// definition of its class or file, which is reported. Like checkstyle
// 8.36, it looks at each declarator of a field apart, so the ',' of
// `int a, b;` is reported too.

// span is a run of tokens [start, end).
type span struct{ start, end int }

// sepNode is one sibling as EmptyLineSeparator sees it: its kind (the
// text checkstyle prints), the token of its AST position and its last
// token.
type sepNode struct {
	kind      string
	pos, last int
}

// separatedKinds are the kinds google_checks.xml lists in tokens.
var separatedKinds = setOf("package", "import", "CLASS_DEF", "INTERFACE_DEF", "ENUM_DEF", "STATIC_INIT", "INSTANCE_INIT",
	"METHOD_DEF", "CTOR_DEF", "VARIABLE_DEF", "RECORD_DEF", "COMPACT_CTOR_DEF")

// separation checks the siblings of one type body of kind body, or of
// the file (body -1).
func (x *indenter) separation(sibs []span, body int) {
	if !x.f.l.enabled[EmptyLineSeparator] {
		return
	}
	var nodes []sepNode
	for _, sp := range sibs {
		nodes = x.sepNodes(nodes, sp)
	}
	for k, t := range nodes {
		if t.kind == "package" && x.packageUnseparated(t.pos) {
			x.sepReport(t)
		}
		if k+1 == len(nodes) || !separatedKinds[t.kind] {
			continue
		}
		n := nodes[k+1]
		switch {
		case t.kind == "VARIABLE_DEF" && (n.kind == "VARIABLE_DEF" || body != bodyClass):
			continue // allowNoEmptyLineBetweenFields; checkstyle 8.36 looks at fields of classes only
		case t.kind == "import" && n.kind == "import":
			continue
		}
		if !x.blankBetween(x.line(t.last)+1, x.line(n.pos)-1) {
			x.sepReport(n)
		}
	}
}

func (x *indenter) sepReport(n sepNode) {
	x.f.reportTok(int32(n.pos), EmptyLineSeparator, "'"+n.kind+"' should be separated from previous statement.")
}

// blankBetween tells whether a line from first to last is blank.
func (x *indenter) blankBetween(first, last int32) bool {
	for ln := first; ln <= last; ln++ {
		if ln >= 1 && int(ln) <= len(x.f.lines) {
			sp := x.f.lines[ln-1]
			if strings.TrimSpace(x.f.src[sp.start:sp.end]) == "" {
				return true
			}
		}
	}
	return false
}

// sepNodes appends the nodes of the sibling sp.
func (x *indenter) sepNodes(nodes []sepNode, sp span) []sepNode {
	i, last := sp.start, sp.end-1
	if last < i {
		return nodes
	}
	switch {
	case x.at(i, ";"):
		return append(nodes, sepNode{";", i, i})
	case x.at(i, "package"):
		return append(nodes, sepNode{"package", i, last})
	case x.at(i, "import"):
		return append(nodes, sepNode{"import", i, last})
	}
	k, mods := x.modifiers(i)
	pos := k
	if len(mods) > 0 {
		pos = mods[0]
	}
	if name, kw := x.typeKind(k); name != "" {
		kind := strings.ToUpper(strings.TrimSuffix(name, " def")) + "_DEF"
		if len(mods) == 0 {
			pos = kw
			if kind == "ANNOTATION_DEF" {
				pos = kw - 1
			}
		}
		return append(nodes, sepNode{kind, pos, last})
	}
	switch {
	case x.at(k, "static") && x.at(k+1, "{"):
		return append(nodes, sepNode{"STATIC_INIT", k, last})
	case x.at(k, "{"):
		return append(nodes, sepNode{"INSTANCE_INIT", k, last})
	}
	// A method, a constructor or a field.
	j, method := x.declKind(k, last+1)
	switch {
	case method && j-1 == k:
		return append(nodes, sepNode{"CTOR_DEF", pos, last})
	case method:
		if len(mods) == 0 {
			pos = x.methodPos(k, nil, j-1)
		}
		return append(nodes, sepNode{"METHOD_DEF", pos, last})
	case j <= last:
		return x.fieldNodes(nodes, k, mods, j-1, last)
	}
	return nodes
}

// fieldNodes appends the declarators of the field whose type starts at
// k and whose first name is at name, with the commas between them.
func (x *indenter) fieldNodes(nodes []sepNode, k int, mods []int, name, last int) []sepNode {
	pos := k
	if len(mods) > 0 {
		pos = mods[0]
	} else {
		pos = x.methodPos(k, nil, name)
	}
	for j := name; j <= last; j++ {
		switch {
		case x.at(j, "(") || x.at(j, "[") || x.at(j, "{"):
			if m := x.match(j); m > 0 {
				j = m
			}
		case x.at(j, ","):
			nodes = append(nodes, sepNode{"VARIABLE_DEF", pos, j - 1}, sepNode{",", j, j})
			pos = j + 1
		}
	}
	return append(nodes, sepNode{"VARIABLE_DEF", pos, last})
}

// packageUnseparated tells whether the package declaration at kw lacks
// the empty line before it. In package-info.java, a package with
// annotations or right after its Javadoc needs none.
func (x *indenter) packageUnseparated(kw int) bool {
	ln := x.line(kw)
	if ln <= 1 || x.f.blankLineBefore(ln) {
		return false
	}
	if !strings.HasSuffix(x.f.name, "package-info.java") {
		return true
	}
	if kw > 0 && x.toks[kw-1].kind != tEOF && x.at(kw-1, ")") || kw > 1 && x.at(kw-2, "@") {
		return false // annotated
	}
	for _, c := range x.f.lx.comments {
		if c.endLine == ln-1 && c.javadocOK {
			return false
		}
	}
	return true
}
