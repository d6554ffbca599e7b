package python

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fleetkit/fleetkit/linter"
)

// ConfigFile is what pycodestyle 2.10 reads from its configuration files
// (ReadConfig): its [pycodestyle] section, or the deprecated [pep8].
type ConfigFile struct {
	// Config holds select, ignore and max-line-length, and max-doc-length,
	// hang-closing and indent-size in Options.
	Config linter.Config
	// Exclude and Filename are the patterns of pycodestyle's exclude and
	// filename options when set (see Files); exclude patterns holding a
	// '/' are made absolute against the directory of the project's file.
	Exclude, Filename []string
	// Files are the files read, in order; Section is the section the
	// options came from ("" when none had one).
	Files   []string
	Section string
	// Unknown lists the options pycodestyle does not know, in the order
	// it meets them: it prints "  unknown option 'NAME' ignored" on
	// standard output for each, before any finding.
	Unknown []string
	// Unsupported lists the options pycodestyle knows that this package
	// does not apply (count, format, quiet, show-pep8, show-source,
	// statistics, verbose): their output options.
	Unsupported []string
}

// Errors of ReadConfig.
var (
	// ErrConfigFile is returned (wrapped, with the file and line) for a
	// configuration file that Python's configparser rejects or an option
	// value pycodestyle cannot convert.
	ErrConfigFile = errors.New("python: bad configuration file")
)

// projectFiles are the files pycodestyle looks for in a project's
// directory, in the order it reads them.
var projectFiles = []string{"setup.cfg", "tox.ini"}

// UserConfig returns the path of pycodestyle's user configuration file:
// $XDG_CONFIG_HOME/pycodestyle, else ~/.config/pycodestyle ("" when there
// is no home directory).
func UserConfig() string {
	if dir := os.Getenv("XDG_CONFIG_HOME"); dir != "" {
		return filepath.Join(dir, "pycodestyle")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".config", "pycodestyle")
}

