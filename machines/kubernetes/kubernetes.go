package kubernetes

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/internal/hub"
)

var (
	_ machines.Provider = (*Provider)(nil)
	_ machines.Watcher  = (*Provider)(nil)
	_ io.Closer         = (*Provider)(nil)
)

// Errors of New.
var (
	// ErrInvalidOptions is returned by New for Options it cannot use.
	ErrInvalidOptions = errors.New("kubernetes: invalid options")
)

// Names and defaults.
const (
	// AnnotationCreated records when Create was called, RFC 3339 with
	// nanoseconds (creationTimestamp has whole seconds), so that List
	// orders machines as Create saw them.
	AnnotationCreated = machines.LabelPrefix + "created"
	// ContainerName is the name of the machine's container in its Pod.
	ContainerName = "machine"
	// DefaultName is the provider label of Options.Name "".
	DefaultName = "kubernetes"
	// DefaultNamespace is where machines run when Options.Namespace is "".
	DefaultNamespace = "default"
	// DefaultRunAsUser is the user ("nobody") machines run as when
	// Options.RunAsUser is 0: never root.
	DefaultRunAsUser = 65534
	// DefaultProbePeriod is how often the kubelet probes a machine's health
	// path when Options.ProbePeriod is 0.
	DefaultProbePeriod = time.Second
)

// DefaultResources are the machines' resources when Options.Resources is
// empty: small requests, so that many linters fit a node, and limits that
// bound a runaway one.
func DefaultResources() corev1.ResourceRequirements {
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("10m"),
			corev1.ResourceMemory: resource.MustParse("32Mi"),
		},
		Limits: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("1"),
			corev1.ResourceMemory: resource.MustParse("256Mi"),
		},
	}
}

// Options configure a Provider. The zero value is ready to use.
type Options struct {
	// Name is the provider label of the Pods; "" means DefaultName. Two
	// Provider values with the same Name in the same namespace own the same
	// Pods: that is how a restarted manager adopts its machines.
	Name string
	// Namespace is where the Pods run; "" means DefaultNamespace. It must
	// exist.
	Namespace string
	// StopTimeout is the Pods' termination grace period: how long Remove
	// lets a machine stop after SIGTERM before the kubelet kills it; 0
	// means machines.DefaultStopTimeout. It is rounded up to whole seconds.
	StopTimeout time.Duration
	// Resources are the container's requests and limits; empty means
	// DefaultResources().
	Resources corev1.ResourceRequirements
	// RunAsUser is the machines' user ID; 0 means DefaultRunAsUser (root is
	// not allowed: the Pods run as non-root).
	RunAsUser int64
	// ImagePullPolicy is the container's; "" means IfNotPresent.
	ImagePullPolicy corev1.PullPolicy
	// ServiceAccountName is the Pods' service account; "" means the
	// namespace's default. No token is mounted either way: a linter does
	// not talk to the API server.
	ServiceAccountName string
	// ProbePeriod is how often the kubelet probes the health path; 0 means
	// DefaultProbePeriod.
	ProbePeriod time.Duration
}

// Provider runs machines as Pods through the Kubernetes API. It is safe
// for concurrent use; Close stops its informer (the Pods keep running).
type Provider struct {
	opts     Options
	cs       clientset.Interface
	informer cache.SharedIndexInformer
	lister   listers.PodNamespaceLister
	events   hub.Hub[machines.Event]
	stop     context.CancelFunc
	done     chan struct{} // closed when the informer has stopped

	// mu guards changed and removing.
	mu sync.Mutex
	// changed is closed, and replaced, whenever the informer's cache
	// changes: Create and Remove wait on it instead of polling.
	changed chan struct{}
	// quiet holds the Pods (by UID) Watch reports nothing more of, with
	// since when: the ones this value removes, and the ones whose deletion
	// by someone else was reported.
	quiet map[types.UID]time.Time
}

