// Package dag runs work over a dependency graph: each node runs once its
// dependencies have succeeded, up to a bounded number at a time. A node
// that fails fails its dependants (they do not run), not the run; cycles
// are reported as errors on the nodes in them; nodes discovered while
// running join the graph; and a run can be limited to what some targets
// need.
//
// A Graph is not safe for concurrent use; Run owns it until it returns.
package dag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Errors reported for nodes that did not run.
var (
	// ErrCycle is wrapped by the *CycleError of every node in a cycle.
	ErrCycle = errors.New("dag: dependency cycle")
	// ErrDependency is wrapped by the *DependencyError of a node whose
	// dependency failed.
	ErrDependency = errors.New("dag: dependency failed")
	// ErrMissing is wrapped by the *MissingError of a node whose dependency
	// never joined the graph.
	ErrMissing = errors.New("dag: missing dependency")
	// ErrDuplicate is returned by Add for an ID already in the graph.
	ErrDuplicate = errors.New("dag: duplicate node")
)

// CycleError reports a node that is part of a dependency cycle.
type CycleError[K cmp.Ordered] struct {
	Cycle []K // the nodes of the cycle, in dependency order
}

func (e *CycleError[K]) Error() string {
	parts := make([]string, 0, len(e.Cycle)+1)
	for _, k := range e.Cycle {
		parts = append(parts, fmt.Sprint(k))
	}
	parts = append(parts, fmt.Sprint(e.Cycle[0]))
	return fmt.Sprintf("%v: %s", ErrCycle, strings.Join(parts, " → "))
}

func (e *CycleError[K]) Unwrap() error { return ErrCycle }

// DependencyError reports a node that did not run because Dep failed.
type DependencyError[K cmp.Ordered] struct {
	Dep K
	Err error // Dep's error
}

func (e *DependencyError[K]) Error() string {
	return fmt.Sprintf("dag: dependency %v failed: %v", e.Dep, e.Err)
}

// Unwrap returns ErrDependency and the dependency's error, so errors.Is
// finds either.
func (e *DependencyError[K]) Unwrap() []error { return []error{ErrDependency, e.Err} }

// MissingError reports a node whose dependency is not in the graph.
type MissingError[K cmp.Ordered] struct {
	Dep K
}

func (e *MissingError[K]) Error() string {
	return fmt.Sprintf("%v: %v is not in the graph", ErrMissing, e.Dep)
}

func (e *MissingError[K]) Unwrap() error { return ErrMissing }

// Node is a node and the IDs it depends on.
type Node[K cmp.Ordered] struct {
	ID   K
	Deps []K
}

// Graph is a set of nodes. The zero value is empty and ready to use.
type Graph[K cmp.Ordered] struct {
	nodes map[K][]K // node → its dependencies
	order []K       // insertion order, for deterministic scheduling
}

// Add adds a node. Its dependencies need not be in the graph yet.
func (g *Graph[K]) Add(id K, deps ...K) error {
	if g.nodes == nil {
		g.nodes = make(map[K][]K)
	}
	if _, ok := g.nodes[id]; ok {
		return fmt.Errorf("%w: %v", ErrDuplicate, id)
	}
	g.nodes[id] = slices.Clone(deps)
	g.order = append(g.order, id)
	return nil
}

// Len returns the number of nodes.
func (g *Graph[K]) Len() int { return len(g.order) }

// Func does the work of one node. It may return nodes it discovered; they
// join the graph (IDs already present are ignored) and run when needed.
// What a failing node discovered is ignored.
type Func[K cmp.Ordered] func(ctx context.Context, id K) (discovered []Node[K], err error)

// Options tunes Run.
type Options[K cmp.Ordered] struct {
	// Parallelism bounds the nodes running at once; 0 means 4.
	Parallelism int
	// Targets, when set, limits the run to these nodes and what they
	// depend on, transitively. When a needed node depends on a node that is
	// not in the graph and nothing else can run, the run widens to every
	// node, since any of them may discover it.
	Targets []K
}

// Run runs fn for the graph's nodes and returns every considered node's
// outcome: nil for success, fn's error, or a *CycleError, *DependencyError,
// *MissingError or ctx's error for a node that did not run. The error is
// non-nil only for bad options (an unknown target). After ctx is done no
// node starts; running ones are waited for.
func (g *Graph[K]) Run(ctx context.Context, opts Options[K], fn Func[K]) (map[K]error, error) {
	for _, t := range opts.Targets {
		if _, ok := g.nodes[t]; !ok {
			return nil, fmt.Errorf("dag: unknown target %v", t)
		}
	}
	if g.nodes == nil {
		g.nodes = make(map[K][]K)
	}
	r := &run[K]{
		g:       g,
		fn:      fn,
		par:     cmp.Or(opts.Parallelism, 4),
		targets: opts.Targets,
		results: make(map[K]error),
		started: make(map[K]bool),
		doneCh:  make(chan done[K]),
	}
	r.loop(ctx)
	return r.results, nil
}

type done[K cmp.Ordered] struct {
	id         K
	discovered []Node[K]
	err        error
}

// run is the state of one Run; only its loop goroutine touches it.
type run[K cmp.Ordered] struct {
	g       *Graph[K]
	fn      Func[K]
	par     int
	targets []K
	results map[K]error // finished nodes (ran or not)
	started map[K]bool  // nodes handed to a worker
	running int
	widened bool // the run went beyond the targets to discover nodes
	doneCh  chan done[K]
}

