package java

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/fleetkit/fleetkit/linter"
)

// Naming patterns, as checkstyle prints them.
const (
	patLower    = "^[a-z][a-zA-Z0-9]*$"
	patType     = "^[A-Z][a-zA-Z0-9]*$"
	patConstant = "^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$"
	tabWidth    = 8
)

// file holds one source file being linted.
type file struct {
	l     *Linter
	name  string // the source's name (EmptyLineSeparator treats package-info.java apart)
	src   string
	lx    *lexer
	ps    *parser
	lines []lineSpan
	out   []linter.Diagnostic
	seen  map[linter.Diagnostic]bool

	colLine, colOff int32 // the last position column computed...
	colN            int   // ...and its 0-based column

	javadocEnds map[int32]int // 0-based end lines of Javadoc comments to their index, built on first use

	tabs  map[int32][]tabStop // tab stops of lines with tabs, computed once per line
	steps int                 // bytes measured for columns: counted by the linearity test
}

// tabStop is one tab of a line: its UTF-16 column and the tab-expanded
// 0-based column just after it.
type tabStop struct{ u16, exp int32 }

type lineSpan struct{ start, end int32 } // end excludes the line terminator

func (f *file) report(line, col int, code, msg string) {
	if !f.l.enabled[code] {
		return
	}
	d := linter.Diagnostic{Line: line, Column: col, Code: code, Message: msg}
	// checkstyle keeps violations in a set ordered by line, column and
	// message (the module counts only when it has an id): identical ones
	// print once, even from two modules. The first reported wins; passes
	// run so that it is the one checkstyle prints (WhitespaceAround's
	// "'if' is not followed by whitespace." over WhitespaceAfter's).
	key := linter.Diagnostic{Line: line, Column: col, Message: msg}
	if f.seen == nil {
		f.seen = make(map[linter.Diagnostic]bool)
	}
	if f.seen[key] {
		return
	}
	f.seen[key] = true
	f.out = append(f.out, d)
}

// reportTok reports at token i, with checkstyle's tab-expanded column.
// It starts from the token's UTF-16 column and expands the tabs before
// it from the line's tab stops, found once per line, so reports in any
// order on one very long line stay linear (issue 13).
func (f *file) reportTok(i int32, code, msg string) {
	t := &f.lx.toks[i]
	f.report(int(t.line), f.tokColumn(t), code, msg)
}

// tokColumn returns the 1-based tab-expanded column of t.
func (f *file) tokColumn(t *token) int {
	stops := f.tabStops(t.line)
	k, _ := slices.BinarySearchFunc(stops, t.col, func(s tabStop, c int32) int { return int(s.u16 - c) })
	if k == 0 {
		return int(t.col) + 1
	}
	s := stops[k-1]
	return int(s.exp+t.col-s.u16-1) + 1
}

// tabStops returns the tabs of line, in order; nil for a line without.
func (f *file) tabStops(line int32) []tabStop {
	if line < 1 || int(line) > len(f.lines) {
		return nil
	}
	if stops, ok := f.tabs[line]; ok {
		return stops
	}
	ln := f.lines[line-1]
	s := f.src[ln.start:ln.end]
	if strings.IndexByte(s, '\t') < 0 {
		if f.tabs == nil {
			f.tabs = make(map[int32][]tabStop)
		}
		f.tabs[line] = nil
		return nil
	}
	f.steps += len(s)
	var stops []tabStop
	var u16, exp int32
	for _, r := range s {
		switch {
		case r == '\t':
			exp = (exp/tabWidth + 1) * tabWidth
			stops = append(stops, tabStop{u16, exp})
			u16++
			continue
		case r >= 0x10000:
			u16 += 2
			exp += 2
		default:
			u16++
			exp++
		}
	}
	if f.tabs == nil {
		f.tabs = make(map[int32][]tabStop)
	}
	f.tabs[line] = stops
	return stops
}

// column returns the 1-based tab-expanded column of byte offset off. It
// resumes from the previous call on the same line, so reporting many
// findings on one very long line stays linear.
func (f *file) column(line, off int32) int {
	if line < 1 || int(line) > len(f.lines) {
		return 1
	}
	from, n := f.lines[line-1].start, 0
	if f.colLine == line && f.colOff <= off {
		from, n = f.colOff, f.colN
	}
	s := f.src[from:off]
	f.steps += len(s)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\t':
			n = (n/tabWidth + 1) * tabWidth
			i++
		case c < 0x80:
			n++
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			n++
			if r >= 0x10000 {
				n++
			}
		}
	}
	f.colLine, f.colOff, f.colN = line, off, n
	return n + 1
}

