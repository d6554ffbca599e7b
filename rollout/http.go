package rollout

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/fleetkit/fleetkit/internal/httpjson"
)

// DefaultMaxBody limits the request bodies of the Handler.
const DefaultMaxBody = 64 << 10

// DefaultOperationTimeout bounds one mutating request of the Handler.
const DefaultOperationTimeout = 10 * time.Minute

// HandlerOptions configure NewHandler. The zero value is ready to use.
type HandlerOptions struct {
	// MaxBody limits request bodies; 0 means DefaultMaxBody.
	MaxBody int64
	// OperationTimeout bounds a mutating request (create, update, ...).
	// It is detached from the client's connection: an update the client
	// gave up on still finishes. 0 means DefaultOperationTimeout.
	OperationTimeout time.Duration
	// Logger logs failed requests; nil means none.
	Logger *slog.Logger
	// Secret, when set, is what every mutating call (every POST) must
	// carry in the X-Secret-Key header (or as "Authorization: Bearer
	// <secret>"); a call without it is 403. Reads (/status, the page) stay
	// open. Compared in constant time, never logged. "" leaves the API open,
	// as the wire contract has it: then listen on loopback only.
	Secret string
}

// SecretHeader is the header that carries HandlerOptions.Secret (the
// balancer's admin API uses the same).
const SecretHeader = "X-Secret-Key"

// Handler is the machine manager's HTTP API (the wire contract's "Machine
// manager" section), relative to where it is mounted:
//
//	POST /create       {"lang"}            → {"status":"ok","ip":"127.0.0.1:34567"} once healthy
//	POST /remove       {"ip"}              → {"status":"ok"}; unknown ip 404 (alias /delete)
//	POST /init-update  {"lang","version"}  → {"status":"ok"}
//	POST /update       {"lang"}            → {"status":"ok"}; 400 at the last step
//	POST /rollback     {"lang"}            → {"status":"ok"}
//	POST /abort        {"lang"}            → {"status":"ok"}; back to the stable version at once (an addition)
//	GET  /status       {"linters":[{"<ip>":{"version","lang","request_count","is_healthy"}}]}
//	GET  /history      per language, each version's request rate, error rate and latency
//	                   over the last minutes, and the verdicts of the latest steps (an addition)
//	GET  /             an HTML status page (charts, verdicts, promote/abort/rollback buttons)
//
// Every POST must say Content-Type: application/json (415 otherwise: no
// cross-site form can send that without a CORS preflight, which this API
// never grants) and, when HandlerOptions.Secret is set, carry the secret
// (403 otherwise).
//
// Errors are {"status":"error","message"} with 400 (bad input: malformed
// JSON, unknown fields, a missing field, an impossible step), 403, 404
// (unknown language, machine or path), 405, 409 (a machine cap reached),
// 413, 415, 503 (the provider or the router failed) or 500. It is safe for
// concurrent use.
type Handler struct {
	m      *Manager
	opts   HandlerOptions
	mux    *http.ServeMux
	secret *[sha256.Size]byte // nil: no secret
}

// NewHandler returns the HTTP API of m.
func NewHandler(m *Manager, opts HandlerOptions) *Handler {
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.OperationTimeout <= 0 {
		opts.OperationTimeout = DefaultOperationTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{m: m, opts: opts, mux: http.NewServeMux()}
	if opts.Secret != "" {
		sum := sha256.Sum256([]byte(opts.Secret))
		h.secret = &sum
	}
	h.handle("/create", http.MethodPost, h.create)
	h.handle("/remove", http.MethodPost, h.remove)
	h.handle("/delete", http.MethodPost, h.remove)
	h.handle("/init-update", http.MethodPost, h.initUpdate)
	h.handle("/update", http.MethodPost, h.update)
	h.handle("/rollback", http.MethodPost, h.rollback)
	h.handle("/abort", http.MethodPost, h.abort)
	h.handle("/status", http.MethodGet, h.status)
	h.handle("/history", http.MethodGet, h.history)
	h.handle("/{$}", http.MethodGet, h.page)
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.writeError(w, r, httpjson.Errorf(http.StatusNotFound, "no such endpoint: %s", r.URL.Path))
	})
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func (h *Handler) handle(path, method string, f func(http.ResponseWriter, *http.Request) error) {
	h.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		if !httpjson.RequireMethod(w, r, method) {
			return
		}
		if method == http.MethodPost {
			if err := h.admit(r); err != nil {
				h.writeError(w, r, err)
				return
			}
		}
		if err := f(w, r); err != nil {
			h.writeError(w, r, err)
		}
	})
}

