package storetest

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/auth"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/fleettest"
	"github.com/fleetkit/fleetkit/fleet/httpapi"
)

// LoadResult is what Load measured.
type LoadResult struct {
	Instances int
	// Total is from the first create to the last instance ready.
	Total time.Duration
	// ReadyP50 and ReadyP99 are create→ready latencies (server clock:
	// created_at to the time the instance entered ready).
	ReadyP50, ReadyP99 time.Duration
	// APIP50 and APIP99 are create request latencies seen by the clients.
	APIP50, APIP99 time.Duration
}

func (r LoadResult) String() string {
	return fmt.Sprintf("%d instances ready in %s (%.0f/s); create→ready p50 %s p99 %s; POST latency p50 %s p99 %s",
		r.Instances, r.Total.Round(time.Millisecond), float64(r.Instances)/r.Total.Seconds(),
		r.ReadyP50.Round(time.Millisecond), r.ReadyP99.Round(time.Millisecond),
		r.APIP50.Round(100*time.Microsecond), r.APIP99.Round(100*time.Microsecond))
}

// Load creates n instances through the API of a Service on st from
// clients concurrent clients, with the in-memory data plane, and waits
// until all are ready.
func Load(t testing.TB, st fleet.Store, n, clients int) LoadResult {
	secret := []byte("load-secret")
	authn, err := auth.NewJWTAuthenticator(auth.JWTOptions{HS256Secret: secret})
	require.NoError(t, err)
	svc, err := fleet.New(st, fleet.Options{
		Kind: fleet.Dinosaur, Clusters: cluster.Defaults(),
		Interval: 10 * time.Second, RetryInterval: 10 * time.Millisecond,
		// Each worker keeps more reconciles in flight than there are
		// clients: with like latencies per write (Little's law), a worker
		// with fewer drains slower than the clients create.
		Concurrency: 64,
	})
	require.NoError(t, err)
	api, err := httpapi.New(svc, httpapi.Options{Auth: authn})
	require.NoError(t, err)
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	ln, err := netListen()
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ln) })
	ctx, cancel := context.WithCancel(context.Background())
	wg.Go(func() { _ = svc.Run(ctx) })
	defer func() {
		cancel()
		_ = srv.Close()
		wg.Wait()
	}()
	tr := &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}
	defer tr.CloseIdleConnections()
	client := &fleettest.Client{BaseURL: "http://" + ln.Addr().String(), Kind: fleet.Dinosaur, Secret: secret, HTTP: &http.Client{Transport: tr}}

	start := time.Now()
	lat := make([]time.Duration, n)
	var cw sync.WaitGroup
	next := make(chan int)
	for c := range clients {
		u := fleettest.User{Name: fmt.Sprintf("user-%d", c)}
		cw.Go(func() {
			for i := range next {
				t0 := time.Now()
				r := client.Do(t, u, http.MethodPost, "dinosaurs?async=true", map[string]any{"name": fmt.Sprintf("d-%d", i)})
				lat[i] = time.Since(t0)
				if r.Status != http.StatusAccepted {
					t.Errorf("create %d: %d %s", i, r.Status, r.Raw)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	cw.Wait()

	deadline := time.Now().Add(10 * time.Minute)
	for {
		_, ready, err := st.ListInstances(context.Background(), fleet.Query{Kind: "dinosaur", Statuses: []fleet.Status{fleet.StatusReady}, Size: -1})
		require.NoError(t, err)
		if ready == n {
			break
		}
		require.True(t, time.Now().Before(deadline), "only %d of %d ready after 10 minutes", ready, n)
		time.Sleep(20 * time.Millisecond) // poll period
	}
	res := LoadResult{Instances: n, Total: time.Since(start)}
	var readyLat []time.Duration
	for page := 1; ; page++ {
		q := fleet.Query{Kind: "dinosaur", Page: page, Size: math.MaxInt, OrderBy: []fleet.Order{{Field: "id"}}} // the largest page
		insts, total, err := st.ListInstances(context.Background(), q)
		require.NoError(t, err)
		for _, i := range insts {
			readyLat = append(readyLat, i.StatusSince.Sub(i.CreatedAt))
		}
		if page*q.PageSize() >= total {
			break
		}
	}
	res.ReadyP50, res.ReadyP99 = percentile(readyLat, 50), percentile(readyLat, 99)
	res.APIP50, res.APIP99 = percentile(lat, 50), percentile(lat, 99)
	return res
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func netListen() (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }

// LoadClients is FLEETKIT_LOAD_CLIENTS, the number of concurrent API
// clients of a load run (default 32).
func LoadClients(t testing.TB) int {
	v := os.Getenv("FLEETKIT_LOAD_CLIENTS")
	if v == "" {
		return 32
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err)
	require.Positive(t, n)
	return n
}

// LoadN is FLEETKIT_LOAD_N, the number of instances of a load run
// (default 10,000).
func LoadN(t testing.TB) int {
	v := os.Getenv("FLEETKIT_LOAD_N")
	if v == "" {
		return 10000
	}
	n, err := strconv.Atoi(v)
	require.NoError(t, err)
	require.Positive(t, n)
	return n
}

// ReportLoad reports r as benchmark metrics.
func ReportLoad(b *testing.B, r LoadResult) {
	b.ReportMetric(r.Total.Seconds(), "total_s")
	b.ReportMetric(float64(r.ReadyP50.Milliseconds()), "ready_p50_ms")
	b.ReportMetric(float64(r.ReadyP99.Milliseconds()), "ready_p99_ms")
	b.ReportMetric(float64(r.APIP50.Microseconds())/1000, "api_p50_ms")
	b.ReportMetric(float64(r.APIP99.Microseconds())/1000, "api_p99_ms")
}