// New returns a Provider that manages Pods through client and starts its
// informer, which watches this provider's Pods (by the managed and
// provider labels) in its namespace. It does not wait for the informer's
// first list: calls do.
func New(client clientset.Interface, opts Options) (*Provider, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: no client", ErrInvalidOptions)
	}
	opts.Name = cmp.Or(opts.Name, DefaultName)
	opts.Namespace = cmp.Or(opts.Namespace, DefaultNamespace)
	opts.StopTimeout = cmp.Or(opts.StopTimeout, machines.DefaultStopTimeout)
	opts.RunAsUser = cmp.Or(opts.RunAsUser, DefaultRunAsUser)
	opts.ImagePullPolicy = cmp.Or(opts.ImagePullPolicy, corev1.PullIfNotPresent)
	opts.ProbePeriod = cmp.Or(opts.ProbePeriod, DefaultProbePeriod)
	if len(opts.Resources.Requests) == 0 && len(opts.Resources.Limits) == 0 {
		opts.Resources = DefaultResources()
	}
	switch {
	case len(validation.IsValidLabelValue(opts.Name)) > 0:
		return nil, fmt.Errorf("%w: Name %q is not a label value: %s", ErrInvalidOptions, opts.Name, strings.Join(validation.IsValidLabelValue(opts.Name), "; "))
	case len(validation.IsDNS1123Label(opts.Namespace)) > 0:
		return nil, fmt.Errorf("%w: Namespace %q is not a namespace name", ErrInvalidOptions, opts.Namespace)
	case opts.StopTimeout < 0 || opts.ProbePeriod < 0:
		return nil, fmt.Errorf("%w: negative StopTimeout or ProbePeriod", ErrInvalidOptions)
	case opts.RunAsUser < 0:
		return nil, fmt.Errorf("%w: RunAsUser %d", ErrInvalidOptions, opts.RunAsUser)
	}

	selector := labels.SelectorFromSet(labels.Set{machines.LabelManaged: "true", machines.LabelProvider: opts.Name}).String()
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(opts.Namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	pods := factory.Core().V1().Pods()
	p := &Provider{
		opts:     opts,
		cs:       client,
		informer: pods.Informer(),
		lister:   pods.Lister().Pods(opts.Namespace),
		done:     make(chan struct{}),
		changed:  make(chan struct{}),
		quiet:    make(map[types.UID]time.Time),
	}
	if err := p.informer.SetTransform(stripManagedFields); err != nil {
		return nil, err
	}
	if _, err := p.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { p.notify() },
		UpdateFunc: p.updated,
		DeleteFunc: p.deleted,
	}); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	go func() {
		defer close(p.done)
		p.informer.RunWithContext(ctx)
	}()
	return p, nil
}

// stripManagedFields drops what the cache never reads and would hold for
// every Pod.
func stripManagedFields(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		pod.ManagedFields = nil
	}
	return obj, nil
}

// Close stops the informer; the Pods keep running, and a new Provider with
// the same Name adopts them. Calls after Close fail with
// machines.ErrClosed. It is idempotent.
func (p *Provider) Close() error {
	p.stop()
	<-p.done
	return nil
}

func (p *Provider) closed() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// notify wakes the calls waiting for the cache to change.
func (p *Provider) notify() {
	p.mu.Lock()
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// changes returns a channel closed at the cache's next change.
func (p *Provider) changes() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.changed
}

// synced waits for the informer's first list.
func (p *Provider) synced(ctx context.Context) error {
	if p.closed() {
		return machines.ErrClosed
	}
	if p.informer.HasSynced() {
		return nil
	}
	if !cache.WaitForCacheSync(ctx.Done(), p.informer.HasSynced) {
		if p.closed() {
			return machines.ErrClosed
		}
		return fmt.Errorf("kubernetes: listing the Pods of %s: %w", p.opts.Namespace, context.Cause(ctx))
	}
	return nil
}

