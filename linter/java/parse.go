package java

import "strings"

// This file holds a tolerant recursive-descent parser for Java. It builds no
// tree: while it walks the tokens it marks their roles (which operators and
// braces WhitespaceAround checks, which identifiers reference types) and
// records the facts the checks need, using checkstyle's notion of where an
// AST node is (an expression's root operator, a declaration's first
// modifier or its type's last dot) so that positions agree with it.

// maxDepth bounds recursion on pathological input.
const maxDepth = 1000

// maxTypeTokens bounds how far look-ahead scans for a type.
const maxTypeTokens = 256

// Kinds of type bodies, which decide how fields are named.
const (
	bodyClass = iota
	bodyInterface
	bodyAnnotation
	bodyEnum
	bodyRecord
	bodyAnon
)

// Event kinds for OneStatementPerLine, replayed in source order.
const (
	evSemi = iota
	evSemiResource
	evForInit
	evForIterVisit
	evForIterLeave
	evLambdaVisit
	evLambdaLeave
)

// event is one step of OneStatementPerLine's state machine.
type event struct {
	kind uint8
	tok  int32 // the ';' for semis
	line int32 // the line of the statement ending at a ';', of the for iterator or of the lambda
}

// Kinds of named declarations.
const (
	declType = iota
	declMethod
	declParam
	declLocal
	declMember
	declConstant
	declStatic     // StaticVariableName
	declLocalFinal // LocalFinalVariableName
	declClassTP    // the type parameter names
	declInterfaceTP
	declRecordTP
	declMethodTP
)

// decl is a named declaration checked by a naming check.
type decl struct {
	kind    uint8
	name    int32 // token index of the name
	aux     bool  // declMethod: annotated @Override
	clsName string
}

type importDecl struct {
	static   bool
	name     string
	star     bool
	kw       int32 // 'import'
	first    int32 // first identifier
	lastDot  int32 // the dot before '*' (AvoidStarImport position)
	nameLine int32 // line of the name, quoted by "Duplicate import to line"
}

type modsInfo struct {
	toks     []int32 // modifier keywords and '@' of annotations, in order
	annOK    bool    // annotations after keywords are allowed (on a type)
	qualName []bool  // for annotations: the name is qualified
}

type varGroupInfo struct {
	first    int32 // first token of the statement
	lastLine int32 // line of the last node of the last declarator
	count    int
	names    []int32 // locals: the declarators' names
	pos      int32   // locals: the declaration's AST position
	final    bool    // locals: declared final
}