// ReadConfig reads pycodestyle's options the way pycodestyle 2.10 does
// for a run over paths: from the user's configuration file (UserConfig),
// then setup.cfg and tox.ini in the first directory at or above the
// paths' common prefix that holds either of them, then file (pycodestyle's
// --config), when set and a regular file; later files override earlier
// ones. Like pycodestyle, it reads the section [pycodestyle], else [pep8].
// A file that does not exist is skipped; one that Python's configparser
// would reject is an error wrapping ErrConfigFile.
func ReadConfig(paths []string, file string) (*ConfigFile, error) {
	var files []string
	if u := UserConfig(); isRegular(u) {
		files = append(files, u)
	}
	projectDir := ""
	if len(paths) > 0 {
		dir, err := filepath.Abs(commonPrefix(paths))
		if err != nil {
			return nil, err
		}
		for {
			var found []string
			for _, name := range projectFiles {
				if p := filepath.Join(dir, name); isReadable(p) {
					found = append(found, p)
				}
			}
			if len(found) > 0 {
				files, projectDir = append(files, found...), dir
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	if file != "" && isRegular(file) {
		files = append(files, file)
	}

	ini := newIniFile()
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // configparser skips files it cannot open
		}
		if err := ini.parse(f, data); err != nil {
			return nil, err
		}
	}
	cf := &ConfigFile{Files: files}
	sec := ini.sections["pycodestyle"]
	cf.Section = "pycodestyle"
	if sec == nil {
		sec, cf.Section = ini.sections["pep8"], "pep8"
	}
	if sec == nil {
		cf.Section = ""
		return cf, nil
	}
	return cf, cf.apply(ini.options(sec), projectDir)
}

// apply sets cf's options from a section's (name, value) pairs.
func (cf *ConfigFile) apply(opts []iniOption, projectDir string) error {
	set := func(k, v string) {
		if cf.Config.Options == nil {
			cf.Config.Options = map[string]string{}
		}
		cf.Config.Options[k] = v
	}
	for _, o := range opts {
		name := strings.ReplaceAll(o.name, "_", "-")
		bad := func(what string) error {
			return fmt.Errorf("%w: %s: option %s: %s, not %q", ErrConfigFile, o.file, o.name, what, o.value)
		}
		switch name {
		case "select":
			cf.Config.Select = SplitCodes(o.value)
		case "ignore":
			cf.Config.Ignore = SplitCodes(o.value)
		case "max-line-length":
			n, ok := pyInt(o.value)
			if !ok {
				return bad("want a number")
			}
			cf.Config.MaxLineLength = n
		case OptionMaxDocLength, OptionIndentSize:
			n, ok := pyInt(o.value)
			if !ok {
				return bad("want a number")
			}
			set(name, strconv.Itoa(n))
		case OptionHangClosing:
			b, ok := parseBool(strings.TrimSpace(o.value))
			if !ok {
				return bad("want a boolean (1/0, yes/no, true/false, on/off)")
			}
			set(name, strconv.FormatBool(b))
		case "exclude":
			cf.Exclude = normalizePatterns(SplitCodes(o.value), projectDir)
		case "filename":
			cf.Filename = SplitCodes(o.value)
		case "count", "format", "quiet", "show-pep8", "show-source", "statistics", "verbose":
			cf.Unsupported = append(cf.Unsupported, o.name)
		default:
			cf.Unknown = append(cf.Unknown, o.name)
		}
	}
	return nil
}

// SplitCodes splits a comma-separated list as pycodestyle does
// (_parse_multi_options): entries are trimmed and empty ones dropped.
func SplitCodes(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// normalizePatterns is pycodestyle's normalize_paths: a pattern holding a
// '/' is made absolute against dir (the working directory when empty),
// and trailing slashes are dropped.
func normalizePatterns(pats []string, dir string) []string {
	for i, p := range pats {
		if strings.Contains(p, "/") {
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if abs, err := filepath.Abs(p); err == nil {
				p = abs
			}
		}
		pats[i] = strings.TrimRight(p, "/")
	}
	return pats
}

// NormalizeExclude is what pycodestyle does to exclude patterns given on
// its command line: those holding a '/' are made absolute against the
// working directory.
func NormalizeExclude(pats []string) []string { return normalizePatterns(pats, "") }

// pyInt is Python's int() of a configuration value: surrounding
// whitespace, a sign and underscores between digits allowed.
func pyInt(s string) (int, bool) {
	s = strings.TrimSpace(s)
	t := strings.TrimLeft(s, "+-")
	if len(s)-len(t) > 1 || t == "" || t[0] == '_' || t[len(t)-1] == '_' || strings.Contains(t, "__") {
		return 0, false
	}
	n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	return n, err == nil
}

// commonPrefix is os.path.commonprefix: the longest common prefix of the
// strings, character by character (not a directory).
func commonPrefix(paths []string) string {
	p := paths[0]
	for _, q := range paths[1:] {
		n := 0
		for n < len(p) && n < len(q) && p[n] == q[n] {
			n++
		}
		p = p[:n]
	}
	return p
}

func isRegular(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// isReadable reports whether configparser would read p: it opens it.
func isReadable(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	return err == nil && !st.IsDir()
}

// iniFile is the part of Python's RawConfigParser that pycodestyle relies
// on: sections of options, "name = value" or "name: value", names
// lowercased, full-line comments (# and ;), values continued on more
// indented lines, a DEFAULT section that every section inherits, and
// files read one after the other, later values overriding.
type iniFile struct {
	sections map[string]*iniSection
	defaults *iniSection
}

type iniSection struct {
	names  []string // in the order first set
	values map[string]iniOption
}

type iniOption struct {
	name, value, file string
}

func newIniFile() *iniFile {
	return &iniFile{sections: map[string]*iniSection{}, defaults: newIniSection()}
}

func newIniSection() *iniSection { return &iniSection{values: map[string]iniOption{}} }

func (s *iniSection) set(o iniOption) {
	if _, ok := s.values[o.name]; !ok {
		s.names = append(s.names, o.name)
	}
	s.values[o.name] = o
}

// options returns a section's options and then the defaults it does not
// override, as RawConfigParser.options and get see them.
func (f *iniFile) options(s *iniSection) []iniOption {
	var out []iniOption
	for _, n := range s.names {
		out = append(out, s.values[n])
	}
	for _, n := range f.defaults.names {
		if _, ok := s.values[n]; !ok {
			out = append(out, f.defaults.values[n])
		}
	}
	return out
}

// parse reads one file, as RawConfigParser._read does (strict: a section
// or option twice in one file is an error).
func (f *iniFile) parse(name string, data []byte) error {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	type pending struct {
		sec   *iniSection
		name  string
		lines []string
	}
	var (
		cur        *iniSection
		curName    string
		opt        *pending
		indent     int
		seenSecs   = map[string]bool{}
		seenOpts   = map[[2]string]bool{}
		fail       error
		flushValue = func() {
			if opt == nil {
				return
			}
			v := strings.TrimRightFunc(strings.Join(opt.lines, "\n"), isPyWhitespace)
			opt.sec.set(iniOption{name: opt.name, value: v, file: name})
			opt = nil
		}
	)
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n"), "\n")
	for i, line := range lines {
		if i == len(lines)-1 && line == "" {
			break
		}
		lineno := i + 1
		stripped := strings.TrimFunc(line, isPyWhitespace)
		if strings.HasPrefix(stripped, "#") || strings.HasPrefix(stripped, ";") {
			continue // full-line comment: no empty line added to a value
		}
		if stripped == "" {
			if opt != nil {
				opt.lines = append(opt.lines, "")
			}
			continue
		}
		lead := strings.IndexFunc(line, func(r rune) bool { return !isPyWhitespace(r) })
		if cur != nil && opt != nil && lead > indent {
			opt.lines = append(opt.lines, stripped)
			continue
		}
		indent = lead
		if strings.HasPrefix(stripped, "[") && strings.Contains(stripped[1:], "]") && strings.LastIndex(stripped, "]") > 1 {
			flushValue()
			curName = stripped[1:strings.LastIndex(stripped, "]")]
			if seenSecs[curName] && curName != "DEFAULT" {
				return fmt.Errorf("%w: %s:%d: section %q already exists", ErrConfigFile, name, lineno, curName)
			}
			seenSecs[curName] = true
			switch {
			case curName == "DEFAULT":
				cur = f.defaults
			case f.sections[curName] != nil:
				cur = f.sections[curName]
			default:
				cur = newIniSection()
				f.sections[curName] = cur
			}
			continue
		}
		if cur == nil {
			return fmt.Errorf("%w: %s:%d: file contains no section headers: %q", ErrConfigFile, name, lineno, line)
		}
		k := strings.IndexAny(stripped, "=:")
		key := ""
		if k >= 0 {
			key = strings.ToLower(strings.TrimRightFunc(stripped[:k], isPyWhitespace))
		}
		if k < 0 || key == "" {
			if fail == nil {
				fail = fmt.Errorf("%w: %s:%d: not an option line: %q", ErrConfigFile, name, lineno, line)
			}
			continue
		}
		flushValue()
		if seenOpts[[2]string{curName, key}] {
			return fmt.Errorf("%w: %s:%d: option %q in section %q already exists", ErrConfigFile, name, lineno, key, curName)
		}
		seenOpts[[2]string{curName, key}] = true
		opt = &pending{sec: cur, name: key, lines: []string{strings.TrimFunc(stripped[k+1:], isPyWhitespace)}}
	}
	flushValue()
	return fail
}

// isPyWhitespace is str.isspace for one character.
func isPyWhitespace(r rune) bool { return isPySpace(r) }

// Files expands paths the way pycodestyle 2.10 does, in its order. A
// directory is walked top-down: the files of each directory whose name
// matches a filename pattern (nil means *.py), sorted, then its
// subdirectories, in the order the file system lists them (os.walk's,
// which pycodestyle keeps); names matching an exclude pattern (nil means
// DefaultExclude) are left out, by base name or, for patterns holding a
// '/', by absolute path. Directories that cannot be read are skipped, as
// os.walk does. Any other path is kept as given, even one that does not
// exist: reading it is what reports the problem (FileError).
func Files(paths, exclude, filename []string) []string {
	if exclude == nil {
		exclude = DefaultExclude
	}
	if filename == nil {
		filename = []string{"*.py"}
	}
	excluded := func(name, parent string) bool {
		if fnmatchAny(filepath.Base(name), exclude) {
			return true
		}
		if parent != "" {
			name = filepath.Join(parent, name)
		}
		abs, err := filepath.Abs(name)
		return err == nil && fnmatchAny(abs, exclude)
	}
	var out []string
	var walk func(dir string)
	walk = func(dir string) {
		f, err := os.Open(dir)
		if err != nil {
			return
		}
		entries, err := f.ReadDir(-1) // directory order, as os.scandir
		f.Close()
		if err != nil && len(entries) == 0 {
			return
		}
		var files, dirs []string
		for _, e := range entries {
			isDir := e.IsDir()
			if e.Type()&fs.ModeSymlink != 0 {
				// os.walk lists a link to a directory with the directories
				// but does not descend into it.
				if st, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && st.IsDir() {
					continue
				}
			}
			if isDir {
				dirs = append(dirs, e.Name())
			} else {
				files = append(files, e.Name())
			}
		}
		slices.Sort(files)
		for _, name := range files {
			if fnmatchAny(name, filename) && !excluded(name, dir) {
				out = append(out, dir+"/"+name)
			}
		}
		for _, name := range dirs {
			if !excluded(name, dir) {
				walk(dir + "/" + name)
			}
		}
	}
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			p = strings.TrimRight(p, "/")
			if p == "" || excluded(p, "") {
				continue
			}
			walk(p)
			continue
		}
		if !excluded(p, "") {
			out = append(out, p)
		}
	}
	return out
}

// DefaultExclude is pycodestyle's default exclude list.
var DefaultExclude = []string{".svn", "CVS", ".bzr", ".hg", ".git", "__pycache__", ".tox"}

// fnmatchAny reports whether name matches one of the patterns as Python's
// fnmatch does: * and ? match any characters, '/' included, and [...]
// sets as in the shell.
func fnmatchAny(name string, pats []string) bool {
	for _, p := range pats {
		if fnmatch(name, p) {
			return true
		}
	}
	return false
}

func fnmatch(name, pat string) bool {
	n, p := []rune(name), []rune(pat)
	// Backtracking over the last star, as in the classic glob matcher.
	ni, pi, starP, starN := 0, 0, -1, 0
	for ni < len(n) {
		if pi < len(p) {
			switch c := p[pi]; c {
			case '*':
				starP, starN = pi, ni
				pi++
				continue
			case '?':
				ni, pi = ni+1, pi+1
				continue
			case '[':
				if end, ok := matchSet(p, pi, n[ni]); end > 0 {
					if ok {
						ni, pi = ni+1, end
						continue
					}
				} else if n[ni] == '[' { // no closing ']': a literal '['
					ni, pi = ni+1, pi+1
					continue
				}
			default:
				if n[ni] == c {
					ni, pi = ni+1, pi+1
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		starN++
		ni, pi = starN, starP+1
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// matchSet matches r against the set starting at p[i] == '['. It returns
// the index after the set (0 when the set is not closed) and the result.
func matchSet(p []rune, i int, r rune) (int, bool) {
	j := i + 1
	if j < len(p) && p[j] == '!' {
		j++
	}
	if j < len(p) && p[j] == ']' {
		j++
	}
	for j < len(p) && p[j] != ']' {
		j++
	}
	if j >= len(p) {
		return 0, false
	}
	set := p[i+1 : j]
	neg := len(set) > 0 && set[0] == '!'
	if neg {
		set = set[1:]
	}
	in := false
	for k := 0; k < len(set); k++ {
		if k+2 < len(set) && set[k+1] == '-' {
			if set[k] <= r && r <= set[k+2] {
				in = true
			}
			k += 2
			continue
		}
		if set[k] == r {
			in = true
		}
	}
	return j + 1, in != neg
}