func splitLines(src string, starts []int32) []lineSpan {
	lines := make([]lineSpan, 0, len(starts))
	for i, st := range starts {
		if i > 0 && int(st) == len(src) {
			break
		}
		end := int32(len(src))
		if i+1 < len(starts) {
			end = starts[i+1]
			if end > st && src[end-1] == '\n' {
				end--
			}
			if end > st && src[end-1] == '\r' {
				end--
			}
		}
		lines = append(lines, lineSpan{st, end})
	}
	return lines
}

func (l *Linter) run(src string) []linter.Diagnostic {
	f, _ := l.check(context.Background(), src)
	return f.out
}

// check lints src and returns the file with its findings in order. It
// stops between passes once ctx is done (the client has gone), returning
// ctx's error.
func (l *Linter) check(ctx context.Context, src string) (*file, error) {
	return l.checkNamed(ctx, "", src)
}

// checkNamed is check for a source with a name.
func (l *Linter) checkNamed(ctx context.Context, name, src string) (*file, error) {
	f := &file{l: l, src: src, name: name}
	f.lx = tokenize(src)
	f.lines = splitLines(src, f.lx.lines)
	passes := []func(){
		f.lineChecks,
		func() { f.ps = parse(f.lx) },
		f.whitespaceAround, f.whitespaceAfter, f.importChecks, f.namingChecks, f.blockChecks,
		f.oneStatementPerLine, f.modifierOrder, f.upperEll, f.todoComments, f.styleChecks, f.magicNumbers, f.fieldReports, f.layoutChecks, f.javadocMethods, f.redundantModifiers, f.javadocTypes, f.classChecks, f.invalidJavadocPositions, f.simplifyBoolean, f.javadocStyle, f.genericWhitespace, f.emptyCatchBlocks, f.abbreviations, f.indentation, f.javadocParagraphs, f.customImportOrder, f.variableDistance, f.commentsIndentation, f.fallThrough,
	}
	for _, pass := range passes {
		if err := ctx.Err(); err != nil {
			return f, err
		}
		pass()
	}
	// checkstyle orders violations at one position by message; Sort is
	// stable, so sorting by message first keeps that order among ties.
	slices.SortFunc(f.out, func(a, b linter.Diagnostic) int { return strings.Compare(a.Message, b.Message) })
	linter.Sort(f.out)
	return f, nil
}

// --- Checker-level checks on lines ---

func (f *file) lineChecks() {
	src := f.src
	wantLen := f.l.enabled[LineLength]
	wantTrail := f.l.enabled[RegexpSingleline]
	wantTab := f.l.enabled[FileTabCharacter]
	for i, ln := range f.lines {
		s := src[ln.start:ln.end]
		tab := strings.IndexByte(s, '\t')
		// Tabs expand to up to 8 columns, so a short line may still be long.
		if wantLen && (len(s) > f.l.maxLen || tab >= 0 && len(s)+tabWidth*strings.Count(s, "\t") > f.l.maxLen) {
			if n := expandedLen(s); n > f.l.maxLen && !strings.HasPrefix(s, "package ") && !strings.HasPrefix(s, "import ") &&
				(f.l.ignoreLine == nil || !f.l.ignoreLine.MatchString(s)) {
				f.report(i+1, 0, LineLength, "Line is longer than "+integer(f.l.maxLen)+" characters (found "+integer(n)+").")
			}
		}
		if wantTrail && len(s) > 0 {
			switch s[len(s)-1] {
			case ' ', '\t', '\v', '\f':
				f.report(i+1, 0, RegexpSingleline, f.l.trailingMsg)
			}
		}
		switch {
		case wantTab && tab >= 0 && f.l.tabEachLine:
			f.report(i+1, f.column(int32(i+1), ln.start+int32(tab)), FileTabCharacter, "Line contains a tab character.")
		case wantTab && tab >= 0:
			// eachLine is false by default: only the first tab is reported.
			f.report(i+1, f.column(int32(i+1), ln.start+int32(tab)), FileTabCharacter, "File contains tab characters (this is the first instance).")
			wantTab = false
		}
	}
	if f.l.enabled[FileLength] && len(f.lines) > f.l.fileLengthMax {
		f.report(1, 0, FileLength, "File length is "+integer(len(f.lines))+" lines (max allowed is "+integer(f.l.fileLengthMax)+").")
	}
	if f.l.enabled[NewlineAtEndOfFile] {
		// The default lineSeparator, lf_cr_crlf, accepts any line end.
		if n := len(src); n == 0 || src[n-1] != '\n' && src[n-1] != '\r' {
			f.report(1, 0, NewlineAtEndOfFile, "File does not end with a newline.")
		}
	}
}