// waitCache calls check on the cache now and after every change until it
// reports done or an error, or ctx ends (its cause is returned, wrapped
// with check's last words).
func (p *Provider) waitCache(ctx context.Context, check func() (done bool, last string, err error)) error {
	for {
		changed := p.changes() // before the check: no change is missed
		done, last, err := check()
		if err != nil || done {
			return err
		}
		select {
		case <-changed:
		case <-p.done:
			return machines.ErrClosed
		case <-ctx.Done():
			if last != "" {
				return fmt.Errorf("%w (%s)", context.Cause(ctx), last)
			}
			return context.Cause(ctx)
		}
	}
}

var nameUnsafe = regexp.MustCompile(`[^a-z0-9-]+`)

// podName returns a readable unique name from the spec's Name:
// fleetkit-python-1-0-1a2b3c.
func podName(spec machines.Spec) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	base := nameUnsafe.ReplaceAllString(strings.ToLower("fleetkit-"+cmp.Or(spec.Name, "machine")), "-")
	if len(base) > 48 {
		base = base[:48]
	}
	return strings.TrimRight(base, "-") + "-" + hex.EncodeToString(b[:])
}

// validateLabels checks that the spec's labels can be Kubernetes labels.
func validateLabels(l map[string]string) error {
	for k, v := range l {
		if errs := validation.IsQualifiedName(k); len(errs) > 0 {
			return fmt.Errorf("%w: label key %q: %s", machines.ErrInvalidSpec, k, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return fmt.Errorf("%w: label %s value %q: %s", machines.ErrInvalidSpec, k, v, strings.Join(errs, "; "))
		}
	}
	return nil
}

// pod returns the Pod of a machine of spec: one container, the provider's
// labels, a readiness probe on the health path (TCP without one), the
// provider's resources, and locked down — non-root, read-only root
// filesystem, no privilege escalation, no capabilities, the runtime's
// seccomp profile, no service account token.
func (p *Provider) pod(spec machines.Spec, name string, created time.Time) *corev1.Pod {
	port := cmp.Or(spec.Port, machines.DefaultPort)
	args, env := spec.Expand(net.JoinHostPort("0.0.0.0", strconv.Itoa(port)))
	probe := corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(int32(port))}}
	if spec.HealthPath != "" {
		probe = corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: spec.HealthPath, Port: intstr.FromInt32(int32(port))}}
	}
	c := corev1.Container{
		Name:            ContainerName,
		Image:           spec.Image,
		Args:            args,
		ImagePullPolicy: p.opts.ImagePullPolicy,
		Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: int32(port), Protocol: corev1.ProtocolTCP}},
		ReadinessProbe: &corev1.Probe{
			ProbeHandler:     probe,
			PeriodSeconds:    int32(max(1, p.opts.ProbePeriod/time.Second)),
			TimeoutSeconds:   1,
			SuccessThreshold: 1,
			FailureThreshold: 3,
		},
		Resources: p.opts.Resources,
		SecurityContext: &corev1.SecurityContext{
			RunAsNonRoot:             new(true),
			RunAsUser:                new(p.opts.RunAsUser),
			RunAsGroup:               new(p.opts.RunAsUser),
			ReadOnlyRootFilesystem:   new(true),
			AllowPrivilegeEscalation: new(false),
			Privileged:               new(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		c.Env = append(c.Env, corev1.EnvVar{Name: k, Value: env[k]})
	}
	grace := int64((p.opts.StopTimeout + time.Second - 1) / time.Second)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   p.opts.Namespace,
			Labels:      spec.MachineLabels(p.opts.Name, port),
			Annotations: map[string]string{AnnotationCreated: created.UTC().Format(time.RFC3339Nano)},
		},
		Spec: corev1.PodSpec{
			Containers:                    []corev1.Container{c},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: &grace,
			ServiceAccountName:            p.opts.ServiceAccountName,
			AutomountServiceAccountToken:  new(false),
			EnableServiceLinks:            new(false),
		},
	}
}

