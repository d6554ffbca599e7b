package balancer

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"

	"github.com/fleetkit/fleetkit/internal/httpjson"
)

// SecretHeader is the header that may carry the admin secret instead of the
// "secretKey" body field.
const SecretHeader = "X-Secret-Key"

// AdminOptions configures an Admin.
type AdminOptions struct {
	// Secret is the admin secret every call must carry. Required.
	Secret string
	// MaxBody limits request bodies. 0 means httpjson.DefaultMaxBody.
	MaxBody int64
	// Metrics, when set, is served at GET /metrics to callers that give
	// the secret (X-Secret-Key, or "Authorization: Bearer <secret>" as a
	// Prometheus scrape config sends it): on a listener that also serves
	// the public API, /metrics is admin-only. nil: no /metrics here.
	Metrics http.Handler
}

// Admin is the internal API of the load balancer, an http.Handler serving
// (relative to where it is mounted):
//
//	GET  /health    {"status":"ok"}; with the secret (header) also the
//	                backends per language and version, the ratios, the
//	                ejected backends and the Generation token
//	POST /add       {"lang","version","uri","secretKey"}
//	POST /remove    {"uri","secretKey"} (optional "lang")
//	POST /ratio     {"lang","versionRatio":{"1.0":95,"2.0":5},"secretKey"};
//	                400 when no version with weight has a backend while
//	                the language has some (it would answer 503 for good)
//	GET  /backends  the full Status (secret in the header)
//	GET  /metrics   AdminOptions.Metrics (secret in the header), if set
//
// The secret travels as "secretKey" in the body or in the X-Secret-Key
// header; when both are given both must match. It is compared in constant
// time (of SHA-256 digests, so the length does not leak either) and never
// logged or echoed. A wrong header secret is refused before the body is
// read; otherwise the body is decoded first (400 for bad JSON, unknown
// fields, a wrong type; 413 when too large), then the secret is checked
// (403), then the request is validated (400 with the reason, 404 for an
// unknown uri on /remove). A wrong method is 405, an unknown path 404.
// Successful calls answer 200 {"status":"ok"}.
//
// An Admin is safe for concurrent use.
type Admin struct {
	bal     *Balancer
	secret  [sha256.Size]byte
	maxBody int64
	metrics http.Handler
}

// NewAdmin returns the admin API of b.
func NewAdmin(b *Balancer, opts AdminOptions) (*Admin, error) {
	if b == nil {
		return nil, errors.New("balancer: NewAdmin needs a Balancer")
	}
	if opts.Secret == "" {
		return nil, errors.New("balancer: AdminOptions.Secret is required")
	}
	return &Admin{bal: b, secret: sha256.Sum256([]byte(opts.Secret)), maxBody: opts.MaxBody, metrics: opts.Metrics}, nil
}

type addRequest struct {
	Lang      string `json:"lang"`
	Version   string `json:"version"`
	URI       string `json:"uri"`
	SecretKey string `json:"secretKey"`
}

type removeRequest struct {
	URI       string `json:"uri"`
	Lang      string `json:"lang"`
	SecretKey string `json:"secretKey"`
}

type ratioRequest struct {
	Lang         string         `json:"lang"`
	VersionRatio map[string]int `json:"versionRatio"`
	SecretKey    string         `json:"secretKey"`
}

type okAnswer struct {
	Status string `json:"status"`
}

// backendsAnswer is a Status with "status":"ok" beside it.
type backendsAnswer struct {
	Status     string                    `json:"status"`
	RatioTotal int                       `json:"ratioTotal"`
	Languages  map[string]LanguageStatus `json:"languages"`
}

func (a *Admin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var err error
	switch r.URL.Path {
	case "/health":
		err = a.health(w, r)
	case "/backends":
		err = a.backends(w, r)
	case "/add":
		err = a.add(w, r)
	case "/remove":
		err = a.remove(w, r)
	case "/ratio":
		err = a.ratio(w, r)
	case "/metrics":
		err = a.serveMetrics(w, r)
	default:
		err = httpjson.Errorf(http.StatusNotFound, "no such endpoint %s", r.URL.Path)
	}
	if err != nil {
		writeError(w, err)
	}
}

// writeError is the one place where the admin API maps errors to statuses.
func writeError(w http.ResponseWriter, err error) {
	var he *httpjson.Error
	if errors.As(err, &he) {
		httpjson.WriteError(w, he)
		return
	}
	httpjson.WriteError(w, httpjson.Errorf(statusOfError(err), "%s", err.Error()))
}

var errForbidden = httpjson.Errorf(http.StatusForbidden, "wrong or missing secret")