// integer formats n as MessageFormat's {0,number,integer} does in an
// English locale: 4458 is "4,458".
func integer(n int) string {
	s := strconv.Itoa(n)
	if n < 1000 && n > -1000 {
		return s
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// expandedLen is checkstyle's line length: the first codePointCount UTF-16
// units of the line, with tabs expanded.
func expandedLen(s string) int {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
		if s[i] == '\t' {
			ascii = false
			break
		}
	}
	if ascii {
		return len(s)
	}
	units := make([]uint16, 0, len(s))
	cps := 0
	for _, r := range s {
		cps++
		if r >= 0x10000 {
			r -= 0x10000
			units = append(units, uint16(0xD800+(r>>10)), uint16(0xDC00+(r&0x3FF)))
		} else {
			units = append(units, uint16(r))
		}
	}
	n := 0
	for _, u := range units[:cps] {
		if u == '\t' {
			n = (n/tabWidth + 1) * tabWidth
		} else {
			n++
		}
	}
	return n
}

// --- WhitespaceAround ---

// javaSpace is Character.isWhitespace.
func javaSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1C, 0x1D, 0x1E, 0x1F:
		return true
	case 0xA0, 0x2007, 0x202F:
		return false
	}
	if r < 0x80 {
		return false
	}
	return unicode.Is(unicode.Zs, r) || r == 0x2028 || r == 0x2029
}

func (f *file) whitespaceAround() {
	if !f.l.enabled[WhitespaceAround] {
		return
	}
	toks := f.lx.toks
	// Empty bodies the allowEmpty* properties allow: neither brace is
	// checked.
	var skip map[int32]bool
	for _, e := range f.ps.emptyBodies {
		if f.l.wsAllowEmpty[e.kind] {
			if skip == nil {
				skip = make(map[int32]bool)
			}
			skip[e.open], skip[e.open+1] = true, true
		}
	}
	var forEach map[int32]bool
	if f.l.wsForEachColon {
		forEach = make(map[int32]bool, len(f.ps.forEachColons))
		for _, i := range f.ps.forEachColons {
			forEach[i] = true
		}
	}
	notPreceded := func(t *token) string {
		if f.l.wsNotPreceded != "" {
			return messageFormat(f.l.wsNotPreceded, t.text)
		}
		return "'" + t.text + "' is not preceded with whitespace."
	}
	notFollowed := func(t *token) string {
		if f.l.wsNotFollowed != "" {
			return messageFormat(f.l.wsNotFollowed, t.text)
		}
		return "'" + t.text + "' is not followed by whitespace."
	}
	for i := range toks {
		t := &toks[i]
		if t.role != rWS && !forEach[int32(i)] || skip[int32(i)] {
			continue
		}
		ln := f.lines[t.line-1]
		if t.flags&fNoBefore == 0 && t.off > ln.start {
			r, _ := utf8.DecodeLastRuneInString(f.src[ln.start:t.off])
			if !javaSpace(r) {
				f.reportTok(int32(i), WhitespaceAround, notPreceded(t))
			}
		}
		if end := t.end(); t.flags&fNoAfter == 0 && end < ln.end {
			r, _ := utf8.DecodeRuneInString(f.src[end:ln.end])
			if t.text == "}" && (r == ')' || r == ';' || r == ',' || r == '.') {
				continue
			}
			if !javaSpace(r) {
				f.reportTok(int32(i), WhitespaceAround, notFollowed(t))
			}
		}
	}
}

