package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/internal/reconcile"
)

// indexInstance indexes the cached objects by their instance label.
const indexInstance = "instance"

// resource is one kind of object the agent applies (or, for Pods, only
// watches): its cache and its calls.
type resource struct {
	kind     string
	informer cache.SharedIndexInformer
	apply    func(ctx context.Context, name string, body []byte, opts metav1.PatchOptions) (metav1.Object, error)
	del      func(ctx context.Context, name string, opts metav1.DeleteOptions) error
}

// newResources builds the informers of the agent's objects: its namespace,
// its kind, its label.
func (a *Agent) newResources() {
	ns := a.opts.Namespace
	sel := LabelManagedBy + "=" + ManagedBy + "," + LabelKind + "=" + a.opts.Kind.Name
	a.factory = informers.NewSharedInformerFactoryWithOptions(a.kube, 0, informers.WithNamespace(ns),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = sel }))
	core, apps := a.kube.CoreV1(), a.kube.AppsV1()
	patch := func(f func(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (metav1.Object, error)) func(context.Context, string, []byte, metav1.PatchOptions) (metav1.Object, error) {
		return func(ctx context.Context, name string, body []byte, o metav1.PatchOptions) (metav1.Object, error) {
			return f(ctx, name, types.ApplyPatchType, body, o)
		}
	}
	a.resources = []*resource{
		{kind: "Secret", informer: a.factory.Core().V1().Secrets().Informer(),
			apply: patch(func(ctx context.Context, n string, pt types.PatchType, b []byte, o metav1.PatchOptions, s ...string) (metav1.Object, error) {
				return core.Secrets(ns).Patch(ctx, n, pt, b, o, s...)
			}), del: core.Secrets(ns).Delete},
		{kind: "ConfigMap", informer: a.factory.Core().V1().ConfigMaps().Informer(),
			apply: patch(func(ctx context.Context, n string, pt types.PatchType, b []byte, o metav1.PatchOptions, s ...string) (metav1.Object, error) {
				return core.ConfigMaps(ns).Patch(ctx, n, pt, b, o, s...)
			}), del: core.ConfigMaps(ns).Delete},
		{kind: "Service", informer: a.factory.Core().V1().Services().Informer(),
			apply: patch(func(ctx context.Context, n string, pt types.PatchType, b []byte, o metav1.PatchOptions, s ...string) (metav1.Object, error) {
				return core.Services(ns).Patch(ctx, n, pt, b, o, s...)
			}), del: core.Services(ns).Delete},
		{kind: "Deployment", informer: a.factory.Apps().V1().Deployments().Informer(),
			apply: patch(func(ctx context.Context, n string, pt types.PatchType, b []byte, o metav1.PatchOptions, s ...string) (metav1.Object, error) {
				return apps.Deployments(ns).Patch(ctx, n, pt, b, o, s...)
			}), del: apps.Deployments(ns).Delete},
	}
	a.pods = &resource{kind: "Pod", informer: a.factory.Core().V1().Pods().Informer()}
	for _, r := range append(slices.Clone(a.resources), a.pods) {
		_ = r.informer.AddIndexers(cache.Indexers{indexInstance: func(obj any) ([]string, error) {
			if m, err := metaOf(obj); err == nil && m.GetLabels()[LabelInstance] != "" {
				return []string{m.GetLabels()[LabelInstance]}, nil
			}
			return nil, nil
		}})
		applied := r != a.pods
		on := func(obj any) {
			if m, err := metaOf(obj); err == nil && m.GetLabels()[LabelInstance] != "" && applied {
				// An object changed or went: look at its instance
				// (this is how an object deleted by hand comes back).
				a.engine.Enqueue(m.GetLabels()[LabelInstance])
			}
			a.wake()
		}
		_, _ = r.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: on, UpdateFunc: func(_, obj any) { on(obj) }, DeleteFunc: on,
		})
	}
}

func metaOf(obj any) (metav1.Object, error) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	m, ok := obj.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("agent: %T is not an object", obj)
	}
	return m, nil
}

