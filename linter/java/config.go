package java

import (
	"bytes"
	"embed"
	"encoding/xml"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// OptionConfig is the linter.Config option that names a checkstyle
// configuration: SunChecks, GoogleChecks, or the XML text of one. Without
// it the linter runs DefaultConfig.
const OptionConfig = "config"

// Names of the built-in configurations.
const (
	// DefaultConfig is the configuration used when none is named: the
	// checks of testdata/checkstyle.xml at checkstyle's defaults. It is
	// what versions 1.0 to 2.0 of the linter service have always run, so
	// it stays the default.
	DefaultConfig = "default"
	// SunChecks is checkstyle's built-in sun_checks.xml.
	SunChecks = "sun_checks"
	// GoogleChecks is checkstyle's built-in google_checks.xml.
	GoogleChecks = "google_checks"
)

// maxConfigSize bounds the XML text of a configuration: the largest real
// ones are a few tens of KB.
const maxConfigSize = 1 << 20

//go:embed configs/sun_checks.xml configs/google_checks.xml
var builtinConfigs embed.FS

// Module is one <module> of a checkstyle configuration.
type Module struct {
	Name       string
	Properties map[string]string
	// Messages are the <message key value> overrides.
	Messages map[string]string
	Modules  []Module
}

// xmlModule is Module as encoding/xml reads it.
type xmlModule struct {
	Name     string `xml:"name,attr"`
	Property []struct {
		Name    string  `xml:"name,attr"`
		Value   string  `xml:"value,attr"`
		Default *string `xml:"default,attr"`
	} `xml:"property"`
	Message []struct {
		Key   string `xml:"key,attr"`
		Value string `xml:"value,attr"`
	} `xml:"message"`
	Module []xmlModule `xml:"module"`
}

var propertyRef = regexp.MustCompile(`\$\{[^}]*\}`)

func (x *xmlModule) module() Module {
	m := Module{Name: strings.TrimSpace(x.Name), Properties: map[string]string{}, Messages: map[string]string{}}
	for _, p := range x.Property {
		v := p.Value
		// ${name} refers to a system property; none is set here, so
		// checkstyle uses the default attribute when there is one.
		if propertyRef.MatchString(v) && p.Default != nil {
			v = *p.Default
		}
		m.Properties[strings.TrimSpace(p.Name)] = v
	}
	for _, msg := range x.Message {
		m.Messages[msg.Key] = msg.Value
	}
	for i := range x.Module {
		m.Modules = append(m.Modules, x.Module[i].module())
	}
	return m
}

// ParseConfig reads a checkstyle XML configuration, whose root module must
// be Checker.
func ParseConfig(text []byte) (Module, error) {
	if len(text) > maxConfigSize {
		return Module{}, fmt.Errorf("%w: configuration is %d bytes, more than %d", ErrInvalidConfig, len(text), maxConfigSize)
	}
	dec := xml.NewDecoder(bytes.NewReader(text))
	dec.Strict = true
	// The DOCTYPE names checkstyle's DTD; nothing is fetched.
	dec.Entity = xml.HTMLEntity
	var x xmlModule
	if err := dec.Decode(&x); err != nil {
		return Module{}, fmt.Errorf("%w: checkstyle configuration: %v", ErrInvalidConfig, err)
	}
	m := x.module()
	if m.Name != "Checker" {
		return Module{}, fmt.Errorf("%w: checkstyle configuration: root module is %q, want Checker", ErrInvalidConfig, m.Name)
	}
	return m, nil
}

// BuiltinConfig returns the text of a built-in configuration by name
// (SunChecks, GoogleChecks).
func BuiltinConfig(name string) ([]byte, bool) {
	b, err := builtinConfigs.ReadFile("configs/" + name + ".xml")
	return b, err == nil
}

// settings are the checks a configuration enables and their properties.
type settings struct {
	enabled            map[string]bool
	maxLen             int
	ignoreLine         *regexp.Regexp // LineLength's ignorePattern
	tabEachLine        bool
	trailingMsg        string
	processJavadoc     bool
	fileLengthMax      int
	todo               *regexp.Regexp // TodoComment's format; nil for the default "TODO:"
	todoFormat         string
	names              map[string]namePattern // naming checks with their own format or message
	opWrapTokens       map[string]bool        // OperatorWrap's tokens
	wsAllowEmpty       map[uint8]bool         // WhitespaceAround's allowEmpty* that are set
	wsForEachColon     bool                   // WhitespaceAround's ignoreEnhancedForColon is false
	wsNotPreceded      string                 // WhitespaceAround's messages, "" for the default
	wsNotFollowed      string
	gwMessages         map[string]string // GenericWhitespace's messages by key; missing ones are the defaults
	abbrAllowed        int               // AbbreviationAsWordInName's allowedAbbreviationLength
	abbrIgnoreFinal    bool              // AbbreviationAsWordInName's ignoreFinal
	mjmAnnotations     map[string]bool   // MissingJavadocMethod's allowedAnnotations
	mjmMinLines        int               // MissingJavadocMethod's minLineCount
	nwBeforeTokens     map[string]bool   // NoWhitespaceBefore's tokens
	nwBeforeLineBreaks bool              // NoWhitespaceBefore's allowLineBreaks
	catchVarName       *regexp.Regexp    // EmptyCatchBlock's exceptionVariableName
	catchComment       *regexp.Regexp    // EmptyCatchBlock's commentFormat
	excludeFile        []*regexp.Regexp
	indent             indentOpts       // Indentation's properties
	summaryForbidden   *regexp.Regexp   // SummaryJavadoc's forbiddenSummaryFragments; nil for the default ^$
	atclauseOrder      []string         // AtclauseOrder's tagOrder
	atclauseTarget     [ckKinds]bool    // AtclauseOrder's target
	rightCurlies       []rightCurlyRule // RightCurly's modules, each with its option and tokens
	rcSkipEmpty        map[string]bool  // ids of RightCurly modules whose empty bodies are exempt (an XPath filter)
	unsupported        []string
}

// namePattern is a naming check's format and message.
type namePattern struct {
	re      *regexp.Regexp
	pattern string
	message string // MessageFormat text with {0} the name and {1} the pattern; "" for the default
}

// defaultSettings is the default configuration: every check of
// testdata/checkstyle.xml at its defaults.
func defaultSettings() *settings {
	s := newSettings()
	for _, c := range defaultCodes {
		s.enabled[c] = true
	}
	return s
}

func newSettings() *settings {
	return &settings{
		enabled: map[string]bool{}, maxLen: DefaultMaxLineLength, processJavadoc: true,
		trailingMsg: "Line has trailing spaces.", fileLengthMax: 2000, names: map[string]namePattern{},
		catchVarName: regexp.MustCompile("^$"), catchComment: regexp.MustCompile(".*"),
		mjmAnnotations: map[string]bool{"Override": true}, mjmMinLines: -1, abbrAllowed: 3,
		indent: defaultIndentOpts,
	}
}

// checkerProperties are the Checker and TreeWalker properties that do not
// change findings here: file selection is the caller's (fileExtensions),
// output formatting is ours.
var checkerProperties = map[string]bool{
	"severity": true, "fileExtensions": true, "basedir": true, "cacheFile": true,
	"haltOnException": true, "localeLanguage": true, "localeCountry": true, "id": true,
}

// configure reads the modules of root (a Checker) into settings. Modules
// and property values it cannot honour are listed in unsupported.
func configure(root Module) (*settings, error) {
	s := newSettings()
	for k, v := range root.Properties {
		switch {
		case k == "charset" && strings.EqualFold(v, "UTF-8"):
		case k == "tabWidth" && v == "8":
		case !checkerProperties[k]:
			s.unsupport("Checker: property %s=%q", k, v)
		}
	}
	for _, m := range root.Modules {
		if m.Properties["severity"] == "ignore" {
			continue
		}
		if m.Name == "TreeWalker" {
			for k, v := range m.Properties {
				if !(k == "tabWidth" && v == "8" || checkerProperties[k]) {
					s.unsupport("TreeWalker: property %s=%q", k, v)
				}
			}
			for _, c := range m.Modules {
				if c.Properties["severity"] == "ignore" {
					continue
				}
				if err := s.module(c, true); err != nil {
					return nil, err
				}
			}
			continue
		}
		if err := s.module(m, false); err != nil {
			return nil, err
		}
	}
	for i := range s.rightCurlies {
		s.rightCurlies[i].skipEmpty = s.rcSkipEmpty[s.rightCurlies[i].code]
	}
	return s, nil
}

func (s *settings) unsupport(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains(s.unsupported, msg) {
		s.unsupported = append(s.unsupported, msg)
	}
}

// checkerLevel are the checks that sit under Checker; the others sit
// under TreeWalker.
var checkerLevel = map[string]bool{
	LineLength: true, FileTabCharacter: true, RegexpSingleline: true, NewlineAtEndOfFile: true, FileLength: true,
}

// module applies one module of the configuration.
func (s *settings) module(m Module, underTreeWalker bool) error {
	props := maps(m.Properties)
	delete(props, "severity")
	delete(props, "id")
	// known takes the property k when its value is want.
	known := func(k, want string) {
		if v, ok := props[k]; ok && strings.EqualFold(strings.Join(strings.Fields(v), ""), strings.Join(strings.Fields(want), "")) {
			delete(props, k)
		}
	}
	code := m.Name
	// What the module's properties cannot honour (below, or left over)
	// keeps it from running.
	n := len(s.unsupported)
	var rule rightCurlyRule
	switch code {
	case "BeforeExecutionExclusionFileFilter":
		if v, ok := props["fileNamePattern"]; ok {
			re, err := compileJava(v)
			if err != nil {
				return fmt.Errorf("%w: %s: fileNamePattern: %v", ErrInvalidConfig, code, err)
			}
			s.excludeFile = append(s.excludeFile, re)
			delete(props, "fileNamePattern")
		}
		s.leftover(code, props)
		return nil
	case "SuppressionFilter", "SuppressionXpathFilter":
		// An optional suppressions file that is not there suppresses
		// nothing; the service reads no files, so a required one is not
		// supported.
		if props["optional"] == "true" {
			return nil
		}
		s.unsupport("%s: only an optional suppressions file that does not exist is supported", code)
		return nil
	case LineLength:
		if err := intProp(props, code, "max", &s.maxLen); err != nil {
			return err
		}
		if v, ok := props["ignorePattern"]; ok {
			if v != "^$" {
				re, err := compileJava(v)
				if err != nil {
					return fmt.Errorf("%w: LineLength: ignorePattern: %v", ErrInvalidConfig, err)
				}
				s.ignoreLine = re
			}
			delete(props, "ignorePattern")
		}
		if v, ok := props["fileExtensions"]; ok && (v == "" || slices.Contains(splitList(v), "java")) {
			delete(props, "fileExtensions")
		}
	case FileTabCharacter:
		if v, ok := props["eachLine"]; ok {
			s.tabEachLine = v == "true"
			delete(props, "eachLine")
		}
		known("fileExtensions", "")
	case RegexpSingleline:
		// Only the trailing-space rule of both built-ins is implemented.
		if props["format"] != `\s+$` {
			s.unsupport("RegexpSingleline: format %q (only \\s+$ is supported)", props["format"])
			return nil
		}
		delete(props, "format")
		if v, ok := props["message"]; ok {
			s.trailingMsg = v
			delete(props, "message")
		}
		known("minimum", "0")
		known("maximum", "0")
		known("ignoreCase", "false")
	case NewlineAtEndOfFile:
		known("lineSeparator", "lf_cr_crlf")
	case UnusedImports:
		if v, ok := props["processJavadoc"]; ok {
			s.processJavadoc = v == "true"
			delete(props, "processJavadoc")
		}
	case FileLength:
		if err := intProp(props, code, "max", &s.fileLengthMax); err != nil {
			return err
		}
	case FinalParameters:
		known("ignorePrimitiveTypes", "false")
		known("tokens", "METHOD_DEF, CTOR_DEF")
	case WhitespaceAfter:
		known("tokens", "COMMA, SEMI, TYPECAST, LITERAL_IF, LITERAL_ELSE, LITERAL_WHILE, LITERAL_DO, LITERAL_FOR, DO_WHILE")
	case ArrayTypeStyle:
		known("javaStyle", "true")
	case TodoComment:
		if v, ok := props["format"]; ok {
			if v != "TODO:" {
				re, err := compileJava(v)
				if err != nil {
					return fmt.Errorf("%w: TodoComment: format: %v", ErrInvalidConfig, err)
				}
				s.todo, s.todoFormat = re, v
			}
			delete(props, "format")
		}
	case WhitespaceAround:
		known("tokens", "ASSIGN, BAND, BAND_ASSIGN, BOR, BOR_ASSIGN, BSR, BSR_ASSIGN, BXOR, BXOR_ASSIGN, COLON, DIV, "+
			"DIV_ASSIGN, DO_WHILE, EQUAL, GE, GT, LAMBDA, LAND, LCURLY, LE, LITERAL_CATCH, LITERAL_DO, LITERAL_ELSE, "+
			"LITERAL_FINALLY, LITERAL_FOR, LITERAL_IF, LITERAL_RETURN, LITERAL_SWITCH, LITERAL_SYNCHRONIZED, LITERAL_TRY, "+
			"LITERAL_WHILE, LOR, LT, MINUS, MINUS_ASSIGN, MOD, MOD_ASSIGN, NOT_EQUAL, PLUS, PLUS_ASSIGN, QUESTION, RCURLY, "+
			"SL, SLIST, SL_ASSIGN, SR, SR_ASSIGN, STAR, STAR_ASSIGN, LITERAL_ASSERT, TYPE_EXTENSION_AND")
		for prop, kind := range map[string]uint8{"allowEmptyConstructors": emptyCtor, "allowEmptyMethods": emptyMethod,
			"allowEmptyTypes": emptyType, "allowEmptyLoops": emptyLoop, "allowEmptyLambdas": emptyLambda} {
			if v, ok := props[prop]; ok && (v == "true" || v == "false") {
				if v == "true" {
					if s.wsAllowEmpty == nil {
						s.wsAllowEmpty = make(map[uint8]bool)
					}
					s.wsAllowEmpty[kind] = true
				}
				delete(props, prop)
			}
		}
		known("allowEmptyCatches", "false")
		if v, ok := props["ignoreEnhancedForColon"]; ok && (v == "true" || v == "false") {
			s.wsForEachColon = v == "false"
			delete(props, "ignoreEnhancedForColon")
		}
		if v, ok := m.Messages["ws.notPreceded"]; ok {
			s.wsNotPreceded = v
		}
		if v, ok := m.Messages["ws.notFollowed"]; ok {
			s.wsNotFollowed = v
		}
	case AbbreviationAsWordInName:
		if err := intProp(props, code, "allowedAbbreviationLength", &s.abbrAllowed); err != nil {
			return err
		}
		s.abbrIgnoreFinal = props["ignoreFinal"] != "false"
		known("ignoreFinal", "false")
		known("ignoreFinal", "true")
		known("ignoreStatic", "true")
		known("ignoreStaticFinal", "true")
		known("ignoreOverriddenMethods", "true")
		known("allowedAbbreviations", "")
		known("tokens", "CLASS_DEF, INTERFACE_DEF, ENUM_DEF, ANNOTATION_DEF, ANNOTATION_FIELD_DEF, PARAMETER_DEF, "+
			"VARIABLE_DEF, METHOD_DEF, PATTERN_VARIABLE_DEF, RECORD_DEF, RECORD_COMPONENT_DEF")
	case EmptyCatchBlock:
		for k, re := range map[string]**regexp.Regexp{"exceptionVariableName": &s.catchVarName, "commentFormat": &s.catchComment} {
			if v, ok := props[k]; ok {
				r, err := compileJava(v)
				if err != nil {
					return fmt.Errorf("%w: EmptyCatchBlock: %s: %v", ErrInvalidConfig, k, err)
				}
				*re = r
				delete(props, k)
			}
		}
	case NeedBraces:
		known("tokens", "LITERAL_DO, LITERAL_ELSE, LITERAL_FOR, LITERAL_IF, LITERAL_WHILE")
	case JavadocVariable:
		known("scope", "private")
		known("tokens", "ENUM_CONSTANT_DEF")
	case LeftCurly:
		known("option", "eol")
		known("ignoreEnums", "true")
		known("tokens", "ANNOTATION_DEF, CLASS_DEF, CTOR_DEF, ENUM_CONSTANT_DEF, ENUM_DEF, INTERFACE_DEF, LAMBDA, LITERAL_CASE, "+
			"LITERAL_CATCH, LITERAL_DEFAULT, LITERAL_DO, LITERAL_ELSE, LITERAL_FINALLY, LITERAL_FOR, LITERAL_IF, LITERAL_SWITCH, "+
			"LITERAL_SYNCHRONIZED, LITERAL_TRY, LITERAL_WHILE, METHOD_DEF, OBJBLOCK, STATIC_INIT, RECORD_DEF, COMPACT_CTOR_DEF")
	case ParenPad:
		known("option", "nospace")
		known("tokens", "ANNOTATION, ANNOTATION_FIELD_DEF, CTOR_CALL, CTOR_DEF, DOT, ENUM_CONSTANT_DEF, EXPR, LITERAL_CATCH, "+
			"LITERAL_DO, LITERAL_FOR, LITERAL_IF, LITERAL_NEW, LITERAL_SWITCH, LITERAL_SYNCHRONIZED, LITERAL_WHILE, METHOD_CALL, "+
			"METHOD_DEF, QUESTION, RESOURCE_SPECIFICATION, SUPER_CTOR_CALL, LAMBDA, RECORD_DEF")
	case OperatorWrap:
		known("option", "nl")
		s.opWrapTokens = tokenSet(defaultOperatorWrapTokens)
		if v, ok := props["tokens"]; ok {
			s.opWrapTokens = tokenSet(v)
			acceptable := tokenSet(defaultOperatorWrapTokens + ", METHOD_REF, ASSIGN, DIV_ASSIGN, PLUS_ASSIGN, MINUS_ASSIGN, " +
				"STAR_ASSIGN, MOD_ASSIGN, SR_ASSIGN, BSR_ASSIGN, SL_ASSIGN, BXOR_ASSIGN, BOR_ASSIGN, BAND_ASSIGN")
			for t := range s.opWrapTokens {
				if !acceptable[t] {
					return fmt.Errorf("%w: OperatorWrap: token %s is not acceptable", ErrInvalidConfig, t)
				}
				if strings.HasSuffix(t, "ASSIGN") {
					s.unsupport("OperatorWrap: token %s is not supported; module not run", t)
				}
			}
			delete(props, "tokens")
		}
	case MagicNumber:
		known("ignoreNumbers", "-1, 0, 1, 2")
		known("ignoreHashCodeMethod", "false")
		known("ignoreAnnotation", "false")
		known("ignoreFieldDeclaration", "false")
		known("ignoreAnnotationElementDefaults", "true")
		known("constantWaiverParentToken", "TYPECAST, METHOD_CALL, EXPR, ARRAY_INIT, UNARY_MINUS, UNARY_PLUS, ELIST, STAR, ASSIGN, PLUS, MINUS, DIV, LITERAL_NEW")
	case VisibilityModifier:
		known("packageAllowed", "false")
		known("protectedAllowed", "false")
		known("publicMemberPattern", "^serialVersionUID$")
		known("allowPublicFinalFields", "false")
		known("allowPublicImmutableFields", "false")
		known("ignoreAnnotationCanonicalNames", "org.junit.Rule, org.junit.ClassRule, com.google.common.annotations.VisibleForTesting")
	case HiddenField:
		known("ignoreConstructorParameter", "false")
		known("ignoreSetter", "false")
		known("setterCanReturnItsClass", "false")
		known("ignoreAbstractMethods", "false")
	case DesignForExtension:
		known("ignoredAnnotations", "After, AfterClass, Before, BeforeClass, Test")
		known("requiredJavadocPhrase", ".*")
	case RightCurly:
		rule.code = RightCurly
		if id := strings.TrimSpace(m.Properties["id"]); id != "" {
			// checkstyle prints a module's id in place of its name.
			rule.code = id
		}
		switch v := strings.ToLower(strings.TrimSpace(props["option"])); v {
		case "", "same":
		case "alone":
			rule.option = rcAlone
		case "alone_or_singleline":
			rule.option = rcAloneOrSingleline
		default:
			return fmt.Errorf("%w: RightCurly: option %q is not same, alone or alone_or_singleline", ErrInvalidConfig, props["option"])
		}
		delete(props, "option")
		toks := "LITERAL_TRY, LITERAL_CATCH, LITERAL_FINALLY, LITERAL_IF, LITERAL_ELSE"
		if v, ok := props["tokens"]; ok {
			toks = v
			delete(props, "tokens")
		}
		for t := range tokenSet(toks) {
			k, ok := ckTokens[t]
			switch {
			case ok && k < ckVariable:
				rule.tokens[k] = true
			case t == "LAMBDA":
				s.unsupport("RightCurly: token %s is not supported; module not run", t)
			default:
				return fmt.Errorf("%w: RightCurly: token %s is not acceptable", ErrInvalidConfig, t)
			}
		}
	case "SuppressionXpathSingleFilter":
		// Only google_checks' filter is understood: it exempts the empty
		// bodies from the RightCurly module of its id.
		id := strings.TrimSpace(m.Properties["id"])
		q := strings.Join(strings.Fields(props["query"]), "")
		delete(props, "query")
		if q != googleRCQuery || id == "" {
			s.unsupport("SuppressionXpathSingleFilter: only google_checks' RightCurly query is supported; filter not applied")
			return nil
		}
		if s.rcSkipEmpty == nil {
			s.rcSkipEmpty = make(map[string]bool)
		}
		s.rcSkipEmpty[id] = true
		s.leftover(code, props)
		return nil
	case AvoidNestedBlocks:
		known("allowInSwitchCase", "false")
	case NoWhitespaceBefore:
		s.nwBeforeTokens = tokenSet("COMMA, SEMI, POST_INC, POST_DEC, ELLIPSIS")
		if v, ok := props["allowLineBreaks"]; ok && (v == "true" || v == "false") {
			s.nwBeforeLineBreaks = v == "true"
			delete(props, "allowLineBreaks")
		}
		if v, ok := props["tokens"]; ok {
			s.nwBeforeTokens = tokenSet(v)
			for t := range s.nwBeforeTokens {
				switch t {
				case "COMMA", "SEMI", "POST_INC", "POST_DEC", "ELLIPSIS", "DOT", "METHOD_REF", "LABELED_STAT":
				case "GENERIC_START", "GENERIC_END":
					s.unsupport("NoWhitespaceBefore: token %s is not supported; module not run", t)
				default:
					return fmt.Errorf("%w: NoWhitespaceBefore: token %s is not acceptable", ErrInvalidConfig, t)
				}
			}
			delete(props, "tokens")
		}
	case EmptyForIteratorPad:
		known("option", "nospace")
	case MethodParamPad:
		known("option", "nospace")
		known("allowLineBreaks", "false")
		known("tokens", "CTOR_DEF, LITERAL_NEW, METHOD_CALL, METHOD_DEF, SUPER_CTOR_CALL, ENUM_CONSTANT_DEF, RECORD_DEF")
	case ParameterNumber:
		known("max", "7")
		known("ignoreOverriddenMethods", "false")
		known("tokens", "METHOD_DEF, CTOR_DEF")
	case MethodLength:
		known("max", "150")
		known("countEmpty", "true")
	case MissingJavadocMethod:
		known("scope", "public")
		known("allowMissingPropertyJavadoc", "false")
		known("tokens", "METHOD_DEF, CTOR_DEF, ANNOTATION_FIELD_DEF, COMPACT_CTOR_DEF")
		if v, ok := props["allowedAnnotations"]; ok {
			s.mjmAnnotations = tokenSet(v)
			delete(props, "allowedAnnotations")
		}
		if v, ok := props["minLineCount"]; ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return fmt.Errorf("%w: MissingJavadocMethod: minLineCount %q is not an integer", ErrInvalidConfig, v)
			}
			s.mjmMinLines = n
			delete(props, "minLineCount")
		}
	case JavadocMethod:
		known("scope", "private")
		known("allowedAnnotations", "Override")
		known("validateThrows", "false")
		known("allowMissingParamTags", "false")
		known("allowMissingReturnTag", "false")
	case JavadocType:
		known("scope", "private")
		known("allowMissingParamTags", "false")
		known("allowUnknownTags", "false")
		known("allowedAnnotations", "Generated")
	case Indentation:
		for k, n := range map[string]*int{"basicOffset": &s.indent.basic, "braceAdjustment": &s.indent.brace,
			"caseIndent": &s.indent.caseIndent, "throwsIndent": &s.indent.throwsIndent,
			"lineWrappingIndentation": &s.indent.wrap, "arrayInitIndent": &s.indent.arrayInit} {
			if err := intProp(props, code, k, n); err != nil {
				return err
			}
		}
		known("forceStrictCondition", "false")
	case CustomImportOrder:
		// Only google_checks' rules are implemented; they must be given,
		// as checkstyle's defaults differ.
		for _, kv := range [][2]string{{"customImportOrderRules", importOrderRules}, {"sortImportsInGroupAlphabetically", "true"}} {
			k, want := kv[0], kv[1]
			if v, ok := props[k]; !ok || strings.Join(strings.Fields(v), "") != want {
				s.unsupport("%s: only %s=%q is supported; module not run", code, k, want)
			}
			delete(props, k)
		}
		known("separateLineBetweenGroups", "true")
		known("tokens", "IMPORT, STATIC_IMPORT, PACKAGE_DEF")
	case JavadocParagraph:
		known("allowNewlineParagraph", "true")
		known("violateExecutionOnNonTightHtml", "false")
	case RequireEmptyLineBeforeBlockTagGroup:
		known("violateExecutionOnNonTightHtml", "false")
	case EmptyLineSeparator:
		// Only google_checks' settings: its tokens, fields may go
		// without empty lines between them (not the default).
		if v := props["allowNoEmptyLineBetweenFields"]; v != "true" {
			s.unsupport("%s: only allowNoEmptyLineBetweenFields=\"true\" is supported; module not run", code)
		}
		delete(props, "allowNoEmptyLineBetweenFields")
		known("tokens", "PACKAGE_DEF, IMPORT, STATIC_IMPORT, CLASS_DEF, INTERFACE_DEF, ENUM_DEF, STATIC_INIT, INSTANCE_INIT, METHOD_DEF, CTOR_DEF, VARIABLE_DEF, RECORD_DEF, COMPACT_CTOR_DEF")
		known("allowMultipleEmptyLines", "true")
		known("allowMultipleEmptyLinesInsideClassMembers", "true")
	case SummaryJavadoc:
		if v, ok := props["forbiddenSummaryFragments"]; ok {
			if v != "^$" {
				re, err := compileJava(v)
				if err != nil {
					return fmt.Errorf("%w: %s: forbiddenSummaryFragments: %v", ErrInvalidConfig, code, err)
				}
				s.summaryForbidden = re
			}
			delete(props, "forbiddenSummaryFragments")
		}
		known("period", ".")
		known("violateExecutionOnNonTightHtml", "false")
	case AtclauseOrder:
		s.atclauseOrder = splitList(atclauseDefaultOrder)
		if v, ok := props["tagOrder"]; ok {
			s.atclauseOrder = splitList(v)
			delete(props, "tagOrder")
		}
		target := atclauseDefaultTarget
		if v, ok := props["target"]; ok {
			target = v
			delete(props, "target")
		}
		for t := range tokenSet(target) {
			k, ok := ckTokens[t]
			if !ok || k < ckMethod || k == ckStaticInit || k == ckInstanceInit || k > ckVariable {
				return fmt.Errorf("%w: AtclauseOrder: target %s is not acceptable", ErrInvalidConfig, t)
			}
			s.atclauseTarget[k] = true
		}
		known("violateExecutionOnNonTightHtml", "false")
	case FallThrough:
		known("checkLastCaseGroup", "false")
		known("reliefPattern", "falls?[ -]?thr(u|ough)")
	case CommentsIndentation:
		// Only google_checks' tokens, and only the general case (see
		// comments.go).
		known("tokens", "SINGLE_LINE_COMMENT, BLOCK_COMMENT_BEGIN")
	case VariableDeclarationUsageDistance:
		known("allowedDistance", "3")
		known("ignoreVariablePattern", "")
		known("validateBetweenScopes", "false")
		known("ignoreFinal", "true")
	case NonEmptyAtclauseDescription:
		known("javadocTokens", "PARAM_LITERAL, RETURN_LITERAL, THROWS_LITERAL, EXCEPTION_LITERAL, DEPRECATED_LITERAL")
		known("violateExecutionOnNonTightHtml", "false")
	case JavadocTagContinuationIndentation:
		known("offset", "4")
		known("violateExecutionOnNonTightHtml", "false")
	case TypecastParenPad:
		known("option", "nospace")
	case InterfaceIsType:
		known("allowMarkerInterfaces", "true")
	case NoWhitespaceAfter:
		known("allowLineBreaks", "true")
		known("tokens", "ARRAY_INIT, AT, INC, DEC, UNARY_MINUS, UNARY_PLUS, BNOT, LNOT, DOT, ARRAY_DECLARATOR, INDEX_OP")
	case IllegalImport:
		known("illegalPkgs", "sun")
		known("illegalClasses", "")
		known("regexp", "false")
	case ConstantName, MemberName, MethodName, TypeName, LocalVariableName, ParameterName, StaticVariableName, LocalFinalVariableName, PackageName,
		ClassTypeParameterName, InterfaceTypeParameterName, RecordTypeParameterName, MethodTypeParameterName:
		np := namePattern{}
		if v, ok := props["format"]; ok {
			re, err := compileJava(v)
			if err != nil {
				return fmt.Errorf("%w: %s: format: %v", ErrInvalidConfig, code, err)
			}
			np.re, np.pattern = re, v
			delete(props, "format")
		}
		if v, ok := m.Messages["name.invalidPattern"]; ok {
			np.message = v
		}
		if np.re != nil || np.message != "" {
			s.names[code] = np
		}
		for _, k := range []string{"applyToPublic", "applyToProtected", "applyToPackage", "applyToPrivate"} {
			known(k, "true")
		}
		known("allowOneCharVarInForLoop", "false")
		known("ignoreOverridden", "false")
		if code == TypeName {
			known("tokens", "CLASS_DEF, INTERFACE_DEF, ENUM_DEF, ANNOTATION_DEF, RECORD_DEF")
		}
	}
	if !slices.Contains(codes, code) {
		s.unsupport("module %s is not implemented", code)
		return nil
	}
	if underTreeWalker == checkerLevel[code] {
		return fmt.Errorf("%w: module %s does not belong %s", ErrInvalidConfig, code,
			map[bool]string{true: "under TreeWalker", false: "under Checker"}[underTreeWalker])
	}
	// A module with a property or message we do not implement is not
	// run at all: findings at the wrong properties would be wrong ones.
	for k := range m.Messages {
		if code == WhitespaceAround && (k == "ws.notPreceded" || k == "ws.notFollowed") {
			continue
		}
		if code == GenericWhitespace && gwDefaultMessages[k] != "" {
			if s.gwMessages == nil {
				s.gwMessages = make(map[string]string)
			}
			s.gwMessages[k] = m.Messages[k]
			continue
		}
		if !(k == "name.invalidPattern" && s.names[code].message != "") {
			s.unsupport("%s: message %s is not supported; module not run", code, k)
		}
	}
	s.leftover(code, props)
	if len(s.unsupported) == n {
		s.enabled[code] = true
		if code == RightCurly {
			s.enabled[rule.code] = true
			s.rightCurlies = append(s.rightCurlies, rule)
		}
	}
	return nil
}

