package search

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrInvalid is matched by every *Error: a search expression was refused.
var ErrInvalid = errors.New("search: invalid expression")

// Error is a refused search expression. Reason says why, for the caller
// (the API answers it after "Failed to parse search query: ").
type Error struct {
	Reason string
}

func (e *Error) Error() string { return "search: " + e.Reason }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

// Errorf returns an *Error with the formatted reason.
func Errorf(format string, args ...any) error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// Expr is a parsed search expression: a Cond, an And or an Or. Stores
// render it to SQL with placeholders only; no text of the search ever
// reaches SQL.
type Expr interface{ isExpr() }

// Cond is one comparison: Field Op Values (one value except for IN and
// NOT IN).
type Cond struct {
	Field  string // one of Fields
	Op     Op
	Values []string
}

// And holds when every term holds.
type And []Expr

// Or holds when any term holds.
type Or []Expr

func (Cond) isExpr() {}
func (And) isExpr()  {}
func (Or) isExpr()   {}

// Op is a search comparison operator.
type Op string

// Search operators.
const (
	OpEq    Op = "="
	OpNe    Op = "<>"
	OpIn    Op = "IN"
	OpNotIn Op = "NOT IN"
	OpLike  Op = "LIKE"
	OpILike Op = "ILIKE"
)

// MaxClauses bounds the comparisons of one search.
const MaxClauses = 10

// Fields is the allow-list of searchable fields.
func Fields() []string {
	return []string{"cloud_provider", "name", "owner", "region", "status", "instance_type", "cluster_id"}
}

// Parse parses the API's search parameter, a small SQL-like filter:
//
//	name = my-dino and (region = us-east-1 or region IN ('eu-west-1', eu-west-2))
//
// Fields are Fields; operators =, <>, IN, NOT IN, LIKE, ILIKE;
// terms are joined by AND (binding tighter) and OR, with parentheses;
// keywords are case-insensitive; values are bare words or single-quoted
// strings (” is a quote). At most MaxClauses comparisons. An empty
// search is nil. Every error is an *Error.
func Parse(s string) (Expr, error) {
	toks, err := lexSearch(s)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, nil
	}
	p := &searchParser{toks: toks}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, Errorf("unexpected %q", p.toks[p.pos].text)
	}
	return e, nil
}

type tokKind int

const (
	tokWord tokKind = iota
	tokString
	tokPunct // ( ) , = <>
)

type token struct {
	kind tokKind
	text string
}

func lexSearch(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')' || c == ',' || c == '=':
			toks = append(toks, token{tokPunct, string(c)})
			i++
		case c == '<':
			if i+1 < len(s) && s[i+1] == '>' {
				toks = append(toks, token{tokPunct, "<>"})
				i += 2
				continue
			}
			return nil, Errorf("unsupported operator at %d", i)
		case c == '>' || c == '!':
			return nil, Errorf("unsupported operator at %d", i)
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return nil, Errorf("unterminated string at %d", i)
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' {
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			toks = append(toks, token{tokString, b.String()})
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n(),=<>!'", rune(s[j])) {
				j++
			}
			toks = append(toks, token{tokWord, s[i:j]})
			i = j
		}
	}
	return toks, nil
}

type searchParser struct {
	toks    []token
	pos     int
	clauses int
}

func (p *searchParser) peekKeyword(kw string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == tokWord && strings.EqualFold(p.toks[p.pos].text, kw)
}

func (p *searchParser) peekPunct(s string) bool {
	return p.pos < len(p.toks) && p.toks[p.pos].kind == tokPunct && p.toks[p.pos].text == s
}

func (p *searchParser) or() (Expr, error) {
	var terms Or
	for {
		e, err := p.and()
		if err != nil {
			return nil, err
		}
		terms = append(terms, e)
		if !p.peekKeyword("or") {
			break
		}
		p.pos++
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	return terms, nil
}

func (p *searchParser) and() (Expr, error) {
	var terms And
	for {
		e, err := p.term()
		if err != nil {
			return nil, err
		}
		terms = append(terms, e)
		if !p.peekKeyword("and") {
			break
		}
		p.pos++
	}
	if len(terms) == 1 {
		return terms[0], nil
	}
	return terms, nil
}

func (p *searchParser) term() (Expr, error) {
	if p.peekPunct("(") {
		p.pos++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		if !p.peekPunct(")") {
			return nil, Errorf("missing )")
		}
		p.pos++
		return e, nil
	}
	return p.cond()
}

func (p *searchParser) cond() (Expr, error) {
	if p.pos >= len(p.toks) {
		return nil, Errorf("unexpected end, expected a field")
	}
	t := p.toks[p.pos]
	field := strings.ToLower(t.text)
	if t.kind != tokWord || !slices.Contains(Fields(), field) {
		return nil, Errorf("%q is not a searchable field (allowed: %s)", t.text, strings.Join(Fields(), ", "))
	}
	p.pos++
	p.clauses++
	if p.clauses > MaxClauses {
		return nil, Errorf("more than %d clauses", MaxClauses)
	}
	var op Op
	switch {
	case p.peekPunct("="):
		op = OpEq
	case p.peekPunct("<>"):
		op = OpNe
	case p.peekKeyword("like"):
		op = OpLike
	case p.peekKeyword("ilike"):
		op = OpILike
	case p.peekKeyword("in"):
		op = OpIn
	case p.peekKeyword("not"):
		p.pos++
		if !p.peekKeyword("in") {
			return nil, Errorf("expected IN after NOT")
		}
		op = OpNotIn
	default:
		return nil, Errorf("expected an operator after %s", field)
	}
	p.pos++
	if op != OpIn && op != OpNotIn {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		return Cond{Field: field, Op: op, Values: []string{v}}, nil
	}
	if !p.peekPunct("(") {
		return nil, Errorf("expected ( after %s", op)
	}
	p.pos++
	var vals []string
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
		if p.peekPunct(",") {
			p.pos++
			continue
		}
		if p.peekPunct(")") {
			p.pos++
			return Cond{Field: field, Op: op, Values: vals}, nil
		}
		return nil, Errorf("expected , or ) in %s list", op)
	}
}

func (p *searchParser) value() (string, error) {
	if p.pos >= len(p.toks) {
		return "", Errorf("unexpected end, expected a value")
	}
	t := p.toks[p.pos]
	if t.kind == tokPunct {
		return "", Errorf("expected a value, found %q", t.text)
	}
	if t.kind == tokWord && (strings.EqualFold(t.text, "and") || strings.EqualFold(t.text, "or")) {
		return "", Errorf("expected a value, found %q", t.text)
	}
	p.pos++
	return t.text, nil
}
