package gitops

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"
)

// tree is a directory tree copied into memory at mount: the repository
// (repo) or a mapped source.
type tree struct {
	fsys  fs.FS
	mount string
	repo  bool
}

// loaded is one file read for the in-memory copy.
type loaded struct {
	path string // absolute, in the in-memory copy
	rel  string // relative to the repository, slashes; "" for a source's file
	data []byte
	objs []Object // the file's objects, for files under Options.Path
	// (and, for HelmReleases, files elsewhere that name the kind)
	under bool // under Options.Path
	// parsed says, for a file decoded, whether it holds objects
	// (parsedObjects), none (parsedEmpty) or does not decode (parsedBad).
	parsed parseState
}

// parseState is what decoding a manifest found.
type parseState int8

const (
	notParsed parseState = iota
	parsedObjects
	parsedEmpty
	parsedBad
)

// load copies the repository (from disk or Options.FS) and the mapped
// sources into memory and reads the Flux objects, ConfigMaps and Secrets
// of the files under Options.Path. Files are read and parsed in parallel;
// what they hold is recorded in the order of the walk, so the result does
// not depend on timing.
func (b *builder) load(ctx context.Context) error {
	var files []*loaded
	walk := func(fsys fs.FS, mount string, repo bool) error {
		return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			abs := filepath.Join(mount, filepath.FromSlash(p))
			if d.IsDir() {
				if d.Name() == ".git" && p != "." {
					return fs.SkipDir
				}
				return b.mem.MkdirAll(abs)
			}
			if !d.Type().IsRegular() {
				return nil // symlinks and devices are not followed
			}
			f := &loaded{path: abs}
			if repo {
				f.rel = p
			}
			files = append(files, f)
			return nil
		})
	}
	trees := []tree{{b.opts.FS, b.root, true}}
	if b.opts.FS == nil {
		if fi, err := os.Stat(b.root); err != nil || !fi.IsDir() {
			return fmt.Errorf("%w: %s is not a directory", ErrPath, b.root)
		}
		trees[0].fsys = os.DirFS(b.root)
	}
	if !b.exists(trees[0].fsys, b.path) {
		return fmt.Errorf("%w: %s is not a directory", ErrPath, b.opts.Path)
	}
	for _, name := range slices.Sorted(maps.Keys(b.opts.Sources)) {
		abs, err := filepath.Abs(b.opts.Sources[name])
		if err != nil {
			return fmt.Errorf("%w: source %s: %w", ErrPath, name, err)
		}
		if abs == b.root {
			continue
		}
		trees = append(trees, tree{os.DirFS(abs), abs, false})
	}
	for _, t := range trees {
		if err := walk(t.fsys, t.mount, t.repo); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return ctxErr
			}
			return fmt.Errorf("%w: %w", ErrPath, err)
		}
	}
	// Read and parse in parallel; the file list says which tree each
	// file is in by its mount point.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, f := range files {
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			return b.read(trees, f)
		})
	}
	if err := g.Wait(); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		return fmt.Errorf("%w: %w", ErrPath, err)
	}
	for _, f := range files {
		if f.data == nil {
			continue
		}
		if err := b.mem.WriteFile(f.path, f.data); err != nil {
			return fmt.Errorf("%w: %w", ErrPath, err)
		}
		if f.parsed != notParsed {
			b.parsed[f.path] = f.parsed
		}
		b.discover(f)
	}
	return nil
}

// read reads one file from the tree it is in and, under Options.Path,
// marks and parses its objects.
func (b *builder) read(trees []tree, f *loaded) error {
	var fsys fs.FS
	name := ""
	for _, t := range trees {
		if (f.rel != "") == t.repo && within(t.mount, f.path) {
			fsys = t.fsys
			r, _ := filepath.Rel(t.mount, f.path)
			name = filepath.ToSlash(r)
			break
		}
	}
	if fsys == nil {
		return nil
	}
	if fi, err := fs.Stat(fsys, name); err == nil && fi.Size() > maxFileBytes {
		return nil // left out: see maxFileBytes
	}
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return err
	}
	if len(data) > maxFileBytes {
		return nil
	}
	if isManifest(f.path) && bytes.Contains(data, []byte("openapi:")) && hasKustomizationName(f.path) {
		b.setCustomSchema()
	}
	if isManifest(f.path) && bytes.Contains(data, []byte("&")) && bytes.Contains(data, []byte("*")) {
		// Kustomize expands YAML aliases node by node, without the limit
		// YAML decoders have: a billion-laughs file would exhaust memory.
		// A file with aliases must decode within that limit, or builds
		// that read it fail with the decoder's error.
		if _, err := decodeObjects(name, data); err != nil {
			b.refuse(f.path, err)
		}
	}
	if f.rel != "" && isManifest(f.path) {
		f.under = within(b.path, f.path)
		if f.under {
			data, _ = markKustomizations(f.rel, data)
		}
		// Kustomizations are looked for under Options.Path only;
		// HelmReleases anywhere, for Options.Only to find.
		if f.under || bytes.Contains(data, []byte(kindHelmRelease)) {
			var err error
			f.objs, err = decodeObjects(f.rel, data)
			switch {
			case err != nil:
				f.parsed = parsedBad
			case len(f.objs) == 0:
				f.parsed = parsedEmpty
			default:
				f.parsed = parsedObjects
			}
		}
	}
	f.data = data
	return nil
}

