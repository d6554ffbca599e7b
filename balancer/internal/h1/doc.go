// Package h1 is the balancer's hand-written HTTP/1.1 engine: a Server whose
// fast path parses one plain shape of request (POST {prefix}{name} with a
// Content-Length body) and hands every other connection to net/http, and a
// client (Pool) that sends a request over a pooled keep-alive connection and
// reads the answer in the caller's goroutine. On Linux, a Server given a
// Router serves the fast path from epoll event loops instead (loop.go; the
// loop in loop_linux.go, its client side in loop_client_linux.go, its
// upstream side in loop_upstream_linux.go), which leave every connection
// they do not fully understand to the goroutine path.
//
// Both exist because net/http spends more per request than proxying a lint
// request costs (see balancer.Server and BENCHMARKS.md). Each parser takes
// only what net/http parses alike — the fuzz tests hold them to that — and
// leaves the rest to net/http.
//
// A Server and a Pool are safe for concurrent use; every goroutine a Server
// starts ends by Shutdown or Close.
package h1
