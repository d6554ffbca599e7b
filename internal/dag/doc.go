// Package dag runs work over a dependency graph: each node runs once its
// dependencies have succeeded, up to a bounded number at a time. A node
// that fails fails its dependants (they do not run), not the run; cycles
// are reported as errors on the nodes in them; nodes discovered while
// running join the graph; and a run can be limited to what some targets
// need.
//
// A run costs O(N+E) for N nodes and E edges: each node keeps a count of
// the dependencies it still waits for and a list of its dependants, so a
// finished node touches only its own edges.
//
// A Graph is not safe for concurrent use; Run owns it until it returns. Run
// calls fn on up to Options.Parallelism goroutines of its own, all of them
// finished when it returns.
//
//	var g dag.Graph[string]
//	_ = g.Add("app", "db")
//	_ = g.Add("db")
//	results, err := g.Run(ctx, dag.Options[string]{Parallelism: 4},
//		func(ctx context.Context, id string) ([]dag.Node[string], error) {
//			return nil, deploy(ctx, id)
//		})
//
// The package does not log; every outcome is in the results.
package dag
