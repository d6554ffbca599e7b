// Package balancer is fleetkit's weighted load balancer for linter fleets:
// the library behind examples/loadbalancer.
//
// A Balancer holds, per language (any name; none is hard-coded), a set of
// backends (linter machines identified by URI, each of one version) and a
// ratio of version weights summing to a configurable total (100 by
// default). Pick returns the next backend with the built-in policy,
// SmoothWeighted: NGINX's smooth weighted round robin between versions, then
// round robin among the backends of the chosen version. The split is exact,
// not statistical: every window of sum-of-weights consecutive picks after a
// change gives each version exactly its weight. With 60/40 and two backends
// per version, 100 picks give 30, 30, 20, 20; with nine backends on 1.0 and
// one on 2.0 at 99/1, 11 to each 1.0 backend and 1 to the 2.0 one.
//
// Until SetRatio is called for a language, every version present shares
// equally (so with a single version, plain round robin). Versions a ratio
// leaves out (or weighs 0) get nothing. A version with weight but no healthy
// backend hands its share to the others in proportion to their weights;
// when none is left, Pick returns ErrNoBackend. SetRatio refuses a ratio
// whose weighted versions have no backend at all while the language has
// some. Generation is a token that changes with every change of backends
// or ratios and differs between Balancer values, and Routes lists what a
// language holds, so a machine manager sees cheaply whether the balancer
// (restarted, or changed by hand) still holds what it set. Every change (a backend
// added, removed, ejected or readmitted, a ratio set) restarts the sequence.
//
// Proxy is the public API, POST /lint/{language}, forwarding to the picked
// backend's /lint (over its own keep-alive HTTP/1.1 forwarder for http://
// backends, http.Transport for https://) with retries after connection
// failures, each on a backend not tried yet and preferably not already
// failing (PickRetry), and 502/503/504 JSON errors, never a 200 for a
// failure. Answers up to ProxyOptions.MaxResponseBody are buffered (a
// backend dying mid-answer is retried or a 502); larger ones with a
// Content-Length are streamed, and cut — never completed — if the backend
// dies mid-way.
//
// Passive health follows Envoy's outlier detection: EjectAfter consecutive
// failures — 5xx answers and connection failures, nothing a request causes
// (an answer too large, a lint past the timeout, a client that leaves) —
// eject a backend for BaseEjectionTime, longer for each ejection in a row
// (up to MaxEjectionTime); it comes back when that time is over, or sooner
// when a Checker sees it answer /health. At most MaxEjectionPercent of a
// language's backends are out at once, and never its last one. Admin is the
// internal API (/health, /add, /remove, /ratio, /backends) behind the admin
// secret; /health with the secret lists the ejected backends. Client drives
// a remote Admin, never sending the secret to another host.
//
// Server serves a Proxy without net/http's server on the common path: plain
// HTTP/1.1 lint requests are parsed and answered by its own connection
// loop, and a connection that sends anything else is handed, unread bytes
// included, to a net/http server running a fallback handler. With
// ServerOptions.EventLoop (Linux) the common path runs on one epoll loop
// per core that holds each request's client and upstream connections, as
// NGINX's workers do: less CPU per request than NGINX on the bench of
// BENCHMARKS.md, where a goroutine per connection spends half as much
// again. It is how examples/loadbalancer serves its public listener; a
// Proxy mounted in any http.Handler tree works the same, only slower.
//
// # Concurrency
//
// Every exported type is safe for concurrent use. The pick path takes no
// lock and does not allocate: each language publishes an immutable Picker
// that is rebuilt and swapped atomically on every change (the idea of
// grpc-go's balancer.Picker), and SmoothWeighted precomputes one cycle of
// its sequence so that a pick is two atomic increments. The methods that
// change state serialize on a mutex and never block on I/O. Both *Balancer
// and *Client satisfy Router, the method set a machine manager needs.
//
// # Usage
//
//	reg := prometheus.NewRegistry()
//	b, err := balancer.New(balancer.Options{Registerer: reg})
//	if err != nil { ... }
//	proxy, err := balancer.NewProxy(b, balancer.ProxyOptions{Registerer: reg})
//	if err != nil { ... }
//	admin, err := balancer.NewAdmin(b, balancer.AdminOptions{Secret: secret})
//	if err != nil { ... }
//	mux := http.NewServeMux()
//	mux.Handle("/lint/", proxy)
//	mux.Handle("/", admin)
//	front, err := balancer.NewServer(proxy, balancer.ServerOptions{Fallback: mux})
//	if err != nil { ... }
//	go front.Serve(ln) // front.Shutdown(ctx) drains
//
//	_ = b.AddBackend(ctx, "python", "1.0", "http://127.0.0.1:34567")
//	_ = b.SetRatio(ctx, "python", map[string]int{"1.0": 95, "2.0": 5})
//
// Metrics (all prefixed fleetkit_balancer_): requests_total{language,
// version,backend,code} (one per upstream attempt), backend_failures_total
// {language,version,reason} (what passive health counts),
// request_duration_seconds{language,version}, retries_total{language},
// ejections_total{language,version}, weight and effective_weight{language,
// version}. Label values come from a closed set whatever clients send: a
// language the Balancer does not hold is "other".
package balancer
