package fleet_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/inmem"
	"github.com/fleetkit/fleetkit/fleet/lease"
	"github.com/fleetkit/fleetkit/fleet/sqlite"
	"github.com/fleetkit/fleetkit/fleet/storetest"
)

func memStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), ":memory:")
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// runRuntime runs rt until the end of the test.
func runRuntime(t *testing.T, rt *fleet.Runtime) context.CancelFunc {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, rt.Run(ctx)) })
	stop := func() { cancel(); wg.Wait() }
	t.Cleanup(stop)
	return stop
}

// move returns a reconciler that moves instances from one status to the
// next.
func move(st fleet.Store, from, to fleet.Status) fleet.Reconciler {
	return fleet.ReconcilerFunc(func(ctx context.Context, req fleet.Request) (fleet.Result, error) {
		_, err := st.UpdateInstance(ctx, fleet.Update{ID: req.ID, From: from, To: to, Fence: req.Fence})
		if errors.Is(err, fleet.ErrConflict) {
			return fleet.Result{}, nil
		}
		return fleet.Result{}, err
	})
}

func status(t *testing.T, st fleet.Store, id string) fleet.Status {
	t.Helper()
	i, err := st.GetInstance(context.Background(), id)
	require.NoError(t, err)
	return i.Status
}

// The runtime tests that depend on time run in a synctest bubble on the
// in-memory store: time moves only when every goroutine waits, so delays
// are asserted exactly and synctest.Wait stands for "once the workers are
// idle".

func TestRuntimeWakesOnChange(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		n := fleet.NewNotifier()
		st := fleet.NotifyingStore(inmem.NewStore(), n)
		rt, err := fleet.NewRuntime(st, []fleet.Worker{
			// An hour's resync: only the notifier can make this fast.
			{Status: fleet.StatusAccepted, Reconciler: move(st, fleet.StatusAccepted, fleet.StatusPreparing), Interval: time.Hour},
			{Status: fleet.StatusPreparing, Reconciler: move(st, fleet.StatusPreparing, fleet.StatusProvisioning), Interval: time.Hour},
		}, nil, fleet.RuntimeOptions{Kind: "dinosaur", Notifier: n})
		require.NoError(t, err)
		runRuntime(t, rt)
		start := time.Now()
		for i := range 3 {
			in := storetest.Instance("rex"+string(rune('a'+i)), "alice", "")
			require.NoError(t, st.CreateInstance(context.Background(), in))
			synctest.Wait()
			assert.Equal(t, fleet.StatusProvisioning, status(t, st, in.ID))
		}
		assert.Zero(t, time.Since(start), "two transitions without a tick")
	})
}

func TestRuntimeRetriesWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewStore()
		var times []time.Time // written by the one worker, read once it is idle
		rec := fleet.ReconcilerFunc(func(ctx context.Context, req fleet.Request) (fleet.Result, error) {
			times = append(times, time.Now())
			if len(times) <= 3 {
				return fleet.Result{}, errors.New("flaky")
			}
			return move(st, fleet.StatusAccepted, fleet.StatusPreparing).Reconcile(ctx, req)
		})
		rt, err := fleet.NewRuntime(st, []fleet.Worker{{Status: fleet.StatusAccepted, Reconciler: rec, Interval: time.Hour, BaseBackoff: 20 * time.Millisecond}},
			nil, fleet.RuntimeOptions{Kind: "dinosaur"})
		require.NoError(t, err)
		in := storetest.Instance("rex", "alice", "")
		require.NoError(t, st.CreateInstance(context.Background(), in))
		runRuntime(t, rt)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, fleet.StatusPreparing, status(t, st, in.ID))
		require.Len(t, times, 4)
		assert.Equal(t, 20*time.Millisecond, times[1].Sub(times[0]))
		assert.Equal(t, 40*time.Millisecond, times[2].Sub(times[1]), "backoff doubles")
		assert.Equal(t, 80*time.Millisecond, times[3].Sub(times[2]))
	})
}

func TestRuntimeTerminalErrorAndTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewStore()
		rec := fleet.ReconcilerFunc(func(ctx context.Context, req fleet.Request) (fleet.Result, error) {
			i, err := st.GetInstance(ctx, req.ID)
			if err != nil {
				return fleet.Result{}, err
			}
			if i.Name == "doomed" {
				return fleet.Result{}, fleet.TerminalError(errors.New("no eggs left"))
			}
			return fleet.Result{RequeueAfter: 10 * time.Millisecond}, nil // waits forever
		})
		const timeout = 300 * time.Millisecond
		rt, err := fleet.NewRuntime(st, []fleet.Worker{{
			Status: fleet.StatusAccepted, Reconciler: rec, Interval: time.Hour, Timeout: timeout,
			TimeoutReason: func(i fleet.Instance) string { return "waited too long: " + i.Name },
		}}, nil, fleet.RuntimeOptions{Kind: "dinosaur"})
		require.NoError(t, err)
		doomed, waiting := storetest.Instance("doomed", "alice", ""), storetest.Instance("waiting", "alice", "")
		require.NoError(t, st.CreateInstance(context.Background(), doomed))
		require.NoError(t, st.CreateInstance(context.Background(), waiting))
		runRuntime(t, rt)
		synctest.Wait()
		assert.Equal(t, fleet.StatusFailed, status(t, st, doomed.ID), "a terminal error fails the instance at once")
		time.Sleep(timeout - time.Millisecond)
		synctest.Wait()
		assert.Equal(t, fleet.StatusAccepted, status(t, st, waiting.ID), "not before its deadline")
		time.Sleep(time.Millisecond)
		synctest.Wait()
		for id, reason := range map[string]string{doomed.ID: "no eggs left", waiting.ID: "waited too long: waiting"} {
			i, err := st.GetInstance(context.Background(), id)
			require.NoError(t, err)
			assert.Equal(t, fleet.StatusFailed, i.Status)
			assert.Equal(t, reason, i.FailedReason)
		}
	})
}

// TestRuntimeTimeoutWhileBackingOff: an instance whose retries back off
// past its deadline still fails at the deadline.
func TestRuntimeTimeoutWhileBackingOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewStore()
		rec := fleet.ReconcilerFunc(func(context.Context, fleet.Request) (fleet.Result, error) {
			return fleet.Result{}, errors.New("down")
		})
		rt, err := fleet.NewRuntime(st, []fleet.Worker{{
			Status: fleet.StatusAccepted, Reconciler: rec, Interval: time.Hour, Timeout: time.Second, BaseBackoff: time.Minute, MaxBackoff: time.Hour,
		}}, nil, fleet.RuntimeOptions{Kind: "dinosaur"})
		require.NoError(t, err)
		in := storetest.Instance("rex", "alice", "")
		require.NoError(t, st.CreateInstance(context.Background(), in))
		runRuntime(t, rt)
		time.Sleep(time.Second)
		synctest.Wait()
		assert.Equal(t, fleet.StatusFailed, status(t, st, in.ID))
	})
}

func TestRuntimeBoundsConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewStore()
		var inflight, peak atomic.Int32
		release := make(chan struct{})
		rec := fleet.ReconcilerFunc(func(ctx context.Context, req fleet.Request) (fleet.Result, error) {
			n := inflight.Add(1)
			defer inflight.Add(-1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return move(st, fleet.StatusAccepted, fleet.StatusPreparing).Reconcile(ctx, req)
		})
		for i := range 12 {
			require.NoError(t, st.CreateInstance(context.Background(), storetest.Instance("d"+string(rune('a'+i)), "alice", "")))
		}
		rt, err := fleet.NewRuntime(st, []fleet.Worker{{Status: fleet.StatusAccepted, Reconciler: rec, Concurrency: 3}}, nil, fleet.RuntimeOptions{Kind: "dinosaur"})
		require.NoError(t, err)
		runRuntime(t, rt)
		synctest.Wait()
		assert.Equal(t, int32(3), inflight.Load())
		close(release)
		synctest.Wait()
		_, n, err := st.ListInstances(context.Background(), fleet.Query{Statuses: []fleet.Status{fleet.StatusPreparing}, Size: -1})
		require.NoError(t, err)
		assert.Equal(t, 12, n)
		assert.Equal(t, int32(3), peak.Load())
	})
}

// leaseStore is the lease part of fleet.Store.
type leaseStore interface {
	AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (lease.Lease, error)
	ReleaseLease(ctx context.Context, l lease.Lease) error
}

// flakyLeases fails every lease call while fail is set: a replica cut off
// from the database.
type flakyLeases struct {
	leaseStore
	fail atomic.Bool
}

func (f *flakyLeases) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (lease.Lease, error) {
	if f.fail.Load() {
		return lease.Lease{}, errors.New("connection refused")
	}
	return f.leaseStore.AcquireLease(ctx, name, holder, ttl)
}

// runLog records which replica's job ran when, under which token.
type runLog struct {
	mu   sync.Mutex
	runs []jobRun // guarded by mu
}

type jobRun struct {
	holder     string
	token      int64
	start, end time.Time
}

func (l *runLog) job(holder string) fleet.Job {
	return fleet.Job{Name: "dinosaur/general", Interval: 5 * time.Millisecond, Run: func(ctx context.Context, f lease.Fence) error {
		r := jobRun{holder: holder, token: f.Token, start: time.Now()}
		r.end = time.Now()
		l.mu.Lock()
		l.runs = append(l.runs, r)
		l.mu.Unlock()
		return nil
	}}
}

func (l *runLog) holders() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var hs []string
	for _, r := range l.runs {
		if len(hs) == 0 || hs[len(hs)-1] != r.holder {
			hs = append(hs, r.holder)
		}
	}
	return hs
}

