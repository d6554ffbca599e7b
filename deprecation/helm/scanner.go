package helm

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/deprecation"
)

// Errors returned by this package.
var (
	// ErrInvalidOptions is returned by New for options it cannot use.
	ErrInvalidOptions = errors.New("helm: invalid options")
	// ErrServerVersion is returned by Scan when no target is set and the
	// cluster's version cannot be read.
	ErrServerVersion = errors.New("helm: cannot read the cluster's version")
)

// Defaults of Options.
const (
	// DefaultPageSize is the number of storage objects per LIST page, as
	// kdave's 256 releases.
	DefaultPageSize = 256
	// labelSelector selects the storage objects of deployed revisions.
	labelSelector = "owner=helm,status=deployed"
	// maxRestarts bounds the restarts of a listing whose continue token
	// expired.
	maxRestarts = 3
)

// Options configures a Scanner. The zero value scans the Secrets of all
// namespaces against the cluster's version with the default rules.
type Options struct {
	// Rules are the deprecation rules; nil means deprecation.DefaultRules().
	Rules *deprecation.RuleSet
	// Target is the Kubernetes release to check against. Zero means the
	// cluster's version, read on every scan.
	Target deprecation.Version
	// ComponentTargets are passed to deprecation.NewChecker.
	ComponentTargets map[string]deprecation.Version
	// Namespace limits the scan to one namespace; "" means all.
	Namespace string
	// PageSize is the LIST page size; 0 means DefaultPageSize.
	PageSize int64
	// Workers bounds the releases decoded and checked at once; 0 means
	// GOMAXPROCS.
	Workers int
	// ConfigMaps also scans the ConfigMaps of Helm's configmap driver.
	ConfigMaps bool
	// NoSecrets skips the Secrets of Helm's default secret driver (with
	// ConfigMaps, for clusters that only use the configmap driver).
	NoSecrets bool
	// Progress, if set, is called after each release revision is checked
	// with the number checked so far in this scan, one call at a time. A
	// CLI uses it for a progress line on long scans; it must not block.
	Progress func(checked int)
}

// Scanner checks the deployed Helm releases stored in a cluster. It is
// safe for concurrent use.
type Scanner struct {
	client kubernetes.Interface
	opts   Options
	// fixed is the checker when Options.Target is set.
	fixed *deprecation.Checker

	// mu guards last, the checker for the cluster version seen last.
	mu   sync.Mutex
	last *deprecation.Checker

	gzips sync.Pool // *gzip.Reader
	bufs  sync.Pool // *bytes.Buffer
}

var _ deprecation.ReleaseScanner = (*Scanner)(nil)

// New returns a Scanner reading Helm storage through client.
func New(client kubernetes.Interface, opts Options) (*Scanner, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", ErrInvalidOptions)
	}
	switch {
	case opts.PageSize < 0:
		return nil, fmt.Errorf("%w: negative PageSize %d", ErrInvalidOptions, opts.PageSize)
	case opts.Workers < 0:
		return nil, fmt.Errorf("%w: negative Workers %d", ErrInvalidOptions, opts.Workers)
	case opts.NoSecrets && !opts.ConfigMaps:
		return nil, fmt.Errorf("%w: NoSecrets without ConfigMaps scans nothing", ErrInvalidOptions)
	}
	if opts.PageSize == 0 {
		opts.PageSize = DefaultPageSize
	}
	if opts.Workers == 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Rules == nil {
		opts.Rules = deprecation.DefaultRules()
	}
	s := &Scanner{client: client, opts: opts}
	if !opts.Target.IsZero() {
		c, err := s.newChecker(opts.Target)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
		}
		s.fixed = c
	}
	return s, nil
}

func (s *Scanner) newChecker(target deprecation.Version) (*deprecation.Checker, error) {
	return deprecation.NewChecker(s.opts.Rules, deprecation.Options{Target: target, ComponentTargets: s.opts.ComponentTargets})
}