type parser struct {
	toks  []token
	match []int32 // index of the matching bracket, or -1
	src   string
	p     int
	split int // '>' characters of toks[p] already consumed as generic ends
	depth int

	hasPackage  bool
	pkgName     string
	collectFrom int // identifiers from here on count as uses of imports
	imports     []importDecl
	decls       []decl
	defs        []int32 // positions of definitions (javadoc lookup for UnusedImports)
	needBraces  []int32 // keywords whose body is not a block
	emptyBlocks []int32 // '{' of empty blocks checked by EmptyBlock
	emptyStmts  []int32
	events      []event
	mods        []modsInfo
	multiVar    []multiVarDiag
	equalsDiags []equalsDiag
	casts       []int32     // the ')' of each cast
	cArrays     []int32     // the last '[' of brackets after a name (ArrayTypeStyle)
	lastParams  []paramInfo // the parameters params read last
	finalParams []paramInfo // parameters FinalParameters reports

	fieldDefs  []int32 // AST positions of fields and enum constants outside code (JavadocVariable)
	curlies    []curly // braces LeftCurly checks
	blockFirst int     // the AST position of the first statement of the block just parsed, or -1
	stmtPos    int     // the AST position of the statement just parsed
	ownFor     int     // the statement whose stmtPos a branch of statement0 set
	stmtCtx    int     // what holds the statement about to be parsed (ctxBlock...)
	inCase     bool    // the statements about to be parsed follow a case label
	caseBlock  bool    // the block about to be parsed is first in a case group
	assignCtx  int     // the expression about to be parsed may be an assignment (assignAllowed)
	assigns    []int32 // assignments InnerAssignment reports, unless in loopConds' idiom
	loopConds  []int32 // roots of the conditions of while loops
	// kids are the operands' roots of the logical, bitwise and comparison
	// operators, of '!' and of parenthesized expressions: the tree
	// InnerAssignment's loop idiom walks.
	kids       map[int32][2]int32
	opWraps    []int32 // operators OperatorWrap checks
	typeAnds   []int32 // '&' of type bounds and intersection casts (TYPE_EXTENSION_AND)
	methodRefs []int32 // '::'
	castParens []int32 // '(' and ')' of casts, which ParenPad leaves to TypecastParenPad
	noPad      []int32 // parens of for loops next to an empty init or iterator
	forExprs   bool    // the expression list about to be parsed is a for loop's init or iterator
	varFinal   bool    // the variables about to be declared are final

	// MagicNumber: the numbers, the variable definitions (and enum
	// constants) whose initializers hold them, and the spans of AST nodes
	// in a constant's initializer that are not among the parents a
	// constant's number may have.
	numbers      []magicNum
	mnCtxs       []mnCtx
	mnCur        int32 // index in mnCtxs of the innermost variable definition, or -1
	mnRanges     []mnSpan
	inAnnotation int
	annDefault   int

	// HiddenField: frames of the classes, enums, records and enum
	// constant bodies with their fields, and the parameters and local
	// variables that may hide one.
	hfFrames   []hfFrame
	hfCur      int32   // the innermost frame (0 is the file's)
	hfOwn      []bool  // per type body being parsed: whether it has a frame
	hfNewFrame bool    // the type body about to be parsed has a frame
	hfStatic   bool    // what is being parsed is in a static context (isInStatic)
	typeStatic bool    // the type about to be declared is static
	varStatic  bool    // the fields about to be declared are static
	anonDepth  int     // anonymous class bodies being parsed
	declNames  []int32 // the names declarators read last
	visibility []int32 // names of fields VisibilityModifier reports

	// DesignForExtension: the classes, the methods that may report
	// them, and per type body being parsed its surrounding scope and
	// nearest class (-1 for an enum or none).
	dfeClasses []dfeClass
	dfeMethods []dfeMethod
	scopes     []int8
	classes    []int32
	typeMods   modsInfo // the modifiers of the type about to be declared
	bodyScope  int8     // the scope of the type body about to be parsed
	bodyClass  int32    // the nearest class of the type body about to be parsed
	newAnon    bool     // the type body about to be parsed is an anonymous class

	blockLast    int      // the AST position of the last statement of the block just parsed, or -1
	blockClose   int      // the '}' of the block just parsed, or -1
	lastStmt     int      // the AST position of the last statement statements parsed, or -1
	bodyBlock    bool     // the body control just parsed is a block (bodyRC)
	bodyRC       rcurly   // that block
	rcurlies     []rcurly // blocks RightCurly checks
	nestedBlocks []int32  // '{' of blocks directly in blocks (AvoidNestedBlocks)
	nwBefore     []int32  // postfix ++ and -- and '...' (NoWhitespaceBefore; with commas and semicolons)
	noSemiPad    []int32  // semicolons after an empty for init or condition
	emptyIters   []int32  // ')' of for loops with an empty iterator (EmptyForIteratorPad)
	paramPads    []int32  // '(' MethodParamPad checks
	switches     []switchInfo
	methods      []methodInfo

	typeParamToks [][2]int32 // the first token and name of each type parameter typeParams read last
	paramNames    []int32    // the names of the parameters params read last
	paramFinals   []int32    // the final modifiers of the parameters params read last
	typeInfos     []typeInfo // per type body being parsed, what RedundantModifier asks of it
	redundant     []int32    // modifiers RedundantModifier reports
	typeDecls     []typeDeclInfo
	nwAfter       []int32     // array initializer braces, prefix ++ and --, unary - and + (NoWhitespaceAfter; with !, ~, '.' and '@')
	brackets      []int32     // '[' of array declarators and indices: NoWhitespaceAfter checks what precedes them
	defStarts     []int32     // first tokens of type, field, method and enum constant definitions: a Javadoc's place
	defKinds      []uint8     // what each of defStarts starts: a dk constant
	varBlocks     [][]stmtRec // VariableDeclarationUsageDistance: the statements of blocks that declare locals
	elseIfs       [][2]int32  // an if and the if of its else
	fallThroughs  [][2]int32  // FallThrough: a case group's first label and the label it falls through to
	termFor       int         // the statement whose termination term is
	term          uint8       // see termFor
	stmtTerm      uint8       // the termination of the statement just parsed (a term mask)
	lastTerm      uint8       // of the last statement of the statements just parsed
	blockTerm     uint8       // of the block just parsed
	bodyTerm      uint8       // of the body just parsed
	switchTerm    uint8       // of the switch just parsed
	doWhiles      [][2]int32  // a do and its while
	pkgFirst      int32       // the package name's first identifier, where PackageName reports

	// WhitespaceAround's allowEmpty* and ignoreEnhancedForColon.
	emptyBodies   []emptyBody
	forEachColons []int32
	emptyCatches  []emptyCatch // catch blocks without statements (EmptyCatchBlock)
	labelColons   []int32      // the ':' of labeled statements
	abbrNames     []int32      // names AbbreviationAsWordInName checks
	abbrFinals    []int32      // those of final variables (ignoreFinal)

	// GenericWhitespace: the angle brackets of type arguments and
	// parameters in source order, and what the next '<' opens.
	generics        []genEvent
	genMethodDef    bool // type parameters of a method or constructor
	genBeforeMethod bool // type arguments of a method call or reference

	// SimplifyBooleanReturn: whether the statement, the first statement of
	// the block and the body just parsed are `return true;` or `return
	// false;`, and the ifs whose both branches are.
	boolReturn, stmtBoolReturn, firstBoolReturn, bodyBoolReturn bool
	boolIfs                                                     []int32
	jsDefs                                                      []jsDef // definitions JavadocStyle checks
	curTypeDecl                                                 int32   // the typeDecls entry of the type body about to be parsed, or -1
	declStack                                                   []int32 // per type body being parsed, its typeDecls entry or -1
	fcStack                                                     []int32 // the classes (dfeClasses) being parsed, outermost first

	bodyKinds []int    // stack of enclosing type body kinds
	className []string // stack of enclosing class names (MethodName)
	codeDepth int      // >0 inside a method, constructor, initializer or lambda
	noLambda  int      // >0 while parsing case labels, where '->' ends the label
}

