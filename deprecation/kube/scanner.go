package kube

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/fleetkit/fleetkit/deprecation"
)

// Errors returned by this package.
var (
	// ErrInvalidOptions is returned by New for options it cannot use.
	ErrInvalidOptions = errors.New("kube: invalid options")
)

// LastAppliedAnnotation is where kubectl apply keeps the manifest it
// applied.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// DefaultPageSize is the objects per LIST page when Options.PageSize is 0.
const DefaultPageSize = 500

// Options configures a Scanner. The zero value scans every namespace.
type Options struct {
	// Namespace limits the scan to the namespaced resources of one
	// namespace; "" means all resources, cluster-scoped ones included.
	Namespace string
	// PageSize is the LIST page size; 0 means DefaultPageSize.
	PageSize int64
	// Logger receives, at debug level, the warnings the API server sends
	// back (a scan lists deprecated APIs on purpose, and client-go would
	// print each warning on stderr); nil means slog.Default(). Only New
	// uses it, and only when the rest.Config has no warning handler.
	Logger *slog.Logger
}

// Scanner checks the live objects of a cluster.
type Scanner struct {
	disc discovery.DiscoveryInterface
	meta metadata.Interface
	opts Options
}

// New returns a Scanner for the cluster restConfig reaches.
func New(restConfig *rest.Config, opts Options) (*Scanner, error) {
	if restConfig == nil {
		return nil, fmt.Errorf("%w: nil rest config", ErrInvalidOptions)
	}
	if restConfig.WarningHandler == nil && restConfig.WarningHandlerWithContext == nil {
		restConfig = rest.CopyConfig(restConfig)
		restConfig.WarningHandlerWithContext = warningLogger{cmp.Or(opts.Logger, slog.Default())}
	}
	disc, err := discovery.NewDiscoveryClientForConfig(restConfig)
	if err != nil {
		return nil, err
	}
	meta, err := metadata.NewForConfig(restConfig)
	if err != nil {
		return nil, err
	}
	return NewWithClients(disc, meta, opts)
}

// NewWithClients returns a Scanner over the given discovery and metadata
// clients.
func NewWithClients(disc discovery.DiscoveryInterface, meta metadata.Interface, opts Options) (*Scanner, error) {
	switch {
	case disc == nil || meta == nil:
		return nil, fmt.Errorf("%w: nil client", ErrInvalidOptions)
	case opts.PageSize < 0:
		return nil, fmt.Errorf("%w: negative PageSize %d", ErrInvalidOptions, opts.PageSize)
	}
	if opts.PageSize == 0 {
		opts.PageSize = DefaultPageSize
	}
	return &Scanner{disc: disc, meta: meta, opts: opts}, nil
}

// warningLogger logs the API server's warnings.
type warningLogger struct{ log *slog.Logger }

func (w warningLogger) HandleWarningHeaderWithContext(ctx context.Context, code int, agent, text string) {
	w.log.DebugContext(ctx, "kube-apiserver warning", "code", code, "agent", agent, "text", text)
}

// resource is a listable resource in its preferred version.
type resource struct {
	gvr  schema.GroupVersionResource
	kind string
}

