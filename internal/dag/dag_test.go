package dag

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recorder is a Func that records the order nodes ran in and fails the
// nodes named in fail.
type recorder struct {
	mu   sync.Mutex
	ran  []string // guarded by mu
	fail map[string]bool
	disc map[string][]Node[string]
}

func (r *recorder) fn(_ context.Context, id string) ([]Node[string], error) {
	r.mu.Lock()
	r.ran = append(r.ran, id)
	r.mu.Unlock()
	if r.fail[id] {
		return r.disc[id], fmt.Errorf("build %s failed", id)
	}
	return r.disc[id], nil
}

func (r *recorder) index(id string) int {
	for i, x := range r.ran {
		if x == id {
			return i
		}
	}
	return -1
}

func graph(t *testing.T, edges map[string][]string, order ...string) *Graph[string] {
	t.Helper()
	var g Graph[string]
	for _, id := range order {
		require.NoError(t, g.Add(id, edges[id]...))
	}
	return &g
}

func TestOrderAndFailures(t *testing.T) {
	// flux-system ← infra ← apps; apps-b depends on a failing node.
	edges := map[string][]string{
		"infra":  {"flux-system"},
		"apps":   {"infra"},
		"broken": {"infra"},
		"apps-b": {"broken"},
		"leaf":   {"apps-b", "apps"},
	}
	g := graph(t, edges, "leaf", "apps-b", "broken", "apps", "infra", "flux-system", "lonely")
	rec := &recorder{fail: map[string]bool{"broken": true}}
	res, err := g.Run(context.Background(), Options[string]{Parallelism: 3}, rec.fn)
	require.NoError(t, err)

	assert.NoError(t, res["flux-system"])
	assert.NoError(t, res["infra"])
	assert.NoError(t, res["apps"])
	assert.NoError(t, res["lonely"])
	assert.EqualError(t, res["broken"], "build broken failed")
	var dep *dependencyError[string]
	require.ErrorAs(t, res["apps-b"], &dep)
	assert.Equal(t, "broken", dep.Dep)
	require.ErrorAs(t, res["leaf"], &dep)
	assert.Equal(t, "apps-b", dep.Dep)
	assert.ErrorIs(t, res["leaf"], ErrDependency)

	assert.Less(t, rec.index("flux-system"), rec.index("infra"))
	assert.Less(t, rec.index("infra"), rec.index("apps"))
	assert.Equal(t, -1, rec.index("apps-b"), "a node whose dependency failed must not run")
	assert.Len(t, rec.ran, 5)
}