// Create creates a Pod of spec.Image and returns once the kubelet reports
// it Ready — its readiness probe on spec.HealthPath answered 200 (or, with
// no path, its port accepted a connection) — watching, not polling. A Pod
// whose image cannot be had or does not fit the spec fails at once with
// machines.ErrInvalidSpec; one whose container exits, with
// machines.ErrExited (and the container's last log lines). Whatever fails,
// the Pod is deleted before Create returns. The address is the Pod IP and
// the service port.
func (p *Provider) Create(ctx context.Context, spec machines.Spec) (machines.Machine, error) {
	if err := spec.Validate(); err != nil {
		return machines.Machine{}, err
	}
	if spec.Image == "" {
		return machines.Machine{}, fmt.Errorf("%w: image is empty", machines.ErrInvalidSpec)
	}
	if err := validateLabels(spec.Labels); err != nil {
		return machines.Machine{}, err
	}
	if err := p.synced(ctx); err != nil {
		return machines.Machine{}, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, spec.Timeout(), machines.ErrStartTimeout)
	defer cancel()

	name := podName(spec)
	_, err := p.cs.CoreV1().Pods(p.opts.Namespace).Create(ctx, p.pod(spec, name, time.Now()), metav1.CreateOptions{})
	switch {
	case apierrors.IsInvalid(err):
		return machines.Machine{}, fmt.Errorf("%w: %v", machines.ErrInvalidSpec, err)
	case err != nil && ctx.Err() != nil:
		// The Pod may exist although the answer was lost: delete it by name.
		p.discard(name)
		return machines.Machine{}, fmt.Errorf("kubernetes: creating pod %s: %w", name, startErr(ctx, err))
	case err != nil:
		return machines.Machine{}, fmt.Errorf("kubernetes: creating pod %s: %w", name, err)
	}

	var ready *corev1.Pod
	seen := false
	err = p.waitCache(ctx, func() (bool, string, error) {
		pod, err := p.lister.Get(name)
		if apierrors.IsNotFound(err) && seen {
			return false, "", fmt.Errorf("%w: pod %s deleted while starting", machines.ErrExited, name)
		}
		if apierrors.IsNotFound(err) {
			return false, "pod " + name + " not in the cache yet", nil
		}
		seen = true
		if err != nil {
			return false, "", err
		}
		if pod.DeletionTimestamp != nil {
			return false, "", fmt.Errorf("%w: pod %s deleted while starting", machines.ErrExited, name)
		}
		if failed, invalid, reason := startFailure(pod); failed {
			if invalid {
				return false, "", fmt.Errorf("%w: pod %s (image %s): %s", machines.ErrInvalidSpec, name, spec.Image, reason)
			}
			return false, "", fmt.Errorf("%w: pod %s: %s%s", machines.ErrExited, name, reason, p.logs(name))
		}
		if m := machineOf(pod); m.State == machines.StateRunning && m.Reason == "" && m.Address != "" {
			ready = pod
			return true, "", nil
		}
		_, reason := state(pod)
		return false, "pod " + name + ": " + reason, nil
	})
	if err != nil {
		p.discard(name)
		return machines.Machine{}, fmt.Errorf("kubernetes: pod %s: %w", name, err)
	}
	return machineOf(ready), nil
}

// startErr turns the expiry of Create's deadline into ErrStartTimeout.
func startErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, machines.ErrStartTimeout) {
		return fmt.Errorf("%w: %v", machines.ErrStartTimeout, err)
	}
	return err
}

// logs returns the last lines the machine's container wrote (before its
// last restart, if it restarted) for an error message, or "".
func (p *Provider) logs(name string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pods := p.cs.CoreV1().Pods(p.opts.Namespace)
	tail := int64(20)
	var out []byte
	for _, previous := range []bool{false, true} {
		b, err := pods.GetLogs(name, &corev1.PodLogOptions{Container: ContainerName, TailLines: &tail, Previous: previous, LimitBytes: new(int64(16 << 10))}).DoRaw(ctx)
		if err == nil && len(bytes.TrimSpace(b)) > 0 {
			out = b
			break
		}
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		return "; output:\n" + s
	}
	return ""
}