// cached returns the cached objects of an instance.
func (r *resource) cached(id string) []metav1.Object {
	objs, _ := r.informer.GetIndexer().ByIndex(indexInstance, id)
	out := make([]metav1.Object, 0, len(objs))
	for _, o := range objs {
		if m, err := metaOf(o); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// get returns the cached object named name, or nil.
func (r *resource) get(ns, name string) metav1.Object {
	obj, ok, _ := r.informer.GetIndexer().GetByKey(ns + "/" + name)
	if !ok {
		return nil
	}
	m, _ := metaOf(obj)
	return m
}

// observedIDs returns the instances that have objects in the caches.
func (a *Agent) observedIDs() []string {
	var ids []string
	for _, r := range append(slices.Clone(a.resources), a.pods) {
		ids = append(ids, r.informer.GetIndexer().ListIndexFuncValues(indexInstance)...)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func (a *Agent) resource(kind string) *resource {
	for _, r := range a.resources {
		if r.kind == kind {
			return r
		}
	}
	return nil
}

// apply server-side applies the objects of inst: the root Secret, then
// the others owned by it. An object is applied when the cache lacks it,
// holds another rendering of it (its hash annotation) or another owner,
// or when the instance's objects were last all applied more than Resync
// ago (which undoes edits by hand).
func (a *Agent) apply(ctx context.Context, inst Instance) error {
	name := a.objectName(inst.ID)
	if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
		return &refusedError{fmt.Errorf("instance id %q does not make a valid object name: %v", inst.ID, errs)}
	}
	objs, err := render(a.opts.Template, a.data(inst))
	if err != nil {
		return &refusedError{err}
	}
	a.mu.Lock()
	full := time.Since(a.fullApply[inst.ID]) >= a.opts.Resync
	a.mu.Unlock()

	var rootUID types.UID
	for i, o := range objs {
		r := a.resource(o.kind)
		if i > 0 {
			o.body["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{
				"apiVersion": "v1", "kind": "Secret", "name": name, "uid": string(rootUID), "controller": true,
			}}
		}
		hash, body, err := hashed(o.body)
		if err != nil {
			return &refusedError{err}
		}
		cur := r.get(a.opts.Namespace, o.name)
		if !full && cur != nil && cur.GetDeletionTimestamp() == nil && cur.GetAnnotations()[AnnotationHash] == hash {
			if i == 0 {
				rootUID = cur.GetUID()
			}
			continue
		}
		got, err := r.apply(ctx, o.name, body, metav1.PatchOptions{FieldManager: FieldManager, Force: new(true)})
		a.m.applies.WithLabelValues(o.kind, result(err)).Inc()
		switch {
		case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
			return &refusedError{fmt.Errorf("%s %s refused: %w", o.kind, o.name, err)}
		case err != nil:
			return fmt.Errorf("agent: applying %s %s: %w", o.kind, o.name, err)
		}
		if i == 0 {
			rootUID = got.GetUID()
		}
	}
	if full {
		a.mu.Lock()
		a.fullApply[inst.ID] = time.Now()
		a.mu.Unlock()
	}
	return nil
}

// hashed adds the hash of body (without the hash) as its annotation and
// returns the hash and the JSON to apply. The owner's uid is part of the
// hash: a child of a recreated root is applied again.
func hashed(body map[string]any) (string, []byte, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return "", nil, err
	}
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:16])
	meta := body["metadata"].(map[string]any)
	ann := map[string]any{}
	if m, ok := meta["annotations"].(map[string]any); ok {
		for k, v := range m {
			ann[k] = v
		}
	}
	ann[AnnotationHash] = hash
	meta["annotations"] = ann
	b, err = json.Marshal(body)
	return hash, b, err
}

// remove deletes every object of an instance the agent no longer runs:
// the root Secret and, explicitly, the others (an API server without a
// garbage collector would keep them). The Deployment's ReplicaSets and
// Pods go with it (background propagation).
func (a *Agent) remove(ctx context.Context, id string) error {
	a.mu.Lock()
	delete(a.fullApply, id)
	delete(a.failed, id)
	a.mu.Unlock()
	var g errgroup.Group
	for _, r := range a.resources {
		for _, o := range r.cached(id) {
			if o.GetDeletionTimestamp() != nil {
				continue
			}
			g.Go(func() error {
				err := r.del(ctx, o.GetName(), metav1.DeleteOptions{
					PropagationPolicy: new(metav1.DeletePropagationBackground),
					Preconditions:     &metav1.Preconditions{UID: new(o.GetUID())},
				})
				a.m.deletes.WithLabelValues(r.kind, result(err)).Inc()
				if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
					return fmt.Errorf("agent: deleting %s %s: %w", r.kind, o.GetName(), err)
				}
				return nil
			})
		}
	}
	return g.Wait()
}

// status is what the agent observes of an instance, ok false when it has
// no object of it (nor a reason it failed).
func (a *Agent) status(id string, failed string) (fleet.InstanceReport, bool) {
	var deps []*appsv1.Deployment
	has := false
	for _, r := range a.resources {
		for _, o := range r.cached(id) {
			has = true
			if d, ok := o.(*appsv1.Deployment); ok {
				deps = append(deps, d)
			}
		}
	}
	pods := a.pods.cached(id)
	if failed != "" {
		return fleet.InstanceReport{Phase: fleet.PhaseFailed, Reason: failed}, true
	}
	if !has && len(pods) == 0 {
		return fleet.InstanceReport{}, false
	}
	name := a.objectName(id)
	ready := len(deps) > 0 && a.resource("Secret").get(a.opts.Namespace, name) != nil
	for _, d := range deps {
		for _, c := range d.Status.Conditions {
			if c.Type == appsv1.DeploymentProgressing && c.Status == corev1.ConditionFalse {
				return fleet.InstanceReport{Phase: fleet.PhaseFailed, Reason: fmt.Sprintf("Deployment %s: %s: %s", d.Name, c.Reason, c.Message)}, true
			}
		}
		if d.DeletionTimestamp != nil || d.Status.AvailableReplicas < 1 {
			ready = false
		}
	}
	if !ready {
		if reason := podFailure(pods); reason != "" {
			return fleet.InstanceReport{Phase: fleet.PhaseFailed, Reason: reason}, true
		}
		return fleet.InstanceReport{Phase: fleet.PhaseInstalling}, true
	}
	host := a.host(name)
	if host == "" {
		return fleet.InstanceReport{Phase: fleet.PhaseInstalling}, true
	}
	return fleet.InstanceReport{Phase: fleet.PhaseReady, Host: host}, true
}