// admit checks a mutating call: the secret when one is set, then a JSON
// body.
func (h *Handler) admit(r *http.Request) error {
	if h.secret != nil {
		given := r.Header.Get(SecretHeader)
		if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && given == "" {
			given = v
		}
		sum := sha256.Sum256([]byte(given))
		if given == "" || subtle.ConstantTimeCompare(sum[:], h.secret[:]) != 1 {
			return httpjson.Errorf(http.StatusForbidden, "wrong or missing secret: send it in the %s header", SecretHeader)
		}
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return httpjson.Errorf(http.StatusUnsupportedMediaType, "Content-Type must be application/json, not %q", r.Header.Get("Content-Type"))
	}
	return nil
}

// writeError is the one place errors become HTTP answers.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	var he *httpjson.Error
	if errors.As(err, &he) {
		status = he.Status
	}
	if status >= 500 {
		h.opts.Logger.Warn("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	httpjson.Write(w, status, httpjson.Body{Status: "error", Message: err.Error()})
}

// operation returns the context of a mutating request: detached from the
// client, bounded by OperationTimeout.
func (h *Handler) operation(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), h.opts.OperationTimeout)
}

func (h *Handler) decode(w http.ResponseWriter, r *http.Request, v any) error {
	return httpjson.Decode(w, r, v, httpjson.DecodeOptions{MaxBody: h.opts.MaxBody, Strict: true})
}

type okAnswer struct {
	Status string `json:"status"`
}

var ok = okAnswer{Status: "ok"}

type langRequest struct {
	Lang string `json:"lang"`
}

type createAnswer struct {
	Status  string `json:"status"`
	IP      string `json:"ip"`
	Version string `json:"version"`
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var req langRequest
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	ctx, cancel := h.operation(r)
	defer cancel()
	mc, err := h.m.Create(ctx, req.Lang)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, createAnswer{Status: "ok", IP: mc.Address, Version: machineVersion(mc)})
	return nil
}

type removeRequest struct {
	IP string `json:"ip"`
}

func (h *Handler) remove(w http.ResponseWriter, r *http.Request) error {
	var req removeRequest
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	ctx, cancel := h.operation(r)
	defer cancel()
	if err := h.m.Remove(ctx, req.IP); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, ok)
	return nil
}

type initUpdateRequest struct {
	Lang    string `json:"lang"`
	Version string `json:"version"`
}

func (h *Handler) initUpdate(w http.ResponseWriter, r *http.Request) error {
	var req initUpdateRequest
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	if req.Version == "" {
		return fmt.Errorf("%w: version is empty", ErrInvalidRequest)
	}
	ctx, cancel := h.operation(r)
	defer cancel()
	return h.phaseAnswer(w, req.Lang, h.m.InitUpdate(ctx, req.Lang, req.Version))
}

func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	var req langRequest
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	ctx, cancel := h.operation(r)
	defer cancel()
	return h.phaseAnswer(w, req.Lang, h.m.Update(ctx, req.Lang))
}

func (h *Handler) rollback(w http.ResponseWriter, r *http.Request) error {
	var req langRequest
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	ctx, cancel := h.operation(r)
	defer cancel()
	return h.phaseAnswer(w, req.Lang, h.m.Rollback(ctx, req.Lang))
}

func (h *Handler) abort(w http.ResponseWriter, r *http.Request) error {
	var req langRequest
	if err := h.decode(w, r, &req); err != nil {
		return err
	}
	ctx, cancel := h.operation(r)
	defer cancel()
	return h.phaseAnswer(w, req.Lang, h.m.Abort(ctx, req.Lang))
}

// phaseJSON is the rollout phase of a language as the API reports it
// (an addition to the contract).
type phaseJSON struct {
	Current  string         `json:"current"`
	Target   string         `json:"target,omitempty"`
	Step     int            `json:"step"`
	Steps    int            `json:"steps"`
	Percent  int            `json:"percent"`
	Previous string         `json:"previous,omitempty"`
	Ratio    map[string]int `json:"ratio"`
	// Machines is how many machines the language should have.
	Machines int `json:"machines"`
}

type phaseAnswer struct {
	Status  string    `json:"status"`
	Rollout phaseJSON `json:"rollout"`
}

func (h *Handler) phaseJSON(lang string) phaseJSON {
	ph, _ := h.m.Phase(lang)
	pj := phaseJSON{Current: ph.Current, Target: ph.Target, Steps: len(h.m.opts.Steps),
		Percent: ph.Percent(h.m.opts.Steps), Previous: ph.Previous, Ratio: h.m.desiredRatio(lang)}
	pj.Machines, _ = h.m.Desired(lang)
	if ph.Updating() {
		pj.Step = ph.Step + 1
	}
	return pj
}