func TestCycle(t *testing.T) {
	edges := map[string][]string{"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "self": {"self"}}
	g := graph(t, edges, "a", "b", "c", "d", "e", "self")
	rec := &recorder{}
	res, err := g.Run(context.Background(), Options[string]{}, rec.fn)
	require.NoError(t, err)
	var cyc *cycleError[string]
	require.ErrorAs(t, res["a"], &cyc)
	assert.Equal(t, []string{"a", "b", "c"}, cyc.Cycle)
	assert.EqualError(t, res["b"], "dag: dependency cycle: b → c → a → b")
	assert.ErrorIs(t, res["c"], ErrCycle)
	assert.ErrorIs(t, res["self"], ErrCycle)
	assert.ErrorIs(t, res["d"], ErrDependency)
	assert.NoError(t, res["e"])
	assert.Equal(t, []string{"e"}, rec.ran)
}

func TestTargets(t *testing.T) {
	edges := map[string][]string{"b": {"a"}, "c": {"b"}, "x": {"a"}}
	g := graph(t, edges, "a", "b", "c", "x", "y")
	rec := &recorder{}
	res, err := g.Run(context.Background(), Options[string]{Targets: []string{"b"}}, rec.fn)
	require.NoError(t, err)
	assert.Equal(t, map[string]error{"a": nil, "b": nil}, res)
	assert.Equal(t, []string{"a", "b"}, rec.ran)

	_, err = g.Run(context.Background(), Options[string]{Targets: []string{"nope"}}, rec.fn)
	assert.Error(t, err)
}

func TestDiscoveredNodesJoin(t *testing.T) {
	// "root" discovers "child", which "late" was waiting for, and a cycle.
	g := graph(t, map[string][]string{"late": {"child"}}, "root", "late")
	rec := &recorder{disc: map[string][]Node[string]{
		"root":  {{ID: "child", Deps: []string{"root"}}, {ID: "root"}, {ID: "p", Deps: []string{"q"}}, {ID: "q", Deps: []string{"p"}}},
		"child": {{ID: "grandchild"}},
	}}
	// "late" needs "child", which only "root" can discover: the run widens.
	res, err := g.Run(context.Background(), Options[string]{Targets: []string{"late"}}, rec.fn)
	require.NoError(t, err)
	assert.NoError(t, res["root"])
	assert.NoError(t, res["child"])
	assert.NoError(t, res["late"])
	assert.Less(t, rec.index("child"), rec.index("late"))

	// Discovered nodes that no target needs do not run.
	rec = &recorder{disc: rec.disc}
	g = graph(t, map[string][]string{"late": {"root"}}, "root", "late", "other")
	res, err = g.Run(context.Background(), Options[string]{Targets: []string{"late"}}, rec.fn)
	require.NoError(t, err)
	assert.Equal(t, map[string]error{"root": nil, "late": nil}, res)

	g = graph(t, nil, "root")
	res, err = g.Run(context.Background(), Options[string]{}, rec.fn)
	require.NoError(t, err)
	assert.NoError(t, res["grandchild"])
	assert.ErrorIs(t, res["p"], ErrCycle)
}

func TestMissingDependency(t *testing.T) {
	g := graph(t, map[string][]string{"a": {"ghost"}, "b": {"a"}}, "a", "b", "c")
	res, err := g.Run(context.Background(), Options[string]{}, (&recorder{}).fn)
	require.NoError(t, err)
	var miss *missingError[string]
	require.ErrorAs(t, res["a"], &miss)
	assert.Equal(t, "ghost", miss.Dep)
	require.ErrorAs(t, res["b"], &miss)
	assert.Equal(t, "ghost", miss.Dep)
	assert.NoError(t, res["c"])
}

// Run starts as many nodes as the bound allows and never more: in a
// synctest bubble, synctest.Wait returns once every started node waits at
// the gate, so the test sees exactly how many run at each step.
func TestParallelismBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var g Graph[int]
		for i := range 40 {
			require.NoError(t, g.Add(i))
		}
		require.ErrorIs(t, g.Add(3), ErrDuplicate)
		var running atomic.Int32
		gate := make(chan struct{})
		fn := func(context.Context, int) ([]Node[int], error) {
			running.Add(1)
			<-gate
			running.Add(-1)
			return nil, nil
		}
		var (
			res map[int]error
			err error
		)
		done := make(chan struct{})
		go func() {
			defer close(done)
			res, err = g.Run(context.Background(), Options[int]{Parallelism: 3}, fn)
		}()
		for left := 40; left > 0; left-- {
			synctest.Wait()
			require.EqualValues(t, min(3, left), running.Load(), "%d nodes left", left)
			gate <- struct{}{}
		}
		<-done
		require.NoError(t, err)
		assert.Len(t, res, 40)
	})
}

func TestCancel(t *testing.T) {
	g := graph(t, map[string][]string{"b": {"a"}, "c": {"b"}}, "a", "b", "c")
	ctx, cancel := context.WithCancel(context.Background())
	res, err := g.Run(ctx, Options[string]{}, func(_ context.Context, id string) ([]Node[string], error) {
		if id == "a" {
			cancel()
		}
		return nil, nil
	})
	require.NoError(t, err)
	assert.NoError(t, res["a"])
	assert.True(t, errors.Is(res["b"], context.Canceled))
	assert.True(t, errors.Is(res["c"], context.Canceled))
}