// whitespaceAfter is checkstyle's WhitespaceAfter at its default tokens:
// commas, semicolons (not those of empty statements), casts and the
// keywords if, else, while, do and for must be followed by white space,
// the end of the line, ';' or ')'.
func (f *file) whitespaceAfter() {
	if !f.l.enabled[WhitespaceAfter] {
		return
	}
	toks := f.lx.toks
	empty := make(map[int32]bool, len(f.ps.emptyStmts))
	for _, e := range f.ps.emptyStmts {
		empty[e] = true
	}
	followed := func(t *token) bool {
		ln := f.lines[t.line-1]
		end := t.end()
		if end >= ln.end {
			return true
		}
		r, _ := utf8.DecodeRuneInString(f.src[end:ln.end])
		return r == ';' || r == ')' || javaSpace(r)
	}
	for i := range toks {
		t := &toks[i]
		switch t.kind {
		case tOp:
			if t.text != "," && t.text != ";" || t.text == ";" && empty[int32(i)] {
				continue
			}
		case tKeyword:
			switch t.text {
			case "if", "else", "while", "do", "for":
			default:
				continue
			}
		default:
			continue
		}
		if !followed(t) {
			f.reportTok(int32(i), WhitespaceAfter, "'"+t.text+"' is not followed by whitespace.")
		}
	}
	for _, c := range f.ps.casts {
		if !followed(&toks[c]) {
			f.reportTok(c, WhitespaceAfter, "'typecast' is not followed by whitespace.")
		}
	}
}

// upperEll is checkstyle's UpperEll: a long literal ends in 'L', not 'l'.
func (f *file) upperEll() {
	if !f.l.enabled[UpperEll] {
		return
	}
	for i := range f.lx.toks {
		if t := &f.lx.toks[i]; t.kind == tNumber && strings.HasSuffix(t.text, "l") {
			f.reportTok(int32(i), UpperEll, "Should use uppercase 'L'.")
		}
	}
}

// todoComments is checkstyle's TodoComment: a comment whose text (after
// "//" or "/*") matches format, reported where that text starts.
func (f *file) todoComments() {
	if !f.l.enabled[TodoComment] {
		return
	}
	format := "TODO:"
	if f.l.todo != nil {
		format = f.l.todoFormat
	}
	for _, c := range f.lx.comments {
		text := f.src[c.off+2 : c.end]
		if f.src[c.off+1] == '*' {
			text = strings.TrimSuffix(text, "*/")
		}
		if f.l.todo == nil && !strings.Contains(text, "TODO:") || f.l.todo != nil && !f.l.todo.MatchString(text) {
			continue
		}
		// The line holding the comment's start: the last line start at or
		// before it.
		line, _ := slices.BinarySearch(f.lx.lines, c.off+1)
		f.report(line, f.column(int32(line), c.off+2), TodoComment, "Comment matches to-do format '"+format+"'.")
	}
}

// --- imports ---

func (f *file) importChecks() {
	ps := f.ps
	if len(ps.imports) == 0 {
		return
	}
	for _, imp := range ps.imports {
		// IllegalImport's default illegalPkgs: sun and its subpackages.
		if f.l.enabled[IllegalImport] && strings.HasPrefix(imp.name, "sun.") {
			f.reportTok(imp.kw, IllegalImport, "Illegal import - "+imp.name+".")
		}
		if imp.star && f.l.enabled[AvoidStarImport] {
			f.reportTok(imp.lastDot, AvoidStarImport, "Using the '.*' form of import should be avoided - "+imp.name+".")
		}
	}
	if f.l.enabled[RedundantImport] {
		// Lines of the earlier imports of each name: a duplicate is
		// reported once per earlier one, as checkstyle does, and a map
		// keeps thousands of imports linear (issue 13).
		seen := make(map[string][]int32)
		seenStatic := make(map[string][]int32)
		dups := func(m map[string][]int32, imp importDecl) {
			f.steps += len(m[imp.name]) + 1
			for _, line := range m[imp.name] {
				f.reportTok(imp.kw, RedundantImport, "Duplicate import to line "+integer(int(line))+" - "+imp.name+".")
			}
			m[imp.name] = append(m[imp.name], imp.nameLine)
		}
		for _, imp := range ps.imports {
			if imp.static {
				dups(seenStatic, imp)
				continue
			}
			front := imp.name
			if k := strings.LastIndexByte(front, '.'); k >= 0 {
				front = front[:k]
			} else {
				front = ""
			}
			switch {
			case front == "java.lang":
				f.reportTok(imp.kw, RedundantImport, "Redundant import from the java.lang package - "+imp.name+".")
			case ps.hasPackage && front == ps.pkgName:
				f.reportTok(imp.kw, RedundantImport, "Redundant import from the same package - "+imp.name+".")
			}
			dups(seen, imp)
		}
	}
	if f.l.enabled[UnusedImports] {
		f.unusedImports()
	}
}

