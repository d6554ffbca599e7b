package agent

import (
	"context"
	"crypto/hmac"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/internal/reconcile"
)

// Errors of the package.
var (
	// ErrInvalidOptions is returned by New for Options it cannot use.
	ErrInvalidOptions = errors.New("agent: invalid options")
	// ErrTemplate reports an object template that does not render the
	// objects of an instance (see ParseTemplate).
	ErrTemplate = errors.New("agent: object template")
)

// Labels on every object the agent applies.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	LabelInstance  = "fleetkit.io/instance"
	LabelKind      = "fleetkit.io/kind"
	// ManagedBy is LabelManagedBy's value.
	ManagedBy = "fleet-agent"
	// FieldManager is the agent's server-side apply field manager.
	FieldManager = "fleet-agent"
	// AnnotationHash records the hash of the rendered object last applied,
	// so that an unchanged object is not applied again on every event.
	AnnotationHash = "fleetkit.io/applied-hash"
)

// Defaults of Options.
const (
	DefaultResync      = 30 * time.Second
	DefaultHeartbeat   = 10 * time.Second
	DefaultImage       = "fleetkit/fleet-manager:latest"
	DefaultPort        = 8080
	DefaultConcurrency = 8
	// maxWait is the longest long-poll the contract allows.
	maxWait = 60 * time.Second
	// reportGap is the least time between two status reports: a burst of
	// changes (200 Pods becoming ready) is sent as few reports.
	reportGap = 100 * time.Millisecond
	// minPoll is the least time between two polls that brought nothing
	// new, should the control plane not hold them.
	minPoll = time.Second
)

// HostMode says which address the agent reports for a ready instance.
type HostMode string

// Host modes.
const (
	// HostDNS reports "<service>.<namespace>.svc:<port>".
	HostDNS HostMode = "dns"
	// HostClusterIP reports "<service ClusterIP>:<port>", for clusters
	// without cluster DNS.
	HostClusterIP HostMode = "clusterip"
)

// Options configure an Agent. Zero fields take the documented defaults.
type Options struct {
	// ControlPlane is the control plane's base URL (http://host:port).
	ControlPlane string
	// Kind is the fleet kind the agent runs (required; normalized).
	Kind fleet.Kind
	// Cluster is the agent's cluster id at the control plane (required).
	Cluster string
	// Token is the cluster's bearer token (required); never logged.
	Token string
	// Namespace is where the instances' objects live (required). One
	// agent per kind and namespace.
	Namespace string
	// Resync is the longest time between two full looks at the desired
	// instances and at every instance's objects; DefaultResync.
	Resync time.Duration
	// Heartbeat is the period of the cluster heartbeat and of the
	// complete status report; DefaultHeartbeat.
	Heartbeat time.Duration
	// Capacity is the cluster's capacity in units (0 unlimited).
	Capacity int
	// Image is the per-instance service's image; DefaultImage.
	Image string
	// ImagePullPolicy of the per-instance service; "IfNotPresent".
	ImagePullPolicy string
	// HostMode picks the reported address; HostDNS.
	HostMode HostMode
	// Template renders an instance's objects; DefaultTemplate(Kind.Name).
	Template *template.Template
	// Version is reported in heartbeats; "dev".
	Version string
	// HTTPClient calls the control plane; a client with a timeout above
	// the long-poll's.
	HTTPClient *http.Client
	// Concurrency bounds the instances converged at once;
	// DefaultConcurrency.
	Concurrency int
	// Registerer receives the agent's metrics; nil means none.
	Registerer prometheus.Registerer
	// Logger receives what the agent does; nil discards.
	Logger *slog.Logger
}

// Agent converges one namespace of a data-plane cluster to the instances
// the control plane places on that cluster. See the package doc.
type Agent struct {
	kube kubernetes.Interface
	opts Options
	cp   *client
	log  *slog.Logger
	m    *metrics

	factory   informers.SharedInformerFactory
	resources []*resource // Secret (the root) first
	pods      *resource   // watched, never applied
	engine    *reconcile.Engine
	poke      chan struct{} // wakes the reporter
	synced    atomic.Bool
	ran       atomic.Bool

	// key derives the instances' passwords; set by Run before its
	// goroutines start.
	key []byte

	// mu guards desired, known, failed and fullApply.
	mu sync.Mutex
	// desired is the last set the control plane sent; known is set once
	// one arrived (before, nothing is removed).
	desired map[string]Instance
	known   bool
	// failed holds why a desired instance cannot be applied (its objects
	// are refused or its template fails), reported as failed.
	failed map[string]string
	// fullApply is when each instance's objects were last all applied;
	// older than Resync, they are applied again (undoing edits by hand).
	fullApply map[string]time.Time
}

