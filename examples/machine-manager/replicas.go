package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	clientset "k8s.io/client-go/kubernetes"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"

	"github.com/fleetkit/fleetkit/balancer"
	"github.com/fleetkit/fleetkit/rollout"
)

// replicas is the balancer as the manager sees it when the balancer runs
// as several replicas behind a Kubernetes Service: every change goes to
// every ready endpoint of the Service's EndpointSlices (on the named
// port), and what it reads back tells the reconciler where the replicas
// differ, so that a new or restarted replica is brought in step by the
// next reconcile. Its Generation changes when the set of replicas does,
// which wakes the manager at once. It is safe for concurrent use.
type replicas struct {
	lister discoverylisters.EndpointSliceNamespaceLister
	sel    labels.Selector
	port   string // the endpoints' port name
	secret string
	close  func() // stops the informer and waits for it

	// mu guards clients.
	mu      sync.Mutex
	clients map[string]*balancer.Client // by base URL
}

var (
	_ rollout.RouterReader     = (*replicas)(nil)
	_ rollout.RouterGeneration = (*replicas)(nil)
	_ rollout.EjectionReporter = (*replicas)(nil)
)

// errNoReplica: the Service has no ready endpoint.
var errNoReplica = errors.New("no ready balancer replica")

// newReplicas watches the EndpointSlices of Service service in ns until
// ctx is done or Close, and returns once its cache is filled.
func newReplicas(ctx context.Context, cs clientset.Interface, ns, service, port, secret string) (*replicas, error) {
	sel := labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: service})
	f := informers.NewSharedInformerFactoryWithOptions(cs, 10*time.Minute, informers.WithNamespace(ns))
	eps := f.Discovery().V1().EndpointSlices()
	ctx, cancel := context.WithCancel(ctx)
	r := &replicas{lister: eps.Lister().EndpointSlices(ns), sel: sel, port: port, secret: secret,
		clients: map[string]*balancer.Client{}, close: sync.OnceFunc(func() { cancel(); f.Shutdown() })}
	_ = eps.Informer() // registers it before Start
	f.Start(ctx.Done())
	for typ, ok := range f.WaitForCacheSync(ctx.Done()) {
		if !ok {
			r.Close()
			return nil, fmt.Errorf("watching the EndpointSlices of Service %s/%s (%v): %w", ns, service, typ, context.Cause(ctx))
		}
	}
	return r, nil
}

// Close stops watching the EndpointSlices; it is idempotent.
func (r *replicas) Close() { r.close() }

// replica is one balancer replica: its admin API's base URL and client.
type replica struct {
	url string
	c   *balancer.Client
}

// targets returns the ready replicas, in a stable order.
func (r *replicas) targets() ([]replica, error) {
	list, err := r.lister.List(r.sel)
	if err != nil {
		return nil, err
	}
	var urls []string
	for _, s := range list {
		var port int32
		for _, p := range s.Ports {
			if p.Name != nil && *p.Name == r.port && p.Port != nil {
				port = *p.Port
			}
		}
		if port == 0 {
			continue
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready || len(e.Addresses) == 0 {
				continue
			}
			urls = append(urls, "http://"+net.JoinHostPort(e.Addresses[0], strconv.Itoa(int(port))))
		}
	}
	if len(urls) == 0 {
		return nil, errNoReplica
	}
	slices.Sort(urls)
	urls = slices.Compact(urls)
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]replica, 0, len(urls))
	for _, u := range urls {
		c, ok := r.clients[u]
		if !ok {
			if c, err = balancer.NewClient(u, r.secret, balancer.ClientOptions{}); err != nil {
				return nil, err
			}
			r.clients[u] = c
		}
		out = append(out, replica{u, c})
	}
	return out, nil
}