func (f *file) unusedImports() {
	ps := f.ps
	want := make(map[string]bool)
	for _, imp := range ps.imports {
		if !imp.star {
			want[simpleName(imp.name)] = false
		}
	}
	if len(want) == 0 {
		return
	}
	toks := f.lx.toks
	for i := max(ps.collectFrom, 0); i < len(toks); i++ {
		t := &toks[i]
		if t.kind == tIdent && t.flags&fNotRef == 0 {
			if used, ok := want[t.text]; ok && !used {
				want[t.text] = true
			}
		}
	}
	if f.l.processJavadoc {
		f.javadocRefs(want)
	}
	for _, imp := range ps.imports {
		if !imp.star && (!want[simpleName(imp.name)] || javaLangClass(imp.name)) {
			f.reportTok(imp.first, UnusedImports, "Unused import - "+imp.name+".")
		}
	}
}

// javaLangClass reports whether name matches ^java\.lang\.[a-zA-Z]+$:
// checkstyle reports such imports as unused even when they are used.
func javaLangClass(name string) bool {
	rest, ok := strings.CutPrefix(name, "java.lang.")
	if !ok || rest == "" {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

func simpleName(s string) string {
	if k := strings.LastIndexByte(s, '.'); k >= 0 {
		return s[k+1:]
	}
	return s
}

// javadocRefs marks imports referenced from the javadoc before a
// definition, as checkstyle's processJavadoc does.
func (f *file) javadocRefs(want map[string]bool) {
	var byEnd map[int32]int // 0-based end line -> comment index
	for i, c := range f.lx.comments {
		if c.javadocOK {
			if byEnd == nil {
				byEnd = make(map[int32]int)
			}
			byEnd[c.endLine-1] = i
		}
	}
	if byEnd == nil {
		return
	}
	done := make(map[int]bool)
	for _, d := range f.ps.defs {
		idx := f.lx.toks[d].line - 2
		for idx > 0 && f.blankOrComment(idx) {
			idx--
		}
		ci, ok := byEnd[idx]
		if !ok || done[ci] {
			continue
		}
		done[ci] = true
		c := f.lx.comments[ci]
		javadocReferences(f.src[c.off:c.end], want)
	}
}

func (f *file) blankOrComment(idx int32) bool {
	if int(idx) >= len(f.lines) {
		return false
	}
	ln := f.lines[idx]
	s := strings.TrimLeft(f.src[ln.start:ln.end], " \t\f\v\x1c\x1d\x1e\x1f")
	return s == "" || strings.HasPrefix(s, "//")
}

func importTag(name string) bool {
	switch name {
	case "see", "link", "linkplain", "value", "throws", "exception":
		return true
	}
	return false
}

func javadocReferences(text string, want map[string]bool) {
	// block tags: a line starting with [*] @name
	for rest := text; rest != ""; {
		ln := rest
		if k := strings.IndexAny(rest, "\n\r"); k >= 0 {
			ln, rest = rest[:k], rest[k+1:]
		} else {
			rest = ""
		}
		s := strings.TrimLeft(ln, " \t\f")
		s = strings.TrimLeft(s, "*")
		s = strings.TrimLeft(s, " \t\f")
		if !strings.HasPrefix(s, "@") {
			continue
		}
		j := 1
		for j < len(s) && (s[j]|0x20 >= 'a' && s[j]|0x20 <= 'z') {
			j++
		}
		if j == 1 || j < len(s) && s[j] != ' ' && s[j] != '\t' && s[j] != '\f' {
			continue
		}
		if !importTag(s[1:j]) {
			continue
		}
		v := strings.TrimSpace(s[j:])
		v = strings.TrimSpace(strings.TrimSuffix(v, "*/"))
		tagRefs(v, want)
	}
	// inline tags: {@name value}
	for k := 0; ; {
		i := strings.Index(text[k:], "{@")
		if i < 0 {
			break
		}
		i += k + 2
		j := i
		for j < len(text) && (text[j]|0x20 >= 'a' && text[j]|0x20 <= 'z') {
			j++
		}
		k = j
		if j == i || j < len(text) && isIdentPart(text[j]) {
			continue
		}
		e := strings.IndexByte(text[j:], '}')
		if e < 0 {
			break
		}
		if importTag(text[i:j]) {
			v := text[j : j+e]
			var b strings.Builder
			for n, ln := range strings.Split(v, "\n") {
				if n > 0 {
					t := strings.TrimLeft(ln, " \t\r\f")
					if strings.HasPrefix(t, "*") {
						ln = t[1:]
					}
				}
				b.WriteString(ln)
				b.WriteByte(' ')
			}
			tagRefs(strings.Join(strings.Fields(b.String()), " "), want)
		}
		k = j + e + 1
	}
}

// tagRefs adds the first identifier of v and those after '(' or ','.
func tagRefs(v string, want map[string]bool) {
	mark := func(s string) {
		n := identPrefix(s)
		if n > 0 {
			if _, ok := want[s[:n]]; ok {
				want[s[:n]] = true
			}
		}
	}
	mark(v)
	for i := 0; i < len(v); i++ {
		if v[i] == '(' || v[i] == ',' {
			mark(strings.TrimLeft(v[i+1:], " \t\n\r\f\v"))
		}
	}
}

func identPrefix(s string) int {
	for i, r := range s {
		ok := r == '_' || r == '$' || unicode.IsLetter(r) || i > 0 && unicode.IsDigit(r)
		if !ok {
			return i
		}
	}
	return len(s)
}

// --- naming ---

func matchLower(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	return alnum(s[1:])
}

func matchType(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	return alnum(s[1:])
}

func alnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func matchConstant(s string) bool {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return false
	}
	prevUnderscore := false
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z' || c >= '0' && c <= '9':
			prevUnderscore = false
		case c == '_':
			if prevUnderscore {
				return false
			}
			prevUnderscore = true
		default:
			return false
		}
	}
	return !prevUnderscore
}