// AtclauseOrder's defaults in checkstyle 8.36.
const (
	atclauseDefaultOrder  = "@author, @deprecated, @exception, @param, @return, @see, @serial, @serialData, @serialField, @since, @throws, @version"
	atclauseDefaultTarget = "CLASS_DEF, INTERFACE_DEF, ENUM_DEF, METHOD_DEF, CTOR_DEF, VARIABLE_DEF, RECORD_DEF, COMPACT_CTOR_DEF"
)

// googleRCQuery is google_checks' XPath query (without white space) that
// selects the '}' of empty bodies for its RightCurlyAlone.
const googleRCQuery = "//RCURLY[parent::SLIST[count(./*)=1]orpreceding-sibling::*[last()][self::LCURLY]]"

// intProp takes property k of module code, a non-negative integer, into n.
func intProp(props map[string]string, code, k string, n *int) error {
	v, ok := props[k]
	if !ok {
		return nil
	}
	x, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || x < 0 {
		return fmt.Errorf("%w: %s: %s %q is not a non-negative integer", ErrInvalidConfig, code, k, v)
	}
	*n = x
	delete(props, k)
	return nil
}

// leftover lists the properties of module code nothing took.
func (s *settings) leftover(code string, props map[string]string) {
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s.unsupport("%s: property %s=%q is not supported; module not run", code, k, props[k])
	}
}

