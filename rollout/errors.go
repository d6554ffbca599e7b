package rollout

import (
	"errors"
	"net/http"
)

// Errors returned by this package. The HTTP handler maps them to statuses
// in one place (see writeError); callers test them with errors.Is.
var (
	// ErrInvalidConfig wraps every reason Options are refused (and those
	// of a configuration file that builds them).
	ErrInvalidConfig = errors.New("rollout: invalid configuration")
	// ErrInvalidRequest is a request with a missing or malformed field. HTTP 400.
	ErrInvalidRequest = errors.New("rollout: invalid request")
	// ErrUnknownLanguage is a language the configuration does not name. HTTP 404.
	ErrUnknownLanguage = errors.New("rollout: unknown language")
	// ErrUnknownVersion is a version the configuration does not name for
	// the language. HTTP 400.
	ErrUnknownVersion = errors.New("rollout: unknown version")
	// ErrUnknownMachine is an address the manager does not own. HTTP 404.
	ErrUnknownMachine = errors.New("rollout: unknown machine")
	// ErrNoUpdate is an update or rollback while no update is in progress
	// (and none just completed). HTTP 400.
	ErrNoUpdate = errors.New("rollout: no update in progress")
	// ErrUpdateInProgress is an init-update while another update of the
	// language is in progress. HTTP 400.
	ErrUpdateInProgress = errors.New("rollout: an update is already in progress")
	// ErrLastStep is an update at the last step. HTTP 400.
	ErrLastStep = errors.New("rollout: already at the last step")
	// ErrSameVersion is an init-update to the version already running. HTTP 400.
	ErrSameVersion = errors.New("rollout: version is already the current one")
	// ErrMachines wraps failures of the machine provider (a machine that
	// did not start, could not be removed). HTTP 503.
	ErrMachines = errors.New("rollout: machine provider failed")
	// ErrRouter wraps failures of the Router (the balancer did not answer
	// or refused a change). HTTP 503.
	ErrRouter = errors.New("rollout: router failed")
	// ErrTooManyMachines is a create beyond MaxMachinesPerLanguage or
	// MaxMachines. HTTP 409.
	ErrTooManyMachines = errors.New("rollout: too many machines")
	// ErrClosed is returned after the Manager's Run has returned.
	ErrClosed = errors.New("rollout: manager stopped")
)

// statusOf maps an error of this package to its HTTP status.
func statusOf(err error) int {
	switch {
	case errors.Is(err, ErrInvalidRequest), errors.Is(err, ErrUnknownVersion),
		errors.Is(err, ErrNoUpdate), errors.Is(err, ErrUpdateInProgress),
		errors.Is(err, ErrLastStep), errors.Is(err, ErrSameVersion):
		return http.StatusBadRequest
	case errors.Is(err, ErrUnknownLanguage), errors.Is(err, ErrUnknownMachine):
		return http.StatusNotFound
	case errors.Is(err, ErrTooManyMachines):
		return http.StatusConflict
	case errors.Is(err, ErrMachines), errors.Is(err, ErrRouter), errors.Is(err, ErrClosed):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}