// tpCodes are the type parameter naming checks, in the order of their
// decl kinds.
var tpCodes = [...]string{ClassTypeParameterName, InterfaceTypeParameterName, RecordTypeParameterName, MethodTypeParameterName}

func (f *file) namingChecks() {
	toks := f.lx.toks
	if f.l.enabled[PackageName] && f.ps.hasPackage {
		f.packageName()
	}
	for _, d := range f.ps.decls {
		name := toks[d.name].text
		var code, pat string
		var ok bool
		switch d.kind {
		case declType:
			code, pat, ok = TypeName, patType, matchType(name)
		case declMethod:
			if d.clsName != "" && name == d.clsName {
				f.reportTok(d.name, MethodName, "Method Name '"+name+"' must not equal the enclosing class name.")
			}
			if d.aux {
				continue
			}
			code, pat, ok = MethodName, patLower, matchLower(name)
		case declParam:
			code, pat, ok = ParameterName, patLower, matchLower(name)
		case declLocal:
			code, pat, ok = LocalVariableName, patLower, matchLower(name)
		case declMember:
			code, pat, ok = MemberName, patLower, matchLower(name)
		case declStatic:
			code, pat, ok = StaticVariableName, patLower, matchLower(name)
		case declLocalFinal:
			code, pat, ok = LocalFinalVariableName, patLower, matchLower(name)
		case declConstant:
			if name == "serialVersionUID" || name == "serialPersistentFields" {
				continue
			}
			code, pat, ok = ConstantName, patConstant, matchConstant(name)
		case declClassTP, declInterfaceTP, declRecordTP, declMethodTP:
			code = tpCodes[d.kind-declClassTP]
			pat, ok = "^[A-Z]$", len(name) == 1 && name[0] >= 'A' && name[0] <= 'Z'
		default:
			continue
		}
		if np, custom := f.l.names[code]; custom {
			if np.re != nil {
				ok, pat = np.re.MatchString(name), np.pattern
			}
			if !ok && np.message != "" {
				f.reportTok(d.name, code, messageFormat(np.message, name, pat))
				continue
			}
		}
		if !ok {
			f.reportTok(d.name, code, "Name '"+name+"' must match pattern '"+pat+"'.")
		}
	}
}

// --- blocks and statements ---