// discard deletes a Pod Create gave up on and waits until it is gone, with
// a context of its own since Create's may have ended.
func (p *Provider) discard(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pod, err := p.cs.CoreV1().Pods(p.opts.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return // never created, or gone
	}
	_ = p.delete(ctx, pod, 1)
}

// Remove deletes the machine's Pod with the provider's grace period and
// returns once it is gone: the kubelet has stopped it and the API server
// no longer has it. A Pod that is not this provider's is ErrNotFound, even
// if it exists. When ctx ends first, the Pod is deleted again with a grace
// period of one second and Remove returns ctx's error.
func (p *Provider) Remove(ctx context.Context, id string) error {
	if p.closed() {
		return machines.ErrClosed
	}
	pod, err := p.cs.CoreV1().Pods(p.opts.Namespace).Get(ctx, id, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("%w: %s", machines.ErrNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("kubernetes: getting pod %s: %w", id, err)
	}
	if pod.Labels[machines.LabelManaged] != "true" || pod.Labels[machines.LabelProvider] != p.opts.Name {
		return fmt.Errorf("%w: %s is not a pod of provider %q", machines.ErrNotFound, id, p.opts.Name)
	}
	grace := int64((p.opts.StopTimeout + time.Second - 1) / time.Second)
	err = p.delete(ctx, pod, grace)
	if err != nil && ctx.Err() != nil {
		hurry, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if p.delete(hurry, pod, 1) == nil {
			return fmt.Errorf("kubernetes: removing %s: %w (deleted with a grace period of 1s)", id, ctx.Err())
		}
	}
	if err != nil {
		return fmt.Errorf("kubernetes: removing %s: %w", id, err)
	}
	return nil
}

// delete deletes pod (this UID only) with grace seconds and waits until
// the API server no longer has it and the informer has seen it go, so
// that List agrees with the caller.
func (p *Provider) delete(ctx context.Context, pod *corev1.Pod, grace int64) error {
	p.silence(pod.UID)
	pods := p.cs.CoreV1().Pods(p.opts.Namespace)
	err := pods.Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace, Preconditions: metav1.NewUIDPreconditions(string(pod.UID))})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("deleting pod %s: %w", pod.Name, err)
	}
	if err := p.waitGone(ctx, pod); err != nil {
		return err
	}
	return p.waitCache(ctx, func() (bool, string, error) {
		cached, err := p.lister.Get(pod.Name)
		return err != nil || cached.UID != pod.UID, "the informer still has pod " + pod.Name, nil
	})
}

// waitGone watches the Pod from the version seen until the API server
// deletes it (the kubelet confirmed its containers stopped).
func (p *Provider) waitGone(ctx context.Context, pod *corev1.Pod) error {
	pods := p.cs.CoreV1().Pods(p.opts.Namespace)
	sel := fields.OneTermEqualSelector("metadata.name", pod.Name).String()
	rv := pod.ResourceVersion
	for {
		w, err := pods.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: rv})
		if err != nil {
			return fmt.Errorf("watching pod %s: %w", pod.Name, err)
		}
		gone, restart := false, false
		for ev := range w.ResultChan() {
			switch ev.Type {
			case watch.Deleted:
				gone = true
			case watch.Added, watch.Modified:
				if cur, ok := ev.Object.(*corev1.Pod); ok {
					gone = cur.UID != pod.UID
				}
			case watch.Error:
				restart = true // e.g. 410 Gone: the version is too old; look again
			}
			if gone || restart {
				break
			}
		}
		w.Stop()
		if gone {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("waiting for pod %s to go: %w", pod.Name, context.Cause(ctx))
		}
		// The watch ended (a server timeout or an error event): start again
		// from the current state.
		cur, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && cur.UID != pod.UID) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("getting pod %s: %w", pod.Name, err)
		}
		rv = cur.ResourceVersion
	}
}