// A discovered node marked Target runs in a run limited to targets, with
// what it depends on; what a failing node discovered joins and fails with
// it.
func TestDiscoveredTargets(t *testing.T) {
	g := graph(t, map[string][]string{"root": {"base"}}, "base", "root", "other", "broken")
	rec := &recorder{
		fail: map[string]bool{"broken": true},
		disc: map[string][]Node[string]{
			"root": {
				{ID: "child", Deps: []string{"root", "other"}, Target: true},
				{ID: "ignored", Deps: []string{"root"}},
			},
			"broken": {{ID: "orphan", Deps: []string{"broken"}, Target: true}},
		},
	}
	res, err := g.Run(context.Background(), Options[string]{Targets: []string{"root", "broken"}}, rec.fn)
	require.NoError(t, err)
	assert.Equal(t, []string{"base", "broken", "child", "orphan", "other", "root"}, sortedKeys(res))
	assert.NoError(t, res["child"])
	assert.NoError(t, res["other"], "a dependency of a discovered target runs")
	assert.Less(t, rec.index("other"), rec.index("child"))
	var dep *dependencyError[string]
	require.ErrorAs(t, res["orphan"], &dep)
	assert.Equal(t, "broken", dep.Dep)
	assert.Equal(t, -1, rec.index("ignored"))
	assert.Equal(t, -1, rec.index("orphan"))
}

func sortedKeys(m map[string]error) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// A failure at the head of a long chain fails every node after it, and a
// long cycle is found, without deep recursion.
func TestLongChains(t *testing.T) {
	const n = 50_000
	var g Graph[int]
	for i := range n {
		deps := []int{i - 1}
		if i == 0 {
			deps = nil
		}
		require.NoError(t, g.Add(i, deps...))
	}
	// n..2n-1 form one cycle.
	for i := n; i < 2*n; i++ {
		dep := i + 1
		if dep == 2*n {
			dep = n
		}
		require.NoError(t, g.Add(i, dep))
	}
	fn := func(_ context.Context, id int) ([]Node[int], error) {
		if id == 0 {
			return nil, errors.New("head failed")
		}
		return nil, nil
	}
	res, err := g.Run(context.Background(), Options[int]{}, fn)
	require.NoError(t, err)
	require.Len(t, res, 2*n)
	var dep *dependencyError[int]
	require.ErrorAs(t, res[n-1], &dep)
	assert.Equal(t, n-2, dep.Dep)
	var cyc *cycleError[int]
	require.ErrorAs(t, res[n+5], &cyc)
	assert.Len(t, cyc.Cycle, n)
	assert.Equal(t, n+5, cyc.Node)
	i := slices.Index(cyc.Cycle, n+5)
	assert.Equal(t, n+6, cyc.Cycle[(i+1)%n], "in dependency order")
}

// BenchmarkRun runs graphs of growing size where node i depends on i-1
// and i/2: a run is O(N+E), so ns/node stays flat as N grows.
func BenchmarkRun(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		var g Graph[int]
		for i := range n {
			if i == 0 {
				_ = g.Add(i)
			} else {
				_ = g.Add(i, i-1, i/2)
			}
		}
		fn := func(context.Context, int) ([]Node[int], error) { return nil, nil }
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			for b.Loop() {
				res, _ := g.Run(context.Background(), Options[int]{Parallelism: 4}, fn)
				if len(res) != n {
					b.Fatalf("%d results, want %d", len(res), n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}

// BenchmarkRunWide is the same with no edges: every node is ready at once.
func BenchmarkRunWide(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		var g Graph[int]
		for i := range n {
			_ = g.Add(i)
		}
		fn := func(context.Context, int) ([]Node[int], error) { return nil, nil }
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			for b.Loop() {
				_, _ = g.Run(context.Background(), Options[int]{Parallelism: 4}, fn)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
		})
	}
}