func (f *file) blockChecks() {
	toks := f.lx.toks
	for _, kw := range f.ps.needBraces {
		f.reportTok(kw, NeedBraces, "'"+toks[kw].text+"' construct must use '{}'s.")
	}
	if f.l.enabled[FinalParameters] {
		for _, pi := range f.ps.finalParams {
			f.reportTok(pi.first, FinalParameters, "Parameter "+toks[pi.name].text+" should be final.")
		}
	}
	if f.l.enabled[ArrayTypeStyle] {
		for _, b := range f.ps.cArrays {
			f.reportTok(b, ArrayTypeStyle, "Array brackets at illegal position.")
		}
	}
	for _, b := range f.ps.emptyBlocks {
		f.reportTok(b, EmptyBlock, "Must have at least one statement.")
	}
	for _, s := range f.ps.emptyStmts {
		f.reportTok(s, EmptyStatement, "Empty statement.")
	}
	for _, e := range f.ps.equalsDiags {
		if e.noEquals {
			f.reportTok(e.tok, EqualsHashCode, "Definition of 'hashCode()' without corresponding definition of 'equals()'.")
		} else {
			f.reportTok(e.tok, EqualsHashCode, "Definition of 'equals()' without corresponding definition of 'hashCode()'.")
		}
	}
	for _, m := range f.ps.multiVar {
		if m.comma {
			f.reportTok(m.tok, MultipleVariableDeclarations, "Each variable declaration must be in its own statement.")
		} else {
			f.reportTok(m.tok, MultipleVariableDeclarations, "Only one variable definition per line allowed.")
		}
	}
}

// oneStatementPerLine replays checkstyle's OneStatementPerLineCheck state
// machine over the events the parser recorded.
func (f *file) oneStatementPerLine() {
	if !f.l.enabled[OneStatementPerLine] {
		return
	}
	var (
		inFor                      bool
		lastEnd, forEnd, lambdaEnd int32 = -1, -1, -1
		lambdas                    []int
	)
	same := func(line int32) bool { return lastEnd == line && forEnd != line && lambdaEnd != line }
	toks := f.lx.toks
	for _, ev := range f.ps.events {
		switch ev.kind {
		case evSemi, evSemiResource:
			switch {
			case len(lambdas) > 0:
				lambdas[len(lambdas)-1]++
				if !inFor && lambdas[len(lambdas)-1] > 1 && same(ev.line) {
					f.reportTok(ev.tok, OneStatementPerLine, "Only one statement per line allowed.")
				}
			case ev.kind == evSemiResource:
			case !inFor && same(ev.line):
				f.reportTok(ev.tok, OneStatementPerLine, "Only one statement per line allowed.")
			}
			lastEnd = toks[ev.tok].line
			forEnd, lambdaEnd = -1, -1
		case evForInit:
			inFor = true
		case evForIterVisit:
			forEnd = ev.line
		case evForIterLeave:
			inFor = false
		case evLambdaVisit:
			lambdas = append(lambdas, 0)
		case evLambdaLeave:
			if len(lambdas) > 0 {
				lambdas = lambdas[:len(lambdas)-1]
			}
			lambdaEnd = ev.line
		}
	}
}

// jlsOrder is the modifier order the JLS suggests.
var jlsOrder = map[string]int{
	"public": 0, "protected": 1, "private": 2, "abstract": 3, "default": 4, "static": 5,
	"final": 6, "transient": 7, "volatile": 8, "synchronized": 9, "native": 10, "strictfp": 11,
}

func (f *file) modifierOrder() {
	if !f.l.enabled[ModifierOrder] {
		return
	}
	toks := f.lx.toks
	for _, m := range f.ps.mods {
		if len(m.toks) == 0 {
			continue
		}
		k := 0
		for k < len(m.toks)-1 && toks[m.toks[k]].text == "@" {
			k++
		}
		if toks[m.toks[k]].text == "@" {
			continue
		}
		idx := 0
		for ; k < len(m.toks); k++ {
			i := m.toks[k]
			t := &toks[i]
			if t.text == "@" {
				if !m.annOK {
					name := "."
					if !m.qualName[k] && int(i)+1 < len(toks) {
						name = toks[i+1].text
					}
					f.reportTok(i, ModifierOrder, "'@"+name+"' annotation modifier does not precede non-annotation modifiers.")
				}
				break
			}
			o, ok := jlsOrder[t.text]
			for ok && idx < o {
				idx++
			}
			if !ok || idx > o {
				f.reportTok(i, ModifierOrder, "'"+t.text+"' modifier out of order with the JLS suggestions.")
				break
			}
		}
	}
}