// silence makes Watch report nothing more of the Pod, and reports whether
// it was already so. Entries older than ten minutes are dropped, the
// Pods long gone.
func (p *Provider) silence(uid types.UID) bool {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, at := range p.quiet {
		if now.Sub(at) > 10*time.Minute {
			delete(p.quiet, k)
		}
	}
	_, was := p.quiet[uid]
	if !was {
		p.quiet[uid] = now
	}
	return was
}

func (p *Provider) silenced(uid types.UID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.quiet[uid]
	return ok
}

// List returns the provider's machines that sel matches, from the
// informer's cache (its label index), oldest first: running ones, and ones
// that do not serve with the reason (a crash loop, a missing image, an
// eviction). It waits for the informer's first list.
func (p *Provider) List(ctx context.Context, sel machines.Selector) ([]machines.Machine, error) {
	if err := p.synced(ctx); err != nil {
		return nil, err
	}
	pods, err := p.lister.List(labels.SelectorFromSet(labels.Set(sel)))
	if err != nil {
		return nil, fmt.Errorf("kubernetes: listing pods: %w", err)
	}
	out := make([]machines.Machine, 0, len(pods))
	for _, pod := range pods {
		out = append(out, machineOf(pod))
	}
	slices.SortFunc(out, func(a, b machines.Machine) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Get returns the machine of Pod id from the informer's cache, as List
// would. A Pod that is not this provider's is ErrNotFound, even if it
// exists: the cache holds this provider's Pods only.
func (p *Provider) Get(ctx context.Context, id string) (machines.Machine, error) {
	if err := p.synced(ctx); err != nil {
		return machines.Machine{}, err
	}
	pod, err := p.lister.Get(id)
	if apierrors.IsNotFound(err) {
		return machines.Machine{}, fmt.Errorf("%w: %s", machines.ErrNotFound, id)
	}
	if err != nil {
		return machines.Machine{}, fmt.Errorf("kubernetes: getting pod %s: %w", id, err)
	}
	return machineOf(pod), nil
}

// Watch reports every machine whose container exits (a crash, an OOM
// kill: the kubelet restarts it, and each exit is reported once), whose Pod
// fails (evicted), or whose Pod is deleted by someone else than this
// value's Remove. It returns when ctx ends or the provider is closed.
func (p *Provider) Watch(ctx context.Context, fn func(machines.Event)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := p.events.Watch(ctx, fn)
	if p.closed() {
		return machines.ErrClosed
	}
	return err
}

// updated is the informer's update handler.
func (p *Provider) updated(oldObj, newObj any) {
	defer p.notify()
	old, ok1 := oldObj.(*corev1.Pod)
	pod, ok2 := newObj.(*corev1.Pod)
	if !ok1 || !ok2 || p.silenced(pod.UID) {
		return
	}
	if pod.DeletionTimestamp != nil {
		// Someone else deletes it: that is the event, not the exit of its
		// container on SIGTERM.
		p.deleted(pod)
		return
	}
	code, reason, ok := exitOf(old, pod)
	if !ok {
		return
	}
	p.publish(pod, code, reason, fmt.Errorf("kubernetes: pod %s: %s", pod.Name, reason))
}

// deleted is the informer's delete handler, and reports a deletion seen
// starting: once per Pod.
func (p *Provider) deleted(obj any) {
	defer p.notify()
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok || p.silence(pod.UID) {
		return
	}
	p.publish(pod, -1, "Deleted", fmt.Errorf("kubernetes: pod %s was deleted", pod.Name))
}

func (p *Provider) publish(pod *corev1.Pod, code int, reason string, err error) {
	m := machineOf(pod)
	m.State, m.Reason = machines.StateExited, reason
	p.events.Publish(machines.Event{Machine: m, ExitCode: code, Err: err, Time: time.Now()})
}