// each calls f on every replica of rs at once (i is the replica's index)
// and joins their errors.
func each(rs []replica, f func(i int, c *balancer.Client) error) error {
	errs := make([]error, len(rs))
	var wg sync.WaitGroup
	for i, r := range rs {
		wg.Go(func() {
			if err := f(i, r.c); err != nil {
				errs[i] = fmt.Errorf("balancer replica %s: %w", r.url, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// all calls f on every ready replica.
func (r *replicas) all(f func(i int, c *balancer.Client) error) error {
	rs, err := r.targets()
	if err != nil {
		return err
	}
	return each(rs, f)
}

func (r *replicas) AddBackend(ctx context.Context, lang, version, uri string) error {
	return r.all(func(_ int, c *balancer.Client) error { return c.AddBackend(ctx, lang, version, uri) })
}

// RemoveBackend removes uri from every replica; it is ErrUnknownBackend
// only when no replica held it (a replica that lost it is in step).
func (r *replicas) RemoveBackend(ctx context.Context, uri string) error {
	var (
		mu      sync.Mutex
		unknown int
	)
	rs, err := r.targets()
	if err != nil {
		return err
	}
	err = each(rs, func(_ int, c *balancer.Client) error {
		err := c.RemoveBackend(ctx, uri)
		if errors.Is(err, balancer.ErrUnknownBackend) {
			mu.Lock()
			unknown++
			mu.Unlock()
			return nil
		}
		return err
	})
	if err == nil && unknown == len(rs) {
		return fmt.Errorf("%w: %s", balancer.ErrUnknownBackend, uri)
	}
	return err
}

func (r *replicas) SetRatio(ctx context.Context, lang string, ratio map[string]int) error {
	return r.all(func(_ int, c *balancer.Client) error { return c.SetRatio(ctx, lang, ratio) })
}

// Routes returns what the replicas agree on: a backend every replica
// holds under the same version has that version; one that some replica
// lacks, or holds under another version, has version "" (the reconciler
// adds it again everywhere, or removes it everywhere); the ratio is nil
// unless every replica has the same.
func (r *replicas) Routes(ctx context.Context, lang string) (map[string]string, map[string]int, error) {
	type view struct {
		backends map[string]string
		ratio    map[string]int
	}
	var views []view
	rs, err := r.targets()
	if err != nil {
		return nil, nil, err
	}
	views = make([]view, len(rs))
	err = each(rs, func(i int, c *balancer.Client) error {
		b, ratio, err := c.Routes(ctx, lang)
		views[i] = view{b, ratio}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	backends := map[string]string{}
	for _, v := range views {
		for u := range v.backends {
			backends[u] = v.backends[u]
		}
	}
	for u, ver := range backends {
		for _, v := range views {
			if got, ok := v.backends[u]; !ok || got != ver {
				backends[u] = ""
				break
			}
		}
	}
	ratio := views[0].ratio
	for _, v := range views[1:] {
		if !sameRatio(v.ratio, ratio) {
			ratio = nil
			break
		}
	}
	return backends, ratio, nil
}

// Generation is the replicas and each one's generation: it changes when a
// replica comes, goes or changes.
func (r *replicas) Generation(ctx context.Context) (string, error) {
	rs, err := r.targets()
	if err != nil {
		return "", err
	}
	gens := make([]string, len(rs))
	err = each(rs, func(i int, c *balancer.Client) error {
		g, err := c.Generation(ctx)
		gens[i] = rs[i].url + "=" + g
		return err
	})
	return strings.Join(gens, ","), err
}

// EjectedBackends is every replica's ejections (the latest return time of
// each backend).
func (r *replicas) EjectedBackends(ctx context.Context) (map[string]time.Time, error) {
	var mu sync.Mutex
	out := map[string]time.Time{}
	err := r.all(func(_ int, c *balancer.Client) error {
		ej, err := c.EjectedBackends(ctx)
		mu.Lock()
		defer mu.Unlock()
		for u, t := range ej {
			if t.After(out[u]) || out[u].IsZero() {
				out[u] = t
			}
		}
		return err
	})
	return out, err
}

// sameRatio is maps.Equal (the package's tests declare a func maps).
func sameRatio(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
