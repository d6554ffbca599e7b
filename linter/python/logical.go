package python

import "unicode/utf8"

// This file runs pycodestyle's logical-line checks. Each check mirrors the
// pycodestyle 2.10 function of the same purpose (indent.go, whitespace.go,
// statements.go); the regular expressions there are replaced by
// hand-written scanners that find the same matches (finditer order, greedy
// backtracking, \b and \s semantics included), and work that cannot
// report anything is skipped.

// checkGroups says which logical-line checks run, computed once per
// Linter. As in pycodestyle, a check runs when one of the codes its
// docstring names is enabled: indentation runs for E111-E116 (E117 is
// then reported too, but not on its own), continued_indentation for
// E121-E131 (E133 likewise); W505 needs max-doc-length.
type checkGroups struct {
	indentation, continuation, blankLines, extraneous, keywords,
	afterKeyword, comma, parameters, operator, aroundOperator,
	commaSpaces, paramEquals, comments, imports, importsTop, compound,
	lineJoin, breaks, singleton, negative, typeCmp, except, ambiguous,
	escape, asyncAwait, docLength bool
}

// newCheckGroups maps the enabled codes to the checks that report them.
func newCheckGroups(en *enabledSet, opt options) checkGroups {
	return checkGroups{
		indentation:    en.any(cE111, cE112, cE113, cE114, cE115, cE116),
		continuation:   en.any(cE121, cE122, cE123, cE124, cE125, cE126, cE127, cE128, cE129, cE131),
		blankLines:     en.any(cE301, cE302, cE303, cE304, cE305, cE306),
		extraneous:     en.any(cE201, cE202, cE203),
		keywords:       en.any(cE271, cE272, cE273, cE274),
		afterKeyword:   en[cE275],
		comma:          en[cE231],
		parameters:     en[cE211],
		operator:       en.any(cE221, cE222, cE223, cE224),
		aroundOperator: en.any(cE225, cE226, cE227, cE228),
		commaSpaces:    en.any(cE241, cE242),
		paramEquals:    en.any(cE251, cE252),
		comments:       en.any(cE261, cE262, cE265, cE266),
		imports:        en[cE401],
		importsTop:     en[cE402],
		compound:       en.any(cE701, cE702, cE703, cE704, cE731),
		lineJoin:       en[cE502],
		breaks:         en.any(cW503, cW504),
		singleton:      en.any(cE711, cE712),
		negative:       en.any(cE713, cE714),
		typeCmp:        en[cE721],
		except:         en[cE722],
		ambiguous:      en.any(cE741, cE742, cE743),
		escape:         en[cW605],
		asyncAwait:     en[cW606],
		docLength:      en[cW505] && opt.maxDoc >= 0,
	}
}

// logicalChecks runs the enabled logical-line checks on c.logical.
func (c *checker) logicalChecks(ts []token) {
	g := c.groups
	L := c.logical
	multiWS := (g.keywords || g.operator || g.commaSpaces) && hasMultiSpace(L, c.latin1)
	if g.indentation {
		c.indentation(L)
	}
	if g.continuation {
		c.continuedIndentation(ts)
	}
	if g.blankLines {
		c.blankLinesCheck(L)
	}
	if g.extraneous {
		c.extraneousWhitespace(L)
	}
	if multiWS && g.keywords {
		c.whitespaceAroundKeywords(L)
	}
	if g.afterKeyword {
		c.missingWhitespaceAfterKeyword(ts)
	}
	if g.comma {
		c.missingWhitespace(L)
	}
	if g.parameters {
		c.whitespaceBeforeParameters(ts)
	}
	if multiWS && g.operator {
		c.whitespaceAroundOperator(L)
	}
	if g.aroundOperator {
		c.missingWhitespaceAroundOperator(ts)
	}
	if multiWS && g.commaSpaces {
		c.whitespaceAroundComma(L)
	}
	if g.paramEquals {
		c.namedParameterEquals(L, ts)
	}
	if g.comments {
		c.whitespaceBeforeComment(ts)
	}
	if g.imports {
		c.importsOnSeparateLines(L)
	}
	if g.importsTop {
		c.moduleImportsOnTop(L)
	}
	if g.compound {
		c.compoundStatements(L)
	}
	if g.lineJoin {
		c.explicitLineJoin(ts)
	}
	if g.breaks {
		c.breakAroundBinaryOperators(ts)
	}
	if g.singleton && !c.logicalNoqa {
		c.comparisonToSingleton(L)
	}
	if g.negative {
		c.comparisonNegative(L)
	}
	if g.typeCmp && !c.logicalNoqa {
		c.comparisonType(L)
	}
	if g.except && !c.logicalNoqa {
		c.bareExcept(L)
	}
	if g.ambiguous {
		c.ambiguousIdentifier(ts)
	}
	if g.escape && !c.logicalNoqa {
		c.invalidEscapeSequence(ts)
	}
	if g.asyncAwait {
		c.asyncAwaitKeywords(ts)
	}
	if g.docLength {
		c.maximumDocLength(ts)
	}
}

// hasMultiSpace reports a tab or two adjacent whitespace characters: the
// checks of multiple spaces and tabs cannot fire without one.
func hasMultiSpace(L []byte, latin1 bool) bool {
	prev := false
	for i := 0; i < len(L); {
		c := L[i]
		if c < utf8.RuneSelf && !asciiSpace[c] {
			prev = false
			i++
			continue
		}
		if c == '\t' {
			return true
		}
		n := spaceLen(L, i, latin1)
		if n > 0 {
			if prev {
				return true
			}
			prev = true
			i += n
			continue
		}
		prev = false
		i++
	}
	return false
}