// Scan checks every live object with checker and returns a report with
// one source per object. A resource that cannot be listed
// (forbidden, an aggregated API that is down) is an error in the report
// and the scan goes on; the error returned is ctx's, or discovery's when
// no resource at all could be found.
func (s *Scanner) Scan(ctx context.Context, checker *deprecation.Checker) (*deprecation.Report, error) {
	rep := &deprecation.Report{Target: checker.Target(), Targets: checker.Targets()}
	resources, err := s.resources(ctx, rep)
	if err != nil {
		return nil, err
	}
	for _, r := range resources {
		if err := s.scanResource(ctx, checker, r, rep); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// resources lists the listable resources in their preferred versions,
// sorted; groups whose discovery failed are errors in rep.
func (s *Scanner) resources(ctx context.Context, rep *deprecation.Report) ([]resource, error) {
	lists, err := discovery.ServerPreferredResourcesWithContext(ctx, discovery.ToDiscoveryInterfaceWithContext(s.disc))
	if err != nil {
		var failed *discovery.ErrGroupDiscoveryFailed
		if !errors.As(err, &failed) || len(lists) == 0 {
			return nil, fmt.Errorf("kube: discovery: %w", err)
		}
		for gv, gerr := range failed.Groups {
			rep.AddError("discovery/"+gv.String(), gerr)
		}
	}
	var out []resource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !slices.Contains(r.Verbs, "list") || (s.opts.Namespace != "" && !r.Namespaced) {
				continue
			}
			out = append(out, resource{gvr: gv.WithResource(r.Name), kind: r.Kind})
		}
	}
	slices.SortFunc(out, func(a, b resource) int {
		return strings.Compare(a.gvr.Group+"/"+a.gvr.Resource, b.gvr.Group+"/"+b.gvr.Resource)
	})
	return out, ctx.Err()
}

// scanResource lists one resource page by page and checks its objects.
func (s *Scanner) scanResource(ctx context.Context, checker *deprecation.Checker, r resource, rep *deprecation.Report) error {
	var api metadata.ResourceInterface = s.meta.Resource(r.gvr)
	if s.opts.Namespace != "" {
		api = s.meta.Resource(r.gvr).Namespace(s.opts.Namespace)
	}
	name := r.gvr.Resource
	if r.gvr.Group != "" {
		name += "." + r.gvr.Group
	}
	opts := metav1.ListOptions{Limit: s.opts.PageSize}
	for {
		list, err := api.List(ctx, opts)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && apierrors.IsResourceExpired(err) && opts.Continue != "":
			// The continue token expired on a long scan: what was read
			// stays read; the rest of this resource is an error.
			rep.AddError(name, fmt.Errorf("listing expired after a partial read: %w", err))
			return nil
		case err != nil:
			rep.AddError(name, err)
			return nil
		}
		for i := range list.Items {
			if err := s.checkObject(ctx, checker, name, r.kind, &list.Items[i].ObjectMeta, rep); err != nil {
				return err
			}
		}
		if list.Continue == "" {
			return nil
		}
		opts.Continue = list.Continue
	}
}

// checkObject checks the last applied configuration and the managed
// fields of one object. An apiVersion both name is reported once, from the
// annotation.
func (s *Scanner) checkObject(ctx context.Context, checker *deprecation.Checker, resource, kind string, meta *metav1.ObjectMeta, rep *deprecation.Report) error {
	obj := resource + "/" + meta.Name
	if meta.Namespace != "" {
		obj = resource + "/" + meta.Namespace + "/" + meta.Name
	}
	res := deprecation.Result{Source: obj}
	seen := map[string]bool{}
	if applied, ok := meta.Annotations[LastAppliedAnnotation]; ok {
		r, err := checker.Check(ctx, obj+" ("+LastAppliedAnnotation+")", []byte(applied))
		if err != nil {
			return err
		}
		res.Findings, res.Errors = r.Findings, r.Errors
		for _, f := range r.Findings {
			seen[f.APIVersion] = true
		}
	}
	var managers []string
	byVersion := map[string][]string{}
	for _, mf := range meta.ManagedFields {
		if mf.APIVersion == "" || seen[mf.APIVersion] {
			continue
		}
		if _, ok := byVersion[mf.APIVersion]; !ok {
			managers = append(managers, mf.APIVersion)
		}
		byVersion[mf.APIVersion] = append(byVersion[mf.APIVersion], mf.Manager)
	}
	for _, apiVersion := range managers {
		source := fmt.Sprintf("%s (managed fields of %s)", obj, strings.Join(byVersion[apiVersion], ", "))
		if f, ok := checker.Object(source, apiVersion, kind, meta.Name, meta.Namespace); ok {
			res.Findings = append(res.Findings, f)
		}
	}
	res.Documents = 1
	rep.Add(res)
	return nil
}
