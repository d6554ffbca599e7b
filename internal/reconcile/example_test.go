package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/fleetkit/fleetkit/internal/reconcile"
)

// An engine converging replica counts: the desired state lives in a map a
// producer changes (and enqueues the key it changed), the reconciler reads
// it on every pass and converges the actual state one step at a time,
// asking to be called again until it is done. The first pass fails, and is
// retried after the backoff.
func Example() {
	var mu sync.Mutex
	desired := map[string]int{"web": 2} // guarded by mu
	actual := map[string]int{}          // guarded by mu
	failed := false
	converged := make(chan struct{})

	e, err := reconcile.New(reconcile.Func(func(ctx context.Context, key string) (reconcile.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		if !failed {
			failed = true
			return reconcile.Result{}, errors.New("the provider is not ready yet")
		}
		switch want, have := desired[key], actual[key]; {
		case have < want:
			actual[key]++
			fmt.Printf("%s: %d → %d\n", key, have, have+1)
			return reconcile.Result{Requeue: true}, nil
		case have > want:
			actual[key]--
			fmt.Printf("%s: %d → %d\n", key, have, have-1)
			return reconcile.Result{Requeue: true}, nil
		}
		fmt.Printf("%s: converged at %d\n", key, desired[key])
		close(converged)
		return reconcile.Result{}, nil
	}), reconcile.Options{
		Name:        "replicas",
		Concurrency: 2,
		BaseBackoff: time.Millisecond,
		// The resync: every key, at start and then every minute.
		List: func(context.Context) ([]string, error) {
			mu.Lock()
			defer mu.Unlock()
			keys := make([]string, 0, len(desired))
			for k := range desired {
				keys = append(keys, k)
			}
			return keys, nil
		},
		Resync: time.Minute,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- e.Run(ctx) }()
	<-converged
	cancel()
	fmt.Println("run:", <-done)
	// Output:
	// web: 0 → 1
	// web: 1 → 2
	// web: converged at 2
	// run: <nil>
}