// assertNoOverlap checks that the replicas' runs never interleave and that
// each take-over has a higher token.
func (l *runLog) assertNoOverlap(t *testing.T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := 1; i < len(l.runs); i++ {
		prev, cur := l.runs[i-1], l.runs[i]
		if prev.holder != cur.holder {
			assert.Greater(t, cur.token, prev.token, "a take-over increments the token")
			assert.False(t, cur.start.Before(prev.end), "replica %s ran before %s had stopped", cur.holder, prev.holder)
		}
	}
}

func TestLeaderElection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewStore() // the database the replicas share
		const ttl = 600 * time.Millisecond
		log := &runLog{}
		leasesA := &flakyLeases{leaseStore: st}
		rtA, err := fleet.NewRuntime(st, nil, []fleet.Job{log.job("a")}, fleet.RuntimeOptions{Kind: "dinosaur", Leases: leasesA, Holder: "a", LeaseTTL: ttl})
		require.NoError(t, err)
		rtB, err := fleet.NewRuntime(st, nil, []fleet.Job{log.job("b")}, fleet.RuntimeOptions{Kind: "dinosaur", Leases: st, Holder: "b", LeaseTTL: ttl})
		require.NoError(t, err)

		stopA := runRuntime(t, rtA)
		synctest.Wait()
		require.Equal(t, []string{"a"}, log.holders())
		runRuntime(t, rtB)
		time.Sleep(2 * ttl)
		assert.Equal(t, []string{"a"}, log.holders(), "B waits while A renews")

		// A is cut off from the database: it stops, then B takes over once
		// A's lease has expired (within a TTL and B's retry period).
		leasesA.fail.Store(true)
		time.Sleep(2 * ttl)
		assert.Equal(t, []string{"a", "b"}, log.holders())
		log.assertNoOverlap(t)

		// A comes back: B keeps the lease.
		leasesA.fail.Store(false)
		time.Sleep(2 * ttl)
		assert.Equal(t, []string{"a", "b"}, log.holders())
		stopA()
		log.assertNoOverlap(t)
	})
}

func TestLeaderHandOverOnStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewStore()
		log := &runLog{}
		rtA, err := fleet.NewRuntime(st, nil, []fleet.Job{log.job("a")}, fleet.RuntimeOptions{Kind: "dinosaur", Leases: st, Holder: "a", LeaseTTL: time.Hour})
		require.NoError(t, err)
		rtB, err := fleet.NewRuntime(st, nil, []fleet.Job{log.job("b")}, fleet.RuntimeOptions{Kind: "dinosaur", Leases: st, Holder: "b", LeaseTTL: 300 * time.Millisecond})
		require.NoError(t, err)
		stopA := runRuntime(t, rtA)
		synctest.Wait()
		require.Equal(t, []string{"a"}, log.holders())
		runRuntime(t, rtB)
		stopA() // a clean stop releases the lease: no waiting for an hour's TTL
		time.Sleep(time.Second)
		assert.Equal(t, []string{"a", "b"}, log.holders())
		log.assertNoOverlap(t)
	})
}

// TestWorkersShareALease: workers that name one lease run under it
// together (one fence), as the data-plane workers do, so that one
// replica drives a data plane that may be its own.
func TestWorkersShareALease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := inmem.NewStore()
		var (
			mu     sync.Mutex
			fences = map[fleet.Status]lease.Fence{}
		)
		record := func(from, to fleet.Status) fleet.Reconciler {
			next := move(st, from, to)
			return fleet.ReconcilerFunc(func(ctx context.Context, req fleet.Request) (fleet.Result, error) {
				mu.Lock()
				fences[from] = req.Fence
				mu.Unlock()
				return next.Reconcile(ctx, req)
			})
		}
		rt, err := fleet.NewRuntime(st, []fleet.Worker{
			{Name: "dinosaur/accepted", Lease: "dinosaur/dataplane", Status: fleet.StatusAccepted, Reconciler: record(fleet.StatusAccepted, fleet.StatusPreparing)},
			{Name: "dinosaur/preparing", Lease: "dinosaur/dataplane", Status: fleet.StatusPreparing, Reconciler: record(fleet.StatusPreparing, fleet.StatusProvisioning)},
		}, nil, fleet.RuntimeOptions{Kind: "dinosaur", Leases: st, Holder: "a", LeaseTTL: time.Hour})
		require.NoError(t, err)
		runRuntime(t, rt)
		in := storetest.Instance("rex", "alice", "")
		require.NoError(t, st.CreateInstance(context.Background(), in))
		// No notifier on this store: the resync (DefaultInterval) finds it.
		time.Sleep(2 * fleet.DefaultInterval)
		synctest.Wait()
		assert.Equal(t, fleet.StatusProvisioning, status(t, st, in.ID))
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, fences, 2)
		assert.Equal(t, "dinosaur/dataplane", fences[fleet.StatusAccepted].Lease)
		assert.Equal(t, fences[fleet.StatusAccepted], fences[fleet.StatusPreparing], "one lease, one fence")
	})
}