// patPackage is PackageName's default format.
const patPackage = `^[a-z]+(\.[a-zA-Z_][a-zA-Z0-9_]*)*$`

var rePackage = regexp.MustCompile(patPackage)

// packageName is checkstyle's PackageName, at the package name's start.
func (f *file) packageName() {
	name, pat := f.ps.pkgName, patPackage
	ok := rePackage.MatchString(name)
	if np, custom := f.l.names[PackageName]; custom {
		if np.re != nil {
			ok, pat = np.re.MatchString(name), np.pattern
		}
		if !ok && np.message != "" {
			f.reportTok(f.ps.pkgFirst, PackageName, messageFormat(np.message, name, pat))
			return
		}
	}
	if !ok {
		f.reportTok(f.ps.pkgFirst, PackageName, "Name '"+name+"' must match pattern '"+pat+"'.")
	}
}

// Kinds of empty bodies WhitespaceAround may allow.
const (
	emptyMethod uint8 = iota
	emptyCtor
	emptyLoop
	emptyLambda
	emptyType
)

// emptyBody is a "{}" body: the '{', followed directly by its '}'.
type emptyBody struct {
	open int32
	kind uint8
}

// emptyCatch is a catch block without statements (reported at its '{'): its keyword, parameter
// name (-1 if none) and braces.
type emptyCatch struct{ kw, param, open, close int32 }

// emptyCatchBlocks is EmptyCatchBlock: a catch block holding at most
// comments is reported unless its parameter's name matches
// exceptionVariableName or its first comment's first line, not empty,
// matches commentFormat.
func (f *file) emptyCatchBlocks() {
	if !f.l.enabled[EmptyCatchBlock] {
		return
	}
	toks := f.lx.toks
	cs := f.lx.comments
	for _, e := range f.ps.emptyCatches {
		if e.param >= 0 && f.l.catchVarName.MatchString(toks[e.param].text) {
			continue
		}
		content := ""
		from := toks[e.open].end()
		k, _ := slices.BinarySearchFunc(cs, from, func(c comment, off int32) int { return int(c.off - off) })
		if k < len(cs) && cs[k].end <= toks[e.close].off {
			c := cs[k]
			if f.src[c.off+1] == '/' {
				content = f.src[c.off+2 : c.end]
			} else {
				content = strings.TrimSuffix(f.src[c.off+2:c.end], "*/")
				for _, ln := range strings.Split(content, "\n") {
					if ln != "" {
						content = ln
						break
					}
				}
			}
		}
		if content != "" && f.l.catchComment.MatchString(content) {
			continue
		}
		f.reportTok(e.open, EmptyCatchBlock, "Empty catch block.")
	}
}

// abbreviation is AbbreviationAsWordInName's getDisallowedAbbreviation:
// whether name has a run of capitals longer than allowed + 1, the last
// capital before a lower-case letter counting as the next word's.
func abbreviation(name string, allowed int) bool {
	rs := []rune(name)
	begin, started := 0, false
	illegal := func(end int) bool { return end-begin > allowed }
	for i, r := range rs {
		if unicode.IsUpper(r) {
			if !started {
				started, begin = true, i
			}
			continue
		}
		if started {
			started = false
			if illegal(i - 1) {
				return true
			}
		}
	}
	return started && illegal(len(rs)-1)
}

func (f *file) abbreviations() {
	if !f.l.enabled[AbbreviationAsWordInName] {
		return
	}
	max := strconv.Itoa(f.l.abbrAllowed + 1)
	final := make(map[int32]bool)
	if f.l.abbrIgnoreFinal {
		for _, i := range f.ps.abbrFinals {
			final[i] = true
		}
	}
	for _, i := range f.ps.abbrNames {
		if final[i] {
			continue
		}
		name := f.lx.toks[i].text
		if abbreviation(name, f.l.abbrAllowed) {
			f.reportTok(i, AbbreviationAsWordInName, "Abbreviation in name '"+name+"' must contain no more than '"+max+"' consecutive capital letters.")
		}
	}
}