// New returns an agent for opts, acting through kube. It checks opts and
// renders the template once for a sample instance.
func New(kube kubernetes.Interface, opts Options) (*Agent, error) {
	if kube == nil {
		return nil, fmt.Errorf("%w: no Kubernetes client", ErrInvalidOptions)
	}
	k, err := opts.Kind.Normalize()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	opts.Kind = k
	switch {
	case opts.Cluster == "":
		return nil, fmt.Errorf("%w: no cluster id", ErrInvalidOptions)
	case opts.Token == "":
		return nil, fmt.Errorf("%w: no token", ErrInvalidOptions)
	case len(validation.IsDNS1123Label(opts.Namespace)) > 0:
		return nil, fmt.Errorf("%w: namespace %q", ErrInvalidOptions, opts.Namespace)
	case opts.Resync < 0 || opts.Heartbeat < 0 || opts.Capacity < 0 || opts.Concurrency < 0:
		return nil, fmt.Errorf("%w: negative resync, heartbeat, capacity or concurrency", ErrInvalidOptions)
	}
	opts.Resync = cmpOr(opts.Resync, DefaultResync)
	opts.Heartbeat = cmpOr(opts.Heartbeat, DefaultHeartbeat)
	opts.Image = cmpOr(opts.Image, DefaultImage)
	opts.ImagePullPolicy = cmpOr(opts.ImagePullPolicy, string(corev1.PullIfNotPresent))
	opts.HostMode = cmpOr(opts.HostMode, HostDNS)
	opts.Version = cmpOr(opts.Version, "dev")
	opts.Concurrency = cmpOr(opts.Concurrency, DefaultConcurrency)
	if opts.HostMode != HostDNS && opts.HostMode != HostClusterIP {
		return nil, fmt.Errorf("%w: host mode %q: want dns or clusterip", ErrInvalidOptions, opts.HostMode)
	}
	if opts.Template == nil {
		opts.Template = DefaultTemplate(k.Name)
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: min(opts.Resync, maxWait) + 30*time.Second}
	}
	cp, err := newClient(opts.HTTPClient, opts.ControlPlane, k, opts.Cluster, opts.Token)
	if err != nil {
		return nil, err
	}
	a := &Agent{
		kube: kube, opts: opts, cp: cp, log: opts.Logger,
		poke:    make(chan struct{}, 1),
		desired: map[string]Instance{}, failed: map[string]string{}, fullApply: map[string]time.Time{},
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	// The template must render for any instance: try one.
	if _, err := render(opts.Template, a.data(Instance{ID: "sample0", Name: "sample"})); err != nil {
		return nil, err
	}
	if a.m, err = newMetrics(opts.Registerer); err != nil {
		return nil, err
	}
	a.newResources()
	a.engine, err = reconcile.New(reconcile.Func(a.reconcile), reconcile.Options{
		Name: "fleet-agent-" + k.Name, Concurrency: opts.Concurrency, List: a.listIDs, Resync: opts.Resync,
		MaxBackoff: opts.Resync, Registerer: opts.Registerer, Logger: a.log,
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Healthy reports whether the agent runs and has read the cluster's
// objects (for /healthz).
func (a *Agent) Healthy() error {
	if !a.synced.Load() {
		return errors.New("agent: not running or the object caches are not synced yet")
	}
	return nil
}

// Run converges the namespace until ctx is done, then returns ctx's
// error. It may be called once.
func (a *Agent) Run(ctx context.Context) error {
	if !a.ran.CompareAndSwap(false, true) {
		return errors.New("agent: Run called twice")
	}
	key, err := a.loadKey(ctx)
	if err != nil {
		return err
	}
	a.key = key
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a.factory.Start(ctx.Done())
	defer a.factory.Shutdown()
	for typ, ok := range a.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("agent: cache of %v not synced: %w", typ, context.Cause(ctx))
		}
	}
	a.synced.Store(true)
	defer a.synced.Store(false)
	a.log.Info("agent running", "kind", a.opts.Kind.Name, "cluster", a.opts.Cluster, "namespace", a.opts.Namespace)

	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.engine.Run(ctx) })
	g.Go(func() error { return a.pollLoop(ctx) })
	g.Go(func() error { return a.reportLoop(ctx) })
	return g.Wait()
}

// keySecret names the Secret that holds the key the instances' passwords
// derive from: in the cluster, so a restarted agent renders the same.
func (a *Agent) keySecret() string { return "fleet-agent-" + a.opts.Kind.Name + "-key" }

func (a *Agent) loadKey(ctx context.Context) ([]byte, error) {
	secrets := a.kube.CoreV1().Secrets(a.opts.Namespace)
	key := make([]byte, 32)
	_, _ = crand.Read(key)
	s, err := secrets.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: a.keySecret(), Labels: map[string]string{LabelManagedBy: ManagedBy, LabelKind: a.opts.Kind.Name}},
		Data:       map[string][]byte{"key": key},
	}, metav1.CreateOptions{FieldManager: FieldManager})
	if apierrors.IsAlreadyExists(err) {
		s, err = secrets.Get(ctx, a.keySecret(), metav1.GetOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("agent: key Secret %s/%s: %w", a.opts.Namespace, a.keySecret(), err)
	}
	if len(s.Data["key"]) < 16 {
		return nil, fmt.Errorf("agent: key Secret %s/%s has no key of 16 bytes or more", a.opts.Namespace, a.keySecret())
	}
	return s.Data["key"], nil
}

// objectName is the name of an instance's objects.
func (a *Agent) objectName(id string) string { return a.opts.Kind.Name + "-" + id }