// host is the address of the instance's Service, "" until it has one.
func (a *Agent) host(name string) string {
	o := a.resource("Service").get(a.opts.Namespace, name)
	svc, ok := o.(*corev1.Service)
	if !ok || svc.DeletionTimestamp != nil || len(svc.Spec.Ports) == 0 {
		return ""
	}
	port := svc.Spec.Ports[0].Port
	if a.opts.HostMode == HostClusterIP {
		ip := svc.Spec.ClusterIP
		if ip == "" || ip == corev1.ClusterIPNone {
			return ""
		}
		return fmt.Sprintf("%s:%d", ip, port)
	}
	return fmt.Sprintf("%s.%s.svc:%d", name, a.opts.Namespace, port)
}

// podFailure names a Pod that cannot start without someone's help (its
// image cannot be had, its configuration is wrong), or "".
func podFailure(pods []metav1.Object) string {
	for _, o := range pods {
		p, ok := o.(*corev1.Pod)
		if !ok {
			continue
		}
		for _, c := range p.Status.ContainerStatuses {
			if w := c.State.Waiting; w != nil {
				switch w.Reason {
				case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError":
					return fmt.Sprintf("Pod %s: %s: %s", p.Name, w.Reason, w.Message)
				}
			}
		}
	}
	return ""
}

// report is the complete status report: every instance with objects, and
// the desired ones that failed before they had any.
func (a *Agent) report() map[string]fleet.InstanceReport {
	a.mu.Lock()
	failed := make(map[string]string, len(a.failed))
	for id, r := range a.failed {
		failed[id] = r
	}
	a.mu.Unlock()
	ids := a.observedIDs()
	for id := range failed {
		ids = append(ids, id)
	}
	out := make(map[string]fleet.InstanceReport, len(ids))
	for _, id := range ids {
		if st, ok := a.status(id, failed[id]); ok {
			out[id] = st
		}
	}
	return out
}

// reportLoop sends the heartbeat and the complete report every Heartbeat,
// and the report whenever it changed (at most one per reportGap); a
// failed send is retried with backoff.
func (a *Agent) reportLoop(ctx context.Context) error {
	tick := time.NewTicker(a.opts.Heartbeat)
	defer tick.Stop()
	retry := time.NewTimer(0) // the first heartbeat and report at once
	defer retry.Stop()
	var (
		last     map[string]fleet.InstanceReport
		sent     time.Time
		bo       backoff
		beatDue  = true
		forceDue = true
		// backingOff is set after a failed send until the retry is due:
		// changes meanwhile wait for it (the next report has them all).
		backingOff bool
	)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			beatDue, forceDue = true, true
		case <-a.poke:
			if backingOff {
				continue
			}
		case <-retry.C:
		}
		backingOff = false
		if gap := reportGap - time.Since(sent); gap > 0 && !reconcile.Sleep(ctx, gap) {
			return ctx.Err()
		}
		var failed error
		if beatDue {
			err := a.cp.heartbeat(ctx, Heartbeat{Phase: "ready", Capacity: Capacity{Units: a.opts.Capacity}, AgentVersion: a.opts.Version})
			a.m.requests.WithLabelValues("heartbeat", result(err)).Inc()
			if err == nil {
				beatDue = false
				a.m.lastHeartbeat.SetToCurrentTime()
			}
			failed = errors.Join(failed, err)
		}
		r := a.report()
		if forceDue || !mapsEqual(r, last) {
			sent = time.Now()
			err := a.cp.report(ctx, r)
			a.m.requests.WithLabelValues("report", result(err)).Inc()
			if err == nil {
				last, forceDue = r, false
				a.m.setPhases(r)
			} else {
				forceDue = true
			}
			failed = errors.Join(failed, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if failed != nil {
			d := bo.next(200*time.Millisecond, a.opts.Heartbeat)
			a.log.Info("reporting to the control plane failed; retrying", "err", failed, "in", d)
			retry.Reset(d)
			backingOff = true
		} else {
			bo = 0
		}
	}
}

// mapsEqual is maps.Equal, but nil (no report sent yet) differs from
// an empty report.
func mapsEqual(a, b map[string]fleet.InstanceReport) bool {
	return (a == nil) == (b == nil) && maps.Equal(a, b)
}