// Statement contexts, for InnerAssignment.
const (
	ctxNone    = iota
	ctxBlock   // directly in a block or case group
	ctxControl // the body of if, else, for, while or do without braces
)

// Assignment contexts.
const (
	assignNone = iota
	assignAllowed
)

// curlyNoBreak marks a brace LeftCurly checks only for its line, not for
// a line break after it (class bodies, switch).
const curlyNoBreak = -2

// curly is a '{' LeftCurly checks and the AST position of its block's
// first statement (-1 for none, curlyNoBreak).
type curly struct{ open, first int32 }

func (p *parser) curly(open, first int) {
	p.curlies = append(p.curlies, curly{int32(open), int32(first)})
}

// paramInfo is a formal parameter without the final modifier.
type paramInfo struct {
	first, name int32 // its first token (annotation, modifier or type) and its name
}

type multiVarDiag struct {
	tok   int32
	comma bool
}

type equalsDiag struct {
	tok      int32
	noEquals bool // hashCode without equals
}

func parse(lx *lexer) *parser {
	p := &parser{toks: lx.toks, src: lx.src, match: matchBrackets(lx.toks), ownFor: -1, mnCur: -1, bodyScope: -1, curTypeDecl: -1,
		hfFrames: []hfFrame{{parent: -1, static: true}},
		kids:     make(map[int32][2]int32)}
	p.compilationUnit()
	return p
}

