package agentapi

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/internal/httpjson"
)

// Store is what the API reads and writes: a fleet.Store that keeps agent
// reports (fleet/inmem, fleet/sqlite and fleet/postgres are).
type Store interface {
	fleet.Store
	fleet.AgentReports
}

// Defaults of Options.
const (
	// MaxWait bounds a long-poll's ?wait.
	MaxWait             = 60 * time.Second
	defaultPollInterval = 500 * time.Millisecond
	defaultMaxWaiters   = 256
	// maxClusterWaiters bounds the long-polls of one cluster, so that one
	// cluster's token cannot take every waiter slot.
	maxClusterWaiters = 4
	// maxBody bounds a request body.
	maxBody = 1 << 20
)

// Options configures a Handler.
type Options struct {
	// Kind is the fleet kind served (required).
	Kind fleet.Kind
	// Secret signs the cluster tokens (required, at least 16 bytes).
	Secret []byte
	// PollInterval is how often a long-poll reads the desired instances
	// again (0: 500ms): the store is the only channel between replicas.
	PollInterval time.Duration
	// MaxWaiters bounds the long-polls waiting at once (0: 256), four per
	// cluster at most; one more is answered 503 with Retry-After.
	MaxWaiters int
	// Logger receives internal errors (nil: slog.Default()). Tokens are
	// never logged.
	Logger *slog.Logger
	// Registerer receives the agent API's metrics (nil: none): requests
	// by endpoint and status, and each cluster's last heartbeat.
	Registerer prometheus.Registerer
}

// Handler is the agent API of one kind. Safe for concurrent use.
type Handler struct {
	st     Store
	kind   fleet.Kind
	secret []byte
	poll   time.Duration
	// waiters holds one slot per long-poll waiting.
	waiters chan struct{}
	log     *slog.Logger
	base    string
	m       *metrics

	mu sync.Mutex
	// byCluster counts the long-polls waiting per cluster; guarded by mu.
	byCluster map[string]int
}

var _ http.Handler = (*Handler)(nil)

// Errors of New.
var (
	// ErrInvalid is an invalid Options.
	ErrInvalid = errors.New("agentapi: invalid options")
)

// New validates opts and returns the handler.
func New(st Store, opts Options) (*Handler, error) {
	if st == nil {
		return nil, fmt.Errorf("%w: no store", ErrInvalid)
	}
	kind, err := opts.Kind.Normalize()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	if len(opts.Secret) < 16 {
		return nil, fmt.Errorf("%w: the token secret must be at least 16 bytes", ErrInvalid)
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = defaultPollInterval
	}
	if opts.MaxWaiters <= 0 {
		opts.MaxWaiters = defaultMaxWaiters
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	m, err := newMetrics(opts.Registerer, kind.Name)
	if err != nil {
		return nil, fmt.Errorf("agentapi: metrics: %w", err)
	}
	return &Handler{st: st, kind: kind, secret: slices.Clone(opts.Secret), poll: opts.PollInterval, m: m,
		waiters: make(chan struct{}, opts.MaxWaiters), log: opts.Logger, byCluster: map[string]int{}, base: kind.BasePath() + "/agent-clusters/"}, nil
}

// Path returns the prefix h serves, to mount it: "<BasePath>/agent-clusters/".
func (h *Handler) Path() string { return h.base }

// apiError is an error answered with a status and one of the original
// API's error codes.
type apiError struct {
	status int
	code   int
	reason string
}

func (e *apiError) Error() string { return e.reason }

func errf(status, code int, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, reason: fmt.Sprintf(format, args...)}
}