// waiting reports whether a needed node has not finished.
func (r *run[K]) waiting(needed map[K]bool) bool {
	for id := range needed {
		if _, fin := r.results[id]; !fin {
			return true
		}
	}
	return false
}

// unstartedOutside reports whether some node outside needed has not run.
func (r *run[K]) unstartedOutside(needed map[K]bool) bool {
	for _, id := range r.g.order {
		if _, fin := r.results[id]; !fin && !needed[id] && !r.started[id] {
			return true
		}
	}
	return false
}

func (r *run[K]) loop(ctx context.Context) {
	needed := r.needed()
	r.markCycles(needed)
	for {
		progress := true
		for progress {
			progress = false
			for _, id := range r.g.order {
				if !needed[id] || r.started[id] {
					continue
				}
				if _, fin := r.results[id]; fin {
					continue
				}
				switch err, ready := r.check(id); {
				case err != nil:
					r.results[id] = err
					progress = true
				case ready && ctx.Err() == nil && r.running < r.par:
					r.start(ctx, id)
				}
			}
		}
		if r.running == 0 {
			// Nothing runs and nothing can start. A node not needed by the
			// targets may yet discover a missing dependency: widen the run
			// to every node once before giving up.
			if ctx.Err() == nil && !r.widened && len(r.targets) > 0 && r.waiting(needed) && r.unstartedOutside(needed) {
				r.widened = true
				needed = r.needed()
				r.markCycles(needed)
				continue
			}
			// What is left waits for dependencies that never came, or was
			// cut off by ctx.
			left := make(map[K]error)
			for _, id := range r.g.order {
				if _, fin := r.results[id]; !fin && needed[id] {
					if err := ctx.Err(); err != nil {
						left[id] = err
					} else {
						left[id] = &MissingError[K]{Dep: r.missingDep(id)}
					}
				}
			}
			maps.Copy(r.results, left)
			return
		}
		d := <-r.doneCh
		r.running--
		r.results[d.id] = d.err
		if d.err != nil || len(d.discovered) == 0 {
			continue
		}
		joined := false
		for _, n := range d.discovered {
			if r.g.Add(n.ID, n.Deps...) == nil {
				joined = true
			}
		}
		if joined {
			needed = r.needed()
			r.markCycles(needed)
		}
	}
}

func (r *run[K]) start(ctx context.Context, id K) {
	r.started[id] = true
	r.running++
	go func() {
		disc, err := r.fn(ctx, id)
		r.doneCh <- done[K]{id: id, discovered: disc, err: err}
	}()
}

// check reports whether id can start, or the error that keeps it from ever
// running.
func (r *run[K]) check(id K) (error, bool) {
	ready := true
	for _, dep := range r.g.nodes[id] {
		err, fin := r.results[dep]
		switch {
		case fin && err != nil:
			return &DependencyError[K]{Dep: dep, Err: err}, false
		case !fin:
			ready = false
		}
	}
	return nil, ready
}

func (r *run[K]) missingDep(id K) K {
	for _, dep := range r.g.nodes[id] {
		if _, ok := r.g.nodes[dep]; !ok {
			return dep
		}
		if _, fin := r.results[dep]; !fin {
			return r.missingDep(dep)
		}
	}
	return id
}

// needed returns the nodes the run considers: all of them, or the targets
// and their transitive dependencies.
func (r *run[K]) needed() map[K]bool {
	need := make(map[K]bool, len(r.g.nodes))
	if len(r.targets) == 0 || r.widened {
		for id := range r.g.nodes {
			need[id] = true
		}
		return need
	}
	stack := slices.Clone(r.targets)
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if need[id] {
			continue
		}
		deps, ok := r.g.nodes[id]
		if !ok {
			continue
		}
		need[id] = true
		stack = append(stack, deps...)
	}
	return need
}

// markCycles finds the strongly connected components among the needed
// nodes that have not started (Tarjan's algorithm) and fails every node of
// a cycle with a *CycleError.
func (r *run[K]) markCycles(needed map[K]bool) {
	var (
		index   = make(map[K]int)
		low     = make(map[K]int)
		onStack = make(map[K]bool)
		stack   []K
		next    int
	)
	var visit func(v K)
	visit = func(v K) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range r.g.nodes[v] {
			if _, ok := r.g.nodes[w]; !ok || r.started[w] {
				continue
			}
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		var scc []K
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			scc = append(scc, w)
			if w == v {
				break
			}
		}
		if len(scc) == 1 && !slices.Contains(r.g.nodes[v], v) {
			return
		}
		slices.Reverse(scc)
		for _, w := range scc {
			if _, fin := r.results[w]; !fin {
				r.results[w] = &CycleError[K]{Cycle: rotate(scc, w)}
			}
		}
	}
	for _, id := range r.g.order {
		if _, seen := index[id]; !seen && needed[id] && !r.started[id] {
			visit(id)
		}
	}
}

// rotate returns cycle starting at first, so each node's error names the
// cycle from itself.
func rotate[K cmp.Ordered](cycle []K, first K) []K {
	i := slices.Index(cycle, first)
	return append(slices.Clone(cycle[i:]), cycle[:i]...)
}