// --- token helpers ---

func (p *parser) cur() *token { return &p.toks[p.p] }

func (p *parser) text() string {
	t := &p.toks[p.p]
	if p.split > 0 && t.kind == tOp {
		return t.text[p.split:]
	}
	return t.text
}

func (p *parser) at(s string) bool {
	t := &p.toks[p.p]
	if t.kind == tString || t.kind == tChar || t.kind == tTextBlock {
		return false
	}
	if p.split > 0 {
		return t.text[p.split:] == s
	}
	return t.text == s
}

func (p *parser) atIdx(i int, s string) bool {
	if i >= len(p.toks) {
		return false
	}
	t := &p.toks[i]
	return t.text == s && t.kind != tString && t.kind != tChar && t.kind != tTextBlock
}

func (p *parser) eof() bool { return p.toks[p.p].kind == tEOF }

func (p *parser) next() {
	if p.p < len(p.toks)-1 {
		p.p++
	}
	p.split = 0
}

func (p *parser) accept(s string) bool {
	if p.at(s) {
		p.next()
		return true
	}
	return false
}

func (p *parser) ws(i int) {
	if i >= 0 && i < len(p.toks) {
		p.toks[i].role = rWS
	}
}

func (p *parser) flag(i int, f uint8) {
	if i >= 0 && i < len(p.toks) {
		p.toks[i].flags |= f
	}
}

func (p *parser) isIdent(i int) bool { return i < len(p.toks) && p.toks[i].kind == tIdent }

func (p *parser) line(i int) int32 {
	if i < 0 || i >= len(p.toks) {
		return -1
	}
	return p.toks[i].line
}

// closeAngle consumes one '>' of the current token, which may be '>>' or '>>>'.
func (p *parser) closeAngle() {
	t := p.text()
	if len(t) == 0 || t[0] != '>' {
		return
	}
	if len(t) == 1 {
		p.next()
		return
	}
	p.split++
}

// skipBalanced skips from an opening bracket to past its match.
func (p *parser) skipBalanced() {
	open := p.text()
	var close string
	switch open {
	case "(":
		close = ")"
	case "[":
		close = "]"
	case "{":
		close = "}"
	default:
		p.next()
		return
	}
	depth := 0
	for !p.eof() {
		if p.at(open) {
			depth++
		} else if p.at(close) {
			depth--
			if depth == 0 {
				p.next()
				return
			}
		}
		p.next()
	}
}

// matching returns the index of the bracket closing the one at i, or -1.
func (p *parser) matching(i int) int {
	if i < 0 || i >= len(p.match) {
		return -1
	}
	return int(p.match[i])
}

// matchBrackets pairs each (, [ and { with its closer in one pass, so that
// look-ahead for lambdas and annotations stays linear on any input. Each
// kind is paired on its own, so a stray ')' does not unbalance braces.
func matchBrackets(toks []token) []int32 {
	match := make([]int32, len(toks))
	var stacks [3][]int32
	for i := range toks {
		match[i] = -1
		t := &toks[i]
		if t.kind != tOp || len(t.text) != 1 {
			continue
		}
		k := strings.IndexByte("([{)]}", t.text[0])
		switch {
		case k < 0:
		case k < 3:
			stacks[k] = append(stacks[k], int32(i))
		default:
			st := stacks[k-3]
			if n := len(st); n > 0 {
				match[st[n-1]] = int32(i)
				stacks[k-3] = st[:n-1]
			}
		}
	}
	return match
}

