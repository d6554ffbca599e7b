package dag

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Errors reported for nodes that did not run. Their messages name the
// nodes involved.
var (
	// ErrCycle is wrapped by the error of every node in a cycle.
	ErrCycle = errors.New("dag: dependency cycle")
	// ErrDependency is wrapped, with the dependency's own error, by the
	// error of a node whose dependency failed.
	ErrDependency = errors.New("dag: dependency failed")
	// ErrMissing is wrapped by the error of a node whose dependency
	// never joined the graph.
	ErrMissing = errors.New("dag: missing dependency")
	// ErrDuplicate is returned by Add for an ID already in the graph.
	ErrDuplicate = errors.New("dag: duplicate node")
)

// cycleError reports a node that is part of a dependency cycle.
type cycleError[K cmp.Ordered] struct {
	// Cycle holds the nodes of the cycle, in dependency order. The nodes
	// of one cycle share it, so a long cycle costs O(its length).
	Cycle []K
	// Node is the node the error is reported on; Error names the cycle
	// from it.
	Node K
}

func (e *cycleError[K]) Error() string {
	cycle := rotate(e.Cycle, e.Node)
	parts := make([]string, 0, len(cycle)+1)
	for _, k := range cycle {
		parts = append(parts, fmt.Sprint(k))
	}
	parts = append(parts, fmt.Sprint(cycle[0]))
	return fmt.Sprintf("%v: %s", ErrCycle, strings.Join(parts, " → "))
}

func (e *cycleError[K]) Unwrap() error { return ErrCycle }

// dependencyError reports a node that did not run because Dep failed.
type dependencyError[K cmp.Ordered] struct {
	Dep K
	Err error // Dep's error
}

func (e *dependencyError[K]) Error() string {
	return fmt.Sprintf("dag: dependency %v failed: %v", e.Dep, e.Err)
}

// Unwrap returns ErrDependency and the dependency's error, so errors.Is
// finds either.
func (e *dependencyError[K]) Unwrap() []error { return []error{ErrDependency, e.Err} }

// missingError reports a node whose dependency is not in the graph.
type missingError[K cmp.Ordered] struct {
	Dep K
}

func (e *missingError[K]) Error() string {
	return fmt.Sprintf("%v: %v is not in the graph", ErrMissing, e.Dep)
}

func (e *missingError[K]) Unwrap() error { return ErrMissing }

// Node is a node and the IDs it depends on.
type Node[K cmp.Ordered] struct {
	ID   K
	Deps []K
	// Target, on a discovered node, makes it a target of a run limited
	// to targets: it and what it depends on run. Add ignores it.
	Target bool
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

// Func does the work of one node. It may return nodes it discovered, with
// or without an error; they join the graph (IDs already present are
// ignored) and run when needed. A discovered node that depends on a
// failed node fails with it.
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
// outcome: nil for success, fn's error, or, for a node that did not run,
// an error wrapping ErrCycle, ErrDependency or ErrMissing, or ctx's
// error. The error is non-nil only for bad options (an unknown target).
// After ctx is done no node starts; running ones are waited for.
func (g *Graph[K]) Run(ctx context.Context, opts Options[K], fn Func[K]) (map[K]error, error) {
	for _, t := range opts.Targets {
		if _, ok := g.nodes[t]; !ok {
			return nil, fmt.Errorf("dag: unknown target %v", t)
		}
	}
	r := &run[K]{
		g:       g,
		fn:      fn,
		par:     cmp.Or(opts.Parallelism, 4),
		limited: len(opts.Targets) > 0,
		state:   make(map[K]*state[K], len(g.order)),
		rdeps:   make(map[K][]K),
		results: make(map[K]error),
		doneCh:  make(chan done[K]),
	}
	for _, id := range g.order {
		r.join(id, g.nodes[id])
	}
	if r.limited {
		for _, t := range opts.Targets {
			r.need(t)
		}
	} else {
		r.needAll()
	}
	r.loop(ctx)
	return r.results, nil
}

type done[K cmp.Ordered] struct {
	id         K
	discovered []Node[K]
	err        error
}

// state is one node's progress in a run.
type state[K cmp.Ordered] struct {
	deps     []K  // distinct dependencies
	waiting  int  // dependencies that have not succeeded yet
	needed   bool // the run considers it
	queued   bool // in the ready queue, or started
	finished bool
}

// run is the state of one Run; only its loop goroutine touches it.
type run[K cmp.Ordered] struct {
	g       *Graph[K]
	fn      Func[K]
	par     int
	limited bool // the run is limited to targets and has not widened
	state   map[K]*state[K]
	// rdeps maps an ID to the nodes that depend on it, including IDs not
	// (yet) in the graph.
	rdeps   map[K][]K
	results map[K]error // finished nodes that were needed
	ready   []K         // needed nodes whose dependencies all succeeded
	running int
	doneCh  chan done[K]
}

// join adds a node to the run's bookkeeping: O(its edges).
func (r *run[K]) join(id K, deps []K) {
	s := &state[K]{}
	for _, d := range deps {
		if slices.Contains(s.deps, d) {
			continue
		}
		s.deps = append(s.deps, d)
		r.rdeps[d] = append(r.rdeps[d], id)
		if ds, ok := r.state[d]; !ok || !ds.finished || r.failed(d) {
			s.waiting++
		}
	}
	r.state[id] = s
}

// failed reports whether a finished node failed; a node finished without
// being needed holds no result and counts as not failed.
func (r *run[K]) failed(id K) bool { return r.results[id] != nil }

// need marks id and, transitively, its dependencies in the graph as
// needed. Each node is marked once, so all calls together are O(N+E).
func (r *run[K]) need(id K) {
	stack := []K{id}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		s, ok := r.state[id]
		if !ok || s.needed {
			continue
		}
		s.needed = true
		r.consider(id, s)
		for _, d := range s.deps {
			if ds, ok := r.state[d]; ok && !ds.needed {
				stack = append(stack, d)
			}
		}
	}
}