// writeError answers err in the API's error shape, in one place.
func (h *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	var je *httpjson.Error
	switch {
	case errors.As(err, &ae):
	case errors.As(err, &je):
		code := 21
		if je.Status == http.StatusRequestEntityTooLarge {
			code = 17
		}
		ae = &apiError{status: je.Status, code: code, reason: je.Msg}
	case errors.Is(err, fleet.ErrNotFound):
		ae = errf(http.StatusNotFound, 7, "Resource not found")
	case errors.Is(err, context.Canceled):
		ae = errf(499, 9, "request canceled")
	default:
		h.log.Error("agentapi: request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		ae = errf(http.StatusInternalServerError, 9, "Unspecified error")
	}
	id := strconv.Itoa(ae.code)
	httpjson.Write(w, ae.status, map[string]string{
		"kind": "Error", "id": id, "href": h.kind.BasePath() + "/errors/" + id,
		"code": h.kind.CodePrefix() + "-" + id, "reason": ae.reason,
	})
}

// ServeHTTP routes the four calls of the agent API.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sw := &httpjson.StatusWriter{ResponseWriter: w}
	endpoint := endpointOther
	if err := h.serve(sw, r, &endpoint); err != nil {
		h.writeError(sw, r, err)
	}
	h.m.request(endpoint, cmp.Or(sw.Status, http.StatusOK)) // nothing written: net/http sends 200
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request, endpoint *string) error {
	rest, ok := strings.CutPrefix(r.URL.Path, h.base)
	if !ok {
		return errf(http.StatusNotFound, 7, "no such path %s", r.URL.Path)
	}
	parts := strings.Split(rest, "/")
	if parts[0] == "" {
		return errf(http.StatusNotFound, 7, "no cluster ID in %s", r.URL.Path)
	}
	id := parts[0]
	var call func(http.ResponseWriter, *http.Request, cluster.Cluster) error
	method := http.MethodGet
	switch {
	case len(parts) == 1:
		call, *endpoint = h.getCluster, endpointCluster
	case len(parts) == 2 && parts[1] == h.kind.Plural:
		call, *endpoint = h.listInstances, endpointInstances
	case len(parts) == 3 && parts[1] == h.kind.Plural && parts[2] == "status":
		call, method, *endpoint = h.putInstanceStatus, http.MethodPut, endpointInstanceStatus
	case len(parts) == 2 && parts[1] == "status":
		call, method, *endpoint = h.putClusterStatus, http.MethodPut, endpointClusterStatus
	default:
		return errf(http.StatusNotFound, 7, "no such path %s", r.URL.Path)
	}
	if r.Method != method {
		w.Header().Set("Allow", method)
		return errf(http.StatusMethodNotAllowed, 10, "HTTP Method not implemented for this endpoint")
	}
	if err := h.authorize(r, id); err != nil {
		return err
	}
	// The cluster must exist (and be one the token names).
	c, err := h.st.GetCluster(r.Context(), id)
	if errors.Is(err, fleet.ErrNotFound) {
		return errf(http.StatusNotFound, 7, "cluster %s not found", id)
	}
	if err != nil {
		return err
	}
	return call(w, r, c)
}

// authorize checks the bearer token: 401 unless it is a valid token of
// this kind, 403 unless it is the token of cluster id.
func (h *Handler) authorize(r *http.Request, id string) error {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return errf(http.StatusUnauthorized, 15, "Account authentication could not be verified: a cluster token is required")
	}
	granted, valid := verify(h.secret, h.kind.Name, strings.TrimSpace(tok))
	if !valid {
		return errf(http.StatusUnauthorized, 15, "Account authentication could not be verified: invalid cluster token")
	}
	if granted != id {
		return errf(http.StatusForbidden, 11, "the token grants cluster %s only, not %s", granted, id)
	}
	return nil
}

func (h *Handler) getCluster(w http.ResponseWriter, _ *http.Request, c cluster.Cluster) error {
	types := c.InstanceTypes
	if types == nil {
		types = []string{}
	}
	httpjson.Write(w, http.StatusOK, map[string]any{
		"id": c.ID, "kind": "Cluster", "cloud_provider": c.CloudProvider, "region": c.Region, "multi_az": c.MultiAZ,
		"status": string(c.Status), "instance_types": types,
	})
	return nil
}

// item is one desired instance as the agent sees it.
type item struct {
	ID             string `json:"id"`
	Kind           string `json:"kind"`
	Name           string `json:"name"`
	Owner          string `json:"owner"`
	OrganisationID string `json:"organisation_id"`
	InstanceType   string `json:"instance_type"`
	SizeID         string `json:"size_id"`
	CloudProvider  string `json:"cloud_provider"`
	Region         string `json:"region"`
	Status         string `json:"status"`
}

// defaultSizeID is the size of an instance created without one (httpapi's
// default size).
const defaultSizeID = "x1"

// desired returns the desired instances on cluster id, by ID, and their
// ETag.
func (h *Handler) desired(ctx context.Context, id string) ([]item, string, error) {
	items := []item{}
	q := fleet.Query{Kind: h.kind.Name, ClusterID: id, Statuses: []fleet.Status{fleet.StatusProvisioning, fleet.StatusReady, fleet.StatusResuming},
		OrderBy: []fleet.Order{{Field: "id"}}, Size: 1000}
	for q.Page = 1; ; q.Page++ {
		insts, total, err := h.st.ListInstances(ctx, q)
		if err != nil {
			return nil, "", err
		}
		for _, i := range insts {
			items = append(items, item{ID: i.ID, Kind: h.kind.Display, Name: i.Name, Owner: i.Owner, OrganisationID: i.Organisation,
				InstanceType: i.InstanceType, SizeID: cmp.Or(i.Size, defaultSizeID), CloudProvider: i.CloudProvider, Region: i.Region, Status: string(i.Status)})
		}
		if len(insts) == 0 || q.Page*q.PageSize() >= total {
			break
		}
	}
	b, err := json.Marshal(items)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(b)
	return items, `"` + hex.EncodeToString(sum[:16]) + `"`, nil
}

