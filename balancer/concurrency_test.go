package balancer_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/fleetkit/fleetkit/balancer"
)

// TestConcurrentPicksWhileChanging picks from many goroutines while another
// adds and removes backends, sets ratios, ejects and readmits. Run with
// -race: the pick path takes no lock.
func TestConcurrentPicksWhileChanging(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := newBalancer(t, balancer.Options{EjectAfter: 2})
	langs := []string{"python", "java", "go"}
	for _, l := range langs {
		fleet(t, b, l, map[string]int{"1.0": 3, "2.0": 2})
	}
	var picks, noBackend atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for w := range 8 {
		g.Go(func() error {
			for i := 0; gctx.Err() == nil; i++ {
				lang := langs[(w+i)%len(langs)]
				be, err := b.Pick(lang)
				switch {
				case errors.Is(err, balancer.ErrNoBackend):
					noBackend.Add(1)
					continue
				case err != nil:
					return err
				}
				if be.Language != lang {
					return fmt.Errorf("picked %s for %s", be.URI, lang)
				}
				picks.Add(1)
				if i%7 == 0 {
					b.ReportFailure(be)
				} else {
					b.ReportSuccess(be)
				}
				if _, err := b.PickOther(lang, be); err != nil && !errors.Is(err, balancer.ErrNoBackend) {
					return err
				}
			}
			return nil
		})
	}
	g.Go(func() error {
		defer cancel()
		for i := range 300 {
			lang := langs[i%len(langs)]
			u := fmt.Sprintf("http://127.0.0.1:%d", 40000+i%20)
			if err := b.AddBackend(ctx, lang, []string{"1.0", "2.0", "3.0"}[i%3], u); err != nil {
				return err
			}
			// Refused (ErrInvalidRatio) when neither version has a backend yet.
			if err := b.SetRatio(ctx, lang, map[string]int{"1.0": i % 101, "2.0": 100 - i%101}); err != nil && !errors.Is(err, balancer.ErrInvalidRatio) {
				return err
			}
			if i%3 == 0 {
				if err := b.RemoveBackend(ctx, u); err != nil && !errors.Is(err, balancer.ErrUnknownBackend) {
					return err
				}
			}
			for _, be := range b.Ejected() {
				_ = b.Readmit(ctx, be.URI)
			}
			if _, err := b.Backends(ctx); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, g.Wait())
	assert.Positive(t, picks.Load())
}

// TestConcurrentPicksAreExact checks that the split does not depend on
// concurrency: each pick takes a distinct slot of the sequence.
func TestConcurrentPicksAreExact(t *testing.T) {
	b := newBalancer(t, balancer.Options{})
	uris := fleet(t, b, "python", map[string]int{"1.0": 2, "2.0": 2})
	require.NoError(t, b.SetRatio(context.Background(), "python", map[string]int{"1.0": 60, "2.0": 40}))
	const workers, each = 8, 1000
	var mu sync.Mutex // guards perURI
	perURI := map[string]int{}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := map[string]int{}
			for range each {
				be, err := b.Pick("python")
				if err != nil {
					panic(err)
				}
				local[be.URI]++
			}
			mu.Lock()
			defer mu.Unlock()
			for k, v := range local {
				perURI[k] += v
			}
		}()
	}
	wg.Wait()
	n := workers * each
	assert.Equal(t, map[string]int{
		uris["1.0"][0]: n * 30 / 100, uris["1.0"][1]: n * 30 / 100,
		uris["2.0"][0]: n * 20 / 100, uris["2.0"][1]: n * 20 / 100,
	}, perURI)
}

func TestPickDoesNotAllocate(t *testing.T) {
	b := newBalancer(t, balancer.Options{})
	fleet(t, b, "python", map[string]int{"1.0": 9, "2.0": 1})
	require.NoError(t, b.SetRatio(context.Background(), "python", map[string]int{"1.0": 99, "2.0": 1}))
	allocs := testing.AllocsPerRun(1000, func() {
		be, err := b.Pick("python")
		if err != nil {
			panic(err)
		}
		b.ReportSuccess(be)
	})
	assert.Zero(t, allocs)
}