var primitives = map[string]bool{
	"boolean": true, "byte": true, "char": true, "short": true, "int": true,
	"long": true, "float": true, "double": true, "void": true,
}

var modifierWords = map[string]bool{
	"public": true, "protected": true, "private": true, "abstract": true, "static": true,
	"final": true, "transient": true, "volatile": true, "synchronized": true, "native": true,
	"strictfp": true, "default": true,
}

// --- speculative scanning (marks nothing) ---

// skipTypeArgs scans type arguments starting at toks[i] == "<" and returns
// the index after the closing '>' and how many '>' of that token remain
// unused, or -1.
func (p *parser) skipTypeArgs(i int) (int, int) {
	depth := 0
	// Real type arguments are short; the bound keeps a<b<c<... linear.
	for limit := min(len(p.toks), i+maxTypeTokens); i < limit; i++ {
		t := &p.toks[i]
		switch t.kind {
		case tIdent:
			continue
		case tKeyword:
			if primitives[t.text] || t.text == "extends" || t.text == "super" || t.text == "final" {
				continue
			}
			return -1, 0
		case tOp:
			switch t.text {
			case "<":
				depth++
				continue
			case ".", ",", "?", "&", "[", "]", "@":
				continue
			case ">", ">>", ">>>":
				depth -= len(t.text)
				if depth == 0 {
					return i + 1, 0
				}
				if depth < 0 {
					return i + 1, -depth
				}
				continue
			}
			return -1, 0
		default:
			return -1, 0
		}
	}
	return -1, 0
}

// skipType scans a type (annotations, primitive or qualified name with type
// arguments, array dimensions) at i and returns the index after it, or -1.
func (p *parser) skipType(i int) int {
	for p.atIdx(i, "@") && p.isIdent(i+1) {
		i = p.skipAnnotationAt(i)
	}
	if i >= len(p.toks) {
		return -1
	}
	t := &p.toks[i]
	switch {
	case t.kind == tKeyword && primitives[t.text]:
		i++
	case t.kind == tIdent:
		i++
		for start := i; i-start < maxTypeTokens; {
			if p.atIdx(i, "<") {
				j, rest := p.skipTypeArgs(i)
				if j < 0 || rest != 0 {
					return -1
				}
				i = j
			}
			if p.atIdx(i, ".") && (p.isIdent(i+1) || p.atIdx(i+1, "@")) {
				i++
				for p.atIdx(i, "@") && p.isIdent(i+1) {
					i = p.skipAnnotationAt(i)
				}
				if !p.isIdent(i) {
					return -1
				}
				i++
				continue
			}
			break
		}
	default:
		return -1
	}
	for {
		for p.atIdx(i, "@") && p.isIdent(i+1) {
			i = p.skipAnnotationAt(i)
		}
		if p.atIdx(i, "[") && p.atIdx(i+1, "]") {
			i += 2
			continue
		}
		return i
	}
}

// skipAnnotationAt skips an annotation starting with '@' at i.
func (p *parser) skipAnnotationAt(i int) int {
	i++
	for p.isIdent(i) {
		i++
		if p.atIdx(i, ".") && p.isIdent(i+1) {
			i++
			continue
		}
		break
	}
	if p.atIdx(i, "(") {
		if j := p.matching(i); j > 0 {
			return j + 1
		}
		return len(p.toks) - 1
	}
	return i
}

// --- compilation unit ---

