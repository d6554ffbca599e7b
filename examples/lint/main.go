// Command lint runs a fleetkit rule set over files and directories and
// prints one line per problem, in the format of pycodestyle and checkstyle:
//
//	lint -language python [-select E2,W] [-ignore E501] [-extend-ignore W6]
//	     [-max-line-length 99] [-max-doc-length 72] [-indent-size 4]
//	     [-hang-closing] [-exclude PATTERNS] [-filename PATTERNS] PATH...
//	lint -language java [-config FILE|sun_checks|google_checks] PATH...
//	path:line:column: CODE message
//
// For Java, -config names a checkstyle configuration, as checkstyle's -c
// does: an XML file or one of the two built-ins. Modules and properties
// of it that are not implemented are listed once on standard error.
//
// Flags may be written with one dash or two (--max-line-length=99), as
// pycodestyle users write them. For Python, the CLI is pycodestyle's: it
// reads the [pycodestyle] section of the same configuration files (the
// user's, then setup.cfg and tox.ini of the project; flags override
// them), walks directories in pycodestyle's order skipping its default
// exclude list, and reports a file it cannot read as E902. Its output is
// pycodestyle's, line for line.
//
// It exits 1 when it found problems, 2 on errors. Files are linted in
// parallel (-j); the output order is the order of the arguments.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/linter/java"
	"github.com/fleetkit/fleetkit/linter/python"
)

func main() {
	found, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "lint:", err)
		os.Exit(2)
	}
	if found {
		os.Exit(1)
	}
}

// fileErrorReporter is implemented by linters whose peer tool reports a
// file it cannot read as a finding (pycodestyle's E902) rather than
// stopping.
type fileErrorReporter interface {
	FileError(name string, err error) []linter.Diagnostic
}

