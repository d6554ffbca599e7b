package rollout_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/fleetkit/fleetkit/rollout"
)

// TestPageInBrowser drives the status page in headless Chromium (Debian's
// chromium) during an update: the page renders, its charts move as the
// balancer's metrics do, a promote without the API secret is refused with
// the reason shown, and with it the button advances the step.
func TestPageInBrowser(t *testing.T) {
	testenv.Short(t)
	browser := testenv.LookPath(t, "chromium")
	src := &fakeMetrics{}
	f := newFixture(t, rollout.Options{Metrics: src, SampleInterval: 100 * time.Millisecond})
	f.run()
	ctx := context.Background()
	f.create("python", 2)
	require.NoError(t, f.mgr.InitUpdate(ctx, "python", "2.0"))
	srv := httptest.NewServer(rollout.NewHandler(f.mgr, rollout.HandlerOptions{Secret: "s3cret"}))
	defer srv.Close()

	// Traffic that grows, so every sample differs from the last.
	feed, stopFeed := context.WithCancel(ctx)
	defer stopFeed()
	var feeding sync.WaitGroup
	defer func() { stopFeed(); feeding.Wait() }()
	feeding.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for n := 1; ; n++ {
			src.serve("1.0", 10*n, 0, 5*time.Millisecond)
			src.serve("2.0", n, n%2, time.Duration(n)*time.Millisecond)
			select {
			case <-feed.Done():
				return
			case <-tick.C:
			}
		}
	})

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(actx)
	defer cancelBrowser()
	bctx, cancelTimeout := context.WithTimeout(bctx, 90*time.Second)
	defer cancelTimeout()

	const line = `section[data-lang="python"] polyline.series[data-version="2.0"]`
	require.NoError(t, chromedp.Do(bctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(`section[data-lang="python"] .steps .now`),
		chromedp.WaitReady(line),
	), "the page renders during the update")
	first, err := chromedp.Run(bctx, chromedp.AttributeValue(line, "points"))
	require.NoError(t, err)
	text, err := chromedp.Run(bctx, chromedp.Text(`section[data-lang="python"]`))
	require.NoError(t, err)
	assert.Contains(t, text, "Updating 1.0 → 2.0: step 1 of 5")
	assert.Contains(t, text, "requests/s")

	require.Eventually(t, func() bool {
		moved, err := chromedp.Run(bctx, chromedp.AttributeValue(line, "points"))
		return err == nil && moved.Value != first.Value
	}, 30*time.Second, 200*time.Millisecond, "the chart did not move: %q", first.Value)

	const promote = `section[data-lang="python"] button[data-op="update"]`
	require.NoError(t, chromedp.Do(bctx, chromedp.Click(promote)))
	_, err = chromedp.Run(bctx, chromedp.Poll[bool](`document.getElementById("result").textContent.includes("403")`))
	require.NoError(t, err)
	result, err := chromedp.Run(bctx, chromedp.Text(`#result`))
	require.NoError(t, err)
	assert.Contains(t, result, "secret", "refused without the secret, and says why")
	ph, _ := f.mgr.Phase("python")
	assert.Equal(t, 0, ph.Step, "nothing moved")

	require.NoError(t, chromedp.Do(bctx,
		chromedp.SendKeys(`#secret`, "s3cret"),
		chromedp.Click(promote),
		chromedp.WaitVisible(`section[data-lang="python"][data-step="2"]`),
	), "the button advances the step")
	result, err = chromedp.Run(bctx, chromedp.Text(`#result`))
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(result, "done"), result)
	ph, _ = f.mgr.Phase("python")
	assert.Equal(t, 1, ph.Step)
	assert.Equal(t, map[string]int{"1.0": 1, "2.0": 1}, f.count("python"))
}