func (h *Handler) phaseAnswer(w http.ResponseWriter, lang string, err error) error {
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, phaseAnswer{Status: "ok", Rollout: h.phaseJSON(lang)})
	return nil
}

// linterJSON is one machine in GET /status.
type linterJSON struct {
	Version      string `json:"version"`
	Lang         string `json:"lang"`
	RequestCount int64  `json:"request_count"`
	IsHealthy    bool   `json:"is_healthy"`
	// InRotation (an addition to the contract) says the balancer sends
	// the machine traffic: it holds it and has not ejected it. EjectedUntil
	// is when an ejected one comes back.
	InRotation   bool       `json:"in_rotation"`
	EjectedUntil *time.Time `json:"ejected_until,omitempty"`
}

type statusAnswer struct {
	Linters []map[string]linterJSON `json:"linters"`
	// Rollouts is an addition to the contract: every language's phase.
	Rollouts map[string]phaseJSON `json:"rollouts"`
}

func (h *Handler) status(w http.ResponseWriter, r *http.Request) error {
	st, err := h.m.Status(r.Context())
	if err != nil {
		return err
	}
	ans := statusAnswer{Linters: []map[string]linterJSON{}, Rollouts: map[string]phaseJSON{}}
	for _, l := range st.Languages {
		for _, mc := range l.Machines {
			lj := linterJSON{Version: mc.Version, Lang: mc.Language, RequestCount: mc.RequestCount, IsHealthy: mc.Healthy,
				InRotation: mc.Routed && !mc.Ejected}
			if mc.Ejected && !mc.EjectedUntil.IsZero() {
				lj.EjectedUntil = &mc.EjectedUntil
			}
			ans.Linters = append(ans.Linters, map[string]linterJSON{mc.Address: lj})
		}
		if _, ok := h.m.langs[l.Language]; ok {
			ans.Rollouts[l.Language] = h.phaseJSON(l.Language)
		}
	}
	httpjson.Write(w, http.StatusOK, ans)
	return nil
}

// statsJSON is a WindowStats in JSON; absent figures are null.
type statsJSON struct {
	Requests  float64  `json:"requests"`
	Failures  float64  `json:"failures"`
	Rate      *float64 `json:"rate"`
	ErrorRate *float64 `json:"error_rate"`
	P50       *float64 `json:"p50"`
	P99       *float64 `json:"p99"`
}

func statsOf(w WindowStats) statsJSON {
	return statsJSON{Requests: w.Requests, Failures: w.Failures, Rate: finite(w.Rate()),
		ErrorRate: finite(w.ErrorRate()), P50: finite(w.P50), P99: finite(w.P99)}
}

// verdictJSON is a Verdict in JSON.
type verdictJSON struct {
	At              time.Time `json:"at"`
	Since           time.Time `json:"since"`
	From            string    `json:"from"`
	Version         string    `json:"version"`
	Step            int       `json:"step"`
	Percent         int       `json:"percent"`
	Result          string    `json:"result"`
	Reason          string    `json:"reason"`
	MachineFailures int       `json:"machine_failures"`
	New             statsJSON `json:"new"`
	Stable          statsJSON `json:"stable"`
}

type historyLang struct {
	Phase    phaseJSON     `json:"rollout"`
	Series   []Series      `json:"series"`
	Verdicts []verdictJSON `json:"verdicts"`
}

type historyAnswer struct {
	Languages map[string]historyLang `json:"languages"`
}

func (h *Handler) history(w http.ResponseWriter, r *http.Request) error {
	st, err := h.m.Status(r.Context())
	if err != nil {
		return err
	}
	ans := historyAnswer{Languages: map[string]historyLang{}}
	for _, l := range st.Languages {
		if _, ok := h.m.langs[l.Language]; !ok {
			continue
		}
		hl := historyLang{Phase: h.phaseJSON(l.Language), Series: l.Series, Verdicts: []verdictJSON{}}
		if hl.Series == nil {
			hl.Series = []Series{}
		}
		for _, v := range l.Verdicts {
			hl.Verdicts = append(hl.Verdicts, verdictJSON{At: v.At, Since: v.Since, From: v.From, Version: v.Version,
				Step: v.Step, Percent: v.Percent, Result: v.Result, Reason: v.Reason, MachineFailures: v.MachineFailures,
				New: statsOf(v.New), Stable: statsOf(v.Stable)})
		}
		ans.Languages[l.Language] = hl
	}
	httpjson.Write(w, http.StatusOK, ans)
	return nil
}