func (p *parser) compilationUnit() {
	p.collectFrom = -1
	p.bodyKinds = append(p.bodyKinds, bodyClass)
	start := p.p
	annStart := -1
	if p.at("@") && !p.atIdx(p.p+1, "interface") {
		// Annotations may precede 'package' (package-info.java).
		annStart = p.p
		save := p.p
		for p.at("@") && !p.atIdx(p.p+1, "interface") {
			p.annotation()
		}
		if !p.at("package") {
			p.p, p.split = save, 0
			annStart = -1
		}
	}
	if p.at("package") {
		if annStart >= 0 {
			p.defStart(annStart, ckPackage)
		} else {
			p.defStart(p.p, ckPackage)
		}
		p.hasPackage = true
		p.collectFrom = start
		if annStart >= 0 {
			p.defs = append(p.defs, int32(annStart))
		} else {
			p.defs = append(p.defs, int32(p.p))
		}
		p.next()
		name, first, last := p.qualifiedName(false)
		p.pkgName = name
		p.pkgFirst = int32(first)
		p.semi(last)
	}
	for p.at("import") || p.at(";") {
		if p.at(";") {
			p.semi(-1)
			continue
		}
		p.importDecl()
	}
	if p.collectFrom < 0 {
		p.collectFrom = p.p
	}
	for !p.eof() {
		before := p.p
		if p.at(";") {
			p.semi(-1)
			continue
		}
		p.member(nil)
		if p.p == before {
			p.next()
		}
	}
}

// qualifiedName reads a.b.c and returns it with the indices of its first
// identifier and of its root (last dot, or the identifier).
func (p *parser) qualifiedName(allowStar bool) (string, int, int) {
	first, root := p.p, p.p
	start := p.toks[p.p].off
	end := start
	if !p.isIdent(p.p) {
		return "", first, root
	}
	end = p.toks[p.p].end()
	p.next()
	for p.at(".") {
		dot := p.p
		if p.isIdent(p.p + 1) {
			root = dot
			p.next()
			p.flag(p.p, fNotRef)
			end = p.toks[p.p].end()
			p.next()
			continue
		}
		if allowStar && p.atIdx(p.p+1, "*") {
			root = dot
			p.next()
			end = p.toks[p.p].end()
			p.next()
		}
		break
	}
	return p.src[start:end], first, root
}

func (p *parser) importDecl() {
	kw := p.p
	p.next()
	imp := importDecl{kw: int32(kw)}
	if p.at("static") {
		imp.static = true
		p.next()
	}
	imp.first = int32(p.p)
	imp.nameLine = p.toks[p.p].line
	name, _, root := p.qualifiedName(true)
	imp.name = name
	imp.lastDot = int32(root)
	if len(name) >= 2 && name[len(name)-2:] == ".*" {
		imp.star = true
	}
	if name != "" {
		p.imports = append(p.imports, imp)
	}
	p.semi(root)
}

// semi consumes a ';' that ends a statement whose AST node starts at stmt
// (-1: the ';' stands alone).
func (p *parser) semi(stmt int) {
	if !p.at(";") {
		return
	}
	line := p.toks[p.p].line
	if stmt >= 0 {
		line = p.toks[stmt].line
	}
	p.events = append(p.events, event{kind: evSemi, tok: int32(p.p), line: line})
	p.next()
}

// --- modifiers and annotations ---

// modifiers reads modifier keywords and annotations. It returns their
// token indices and whether there were any.
func (p *parser) modifiers() modsInfo {
	var m modsInfo
	for {
		t := p.cur()
		switch {
		case t.kind == tKeyword && modifierWords[t.text]:
			switch {
			case t.text == "default" && (p.atIdx(p.p+1, ":") || p.atIdx(p.p+1, "->")):
				return m // a switch label
			case t.text == "static" && p.atIdx(p.p+1, "{"):
				return m // a static initializer
			case t.text == "synchronized" && p.atIdx(p.p+1, "("):
				return m // a synchronized statement
			case t.text == "synchronized":
				p.ws(p.p) // WhitespaceAround checks it as a modifier too
			}
			m.toks = append(m.toks, int32(p.p))
			m.qualName = append(m.qualName, false)
			p.next()
		case t.text == "@" && t.kind == tOp && !p.atIdx(p.p+1, "interface"):
			m.toks = append(m.toks, int32(p.p))
			m.qualName = append(m.qualName, p.atIdx(p.p+2, "."))
			p.annotation()
		default:
			return m
		}
	}
}