// Checker returns the checker a scan starting now would use: for the fixed
// target, or for the cluster's version, which it reads.
func (s *Scanner) Checker(ctx context.Context) (*deprecation.Checker, error) {
	if s.fixed != nil {
		return s.fixed, nil
	}
	info, err := serverVersion(ctx, s.client)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrServerVersion, err)
	}
	v, err := deprecation.ParseVersion(info.GitVersion)
	if err != nil {
		// Some distributions report an unparsable gitVersion; major and
		// minor are enough.
		v, err = deprecation.ParseVersion(strings.TrimSuffix(info.Major, "+") + "." + strings.TrimSuffix(info.Minor, "+"))
		if err != nil {
			return nil, fmt.Errorf("%w: version %q: %w", ErrServerVersion, info.GitVersion, err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last != nil && s.last.Target() == v {
		return s.last, nil
	}
	c, err := s.newChecker(v)
	if err != nil {
		return nil, err
	}
	s.last = c
	return c, nil
}

func serverVersion(ctx context.Context, client kubernetes.Interface) (*version.Info, error) {
	d := client.Discovery()
	if dc, ok := d.(interface {
		ServerVersionWithContext(context.Context) (*version.Info, error)
	}); ok {
		return dc.ServerVersionWithContext(ctx)
	}
	return d.ServerVersion()
}

// object is a storage object's data handed to a worker.
type object struct {
	key      string // namespace/name of the release
	name     string // release name from the labels
	ns       string
	revision int    // from the labels, else the object name
	source   string // "secret/<ns>/<object name>"
	data     []byte // the "release" value: base64(gzip(JSON))
	missing  bool   // no "release" value
}

// Scan implements deprecation.ReleaseScanner. It lists the storage objects
// of deployed revisions page by page; while a page's releases are decoded
// and checked by the workers, the next page is fetched. fn is called once
// per release after the listing is complete, because a higher revision of
// a release may come on a later page; the calls are ordered by namespace
// and name.
func (s *Scanner) Scan(ctx context.Context, fn func(deprecation.Release) error) (deprecation.Version, error) {
	checker, err := s.Checker(ctx)
	if err != nil {
		return deprecation.Version{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Workers)
	// mu guards best: the checked release of the highest revision seen.
	var mu sync.Mutex
	best := make(map[string]*deprecation.Release)
	// seen is the highest revision dispatched per release; producer only.
	seen := make(map[string]int)
	checked := 0 // guarded by mu

	dispatch := func(o object) {
		if r, ok := seen[o.key]; ok && o.revision <= r {
			return // superseded, or listed again after a restart
		}
		seen[o.key] = o.revision
		g.Go(func() error {
			rel, err := s.check(gctx, checker, o)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			if b, ok := best[o.key]; !ok || b.Revision <= rel.Revision {
				best[o.key] = &rel
			}
			if checked++; s.opts.Progress != nil {
				s.opts.Progress(checked)
			}
			return nil
		})
	}
	var listErr error
	if !s.opts.NoSecrets {
		listErr = s.listSecrets(gctx, dispatch)
	}
	if listErr == nil && s.opts.ConfigMaps {
		listErr = s.listConfigMaps(gctx, dispatch)
	}
	if listErr != nil {
		cancel()
	}
	werr := g.Wait()
	if err := cmp.Or(listErr, werr, ctx.Err()); err != nil {
		return checker.Target(), err
	}

	keys := make([]string, 0, len(best))
	for k := range best {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := fn(*best[k]); err != nil {
			return checker.Target(), err
		}
	}
	return checker.Target(), nil
}

// listSecrets lists the deployed revisions' Secrets page by page and
// dispatches each.
func (s *Scanner) listSecrets(ctx context.Context, dispatch func(object)) error {
	api := s.client.CoreV1().Secrets(s.opts.Namespace)
	return s.pages(ctx, "secrets", func(opts metav1.ListOptions) (string, error) {
		list, err := api.List(ctx, opts)
		if err != nil {
			return "", err
		}
		for i := range list.Items {
			sec := &list.Items[i]
			data, ok := sec.Data["release"]
			dispatch(newObject("secret", &sec.ObjectMeta, data, !ok))
		}
		return list.Continue, nil
	})
}

// listConfigMaps does the same for the configmap driver.
func (s *Scanner) listConfigMaps(ctx context.Context, dispatch func(object)) error {
	api := s.client.CoreV1().ConfigMaps(s.opts.Namespace)
	return s.pages(ctx, "configmaps", func(opts metav1.ListOptions) (string, error) {
		list, err := api.List(ctx, opts)
		if err != nil {
			return "", err
		}
		for i := range list.Items {
			cm := &list.Items[i]
			data, ok := cm.Data["release"]
			dispatch(newObject("configmap", &cm.ObjectMeta, []byte(data), !ok))
		}
		return list.Continue, nil
	})
}

// pages calls page with Limit/Continue until the listing ends. A continue
// token that expired (410 Gone, on a long scan) restarts the listing from
// the start; dispatch skips what it has seen.
func (s *Scanner) pages(ctx context.Context, resource string, page func(metav1.ListOptions) (string, error)) error {
	opts := metav1.ListOptions{LabelSelector: labelSelector, Limit: s.opts.PageSize}
	restarts := 0
	for {
		next, err := page(opts)
		switch {
		case err != nil && apierrors.IsResourceExpired(err) && opts.Continue != "" && restarts < maxRestarts:
			restarts++
			opts.Continue = ""
			continue
		case err != nil:
			return fmt.Errorf("helm: list %s: %w", resource, err)
		case next == "":
			return nil
		}
		opts.Continue = next
	}
}

func newObject(kind string, meta *metav1.ObjectMeta, data []byte, missing bool) object {
	o := object{ns: meta.Namespace, name: meta.Labels["name"], data: data, missing: missing,
		source: kind + "/" + meta.Namespace + "/" + meta.Name}
	// sh.helm.release.v1.<name>.v<revision>
	base, rev, _ := cutLast(strings.TrimPrefix(meta.Name, "sh.helm.release.v1."), ".v")
	if o.name == "" {
		o.name = base
	}
	var err error
	if o.revision, err = strconv.Atoi(meta.Labels["version"]); err != nil {
		o.revision, _ = strconv.Atoi(rev)
	}
	o.key = o.ns + "/" + o.name
	return o
}

func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

// storedRelease holds the fields of Helm's release JSON that a scan needs.
// encoding/json skips the rest (the chart's templates, values, files)
// without building Go values for them.
type storedRelease struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Version   int    `json:"version"`
	Info      struct {
		Status string `json:"status"`
		// LastDeployed is text: Helm writes "" for a zero time, which
		// time.Time does not accept.
		LastDeployed string `json:"last_deployed"`
	} `json:"info"`
	Chart struct {
		Metadata struct {
			Name       string `json:"name"`
			Version    string `json:"version"`
			AppVersion string `json:"appVersion"`
		} `json:"metadata"`
	} `json:"chart"`
	Manifest string `json:"manifest"`
	Hooks    []struct {
		Name     string `json:"name"`
		Kind     string `json:"kind"`
		Path     string `json:"path"`
		Manifest string `json:"manifest"`
	} `json:"hooks"`
}

// gzipMagic starts gzip data; Helm reads data without it as plain JSON
// (releases stored before Helm compressed them).
var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// decode decodes Helm's storage format into a storedRelease. Its errors
// wrap deprecation.ErrCorruptRelease.
func (s *Scanner) decode(data []byte) (*storedRelease, error) {
	raw := s.buffer()
	defer s.bufs.Put(raw)
	raw.Grow(base64.StdEncoding.DecodedLen(len(data)))
	b := raw.AvailableBuffer()[:base64.StdEncoding.DecodedLen(len(data))]
	n, err := base64.StdEncoding.Decode(b, data)
	if err != nil {
		return nil, fmt.Errorf("%w: base64: %w", deprecation.ErrCorruptRelease, err)
	}
	b = b[:n]
	if bytes.HasPrefix(b, gzipMagic) {
		out := s.buffer()
		defer s.bufs.Put(out)
		if err := s.gunzip(out, b); err != nil {
			return nil, fmt.Errorf("%w: gzip: %w", deprecation.ErrCorruptRelease, err)
		}
		b = out.Bytes()
	}
	var rel storedRelease
	if err := json.Unmarshal(b, &rel); err != nil {
		return nil, fmt.Errorf("%w: json: %w", deprecation.ErrCorruptRelease, err)
	}
	return &rel, nil
}

func (s *Scanner) buffer() *bytes.Buffer {
	if b, ok := s.bufs.Get().(*bytes.Buffer); ok {
		b.Reset()
		return b
	}
	return new(bytes.Buffer)
}

func (s *Scanner) gunzip(out *bytes.Buffer, b []byte) error {
	zr, _ := s.gzips.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(bytes.NewReader(b))
	} else {
		err = zr.Reset(bytes.NewReader(b))
	}
	if err != nil {
		return err
	}
	defer s.gzips.Put(zr)
	if _, err := out.ReadFrom(zr); err != nil {
		return err
	}
	return zr.Close()
}

// check decodes and checks one storage object. A corrupt object gives a
// Release with Err; the only error returned is ctx's.
func (s *Scanner) check(ctx context.Context, checker *deprecation.Checker, o object) (deprecation.Release, error) {
	rel := deprecation.Release{Name: o.name, Namespace: o.ns, Revision: o.revision, Source: o.source}
	if o.missing {
		rel.Err = fmt.Errorf("%w: no release data", deprecation.ErrCorruptRelease)
		return rel, nil
	}
	sr, err := s.decode(o.data)
	if err != nil {
		rel.Err = err
		return rel, nil
	}
	if sr.Name != "" {
		rel.Name = sr.Name
	}
	if sr.Version != 0 {
		rel.Revision = sr.Version
	}
	rel.Chart, rel.ChartVersion, rel.AppVersion = sr.Chart.Metadata.Name, sr.Chart.Metadata.Version, sr.Chart.Metadata.AppVersion
	if t, err := time.Parse(time.RFC3339Nano, sr.Info.LastDeployed); err == nil {
		rel.Updated = t
	}
	add := func(name, manifest string) error {
		if strings.TrimSpace(manifest) == "" {
			return nil
		}
		res, err := checker.Check(ctx, name, []byte(manifest))
		if err != nil {
			return err
		}
		rel.Findings = append(rel.Findings, res.Findings...)
		rel.Errors = append(rel.Errors, res.Errors...)
		rel.Documents += res.Documents
		return nil
	}
	if err := add(o.source+"/manifest", sr.Manifest); err != nil {
		return rel, err
	}
	for i, h := range sr.Hooks {
		name := cmp.Or(h.Path, h.Name, strconv.Itoa(i))
		if err := add(o.source+"/hooks/"+name, h.Manifest); err != nil {
			return rel, err
		}
	}
	return rel, nil
}
