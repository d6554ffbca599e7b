package deprecation

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"golang.org/x/sync/errgroup"
)

// Stdin is the path that CheckPaths reads from its stdin argument.
const Stdin = "-"

// DefaultMaxFileSize is the largest file CheckPaths reads when
// PathOptions.MaxFileSize is zero.
const DefaultMaxFileSize = 64 << 20

// PathOptions tunes CheckPaths. The zero value reads as pluto does.
type PathOptions struct {
	// MaxFileSize bounds the bytes read from one file (stdin included);
	// a larger file is reported invalid, unread. 0 means
	// DefaultMaxFileSize.
	MaxFileSize int64
}

// CheckPaths checks files and directories and returns a report, reading
// files as pluto's detect-files does: a directory is walked recursively
// and every file in it is read, whatever its name, hidden files and
// directories included; symbolic links to directories are not followed.
// A file named explicitly is checked whatever it holds; "-" reads stdin.
//
// Some files of a walk are not read, and Report.Skipped says which and
// why: binary files (NUL bytes in no YAML encoding), files that are not
// regular (devices, sockets, pipes), broken symbolic links and symbolic
// links to directories.
//
// A source that cannot be read is an error in the report, not a failure:
// the only error returned is ctx's. Files are checked concurrently, one
// per CPU.
func (c *Checker) CheckPaths(ctx context.Context, stdin io.Reader, paths ...string) (*Report, error) {
	return c.CheckPathsWith(ctx, stdin, PathOptions{}, paths...)
}

// source is a file to read and whether a walk found it (rather than the
// caller naming it).
type source struct {
	path   string
	walked bool
}

// CheckPathsWith is CheckPaths with options.
func (c *Checker) CheckPathsWith(ctx context.Context, stdin io.Reader, opts PathOptions, paths ...string) (*Report, error) {
	if opts.MaxFileSize <= 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	rep := &Report{Target: c.target, Targets: c.Targets()}
	var files []source
	for _, p := range paths {
		if p == Stdin {
			files = append(files, source{path: p})
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			rep.AddError(p, err)
			continue
		}
		if !fi.IsDir() {
			files = append(files, source{path: p})
			continue
		}
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				rep.AddError(path, err)
				return nil
			}
			if d.IsDir() {
				return nil
			}
			if reason := skipReason(path, d); reason != "" {
				rep.Skipped = append(rep.Skipped, Skipped{Path: path, Reason: reason})
				return nil
			}
			files = append(files, source{path: path, walked: true})
			return nil
		})
		if err != nil {
			rep.AddError(p, err)
		}
	}

	type outcome struct {
		res     Result
		readErr error
		skip    string
	}
	outcomes := make([]outcome, len(files))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for i, f := range files {
		g.Go(func() error {
			data, err := readLimited(f.path, stdin, opts.MaxFileSize)
			switch {
			case errors.Is(err, errTooLarge):
				outcomes[i].res = Result{Source: f.path, Errors: []*DocumentError{{Source: f.path, Index: -1,
					Err: fmt.Errorf("larger than %d bytes: not read", opts.MaxFileSize)}}}
				return nil
			case err != nil:
				outcomes[i].readErr = err
				return nil
			case f.walked && looksBinary(data):
				outcomes[i].skip = "binary (NUL bytes in no YAML encoding)"
				return nil
			}
			outcomes[i].res, err = c.Check(gctx, f.path, data)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, o := range outcomes {
		switch {
		case o.readErr != nil:
			rep.AddError(files[i].path, o.readErr)
		case o.skip != "":
			rep.Skipped = append(rep.Skipped, Skipped{Path: files[i].path, Reason: o.skip})
		default:
			rep.Add(o.res)
		}
	}
	return rep, nil
}

// skipReason says why a walk does not read the entry, or "" to read it.
func skipReason(path string, d fs.DirEntry) string {
	mode := d.Type()
	if mode&fs.ModeSymlink != 0 {
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			return "broken symbolic link"
		case fi.IsDir():
			return "symbolic link to a directory (not followed)"
		}
		mode = fi.Mode().Type()
	}
	if !mode.IsRegular() {
		return "not a regular file"
	}
	return ""
}

// looksBinary reports whether data holds NUL bytes in no encoding YAML
// allows.
func looksBinary(data []byte) bool {
	if bytes.IndexByte(data, 0) < 0 {
		return false
	}
	_, _, err := decodeText(data)
	return errors.Is(err, errBinary)
}

var errTooLarge = errors.New("too large")

// readLimited reads the file at path ("-" for stdin) up to limit bytes;
// errTooLarge when it holds more.
func readLimited(path string, stdin io.Reader, limit int64) ([]byte, error) {
	r := stdin
	if path != Stdin {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			if fi.Size() > limit {
				return nil, errTooLarge
			}
			// One allocation of the right size; what a file being written
			// gains meanwhile is not read.
			data := make([]byte, fi.Size())
			n, err := io.ReadFull(f, data)
			if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
				return nil, err
			}
			return data[:n], nil
		}
		r = f
	}
	if r == nil {
		return nil, errors.New("no stdin")
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}
