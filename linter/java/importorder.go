package java

import "strings"

// This file holds CustomImportOrder as google_checks.xml configures it:
// customImportOrderRules STATIC###THIRD_PARTY_PACKAGE (static imports,
// then all others), sortImportsInGroupAlphabetically and
// separateLineBetweenGroups. Like checkstyle 8.36, it walks the imports
// with the group it expects: the first import's, then the next rule's.

// Import groups, in the configured order.
const (
	groupStatic     = "STATIC"
	groupThirdParty = "THIRD_PARTY_PACKAGE"
)

// importOrderRules is the one customImportOrderRules value implemented.
const importOrderRules = "STATIC###THIRD_PARTY_PACKAGE"

func (f *file) customImportOrder() {
	if !f.l.enabled[CustomImportOrder] || len(f.ps.imports) == 0 {
		return
	}
	rules := []string{groupStatic, groupThirdParty}
	group := func(imp importDecl) string {
		if imp.static {
			return groupStatic
		}
		return groupThirdParty
	}
	imps := f.ps.imports
	cur := group(imps[0])
	curN := 0
	if cur == groupThirdParty {
		curN = 1
	}
	prevName := ""        // the last import of the group in order
	prevLine := int32(-1) // the last line of the previous import of the group
	for _, imp := range imps {
		g := group(imp)
		name := imp.name
		line := f.lx.toks[imp.kw].line
		end := f.importEndLine(imp)
		switch {
		case g == cur:
			if prevName != "" && compareImports(name, prevName) < 0 {
				f.reportTok(imp.kw, CustomImportOrder, "Wrong lexicographical order for '"+name+"' import. Should be before '"+prevName+"'.")
			} else {
				prevName = name
			}
			if prevLine >= 0 && line-prevLine > 1 {
				f.reportTok(imp.kw, CustomImportOrder, "Extra separation in import group before '"+name+"'")
			}
			prevLine = end
		case curN+1 < len(rules):
			if next := rules[curN+1]; g == next {
				if !f.blankLineBefore(line) {
					f.reportTok(imp.kw, CustomImportOrder, "'"+name+"' should be separated from previous import group by one line.")
				}
				cur, curN, prevName = next, curN+1, name
			} else {
				f.reportTok(imp.kw, CustomImportOrder, "Import statement for '"+name+"' is in the wrong order. Should be in the '"+g+
					"' group, expecting group '"+next+"' on this line.")
			}
			prevLine = end
		default:
			f.reportTok(imp.kw, CustomImportOrder, "Import statement for '"+name+"' is in the wrong order. Should be in the '"+g+
				"' group, expecting not assigned imports on this line.")
			prevLine = end
		}
	}
}

// importEndLine is the line of the ';' ending imp (or of its name).
func (f *file) importEndLine(imp importDecl) int32 {
	toks := f.lx.toks
	for i := int(imp.first); i < len(toks) && toks[i].kind != tEOF; i++ {
		if toks[i].text == ";" && toks[i].kind == tOp {
			return toks[i].line
		}
		if toks[i].kind == tKeyword && toks[i].text != "static" {
			break
		}
	}
	return imp.nameLine
}

// blankLineBefore tells whether the line before line is blank.
func (f *file) blankLineBefore(line int32) bool {
	if line < 2 || int(line-1) > len(f.lines) {
		return false
	}
	ln := f.lines[line-2]
	return strings.TrimSpace(f.src[ln.start:ln.end]) == ""
}

// compareImports orders two imports as checkstyle's CustomImportOrder
// does: name by name, a shorter one first when one is a prefix of the
// other.
func compareImports(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		if c := strings.Compare(as[i], bs[i]); c != 0 {
			return c
		}
	}
	return len(as) - len(bs)
}
