package balancer

import "errors"

// Errors returned by this package. The Admin handler maps them to HTTP
// statuses in one place (see writeError), and Client maps the statuses back,
// so errors.Is works the same against an in-process *Balancer and a remote
// one reached through *Client.
var (
	// ErrNoBackend means no healthy backend can serve the language: it has
	// none, or every version with weight has lost all of its backends.
	// HTTP 503.
	ErrNoBackend = errors.New("balancer: no backend can serve")
	// ErrUnknownBackend is returned when removing or readmitting a URI that
	// the balancer does not hold. HTTP 404.
	ErrUnknownBackend = errors.New("balancer: unknown backend")
	// ErrInvalidBackend wraps every reason a backend is refused: an empty
	// language or version, a URI that is not an absolute http(s) URL. HTTP 400.
	ErrInvalidBackend = errors.New("balancer: invalid backend")
	// ErrInvalidRatio wraps every reason a ratio is refused: a negative
	// weight, an empty version, a sum other than the configured total.
	// HTTP 400.
	ErrInvalidRatio = errors.New("balancer: invalid ratio")
	// ErrForbidden is what Client returns for a 403: the admin secret was
	// missing or wrong.
	ErrForbidden = errors.New("balancer: wrong or missing admin secret")
)