// match reports whether s is the secret, in constant time.
func (a *Admin) match(s string) bool {
	got := sha256.Sum256([]byte(s))
	return subtle.ConstantTimeCompare(got[:], a.secret[:]) == 1
}

// headerSecret returns the header secret and whether it was given; a given
// but wrong one is an error.
func (a *Admin) headerSecret(r *http.Request) (given bool, err error) {
	v, ok := r.Header[SecretHeader]
	if !ok {
		return false, nil
	}
	if len(v) != 1 || !a.match(v[0]) {
		return true, errForbidden
	}
	return true, nil
}

// authorize checks the secret of a POST whose body was decoded.
func (a *Admin) authorize(r *http.Request, bodySecret string) error {
	given, err := a.headerSecret(r)
	if err != nil {
		return err
	}
	if bodySecret != "" {
		if !a.match(bodySecret) {
			return errForbidden
		}
		return nil
	}
	if !given {
		return errForbidden
	}
	return nil
}

// decode reads a POST body after refusing a wrong header secret up front.
func (a *Admin) decode(w http.ResponseWriter, r *http.Request, v any, secret *string) error {
	if _, err := a.headerSecret(r); err != nil {
		return err
	}
	if err := httpjson.Decode(w, r, v, httpjson.DecodeOptions{MaxBody: a.maxBody, Strict: true}); err != nil {
		return err
	}
	return a.authorize(r, *secret)
}

func (a *Admin) health(w http.ResponseWriter, r *http.Request) error {
	if !httpjson.RequireMethod(w, r, http.MethodGet) {
		return nil
	}
	given, err := a.headerSecret(r)
	if err != nil {
		return err
	}
	if !given {
		httpjson.Write(w, http.StatusOK, okAnswer{Status: "ok"})
		return nil
	}
	h, err := a.bal.Health(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, h)
	return nil
}

func (a *Admin) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	if a.metrics == nil {
		return httpjson.Errorf(http.StatusNotFound, "no such endpoint %s", r.URL.Path)
	}
	if !httpjson.RequireMethod(w, r, http.MethodGet) {
		return nil
	}
	given, err := a.headerSecret(r)
	if err != nil {
		return err
	}
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); !given && (!ok || !a.match(bearer)) {
		return errForbidden
	}
	a.metrics.ServeHTTP(w, r)
	return nil
}

func (a *Admin) backends(w http.ResponseWriter, r *http.Request) error {
	if !httpjson.RequireMethod(w, r, http.MethodGet) {
		return nil
	}
	given, err := a.headerSecret(r)
	if err != nil {
		return err
	}
	if !given {
		return errForbidden
	}
	st, err := a.bal.Backends(r.Context())
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, backendsAnswer{Status: "ok", RatioTotal: st.RatioTotal, Languages: st.Languages})
	return nil
}

func (a *Admin) add(w http.ResponseWriter, r *http.Request) error {
	if !httpjson.RequireMethod(w, r, http.MethodPost) {
		return nil
	}
	var req addRequest
	if err := a.decode(w, r, &req, &req.SecretKey); err != nil {
		return err
	}
	if err := required("lang", req.Lang, "version", req.Version, "uri", req.URI); err != nil {
		return err
	}
	if err := a.bal.AddBackend(r.Context(), req.Lang, req.Version, req.URI); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, okAnswer{Status: "ok"})
	return nil
}

func (a *Admin) remove(w http.ResponseWriter, r *http.Request) error {
	if !httpjson.RequireMethod(w, r, http.MethodPost) {
		return nil
	}
	var req removeRequest
	if err := a.decode(w, r, &req, &req.SecretKey); err != nil {
		return err
	}
	if err := required("uri", req.URI); err != nil {
		return err
	}
	if err := a.bal.removeBackend(r.Context(), req.Lang, req.URI); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, okAnswer{Status: "ok"})
	return nil
}

func (a *Admin) ratio(w http.ResponseWriter, r *http.Request) error {
	if !httpjson.RequireMethod(w, r, http.MethodPost) {
		return nil
	}
	var req ratioRequest
	if err := a.decode(w, r, &req, &req.SecretKey); err != nil {
		return err
	}
	if err := required("lang", req.Lang); err != nil {
		return err
	}
	if req.VersionRatio == nil {
		return httpjson.Errorf(http.StatusBadRequest, "missing field versionRatio")
	}
	if err := a.bal.SetRatio(r.Context(), req.Lang, req.VersionRatio); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, okAnswer{Status: "ok"})
	return nil
}

// required returns a 400 naming the first empty field of name, value pairs.
func required(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return httpjson.Errorf(http.StatusBadRequest, "missing field %s", pairs[i])
		}
	}
	return nil
}
