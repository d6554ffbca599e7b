package httpjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
)

// DefaultMaxBody is the request body limit used when a handler sets none.
const DefaultMaxBody = 1 << 20

// Error is an error that carries the HTTP status it should be answered with.
type Error struct {
	Status int
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// Errorf returns an *Error with status and a formatted message.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Msg: fmt.Sprintf(format, args...)}
}

// StatusOf returns the status carried by err, or 500.
func StatusOf(err error) int {
	var he *Error
	if errors.As(err, &he) {
		return he.Status
	}
	return http.StatusInternalServerError
}

// Body is the error body of every fleetkit HTTP API.
type Body struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// Write answers with status and v encoded as JSON.
func Write(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"status":"error","message":"encoding the answer failed"}`)
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	// A stated length lets a proxy pass a large answer on as it comes
	// (net/http would otherwise chunk anything over 2 KiB).
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// WriteError answers with err's status (see StatusOf) and the error body.
func WriteError(w http.ResponseWriter, err error) {
	Write(w, StatusOf(err), Body{Status: "error", Message: err.Error()})
}

// DecodeOptions tunes Decode.
type DecodeOptions struct {
	// MaxBody limits the body; 0 means DefaultMaxBody.
	MaxBody int64
	// Strict rejects fields that v does not declare.
	Strict bool
}

// Decode reads r's body as one JSON value into v. Every failure is an
// *Error: 413 for a body over the limit, 400 for anything malformed.
func Decode(w http.ResponseWriter, r *http.Request, v any, opts DecodeOptions) error {
	limit := opts.MaxBody
	if limit <= 0 {
		limit = DefaultMaxBody
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	if opts.Strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return decodeError(err, limit)
	}
	// A second value (or trailing garbage) is malformed input too.
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		if err == nil {
			return Errorf(http.StatusBadRequest, "invalid JSON: more than one value in body")
		}
		return decodeError(err, limit)
	}
	return nil
}

func decodeError(err error, limit int64) error {
	var (
		maxErr    *http.MaxBytesError
		syntaxErr *json.SyntaxError
		typeErr   *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &maxErr):
		return Errorf(http.StatusRequestEntityTooLarge, "request body too large: limit is %d bytes", limit)
	case errors.Is(err, io.EOF):
		return Errorf(http.StatusBadRequest, "invalid JSON: empty body")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return Errorf(http.StatusBadRequest, "invalid JSON: unexpected end of body")
	case errors.As(err, &syntaxErr):
		return Errorf(http.StatusBadRequest, "invalid JSON at byte %d: %v", syntaxErr.Offset, err)
	case errors.As(err, &typeErr):
		return Errorf(http.StatusBadRequest, "invalid JSON: field %q must be %s, not %s", typeErr.Field, typeErr.Type, typeErr.Value)
	default:
		// DisallowUnknownFields has no typed error: its message names the field.
		return Errorf(http.StatusBadRequest, "invalid JSON: %v", err)
	}
}

// RequireMethod answers 405 with an Allow header and returns false when r's
// method is not method.
func RequireMethod(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || (method == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", method)
	WriteError(w, Errorf(http.StatusMethodNotAllowed, "method %s not allowed: use %s", r.Method, method))
	return false
}

// Recover wraps h so that a panic in it is answered 500 with the error body
// and logged (with the method and path, never the body or headers), instead
// of net/http dropping the client's connection without an answer. The
// connection is closed after the answer: the handler's state is unknown.
// http.ErrAbortHandler keeps its meaning and is re-panicked. A nil logger
// means slog.Default().
func Recover(h http.Handler, logger *slog.Logger) http.Handler {
	return RecoverWith(h, logger, func(w http.ResponseWriter, _ *http.Request) {
		WriteError(w, Errorf(http.StatusInternalServerError, "internal error"))
	})
}

// RecoverWith is Recover with the answer written by answer, for an API
// whose error body has another shape.
func RecoverWith(h http.Handler, logger *slog.Logger, answer func(http.ResponseWriter, *http.Request)) http.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rw := &wroteHeader{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			LogPanic(logger, r, v)
			if rw.wrote {
				// Part of an answer is out: only cutting the connection
				// tells the client it is incomplete.
				panic(http.ErrAbortHandler)
			}
			w.Header().Set("Connection", "close")
			answer(w, r)
		}()
		h.ServeHTTP(rw, r)
	})
}

// LogPanic logs v, recovered from a panicking handler serving r, as
// Recover does: the method, the path and the stack, never the body or
// headers. Servers that recover panics themselves use it for the same log
// line.
func LogPanic(logger *slog.Logger, r *http.Request, v any) {
	logger.Error("http handler panicked", "method", r.Method, "path", strconv.Quote(r.URL.Path),
		"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
}

// wroteHeader records whether a handler started its answer.
type wroteHeader struct {
	http.ResponseWriter
	wrote bool
}

func (w *wroteHeader) WriteHeader(code int) {
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *wroteHeader) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *wroteHeader) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// StatusWriter is an http.ResponseWriter that remembers the status of its
// answer (Status: 0 until the handler writes), for request metrics.
type StatusWriter struct {
	http.ResponseWriter
	Status int
}

func (w *StatusWriter) WriteHeader(code int) {
	if w.Status == 0 {
		w.Status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.Status == 0 {
		w.Status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