func run() (bool, error) {
	var (
		language = flag.String("language", "python", "language of the files (python, java)")
		sel      = flag.String("select", "", "comma-separated code prefixes to report (default: the language's default selection)")
		ignore   = flag.String("ignore", "", "comma-separated code prefixes to leave out (replaces the default ignore list)")
		extend   = flag.String("extend-ignore", "", "comma-separated code prefixes to leave out as well, keeping the default ignore list (flake8's --extend-ignore)")
		maxLine  = flag.Int("max-line-length", 0, "longest allowed line (0: the language's default)")
		jobs     = flag.Int("j", runtime.GOMAXPROCS(0), "files linted in parallel")
		exclude  = flag.String("exclude", strings.Join(python.DefaultExclude, ","), "python: comma-separated patterns of files and directories to skip")
		filename = flag.String("filename", "*.py", "python: comma-separated patterns of the files to check in directories")
		config   = flag.String("config", "", "java: checkstyle configuration, an XML file or a built-in: "+java.SunChecks+", "+java.GoogleChecks+" (default: the checks of the default configuration)")
	)
	// Options of the language, named as its peer names them; they reach
	// the language only when given, and a language refuses those it does
	// not take.
	options := map[string]*string{}
	for _, o := range []struct{ name, usage string }{
		{python.OptionMaxDocLength, "python: longest comment or docstring line; enables W505"},
		{python.OptionIndentSize, "python: spaces per indent (default 4)"},
	} {
		options[o.name] = flag.String(o.name, "", o.usage)
	}
	hangClosing := flag.Bool(python.OptionHangClosing, false, "python: closing brackets hang (E133 instead of E123)")
	flag.Parse()
	if flag.NArg() == 0 {
		return false, errors.New("no paths given (usage: lint -language LANG PATH...)")
	}
	reg, err := linter.NewRegistry(python.Language(), java.Language())
	if err != nil {
		return false, err
	}
	lang, err := reg.Lookup(*language)
	if err != nil {
		return false, fmt.Errorf("%w (have %s)", err, strings.Join(reg.Names(), ", "))
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })

	cfg := linter.Config{}
	expand := func(paths []string) ([]string, error) { return collect(paths, lang.Extensions) }
	if lang.Name == "python" {
		pc, err := python.ReadConfig(flag.Args(), "")
		if err != nil {
			return false, err
		}
		// pycodestyle reports these on standard output, before findings.
		for _, name := range pc.Unknown {
			fmt.Printf("  unknown option '%s' ignored\n", name)
		}
		for _, name := range pc.Unsupported {
			fmt.Fprintf(os.Stderr, "lint: %s: option %q of pycodestyle is not supported; ignored\n", pc.Section, name)
		}
		if pc.Section == "pep8" {
			fmt.Fprintln(os.Stderr, "lint: [pep8] section is deprecated. Use [pycodestyle].")
		}
		cfg = pc.Config
		excl, names := pc.Exclude, pc.Filename
		if set["exclude"] || excl == nil {
			excl = python.NormalizeExclude(python.SplitCodes(*exclude))
		}
		if set["filename"] || names == nil {
			names = python.SplitCodes(*filename)
		}
		expand = func(paths []string) ([]string, error) { return python.Files(paths, excl, names), nil }
	} else if set["exclude"] || set["filename"] {
		return false, fmt.Errorf("-exclude and -filename are for python; %s lints every file with extension %s", lang.Name, strings.Join(lang.Extensions, ", "))
	}
	if set["config"] {
		if lang.Name != "java" {
			return false, fmt.Errorf("-config is for java; %s reads its configuration files", lang.Name)
		}
		text := *config
		if _, builtin := java.BuiltinConfig(text); !builtin && text != java.DefaultConfig {
			b, err := os.ReadFile(text)
			if err != nil {
				return false, err
			}
			text = string(b)
		}
		cfg = withOption(cfg, java.OptionConfig, text)
	}
	if set["select"] {
		cfg.Select = python.SplitCodes(*sel)
	}
	if set["ignore"] {
		cfg.Ignore = python.SplitCodes(*ignore)
	}
	if set["extend-ignore"] {
		cfg.ExtendIgnore = append(cfg.ExtendIgnore, python.SplitCodes(*extend)...)
	}
	if set["max-line-length"] {
		cfg.MaxLineLength = *maxLine
	}
	for name, v := range options {
		if set[name] {
			cfg = withOption(cfg, name, *v)
		}
	}
	if set[python.OptionHangClosing] {
		cfg = withOption(cfg, python.OptionHangClosing, strconv.FormatBool(*hangClosing))
	}
	l, err := lang.New(cfg)
	if err != nil {
		return false, err
	}
	if u, ok := l.(interface{ Unsupported() []string }); ok {
		for _, what := range u.Unsupported() {
			fmt.Fprintf(os.Stderr, "lint: checkstyle configuration: %s; not checked\n", what)
		}
	}
	files, err := expand(flag.Args())
	if err != nil {
		return false, err
	}
	fileErrors, _ := l.(fileErrorReporter)

	// Each file's report is rendered by a worker; the printer waits for
	// them in argument order so the output is deterministic.
	reports := make([][]byte, len(files))
	ready := make([]chan struct{}, len(files))
	for i := range ready {
		ready[i] = make(chan struct{})
	}
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(max(*jobs, 1) + 1)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	found := false
	g.Go(func() error {
		for i := range files {
			select {
			case <-ready[i]:
			case <-ctx.Done():
				return ctx.Err()
			}
			if len(reports[i]) > 0 {
				found = true
			}
			if _, err := out.Write(reports[i]); err != nil {
				return err
			}
			reports[i] = nil
		}
		return out.Flush()
	})
	for i, f := range files {
		g.Go(func() error {
			defer close(ready[i])
			var diags []linter.Diagnostic
			code, err := os.ReadFile(f)
			switch {
			case err != nil && fileErrors != nil:
				diags = fileErrors.FileError(f, err)
			case err != nil:
				return err
			default:
				if diags, err = l.Lint(ctx, linter.Source{Name: f, Code: code}); err != nil {
					return fmt.Errorf("%s: %w", f, err)
				}
			}
			var b []byte
			for _, d := range diags {
				if d.Column > 0 {
					b = fmt.Appendf(b, "%s:%d:%d: %s %s\n", f, d.Line, d.Column, d.Code, d.Message)
				} else {
					b = fmt.Appendf(b, "%s:%d: %s %s\n", f, d.Line, d.Code, d.Message)
				}
			}
			reports[i] = b
			return nil
		})
	}
	return found, g.Wait()
}

// withOption returns cfg with Options[name] = v, without changing the
// map cfg shares.
func withOption(cfg linter.Config, name, v string) linter.Config {
	opts := make(map[string]string, len(cfg.Options)+1)
	for k, x := range cfg.Options {
		opts[k] = x
	}
	opts[name] = v
	cfg.Options = opts
	return cfg
}

// collect expands directories into the files with one of exts, sorted.
func collect(paths, exts []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			files = append(files, p)
			continue
		}
		if len(exts) == 0 {
			return nil, fmt.Errorf("%s is a directory and the language declares no file extensions", p)
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && slices.Contains(exts, filepath.Ext(path)) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		slices.Sort(found)
		files = append(files, found...)
	}
	return files, nil
}