// refuse makes path unreadable for builds, with err.
func (b *builder) refuse(path string, err error) {
	b.mu.Lock()
	b.refused[path] = err
	b.mu.Unlock()
}

// setCustomSchema records that a kustomization sets an OpenAPI schema.
func (b *builder) setCustomSchema() {
	b.mu.Lock()
	b.customSchema = true
	b.mu.Unlock()
}

// exists reports whether dir (absolute, under root) is a directory of
// the repository.
func (b *builder) exists(fsys fs.FS, dir string) bool {
	r, err := filepath.Rel(b.root, dir)
	if err != nil {
		return false
	}
	fi, err := fs.Stat(fsys, filepath.ToSlash(r))
	return err == nil && fi.IsDir()
}

func isManifest(path string) bool {
	ext := filepath.Ext(path)
	return ext == ".yaml" || ext == ".yml"
}

// discover records the Flux objects of one file. Files that are not
// Kubernetes YAML (Helm templates, values) hold none.
func (b *builder) discover(f *loaded) {
	for _, o := range f.objs {
		if !f.under && !isFlux(o, groupHelm, kindHelmRelease) {
			continue
		}
		switch {
		case isFlux(o, groupKustomize, kindKustomization):
			k := parseKustomization(o)
			b.raws = append(b.raws, k)
			if k.marker != "" {
				b.byMarker[k.marker] = k
			}
		case isFlux(o, groupHelm, kindHelmRelease):
			ns := o.Namespace
			if ns == "" {
				ns = defaultNamespace
			}
			b.rawHRs = append(b.rawHRs, rawHR{namespace: ns, name: o.Name, file: f.rel})
		default:
			b.record(o, b.configs, b.sources)
		}
	}
}

// record keeps a ConfigMap or Secret in configs, a Flux source object in
// sources and a CRD's APIs in crds.
func (b *builder) record(o Object, configs, sources map[string]Object) {
	switch {
	case isSourceKind(o):
		sources[o.Kind+"/"+o.Namespace+"/"+o.Name] = o
	case o.APIVersion == "v1" && (o.Kind == kindConfigMap || o.Kind == kindSecret):
		configs[o.Kind+"/"+o.Namespace+"/"+o.Name] = o
	case isCRD(o):
		addCRD(b.crds, o)
	}
}

// source returns the local directory Options.Sources maps a source to.
func (b *builder) source(namespace, name string) (string, bool) {
	dir, ok := b.opts.Sources[namespace+"/"+name]
	if !ok {
		dir, ok = b.opts.Sources[name]
	}
	if !ok {
		return "", false
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir, true
	}
	return abs, true
}

// config finds a ConfigMap or Secret rendered by a build or, failing
// that, in the repository; one without a namespace matches any.
func (b *builder) config(kind, namespace, name string) (Object, bool) {
	return b.object(b.built, b.configs, kind, namespace, name)
}

// sourceObject finds a Flux source object (HelmRepository,
// OCIRepository, HelmChart…) like config.
func (b *builder) sourceObject(kind, namespace, name string) (Object, bool) {
	return b.object(b.builtSources, b.sources, kind, namespace, name)
}

func (b *builder) object(built, raw map[string]Object, kind, namespace, name string) (Object, bool) {
	key := kind + "/" + namespace + "/" + name
	b.mu.Lock()
	o, ok := built[key]
	b.mu.Unlock()
	if ok {
		return o, true
	}
	if o, ok := raw[key]; ok {
		return o, true
	}
	o, ok = raw[kind+"//"+name]
	return o, ok
}