// needAll marks every node as needed.
func (r *run[K]) needAll() {
	r.limited = false
	for _, id := range r.g.order {
		if s := r.state[id]; !s.needed {
			s.needed = true
			r.consider(id, s)
		}
	}
}

// consider queues a newly needed node that can run, or fails it when a
// dependency already failed.
func (r *run[K]) consider(id K, s *state[K]) {
	if s.finished || s.queued {
		return
	}
	for _, d := range s.deps {
		if err := r.results[d]; err != nil {
			r.finish(id, &dependencyError[K]{Dep: d, Err: err})
			return
		}
	}
	if s.waiting == 0 {
		s.queued = true
		r.ready = append(r.ready, id)
	}
}

// outcome is a finished node's result on its way to its dependants.
type outcome[K cmp.Ordered] struct {
	id  K
	err error
}

// finish records a node's outcome and passes it on to its dependants.
func (r *run[K]) finish(id K, err error) {
	r.settle(id, err)
	r.pass([]outcome[K]{{id, err}})
}

// settle records a node's outcome.
func (r *run[K]) settle(id K, err error) {
	s := r.state[id]
	s.finished = true
	if s.needed {
		r.results[id] = err
	}
}

// pass hands outcomes to dependants: success counts down their waiting,
// failure fails the needed ones, whose failure is passed on in turn.
// Iterative, so long chains of failures do not grow the stack.
func (r *run[K]) pass(stack []outcome[K]) {
	for len(stack) > 0 {
		o := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, dep := range r.rdeps[o.id] {
			ds := r.state[dep]
			if ds.finished {
				continue
			}
			if o.err != nil {
				if ds.needed && !ds.queued {
					err := &dependencyError[K]{Dep: o.id, Err: o.err}
					r.settle(dep, err)
					stack = append(stack, outcome[K]{dep, err})
				}
				continue
			}
			ds.waiting--
			if ds.waiting == 0 && ds.needed && !ds.queued {
				ds.queued = true
				r.ready = append(r.ready, dep)
			}
		}
	}
}

// discover adds the nodes a finished node found. A new node is needed when
// the run is not limited, when it is a target, or when a needed node
// waits for it.
func (r *run[K]) discover(nodes []Node[K]) {
	for _, n := range nodes {
		if r.g.Add(n.ID, n.Deps...) != nil {
			continue
		}
		r.join(n.ID, n.Deps)
		want := !r.limited || n.Target
		for _, dep := range r.rdeps[n.ID] {
			if !want && r.state[dep].needed {
				want = true
			}
		}
		if want {
			r.need(n.ID)
		}
	}
}