func maps(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// compileJava compiles a java.util.regex pattern as RE2. The patterns of
// real configurations (character classes, alternations, anchors) mean the
// same in both; one RE2 refuses (look-around, back references) is an
// error, never a silent difference.
func compileJava(p string) (*regexp.Regexp, error) {
	return regexp.Compile(p)
}

// messageFormat fills a java.text.MessageFormat pattern: ”{0}” quotes
// and {n} arguments.
func messageFormat(pattern string, args ...string) string {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\'' && i+1 < len(pattern) && pattern[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == '\'':
			// A quoted section: copied literally.
			j := strings.IndexByte(pattern[i+1:], '\'')
			if j < 0 {
				b.WriteString(pattern[i+1:])
				return b.String()
			}
			b.WriteString(pattern[i+1 : i+1+j])
			i += j + 1
		case c == '{':
			j := strings.IndexByte(pattern[i:], '}')
			n, err := strconv.Atoi(pattern[i+1 : i+max(j, 1)])
			if j < 0 || err != nil || n < 0 || n >= len(args) {
				b.WriteByte(c)
				continue
			}
			b.WriteString(args[n])
			i += j
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// tokenSet reads a comma-separated list of checkstyle token names.
func tokenSet(v string) map[string]bool {
	set := make(map[string]bool)
	for _, t := range splitList(v) {
		set[t] = true
	}
	return set
}