func (h *Handler) listInstances(w http.ResponseWriter, r *http.Request, c cluster.Cluster) error {
	id := c.ID
	var wait time.Duration
	if s := r.URL.Query().Get("wait"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return errf(http.StatusBadRequest, 21, "wait %q is not a duration", s)
		}
		wait = min(d, MaxWait)
	}
	match := r.Header.Get("If-None-Match")
	items, etag, err := h.desired(r.Context(), id)
	if err != nil {
		return err
	}
	if match != "" && match == etag && wait > 0 {
		release, ok := h.acquireWaiter(id)
		if !ok {
			w.Header().Set("Retry-After", "1")
			return errf(http.StatusServiceUnavailable, 9, "too many long-polls waiting; retry later")
		}
		defer release()
		items, etag, err = h.waitChange(r.Context(), id, etag, wait)
		if err != nil {
			return err
		}
	}
	w.Header().Set("ETag", etag)
	if match != "" && match == etag {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"kind": h.kind.Display + "List", "items": items})
	return nil
}

// acquireWaiter takes a waiter slot for cluster id, if one is free, and
// returns its release.
func (h *Handler) acquireWaiter(id string) (release func(), ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byCluster[id] >= maxClusterWaiters {
		return nil, false
	}
	select {
	case h.waiters <- struct{}{}:
	default:
		return nil, false
	}
	h.byCluster[id]++
	return func() {
		<-h.waiters
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.byCluster[id]--; h.byCluster[id] == 0 {
			delete(h.byCluster, id) // the map holds waiting clusters only
		}
	}, true
}

// waitChange polls the desired instances of cluster id until their ETag
// differs from etag or wait passes; it returns the last read.
func (h *Handler) waitChange(ctx context.Context, id, etag string, wait time.Duration) ([]item, string, error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(h.poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-deadline.C:
			return nil, etag, nil
		case <-tick.C:
		}
		items, cur, err := h.desired(ctx, id)
		if err != nil || cur != etag {
			return items, cur, err
		}
	}
}

// validPhases are the instance phases an agent may report.
var validPhases = []string{fleet.PhaseInstalling, fleet.PhaseReady, fleet.PhaseFailed}

func (h *Handler) putInstanceStatus(w http.ResponseWriter, r *http.Request, c cluster.Cluster) error {
	id := c.ID
	var reports map[string]fleet.InstanceReport
	if err := httpjson.Decode(w, r, &reports, httpjson.DecodeOptions{MaxBody: maxBody}); err != nil {
		return err
	}
	for iid, rep := range reports {
		if !slices.Contains(validPhases, rep.Phase) {
			return errf(http.StatusBadRequest, 21, "instance %s: phase %q is not one of %s", iid, rep.Phase, strings.Join(validPhases, ", "))
		}
		if rep.Phase == fleet.PhaseReady && rep.Host == "" {
			return errf(http.StatusBadRequest, 21, "instance %s: a ready instance needs its host", iid)
		}
	}
	if reports == nil {
		reports = map[string]fleet.InstanceReport{}
	}
	if err := h.st.PutInstanceReports(r.Context(), h.kind.Name, id, reports); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) putClusterStatus(w http.ResponseWriter, r *http.Request, c cluster.Cluster) error {
	id := c.ID
	var body struct {
		Phase    string `json:"phase"`
		Capacity struct {
			Units int `json:"units"`
		} `json:"capacity"`
		AgentVersion string `json:"agent_version"`
	}
	if err := httpjson.Decode(w, r, &body, httpjson.DecodeOptions{MaxBody: maxBody}); err != nil {
		return err
	}
	if body.Phase == "" {
		return errf(http.StatusBadRequest, 21, "phase is required")
	}
	if body.Capacity.Units < 0 {
		return errf(http.StatusBadRequest, 21, "capacity.units %d is negative", body.Capacity.Units)
	}
	if err := h.st.PutHeartbeat(r.Context(), h.kind.Name, id, fleet.Heartbeat{Phase: body.Phase, Capacity: body.Capacity.Units, AgentVersion: body.AgentVersion}); err != nil {
		return err
	}
	h.m.beat(id, time.Now())
	w.WriteHeader(http.StatusNoContent)
	return nil
}