func (r *run[K]) loop(ctx context.Context) {
	for {
		for len(r.ready) > 0 && r.running < r.par && ctx.Err() == nil {
			id := r.ready[0]
			r.ready = r.ready[1:]
			r.start(ctx, id)
		}
		if r.running == 0 {
			// Nothing runs and nothing can start: what is left is in a
			// cycle, waits for a dependency that never came, or was cut
			// off by ctx.
			r.markCycles()
			if ctx.Err() == nil && r.limited && r.unfinishedNeeded() && r.unstartedOther() {
				// A node outside the targets' needs may yet discover the
				// missing dependency: widen the run once.
				r.needAll()
				continue
			}
			r.markLeft(ctx.Err())
			return
		}
		d := <-r.doneCh
		r.running--
		r.finish(d.id, d.err)
		r.discover(d.discovered)
	}
}

func (r *run[K]) start(ctx context.Context, id K) {
	r.running++
	go func() {
		disc, err := r.fn(ctx, id)
		r.doneCh <- done[K]{id: id, discovered: disc, err: err}
	}()
}

// unfinishedNeeded reports whether a needed node has not finished.
func (r *run[K]) unfinishedNeeded() bool {
	for _, id := range r.g.order {
		if s := r.state[id]; s.needed && !s.finished {
			return true
		}
	}
	return false
}

// unstartedOther reports whether a node that is not needed has not run.
func (r *run[K]) unstartedOther() bool {
	for _, id := range r.g.order {
		if s := r.state[id]; !s.needed && !s.finished {
			return true
		}
	}
	return false
}

// markLeft fails the needed nodes that never finished: with ctxErr when
// the run was cut off, else with the missing dependency they wait for.
func (r *run[K]) markLeft(ctxErr error) {
	missing := make(map[K]K) // node → the missing ID it waits for
	for _, id := range r.g.order {
		s := r.state[id]
		if !s.needed || s.finished {
			continue
		}
		if ctxErr != nil {
			r.results[id] = ctxErr
			continue
		}
		r.results[id] = &missingError[K]{Dep: r.missingDep(id, missing)}
	}
}

// missingDep follows unfinished dependencies from id to one that is not in
// the graph, remembering the answer for every node on the way.
func (r *run[K]) missingDep(id K, memo map[K]K) K {
	var path []K
	onPath := make(map[K]bool)
	cur := id
	for {
		if m, ok := memo[cur]; ok {
			cur = m
			break
		}
		s, ok := r.state[cur]
		if !ok {
			break // not in the graph
		}
		path = append(path, cur)
		onPath[cur] = true
		next, found := cur, false
		for _, d := range s.deps {
			ds, ok := r.state[d]
			if !ok || !ds.finished {
				next, found = d, true
				break
			}
		}
		if !found || onPath[next] {
			break
		}
		cur = next
	}
	for _, p := range path {
		memo[p] = cur
	}
	return cur
}

// markCycles finds the strongly connected components among the needed
// nodes that have not finished (Tarjan's algorithm, iterative) and fails
// every node of a cycle with a *cycleError, then their dependants.
func (r *run[K]) markCycles() {
	var (
		index   = make(map[K]int)
		low     = make(map[K]int)
		onStack = make(map[K]bool)
		stack   []K
		next    int
		cycles  [][]K
	)
	open := func(id K) bool {
		s, ok := r.state[id]
		return ok && s.needed && !s.finished
	}
	type frame struct {
		v K
		i int // next dependency to visit
	}
	for _, root := range r.g.order {
		if _, seen := index[root]; seen || !open(root) {
			continue
		}
		frames := []frame{{v: root}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(frames) > 0 {
			f := &frames[len(frames)-1]
			deps := r.state[f.v].deps
			if f.i < len(deps) {
				w := deps[f.i]
				f.i++
				if !open(w) {
					continue
				}
				if _, seen := index[w]; !seen {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					frames = append(frames, frame{v: w})
				} else if onStack[w] {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			frames = frames[:len(frames)-1]
			if len(frames) > 0 {
				p := frames[len(frames)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] != index[v] {
				continue
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
			if len(scc) == 1 && !slices.Contains(r.state[v].deps, v) {
				continue
			}
			slices.Reverse(scc)
			cycles = append(cycles, scc)
		}
	}
	// Every member gets its cycleError before any is passed on, so no
	// member is reported as a mere dependant of another.
	var out []outcome[K]
	for _, scc := range cycles {
		for _, w := range scc {
			err := &cycleError[K]{Cycle: scc, Node: w}
			r.settle(w, err)
			out = append(out, outcome[K]{w, err})
		}
	}
	r.pass(out)
}

// rotate returns cycle starting at first.
func rotate[K cmp.Ordered](cycle []K, first K) []K {
	i := slices.Index(cycle, first)
	return append(slices.Clone(cycle[i:]), cycle[:i]...)
}
