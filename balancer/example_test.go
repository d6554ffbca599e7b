package balancer_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/fleetkit/fleetkit/balancer"
)

// The contract's exact split: ratio 60/40 with two linters per version
// gives 30, 30, 20, 20 out of 100 requests.
func Example() {
	ctx := context.Background()
	b, err := balancer.New(balancer.Options{}) // ratios sum to 100
	if err != nil {
		panic(err)
	}
	for _, be := range []struct{ version, uri string }{
		{"1.0", "http://127.0.0.1:34561"},
		{"1.0", "http://127.0.0.1:34562"},
		{"2.0", "http://127.0.0.1:34563"},
		{"2.0", "http://127.0.0.1:34564"},
	} {
		if err := b.AddBackend(ctx, "python", be.version, be.uri); err != nil {
			panic(err)
		}
	}
	if err := b.SetRatio(ctx, "python", map[string]int{"1.0": 60, "2.0": 40}); err != nil {
		panic(err)
	}

	counts := map[string]int{}
	for range 100 {
		be, err := b.Pick("python")
		if err != nil {
			panic(err)
		}
		counts[be.URI]++
	}
	for _, uri := range []string{"http://127.0.0.1:34561", "http://127.0.0.1:34562", "http://127.0.0.1:34563", "http://127.0.0.1:34564"} {
		fmt.Println(uri, counts[uri])
	}
	// Output:
	// http://127.0.0.1:34561 30
	// http://127.0.0.1:34562 30
	// http://127.0.0.1:34563 20
	// http://127.0.0.1:34564 20
}

// A smooth weighted sequence interleaves the versions instead of sending
// their requests in bursts.
func ExampleBalancer_Pick() {
	ctx := context.Background()
	b, _ := balancer.New(balancer.Options{})
	_ = b.AddBackend(ctx, "java", "1.0", "http://127.0.0.1:34561")
	_ = b.AddBackend(ctx, "java", "2.0", "http://127.0.0.1:34562")
	_ = b.SetRatio(ctx, "java", map[string]int{"1.0": 60, "2.0": 40})
	for range 10 {
		be, _ := b.Pick("java")
		fmt.Print(be.Version, " ")
	}
	fmt.Println()
	// Output:
	// 1.0 2.0 1.0 2.0 1.0 1.0 2.0 1.0 2.0 1.0
}

// Wiring the public and the admin API on one mux, as examples/loadbalancer
// does.
func ExampleNewProxy() {
	b, err := balancer.New(balancer.Options{})
	if err != nil {
		panic(err)
	}
	proxy, err := balancer.NewProxy(b, balancer.ProxyOptions{})
	if err != nil {
		panic(err)
	}
	admin, err := balancer.NewAdmin(b, balancer.AdminOptions{Secret: "change me"})
	if err != nil {
		panic(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/lint/", proxy)
	mux.Handle("/", admin)
	_ = mux // http.ListenAndServe("127.0.0.1:8080", mux)
	fmt.Println("ready")
	// Output: ready
}
