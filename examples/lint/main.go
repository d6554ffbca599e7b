// Command lint runs a fleetkit rule set over files and directories and
// prints one line per problem, in the format of pycodestyle and checkstyle:
//
//	lint -language python [-select E2,W] [-ignore E501] [-max-line-length 99] PATH...
//	path:line:column: CODE message
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

func run() (bool, error) {
	var (
		language = flag.String("language", "python", "language of the files (python, java)")
		sel      = flag.String("select", "", "comma-separated code prefixes to report (default: all)")
		ignore   = flag.String("ignore", "", "comma-separated code prefixes to leave out")
		maxLine  = flag.Int("max-line-length", 0, "longest allowed line (0: the language's default)")
		jobs     = flag.Int("j", runtime.GOMAXPROCS(0), "files linted in parallel")
	)
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
	l, err := lang.New(linter.Config{Select: split(*sel), Ignore: split(*ignore), MaxLineLength: *maxLine})
	if err != nil {
		return false, err
	}
	files, err := collect(flag.Args(), lang.Extensions)
	if err != nil {
		return false, err
	}

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
			code, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			diags, err := l.Lint(ctx, linter.Source{Name: f, Code: code})
			if err != nil {
				return fmt.Errorf("%s: %w", f, err)
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

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
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
