package balancer_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/fleetkit/fleetkit/balancer"
)

// benchBalancer returns a Balancer with langs languages, each with n
// backends split 90/10 between two versions at a 95/5 ratio.
func benchBalancer(b *testing.B, langs, n int) *balancer.Balancer {
	b.Helper()
	bal, err := balancer.New(balancer.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for l := range langs {
		lang := fmt.Sprintf("lang%d", l)
		for i := range n {
			v := "1.0"
			if i%10 == 9 || n == 1 && l%2 == 1 {
				v = "2.0"
			}
			if err := bal.AddBackend(ctx, lang, v, fmt.Sprintf("http://10.0.%d.%d:%d", i/250, i%250, 8000+l)); err != nil {
				b.Fatal(err)
			}
		}
		if err := bal.SetRatio(ctx, lang, map[string]int{"1.0": 95, "2.0": 5}); err != nil {
			b.Fatal(err)
		}
	}
	return bal
}

func BenchmarkPick(b *testing.B) {
	for _, n := range []int{1, 10, 1000, 5000} {
		bal := benchBalancer(b, 1, n)
		b.Run(fmt.Sprintf("backends=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bal.Pick("lang0"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("backends=%d/parallel", n), func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := bal.Pick("lang0"); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkPickManyLanguages spreads parallel picks over 500 languages of
// 20 backends each (10,000 backends).
func BenchmarkPickManyLanguages(b *testing.B) {
	const langs = 500
	bal := benchBalancer(b, langs, 20)
	b.ResetTimer()
	names := make([]string, langs)
	for i := range names {
		names[i] = fmt.Sprintf("lang%d", i)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := bal.Pick(names[i%langs]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkPickAndReport is the per-request work of the Proxy on the
// Balancer: a pick and a success report.
func BenchmarkPickAndReport(b *testing.B) {
	bal := benchBalancer(b, 1, 10)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			be, err := bal.Pick("lang0")
			if err != nil {
				b.Fatal(err)
			}
			bal.ReportSuccess(be)
		}
	})
}

// benchProxy returns a Proxy (over transport; nil: its own forwarder) for
// python, with one loopback backend answering a small JSON; both end with
// the benchmark.
func benchProxy(b *testing.B, transport http.RoundTripper) *balancer.Proxy {
	b.Helper()
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"result":true,"details":"ok"}`)
	}))
	b.Cleanup(backend.Close)
	bal, err := balancer.New(balancer.Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := bal.AddBackend(context.Background(), "python", "1.0", backend.URL); err != nil {
		b.Fatal(err)
	}
	proxy, err := balancer.NewProxy(bal, balancer.ProxyOptions{Transport: transport})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(proxy.CloseIdleConnections)
	return proxy
}

// BenchmarkProxy forwards whole requests over loopback to one backend,
// with the built-in forwarder and with an http.Transport.
func BenchmarkProxy(b *testing.B) {
	for _, su := range setups[:2] { // the handler alone; BenchmarkFront has the servers
		b.Run(su.name, func(b *testing.B) {
			proxy := benchProxy(b, su.transport())
			const body = `{"code":"print('hello world')\n"}`
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := httptest.NewRequest(http.MethodPost, "/lint/python", strings.NewReader(body))
					rec := httptest.NewRecorder()
					proxy.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Fatalf("status %d: %s", rec.Code, rec.Body)
					}
				}
			})
		})
	}
}

// BenchmarkFront runs whole lint requests over loopback keep-alive
// connections through the Proxy behind net/http's server and behind
// balancer.Server, with a goroutine per connection and with its event
// loops (client, proxy and backend in this process, so the figures are
// for comparing the fronts, not absolute).
func BenchmarkFront(b *testing.B) {
	proxy := benchProxy(b, nil)
	const body = `{"code":"print('hello world')\n"}`
	request := []byte(fmt.Sprintf("POST /lint/python HTTP/1.1\r\nHost: lb\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body))

	fronts := []struct {
		name  string
		serve func(net.Listener) (stop func())
	}{
		{"net-http", func(ln net.Listener) func() {
			srv := &http.Server{Handler: proxy}
			go func() { _ = srv.Serve(ln) }()
			return func() { _ = srv.Close() }
		}},
		{"server", func(ln net.Listener) func() {
			srv, err := balancer.NewServer(proxy, balancer.ServerOptions{})
			if err != nil {
				b.Fatal(err)
			}
			go func() { _ = srv.Serve(ln) }()
			return func() { _ = srv.Close() }
		}},
		{"loop", func(ln net.Listener) func() {
			srv, err := balancer.NewServer(proxy, balancer.ServerOptions{EventLoop: true})
			if err != nil {
				b.Fatal(err)
			}
			go func() { _ = srv.Serve(ln) }()
			return func() { _ = srv.Close() }
		}},
	}
	for _, fr := range fronts {
		b.Run(fr.name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer fr.serve(ln)()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				nc, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					b.Error(err)
					return
				}
				defer nc.Close()
				br := bufio.NewReader(nc)
				for pb.Next() {
					if _, err := nc.Write(request); err != nil {
						b.Error(err)
						return
					}
					resp, err := http.ReadResponse(br, nil)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					if resp.StatusCode != http.StatusOK {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
				}
			})
		})
	}
}
