package h1

import (
	"net/http"
	"net/netip"
	"time"
)

// The event loop: on Linux, a Server with a Router serves the fast path
// from one epoll loop per core (GOMAXPROCS of them), client and upstream
// connections of a request on the same loop, as NGINX's workers do. A
// goroutine per connection costs, per request, a park and an unpark on the
// runtime's poller, a read that finds nothing before each wait, and the
// sleeping and waking of idle threads looking for work (BENCHMARKS.md,
// issue 23); a loop reads only what epoll said is there and hands nothing
// between threads.
//
// The loop takes only the common exchange: a request of the fast path's
// shape, an upstream given by IP address, and an upstream answer of the
// common shape (HTTP/1.1, a final status, framed by one Content-Length or
// chunked, or a 204 or 304; a Connection header is honoured; one over
// MaxBuffered streams, or is TooLarge when chunked). At anything else the
// connection leaves the loop for the goroutine path with the request's
// bytes unread, which serves it as without a loop — including, when the
// answer was the unusual part (a 1xx first, no framing, HTTP/1.0, a
// Trailer header, a head over 64 KiB, malformed framing), sending the
// request again (a lint is idempotent, and the first answer was not passed
// on).

// Route is one upstream attempt's target, as a Router gives it.
type Route struct {
	// Key is the Router's handle of the upstream; the loop keeps its
	// idle connections per Key.
	Key any
	// Addr is the upstream's IP address and port. An invalid Addr (a host
	// name, say) sends the connection to the goroutine path.
	Addr netip.AddrPort
	// Host is the Host header of the request, and Path its escaped path.
	Host, Path string
}

// Router is what the event loop asks of the proxy behind it. Its methods
// are called on the loop's goroutine and must not block.
type Router interface {
	// Pick returns the upstream for a request to name; false when none
	// can take it (the request is answered with Failure).
	Pick(name string) (Route, bool)
	// Retry returns another upstream after attempt number attempt on
	// tried's last failed to connect or to answer, never one of tried;
	// false when the request may not be retried (Failure answers it).
	Retry(name string, tried []any, attempt int, start time.Time) (Route, bool)
	// Answered reports a whole answer of status from rt, for a request
	// that began at start.
	Answered(rt Route, status int, start time.Time)
	// Failed reports an attempt on rt that ended without an answer, as res
	// says (ConnFailed, TimedOut or ClientGone), with err.
	Failed(rt Route, res Outcome, err error)
	// Failure writes to w the answer to a request that got none: rt is
	// the last upstream tried (Key nil: none was), res how its attempt
	// ended. For ClientGone nobody reads the answer.
	Failure(w http.ResponseWriter, name string, rt Route, res Outcome, start time.Time)
	// Held reports whether the upstream of key may still be picked: the
	// loop closes the idle connections of one that may not.
	Held(key any) bool
	// Timeout bounds one attempt (connecting, sending and reading the
	// answer, a streamed one included); MaxBuffered is the largest answer
	// kept whole before the client gets a byte.
	Timeout() time.Duration
	MaxBuffered() int64
}