// data is what the template renders inst with.
func (a *Agent) data(inst Instance) TemplateData {
	sel := map[string]string{LabelInstance: inst.ID, LabelKind: a.opts.Kind.Name}
	labels := maps.Clone(sel)
	labels[LabelManagedBy] = ManagedBy
	mac := hmac.New(sha256.New, a.key)
	mac.Write([]byte(a.opts.Kind.Name + "/" + inst.ID))
	return TemplateData{
		Instance: inst, Kind: a.opts.Kind.Name, Name: a.objectName(inst.ID), Namespace: a.opts.Namespace,
		Image: a.opts.Image, ImagePullPolicy: a.opts.ImagePullPolicy, Port: DefaultPort,
		Labels: labels, Selector: sel, Password: base64.RawURLEncoding.EncodeToString(mac.Sum(nil)),
	}
}

// pollLoop keeps the desired set current: a long poll that the control
// plane answers when the set changes or after Resync; errors back off
// exponentially with jitter.
func (a *Agent) pollLoop(ctx context.Context) error {
	wait := min(a.opts.Resync, maxWait)
	etag := ""
	var bo backoff
	for {
		start := time.Now()
		items, tag, changed, err := a.cp.desired(ctx, etag, wait)
		a.m.requests.WithLabelValues("list", result(err)).Inc()
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			d := bo.next(time.Second, a.opts.Resync)
			lvl := slog.LevelInfo
			if isAuthError(err) {
				lvl = slog.LevelWarn
			}
			a.log.Log(ctx, lvl, "listing the desired instances failed; retrying", "err", err, "in", d)
			etag = ""
			if !reconcile.Sleep(ctx, d) {
				return ctx.Err()
			}
			continue
		}
		bo = 0
		a.m.lastList.SetToCurrentTime()
		if changed {
			a.setDesired(items)
		}
		etag = tag
		if (!changed || tag == "") && time.Since(start) < minPoll {
			if !reconcile.Sleep(ctx, jitter(minPoll)) {
				return ctx.Err()
			}
		}
	}
}

// setDesired records a new desired set and enqueues the instances it
// changes (all of them, and every instance with objects, the first time).
func (a *Agent) setDesired(items []Instance) {
	next := make(map[string]Instance, len(items))
	for _, it := range items {
		next[it.ID] = it
	}
	a.mu.Lock()
	prev, first := a.desired, !a.known
	a.desired, a.known = next, true
	for id := range a.failed {
		if _, ok := next[id]; !ok {
			delete(a.failed, id)
		}
	}
	a.mu.Unlock()
	a.m.desired.Set(float64(len(next)))
	var ids []string
	for id, it := range next {
		if p, ok := prev[id]; first || !ok || p != it {
			ids = append(ids, id)
		}
	}
	for id := range prev {
		if _, ok := next[id]; !ok {
			ids = append(ids, id)
		}
	}
	if first {
		ids = append(ids, a.observedIDs()...)
	}
	for _, id := range ids {
		a.engine.Enqueue(id)
	}
	a.wake()
}

// listIDs is the engine's resync: every desired instance and every
// instance with objects.
func (a *Agent) listIDs(context.Context) ([]string, error) {
	a.mu.Lock()
	ids := slices.Collect(maps.Keys(a.desired))
	a.mu.Unlock()
	return append(ids, a.observedIDs()...), nil
}

// reconcile converges one instance: applies its objects when desired,
// removes them when not. Before the first desired set it does nothing:
// an agent that cannot reach its control plane removes nothing.
func (a *Agent) reconcile(ctx context.Context, id string) (reconcile.Result, error) {
	a.mu.Lock()
	inst, want := a.desired[id]
	known := a.known
	a.mu.Unlock()
	defer a.wake()
	switch {
	case !known:
		return reconcile.Result{}, nil
	case !want:
		return reconcile.Result{}, a.remove(ctx, id)
	}
	err := a.apply(ctx, inst)
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, still := a.desired[id]; !still {
		return reconcile.Result{Requeue: true}, nil // removed meanwhile: look again
	}
	var terminal *refusedError
	switch {
	case errors.As(err, &terminal):
		a.failed[id] = terminal.Error()
		return reconcile.Result{}, reconcile.TerminalError(err)
	case err != nil:
		return reconcile.Result{}, err
	}
	delete(a.failed, id)
	return reconcile.Result{}, nil
}

// refusedError is an instance whose objects cannot be applied as they
// are (bad id, template error, objects the API server refuses): retrying
// will not help, the instance is reported failed with it.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// wake tells the reporter that the report may have changed.
func (a *Agent) wake() {
	select {
	case a.poke <- struct{}{}:
	default:
	}
}

// backoff counts failures in a row.
type backoff int

// next returns the delay after one more failure: base doubling up to
// limit, with jitter.
func (b *backoff) next(base, limit time.Duration) time.Duration {
	d := base << min(int(*b), 16)
	*b++
	return jitter(min(d, limit))
}

// jitter returns a duration in [d/2, d), so that agents that failed
// together do not retry together.
func jitter(d time.Duration) time.Duration {
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2)
}

func result(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}
