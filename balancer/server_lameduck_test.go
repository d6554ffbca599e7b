package balancer_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/balancer"
)

// After Shutdown a kept-alive connection idle between requests still gets
// its next request answered, with "Connection: close", within the
// lame-duck time, and is closed when that time is over if it sends none;
// without one it is closed at once, and a request sent on it as that
// happens gets no answer (a restart under load failed requests so).
func TestServerLameDuck(t *testing.T) {
	const req = "POST /lint/python HTTP/1.1\r\nHost: lb\r\nContent-Length: 13\r\n\r\n{\"code\":\"x\"}\n"
	for _, tt := range []struct {
		name     string
		lameDuck time.Duration
		second   bool // a second request after Shutdown
	}{
		{"lame duck, one more request", time.Second, true},
		{"lame duck, idle until its end", time.Second, false},
		{"none", 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, err := balancer.NewProxy(newBalancer(t, balancer.Options{}), balancer.ProxyOptions{})
				require.NoError(t, err)
				srv, err := balancer.NewServer(p, balancer.ServerOptions{LameDuck: tt.lameDuck})
				require.NoError(t, err)
				ln := newPipeListener()
				go func() { _ = srv.Serve(ln) }()
				c := ln.dial()
				defer c.Close()
				br := bufio.NewReader(c)
				_, err = c.Write([]byte(req))
				require.NoError(t, err)
				resp, err := http.ReadResponse(br, nil)
				require.NoError(t, err)
				_ = resp.Body.Close()
				assert.False(t, resp.Close, "kept alive before Shutdown")

				shut := make(chan error, 1)
				start := time.Now()
				go func() { shut <- srv.Shutdown(context.Background()) }()
				synctest.Wait()
				if tt.second {
					_, _ = c.Write([]byte(req))
					resp, err := http.ReadResponse(br, nil)
					if tt.lameDuck == 0 {
						require.Error(t, err, "closed at once: no answer")
					} else {
						require.NoError(t, err, "answered in the lame-duck time")
						_, _ = io.ReadAll(resp.Body)
						_ = resp.Body.Close()
						assert.True(t, resp.Close, "with Connection: close")
						assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
					}
				}
				require.NoError(t, <-shut)
				if !tt.second {
					assert.Equal(t, tt.lameDuck, time.Since(start), "an idle connection is closed when the lame-duck time ends")
				}
				rest, _ := io.ReadAll(br) // until the server closes the connection
				assert.Empty(t, string(rest), "closed after")
			})
		})
	}
	_, err := balancer.NewServer(nil, balancer.ServerOptions{})
	assert.Error(t, err)
	p, err := balancer.NewProxy(newBalancer(t, balancer.Options{}), balancer.ProxyOptions{})
	require.NoError(t, err)
	_, err = balancer.NewServer(p, balancer.ServerOptions{LameDuck: -time.Second})
	assert.True(t, err != nil && strings.Contains(err.Error(), "negative"))
}