// annotation parses @Name or @Name(args).
func (p *parser) annotation() {
	p.inAnnotation++
	defer func() { p.inAnnotation-- }()
	p.next() // '@'
	p.qualifiedName(false)
	if p.at("(") {
		p.next()
		for !p.eof() && !p.at(")") {
			before := p.p
			if p.isIdent(p.p) && p.atIdx(p.p+1, "=") {
				p.next()
				p.ws(p.p)
				p.next()
			}
			p.elementValue()
			if !p.accept(",") && p.p == before {
				p.next()
			}
		}
		p.accept(")")
	}
}

func (p *parser) elementValue() {
	switch {
	case p.at("@"):
		p.annotation()
	case p.at("{"):
		p.next()
		for !p.eof() && !p.at("}") {
			before := p.p
			p.elementValue()
			if !p.accept(",") && p.p == before {
				p.next()
			}
		}
		p.accept("}")
	default:
		p.ternary()
	}
}

// typ parses a type and returns the index of its AST position (last dot of
// a qualified name, last '[' of its dimensions, else its first token).
func (p *parser) typ() int {
	for p.at("@") && p.isIdent(p.p+1) {
		p.annotation()
	}
	pos := p.p
	t := p.cur()
	switch {
	case t.kind == tKeyword && primitives[t.text]:
		p.next()
	case t.kind == tIdent || t.text == "?":
		p.next()
		for {
			if p.at("<") {
				p.typeArgs()
			}
			if p.at(".") && (p.isIdent(p.p+1) || p.atIdx(p.p+1, "@")) {
				pos = p.p
				p.next()
				for p.at("@") && p.isIdent(p.p+1) {
					p.annotation()
				}
				if !p.atIdx(p.p+1, "<") {
					p.flag(p.p, fNotRef)
				}
				p.next()
				continue
			}
			break
		}
	default:
		return pos
	}
	for {
		for p.at("@") && p.isIdent(p.p+1) {
			p.annotation()
		}
		if p.at("[") && p.atIdx(p.p+1, "]") {
			p.brackets = append(p.brackets, int32(p.p))
			pos = p.p
			p.next()
			p.next()
			continue
		}
		return pos
	}
}

// typeArgs parses <...> type arguments (or a diamond).
func (p *parser) typeArgs() {
	ev := p.genericStart()
	p.next()
	for !p.eof() && !(len(p.text()) > 0 && p.text()[0] == '>') {
		before := p.p
		if p.at("?") {
			p.next()
			if p.at("extends") || p.at("super") {
				p.next()
				p.typ()
			}
		} else {
			p.typ()
		}
		for p.at("&") {
			p.ws(p.p)
			p.next()
			p.typ()
		}
		if !p.accept(",") {
			if p.p == before {
				return
			}
			if !(len(p.text()) > 0 && p.text()[0] == '>') {
				return
			}
		}
	}
	p.genericEnd(ev)
	p.closeAngle()
}

// typeParams parses <T extends A & B, U> on a declaration.
func (p *parser) typeParams() {
	ev := p.genericStart()
	p.next()
	p.typeParamToks = p.typeParamToks[:0]
	for !p.eof() && !(len(p.text()) > 0 && p.text()[0] == '>') {
		before := p.p
		for p.at("@") {
			p.annotation()
		}
		if p.isIdent(p.p) {
			p.typeParamToks = append(p.typeParamToks, [2]int32{int32(before), int32(p.p)})
			p.next()
		}
		if p.accept("extends") {
			p.typ()
			for p.at("&") {
				p.typeAnds = append(p.typeAnds, int32(p.p))
				p.ws(p.p)
				p.next()
				p.typ()
			}
		}
		if !p.accept(",") && p.p == before {
			return
		}
	}
	p.genericEnd(ev)
	p.closeAngle()
}
