package balancer

import (
	"net/http"
	"time"

	"github.com/fleetkit/fleetkit/balancer/internal/h1"
)

// loopRouter is a Proxy as Server's event loop asks it: the same picks,
// retries, health reports, metrics and error answers as its ServeHTTP.
type loopRouter struct{ p *Proxy }

var _ h1.Router = loopRouter{}

func route(be *Backend) h1.Route {
	return h1.Route{Key: be, Addr: be.loopAddr, Host: be.lintURL.Host, Path: be.requestPath}
}

func (r loopRouter) Pick(lang string) (h1.Route, bool) {
	be, err := r.p.bal.Pick(lang)
	if err != nil {
		return h1.Route{}, false
	}
	return route(be), true
}

func (r loopRouter) Retry(lang string, tried []any, attempt int, start time.Time) (h1.Route, bool) {
	var buf [4]*Backend
	backends := buf[:0]
	for _, k := range tried {
		backends = append(backends, k.(*Backend))
	}
	next, ok := r.p.retry(lang, backends, attempt, start)
	if !ok {
		return h1.Route{}, false
	}
	return route(next), true
}

func (r loopRouter) Answered(rt h1.Route, status int, start time.Time) {
	r.p.reportAnswer(rt.Key.(*Backend), status, start)
}

func (r loopRouter) Failed(rt h1.Route, res h1.Outcome, err error) {
	be := rt.Key.(*Backend)
	switch res {
	case connFailed:
		r.p.reportFailure(be, failConnection, err)
	case clientGone:
		r.p.bal.reportNeutral(be) // not the backend's fault, and not logged
	default:
		r.p.neutral(be, err)
	}
}

func (r loopRouter) Failure(w http.ResponseWriter, lang string, rt h1.Route, res h1.Outcome, start time.Time) {
	if rt.Key == nil {
		r.p.noBackend(w, lang)
		return
	}
	r.p.fail(w, lang, rt.Key.(*Backend), res, start)
}

func (r loopRouter) Held(key any) bool { return r.p.bal.held(key.(*Backend)) }

func (r loopRouter) Timeout() time.Duration { return r.p.timeout }
func (r loopRouter) MaxBuffered() int64     { return r.p.maxResponse }
