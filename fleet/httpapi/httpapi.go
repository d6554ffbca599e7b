package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/auth"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/quota"
	"github.com/fleetkit/fleetkit/fleet/search"
	"github.com/fleetkit/fleetkit/internal/httpjson"
)

// CloudProvider is a cloud instances may be placed on.
type CloudProvider struct {
	ID          string
	DisplayName string
	Regions     []Region
}

// Region is a region of a CloudProvider.
type Region struct {
	ID          string
	DisplayName string
	// InstanceTypes the region supports; the first is the default of a
	// create without a plan.
	InstanceTypes []string
	// Limits caps the live instances of a type in the region (absent: no
	// cap); a create over it is refused with code 24.
	Limits map[string]int
}

// DefaultCloudProviders is the original's default: aws, us-east-1.
func DefaultCloudProviders() []CloudProvider {
	return []CloudProvider{{
		ID: "aws", DisplayName: "Amazon Web Services",
		Regions: []Region{{ID: "us-east-1", DisplayName: "US East, N. Virginia", InstanceTypes: []string{"standard", "developer"}}},
	}}
}

// Options configures a Handler. Zero fields mean the documented defaults.
type Options struct {
	// Auth identifies callers (required).
	Auth auth.Authenticator
	// CloudProviders offered; nil means DefaultCloudProviders.
	CloudProviders []CloudProvider
	// Quota, when set, is checked before every create, in the store
	// transaction that inserts the instance.
	Quota quota.Checker
	// Sizes lists the sizes of each instance type, the second half of a
	// plan ("standard.x2"); a type without an entry has one size, "x1".
	// A plan naming another size is refused with code 42.
	Sizes map[string][]string
	// Trials gives instance types a lifetime: their instances get an
	// expiry, after which the service deprovisions them.
	Trials map[string]time.Duration
	// AllowedOrigins are the browser origins (scheme://host[:port]) that
	// may call the API across origins (CORS); "*" allows any. Empty: none.
	AllowedOrigins []string
	// MaxBody bounds request bodies (0: 64 KiB).
	MaxBody int64
	// Metrics reads a ready instance's own metrics for the metrics calls
	// (…/{id}/metrics/query, query_range, federate); nil means
	// &HTTPMetrics{}, a scrape of http://<host>/metrics.
	Metrics InstanceMetrics
	// Registerer receives the API metrics (nil: none).
	Registerer prometheus.Registerer
	// Logger receives errors (nil: the Service's).
	Logger *slog.Logger
}

// Handler is the REST API of a fleet.Service. Safe for concurrent use.
type Handler struct {
	svc     *fleet.Service
	kind    fleet.Kind
	st      fleet.Store
	opts    Options
	m       *metrics
	history *metricsHistory
	log     *slog.Logger
	openapi []byte
	h       http.Handler
}

// New validates opts and builds the API of svc. Writes go through
// svc.Store(), so that they wake the service's workers.
func New(svc *fleet.Service, opts Options) (*Handler, error) {
	if svc == nil {
		return nil, fmt.Errorf("%w: the API needs a service", fleet.ErrInvalid)
	}
	if opts.Auth == nil {
		return nil, fmt.Errorf("%w: the API needs an Authenticator", fleet.ErrInvalid)
	}
	if opts.CloudProviders == nil {
		opts.CloudProviders = DefaultCloudProviders()
	}
	for _, p := range opts.CloudProviders {
		if p.ID == "" || len(p.Regions) == 0 {
			return nil, fmt.Errorf("%w: cloud provider %q needs an ID and regions", fleet.ErrInvalid, p.ID)
		}
		for _, r := range p.Regions {
			if r.ID == "" || len(r.InstanceTypes) == 0 {
				return nil, fmt.Errorf("%w: region %q of %s needs an ID and instance types", fleet.ErrInvalid, r.ID, p.ID)
			}
		}
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 64 << 10
	}
	if opts.Metrics == nil {
		opts.Metrics = &HTTPMetrics{}
	}
	log := opts.Logger
	if log == nil {
		log = svc.Logger()
	}
	kind := svc.Kind()
	m, err := newMetrics(opts.Registerer, kind.Name)
	if err != nil {
		return nil, err
	}
	s := &Handler{svc: svc, kind: kind, st: svc.Store(), opts: opts, m: m, log: log,
		history: newMetricsHistory(defaultHistoryScrapes, defaultHistorySamples, historySpacing)}
	if s.openapi, err = renderOpenAPI(kind); err != nil {
		return nil, err
	}
	s.h = s.routes()
	return s, nil
}

// ServeHTTP serves the API under svc.Kind().BasePath(), and the original's
// not-found body on every other path.
func (s *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.h.ServeHTTP(w, r) }

// nameMaxLength is the longest instance name the API accepts.
const nameMaxLength = 32

var nameRE = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)

// validateName checks an instance name: ^[a-z]([-a-z0-9]*[a-z0-9])?$, at
// most 32 characters.
func validateName(name string) error {
	if len(name) > nameMaxLength {
		return fmt.Errorf("%w: name %q is longer than %d characters", fleet.ErrInvalid, name, nameMaxLength)
	}
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w: name %q must match %s", fleet.ErrInvalid, name, nameRE)
	}
	return nil
}

// orderFields is the allow-list of orderBy.
func orderFields() []string {
	return []string{"id", "name", "owner", "organisation", "cloud_provider", "region", "status", "instance_type", "cluster_id", "created_at", "updated_at", "status_since"}
}

func renderOpenAPI(k fleet.Kind) ([]byte, error) {
	statuses := make([]string, 0, len(fleet.Statuses()))
	for _, st := range fleet.Statuses() {
		statuses = append(statuses, string(st))
	}
	// The host field's name and the status enum come from the definitions
	// that shape the responses (Kind.HostField, fleet.Statuses), so the
	// document cannot drift from them.
	doc := strings.NewReplacer("{{plural}}", k.Plural, "{{name}}", k.Name, "{{Display}}", k.Display,
		"{{base}}", k.BasePath(), "{{root}}", strings.TrimSuffix(k.BasePath(), "/v1"), "{{prefix}}", k.CodePrefix(), "{{host}}", k.HostField,
		"{{statuses}}", "["+strings.Join(statuses, ", ")+"]").Replace(openapiTemplate)
	b, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		return nil, fmt.Errorf("httpapi: render OpenAPI document: %w", err)
	}
	return b, nil
}

func (s *Handler) provider(id string) (CloudProvider, bool) {
	i := slices.IndexFunc(s.opts.CloudProviders, func(p CloudProvider) bool { return p.ID == id })
	if i < 0 {
		return CloudProvider{}, false
	}
	return s.opts.CloudProviders[i], true
}

// The error catalogue of the original API: code → HTTP status and reason,
// the original's codes this API can return (its others are about service
// accounts, SSO, terms, billing accounts and rate limits, which fleetkit
// has not). Error bodies carry "<KIND>S-MGMT-<code>".
func errorCatalogue(k fleet.Kind) map[int]apiErrorDef {
	return map[int]apiErrorDef{
		4:   {http.StatusForbidden, "Forbidden to perform this action"},
		5:   {http.StatusForbidden, "Forbidden to create more instances than the maximum allowed"},
		6:   {http.StatusConflict, "An entity with the specified unique values already exists"},
		7:   {http.StatusNotFound, "Resource not found"},
		9:   {http.StatusInternalServerError, "Unspecified error"},
		10:  {http.StatusMethodNotAllowed, "HTTP Method not implemented for this endpoint"},
		11:  {http.StatusForbidden, "Account is unauthorized to perform this action"},
		15:  {http.StatusUnauthorized, "Account authentication could not be verified"},
		17:  {http.StatusBadRequest, "Unable to read request body"},
		21:  {http.StatusBadRequest, "Bad request"},
		23:  {http.StatusBadRequest, "Failed to parse search query"},
		24:  {http.StatusForbidden, "The maximum number of allowed " + k.Name + " instances has been reached"},
		30:  {http.StatusBadRequest, "Provider not supported"},
		31:  {http.StatusBadRequest, "Region not supported"},
		32:  {http.StatusBadRequest, k.Display + " cluster name is invalid"},
		33:  {http.StatusBadRequest, "Minimum field length not reached"},
		34:  {http.StatusBadRequest, "Maximum field length has been depassed"},
		35:  {http.StatusBadRequest, "Only multiAZ " + k.Display + "s are supported, use multi_az=true"},
		36:  {http.StatusConflict, k.Display + " cluster name is already used"},
		41:  {http.StatusBadRequest, "Instance Type not supported"},
		42:  {http.StatusBadRequest, "Instance plan not supported"},
		103: {http.StatusBadRequest, "Synchronous action is not supported, use async=true parameter"},
		120: {http.StatusForbidden, "Insufficient quota"},
		121: {http.StatusInternalServerError, "Failed to check quota"},
	}
}

type apiErrorDef struct {
	status int
	reason string
}

// apiError is an error answered with one catalogue code.
type apiError struct {
	code   int
	reason string // "" means the catalogue's
	status int    // 0 means the catalogue's
}

func (e *apiError) Error() string { return fmt.Sprintf("code %d: %s", e.code, e.reason) }

func apiErr(code int, format string, args ...any) *apiError {
	return &apiError{code: code, reason: fmt.Sprintf(format, args...)}
}

type errorBody struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	Href        string `json:"href"`
	Code        string `json:"code"`
	Reason      string `json:"reason"`
	OperationID string `json:"operation_id,omitempty"`
}

func (s *Handler) errorBody(code int, reason string) errorBody {
	id := strconv.Itoa(code)
	return errorBody{ID: id, Kind: "Error", Href: s.kind.BasePath() + "/errors/" + id, Code: s.kind.CodePrefix() + "-" + id, Reason: reason}
}

// writeError maps every error to the original's error body, in one place.
func (s *Handler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	var se *search.Error
	switch {
	case errors.As(err, &ae):
	case errors.Is(err, auth.ErrUnauthenticated):
		ae = &apiError{code: 15}
	case errors.Is(err, fleet.ErrNotFound):
		ae = &apiError{code: 7}
	case errors.Is(err, fleet.ErrNameTaken):
		ae = &apiError{code: 36}
	case errors.Is(err, quota.ErrMaxInstances):
		ae = &apiError{code: 5}
	case errors.Is(err, quota.ErrInsufficient):
		ae = &apiError{code: 120}
	case errors.Is(err, quota.ErrDenied):
		ae = &apiError{code: 4}
	case errors.As(err, &se):
		ae = &apiError{code: 23, reason: "Failed to parse search query: " + se.Reason}
	case errors.Is(err, fleet.ErrNoCapacity):
		ae = &apiError{code: 24}
	case errors.Is(err, fleet.ErrInvalid):
		// The handlers validate requests themselves (apiErr with a
		// reason): a value refused deeper down gets the catalogue's.
		ae = &apiError{code: 21}
	case errors.Is(err, context.Canceled):
		ae = &apiError{code: 9, status: 499}
	default:
		s.log.Error("fleet: API request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		ae = &apiError{code: 9}
	}
	def := errorCatalogue(s.kind)[ae.code]
	status, reason := def.status, def.reason
	if ae.status != 0 {
		status = ae.status
	}
	if ae.reason != "" {
		reason = ae.reason
	}
	body := s.errorBody(ae.code, reason)
	body.OperationID = w.Header().Get("X-Operation-Id")
	httpjson.Write(w, status, body)
}

// route is one method on one path of the API.
type route struct {
	method, pattern string
	auth            bool
	h               func(w http.ResponseWriter, r *http.Request, p auth.Principal) error
}

func (s *Handler) apiRoutes() []route {
	b := s.kind.BasePath()
	col := b + "/" + s.kind.Plural
	return []route{
		{http.MethodGet, strings.TrimSuffix(b, "/v1"), false, s.apiMetadata},
		{http.MethodGet, b, false, s.versionMetadata},
		{http.MethodPost, col, true, s.create},
		{http.MethodGet, col, true, s.list},
		{http.MethodGet, col + "/{id}", true, s.get},
		{http.MethodDelete, col + "/{id}", true, s.delete},
		{http.MethodPatch, col + "/{id}", true, s.patch},
		{http.MethodGet, col + "/{id}/metrics/query", true, s.metricsQuery},
		{http.MethodGet, col + "/{id}/metrics/query_range", true, s.metricsQueryRange},
		{http.MethodGet, col + "/{id}/metrics/federate", true, s.metricsFederate},
		{http.MethodGet, b + "/cloud_providers", true, s.cloudProviders},
		{http.MethodGet, b + "/cloud_providers/{id}/regions", true, s.regions},
		{http.MethodGet, b + "/instance_types/{provider}/{region}", true, s.instanceTypes},
		{http.MethodGet, b + "/status", true, s.serviceStatus},
		{http.MethodGet, b + "/errors", false, s.errorsList},
		{http.MethodGet, b + "/errors/{id}", false, s.errorGet},
		{http.MethodGet, b + "/openapi", false, s.openapiDoc},
	}
}

func (s *Handler) routes() http.Handler {
	mux := http.NewServeMux()
	byPattern := map[string]map[string]route{}
	var order []string
	for _, rt := range s.apiRoutes() {
		if byPattern[rt.pattern] == nil {
			byPattern[rt.pattern] = map[string]route{}
			order = append(order, rt.pattern)
		}
		byPattern[rt.pattern][rt.method] = rt
	}
	for _, pattern := range order {
		methods := byPattern[pattern]
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			sw := &httpjson.StatusWriter{ResponseWriter: w}
			w = sw
			w.Header().Set("X-Operation-Id", fleet.NewID())
			method := r.Method
			if method == http.MethodHead {
				method = http.MethodGet
			}
			rt, ok := methods[method]
			// The method label comes from a closed set: the route's own
			// methods, everything else one value. A client-chosen method
			// (any token is valid HTTP) must not add series.
			label := r.Method
			if !ok {
				label = "other"
			}
			defer func() {
				if sw.Status == 0 {
					sw.Status = http.StatusInternalServerError // it panicked: recoverPanics answers 500
				}
				s.m.requests.WithLabelValues(pattern, label, strconv.Itoa(sw.Status)).Inc()
				s.m.duration.WithLabelValues(pattern, label).Observe(time.Since(start).Seconds())
			}()
			if !ok {
				allow := make([]string, 0, len(methods))
				for m := range methods {
					allow = append(allow, m)
				}
				sort.Strings(allow)
				w.Header().Set("Allow", strings.Join(allow, ", "))
				s.writeError(w, r, &apiError{code: 10})
				return
			}
			var p auth.Principal
			if rt.auth {
				var err error
				if p, err = s.opts.Auth.Authenticate(r); err != nil {
					s.writeError(w, r, err)
					return
				}
				r = r.WithContext(auth.NewContext(r.Context(), p))
			}
			if err := rt.h(w, r, p); err != nil {
				s.writeError(w, r, err)
			}
		})
	}
	for pattern, why := range s.notImplemented() {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Operation-Id", fleet.NewID())
			s.writeError(w, r, apiErr(10, "%s %s is not implemented: %s", r.Method, r.URL.Path, why))
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Operation-Id", fleet.NewID())
		s.writeError(w, r, apiErr(7, "Unable to find the resource at %s", r.URL.Path))
	})
	return s.recoverPanics(s.cors(trimTrailingSlash(mux)))
}

// trimTrailingSlash serves a path with a trailing slash as the path
// without it ("/dinosaurs/" is "/dinosaurs"), as the original does for
// every path.
func trimTrailingSlash(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; len(p) > 1 && strings.HasSuffix(p, "/") {
			r2 := r.Clone(r.Context())
			r2.URL.Path = strings.TrimRight(p, "/")
			r2.URL.RawPath = strings.TrimRight(r.URL.RawPath, "/")
			if r2.URL.Path == "" {
				r2.URL.Path = "/"
			}
			r = r2
		}
		h.ServeHTTP(w, r)
	})
}

// notImplemented lists the original's public calls this API leaves out,
// and why. They answer the original's "not implemented" error (code 10)
// rather than a 404, so a client generated from the original's document
// learns that the call exists and is not served here. They are not in the
// served document.
func (s *Handler) notImplemented() map[string]string {
	b := s.kind.BasePath()
	item := b + "/" + s.kind.Plural + "/{id}"
	return map[string]string{
		"POST " + item + "/promote": "billing models are recorded, not billed: promoting needs the original's billing back end",
	}
}

// recoverPanics answers a request whose handler (or the Authenticator,
// Quota or Store it calls) panicked with the original's code 9 body and a
// 500, and logs the panic, instead of dropping the client's connection.
func (s *Handler) recoverPanics(h http.Handler) http.Handler {
	return httpjson.RecoverWith(h, s.log, func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &apiError{code: 9})
	})
}

// instanceJSON renders an instance in the original's shape. Values an
// instance does not have yet (its host before ready, its cluster before
// placement) are left out rather than sent empty.
func (s *Handler) instanceJSON(i fleet.Instance) map[string]any {
	m := map[string]any{
		"id": i.ID, "kind": s.kind.Display, "href": s.kind.BasePath() + "/" + s.kind.Plural + "/" + i.ID,
		"status": string(i.Status), "cloud_provider": i.CloudProvider, "region": i.Region, "multi_az": i.MultiAZ,
		"owner": i.Owner, "name": i.Name, "created_at": i.CreatedAt, "updated_at": i.UpdatedAt,
		"instance_type": i.InstanceType, "reauthentication_enabled": !i.NoReauthentication,
	}
	for field, v := range map[string]string{
		"organisation_id": i.Organisation, s.kind.HostField: i.Host, "failed_reason": i.FailedReason, "cluster_id": i.ClusterID,
		"size_id": i.Size, "billing_model": i.BillingModel,
	} {
		if v != "" {
			m[field] = v
		}
	}
	if i.ExpiresAt != nil {
		m["expires_at"] = *i.ExpiresAt
	}
	return m
}

func visible(p auth.Principal, i fleet.Instance) bool {
	if i.DeletedAt != nil {
		return false
	}
	if p.Organisation != "" {
		return i.Organisation == p.Organisation
	}
	return i.Owner == p.Username
}

type createRequest struct {
	Name          string `json:"name"`
	CloudProvider string `json:"cloud_provider"`
	Region        string `json:"region"`
	Plan          string `json:"plan"`
	MultiAZ       *bool  `json:"multi_az"`
	// Reauthentication is reauthentication_enabled; absent means on.
	Reauthentication *bool  `json:"reauthentication_enabled"`
	BillingModel     string `json:"billing_model"`
	// ClusterID places the instance on this cluster (org admins only).
	ClusterID string `json:"cluster_id"`
}

// billingModels are the original's billing models; create refuses others.
func billingModels() []string { return []string{"standard", "enterprise", "marketplace", "eval"} }

func (s *Handler) create(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	if r.URL.Query().Get("async") != "true" {
		return &apiError{code: 103}
	}
	if s.svc.Denied(p.Username, p.Organisation) {
		return apiErr(4, "User '%s' is not authorized to access the service.", p.Username)
	}
	var req createRequest
	if err := httpjson.Decode(w, r, &req, httpjson.DecodeOptions{MaxBody: s.opts.MaxBody}); err != nil {
		return &apiError{code: 17, reason: "Unable to read request body: " + err.Error(), status: httpjson.StatusOf(err)}
	}
	inst, err := s.validate(req, p)
	if err != nil {
		return err
	}
	if err := s.checkClusters(r.Context(), inst, p); err != nil {
		return err
	}
	if err := s.checkRegionLimit(r.Context(), inst); err != nil {
		return err
	}
	if err := s.insert(r.Context(), inst); err != nil {
		return err
	}
	httpjson.Write(w, http.StatusAccepted, s.instanceJSON(inst))
	return nil
}

func (s *Handler) validate(req createRequest, p auth.Principal) (fleet.Instance, error) {
	switch {
	case req.Name == "":
		return fleet.Instance{}, apiErr(33, "name is required")
	case len(req.Name) > nameMaxLength:
		return fleet.Instance{}, apiErr(34, "name must be at most %d characters", nameMaxLength)
	case validateName(req.Name) != nil:
		return fleet.Instance{}, apiErr(32, "%s cluster name is invalid: %q must match ^[a-z]([-a-z0-9]*[a-z0-9])?$", s.kind.Display, req.Name)
	}
	if req.CloudProvider == "" {
		req.CloudProvider = s.opts.CloudProviders[0].ID
	}
	cp, ok := s.provider(req.CloudProvider)
	if !ok {
		return fleet.Instance{}, apiErr(30, "Provider not supported: %q", req.CloudProvider)
	}
	if req.Region == "" {
		req.Region = cp.Regions[0].ID
	}
	ri := slices.IndexFunc(cp.Regions, func(r Region) bool { return r.ID == req.Region })
	if ri < 0 {
		return fleet.Instance{}, apiErr(31, "Region %q not supported by %s", req.Region, cp.ID)
	}
	region := cp.Regions[ri]
	itype := region.InstanceTypes[0]
	size := ""
	if req.Plan != "" {
		t, sz, ok := strings.Cut(req.Plan, ".")
		if !ok || t == "" || sz == "" {
			return fleet.Instance{}, apiErr(42, "Instance plan not supported: %q (want <instance_type>.<size>)", req.Plan)
		}
		if !slices.Contains(region.InstanceTypes, t) {
			return fleet.Instance{}, apiErr(41, "Instance Type %q not supported in %s %s", t, cp.ID, region.ID)
		}
		if sizes := s.sizes(t); !slices.Contains(sizes, sz) {
			return fleet.Instance{}, apiErr(42, "Instance plan not supported: size %q of %s (sizes: %s)", sz, t, strings.Join(sizes, ", "))
		}
		itype, size = t, sz
	}
	if size == "" {
		size = s.sizes(itype)[0]
	}
	billing := "standard"
	if req.BillingModel != "" {
		if !slices.Contains(billingModels(), req.BillingModel) {
			return fleet.Instance{}, apiErr(21, "invalid billing model: %q, only %s are allowed", req.BillingModel, strings.Join(billingModels(), ", "))
		}
		billing = req.BillingModel
	}
	multiAZ := true
	if req.MultiAZ != nil {
		multiAZ = *req.MultiAZ
	}
	now := time.Now().UTC()
	inst := fleet.Instance{
		ID: fleet.NewID(), Kind: s.kind.Name, Name: req.Name, Owner: p.Username, Organisation: p.Organisation,
		CloudProvider: cp.ID, Region: region.ID, MultiAZ: multiAZ, InstanceType: itype, Status: fleet.StatusAccepted,
		Size: size, Units: s.svc.Units(itype, size), BillingModel: billing, ClusterID: req.ClusterID,
		CreatedAt: now, UpdatedAt: now, StatusSince: now,
		NoReauthentication: req.Reauthentication != nil && !*req.Reauthentication,
	}
	if d, ok := s.opts.Trials[itype]; ok && d > 0 {
		exp := now.Add(d)
		inst.ExpiresAt = &exp
	}
	return inst, nil
}

// checkClusters refuses a create no cluster can ever take: multi_az false
// where no single-AZ cluster of the provider and region takes the
// instance type (the original's 35), and an admin's cluster_id that names
// no such cluster (21). Only an organisation administrator may choose the
// cluster (11). Clusters going away (deprovisioning, cleanup, failed)
// count as none.
func (s *Handler) checkClusters(ctx context.Context, inst fleet.Instance, p auth.Principal) error {
	if inst.ClusterID == "" && inst.MultiAZ {
		return nil
	}
	if inst.ClusterID != "" && !p.OrgAdmin {
		return apiErr(11, "Account is unauthorized to perform this action: only an organisation administrator chooses the cluster")
	}
	clusters, err := s.st.ListClusters(ctx)
	if err != nil {
		return err
	}
	takes := func(c cluster.Cluster) bool {
		return c.CloudProvider == inst.CloudProvider && c.Region == inst.Region && c.MultiAZ == inst.MultiAZ &&
			(len(c.InstanceTypes) == 0 || slices.Contains(c.InstanceTypes, inst.InstanceType)) &&
			c.Status != cluster.Deprovisioning && c.Status != cluster.Cleanup && c.Status != cluster.Failed
	}
	if inst.ClusterID != "" {
		i := slices.IndexFunc(clusters, func(c cluster.Cluster) bool { return c.ID == inst.ClusterID })
		if i < 0 || !takes(clusters[i]) {
			return apiErr(21, "cluster %q cannot take a %s %s instance in %s %s (multi_az %t)", inst.ClusterID, inst.InstanceType, s.kind.Display, inst.CloudProvider, inst.Region, inst.MultiAZ)
		}
		return nil
	}
	if !slices.ContainsFunc(clusters, takes) {
		return &apiError{code: 35}
	}
	return nil
}

func (s *Handler) checkRegionLimit(ctx context.Context, inst fleet.Instance) error {
	cp, _ := s.provider(inst.CloudProvider)
	for _, r := range cp.Regions {
		if r.ID != inst.Region {
			continue
		}
		full, err := s.regionFull(ctx, cp.ID, r, inst.InstanceType)
		if err != nil {
			return err
		}
		if full {
			return apiErr(24, "Region %s cannot accept instance type: %s at this moment", inst.Region, inst.InstanceType)
		}
	}
	return nil
}

// regionFull says whether region r of provider holds as many live
// instances of itype as its limit allows (never, without a limit).
func (s *Handler) regionFull(ctx context.Context, provider string, r Region, itype string) (bool, error) {
	limit, ok := r.Limits[itype]
	if !ok {
		return false, nil
	}
	_, n, err := s.st.ListInstances(ctx, fleet.Query{Kind: s.kind.Name, Size: -1, Search: search.And{
		search.Cond{Field: "region", Op: search.OpEq, Values: []string{r.ID}},
		search.Cond{Field: "cloud_provider", Op: search.OpEq, Values: []string{provider}},
		search.Cond{Field: "instance_type", Op: search.OpEq, Values: []string{itype}},
	}})
	return n >= limit, err
}

// insert checks the quota and creates the instance. Name uniqueness is the
// store's unique index; the quota check and the insert are one
// transaction, serialised per scope across every replica by the store.
func (s *Handler) insert(ctx context.Context, inst fleet.Instance) error {
	if s.opts.Quota == nil {
		return s.st.CreateInstance(ctx, inst)
	}
	return s.st.CreateInstanceChecked(ctx, inst, func(live int) error {
		err := s.opts.Quota.CheckQuota(ctx, quota.Request{Owner: inst.Owner, Organisation: inst.Organisation, InstanceType: inst.InstanceType, Live: live, Units: inst.Units})
		if err != nil && !errors.Is(err, quota.ErrMaxInstances) && !errors.Is(err, quota.ErrInsufficient) && !errors.Is(err, quota.ErrDenied) {
			// The checker failed, it did not refuse: the original's 121.
			s.log.Error("fleet: quota check failed", "owner", inst.Owner, "err", err)
			return apiErr(121, "Failed to check quota: %v", err)
		}
		return err
	})
}

func (s *Handler) get(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	inst, err := s.visibleInstance(r.Context(), r.PathValue("id"), p)
	if err != nil {
		return err
	}
	httpjson.Write(w, http.StatusOK, s.instanceJSON(inst))
	return nil
}

func (s *Handler) visibleInstance(ctx context.Context, id string, p auth.Principal) (fleet.Instance, error) {
	inst, err := s.st.GetInstance(ctx, id)
	if err == nil && (inst.Kind != s.kind.Name || !visible(p, inst)) {
		err = fleet.ErrNotFound
	}
	if errors.Is(err, fleet.ErrNotFound) {
		return inst, apiErr(7, "%s with id='%s' not found", s.kind.Display, id)
	}
	return inst, err
}

func (s *Handler) list(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	q, err := s.parseListQuery(r)
	if err != nil {
		return err
	}
	q.Kind, q.Owner, q.Organisation = s.kind.Name, p.Username, p.Organisation
	insts, total, err := s.st.ListInstances(r.Context(), q)
	if err != nil {
		return err
	}
	items := make([]map[string]any, 0, len(insts))
	for _, i := range insts {
		items = append(items, s.instanceJSON(i))
	}
	httpjson.Write(w, http.StatusOK, map[string]any{
		"kind": s.kind.Display + "RequestList", "page": max(q.Page, 1), "size": len(items), "total": total, "items": items,
	})
	return nil
}

func (s *Handler) parseListQuery(r *http.Request) (fleet.Query, error) {
	v := r.URL.Query()
	q := fleet.Query{Page: 1} // Size 0: the default page size
	// As the original: a page below 1 is the first, a size over the
	// maximum (or below 1) is the maximum. Only what is not a number is
	// refused.
	if ps := v.Get("page"); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil {
			return q, apiErr(21, "page must be an integer, not %q", ps)
		}
		q.Page = max(n, 1)
	}
	if ss := v.Get("size"); ss != "" {
		n, err := strconv.Atoi(ss)
		if err != nil {
			return q, apiErr(21, "size must be an integer, not %q", ss)
		}
		if n < 1 {
			n = math.MaxInt
		}
		q.Size = fleet.Query{Size: n}.PageSize() // the maximum at most
	}
	if ob := strings.TrimSpace(v.Get("orderBy")); ob != "" {
		for term := range strings.SplitSeq(ob, ",") {
			f := strings.Fields(term)
			if len(f) == 0 || len(f) > 2 || !slices.Contains(orderFields(), f[0]) {
				return q, apiErr(21, "invalid orderBy term %q: use a field of %s, then asc or desc", strings.TrimSpace(term), strings.Join(orderFields(), ", "))
			}
			o := fleet.Order{Field: f[0]}
			if len(f) == 2 {
				switch strings.ToLower(f[1]) {
				case "asc":
				case "desc":
					o.Desc = true
				default:
					return q, apiErr(21, "invalid orderBy direction %q: use asc or desc", f[1])
				}
			}
			q.OrderBy = append(q.OrderBy, o)
		}
	}
	if sv := v.Get("search"); strings.TrimSpace(sv) != "" {
		e, err := search.Parse(sv)
		if err != nil {
			return q, err
		}
		q.Search = e
	}
	return q, nil
}

func (s *Handler) delete(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	if r.URL.Query().Get("async") != "true" {
		return &apiError{code: 103}
	}
	id := r.PathValue("id")
	// A lost swap means a worker moved the instance on. Only suspending
	// and resuming make a cycle, so the instance settles within about
	// len(Statuses) moves: retry that often, then answer 409 rather than
	// accept a delete that was not recorded.
	for range len(fleet.Statuses()) + 1 {
		inst, err := s.visibleInstance(r.Context(), id, p)
		if err != nil {
			return err
		}
		// Members of an organisation see each other's instances; only the
		// owner or an administrator may delete one. To anyone else it is
		// not there, as in the original.
		if inst.Owner != p.Username && !p.OrgAdmin {
			return apiErr(7, "%s with id='%s' not found", s.kind.Display, id)
		}
		if inst.Status == fleet.StatusDeprovision || inst.Status == fleet.StatusDeleting {
			w.WriteHeader(http.StatusAccepted)
			return nil
		}
		_, err = s.st.UpdateInstance(r.Context(), fleet.Update{ID: id, From: inst.Status, To: fleet.StatusDeprovision})
		if err == nil {
			w.WriteHeader(http.StatusAccepted)
			return nil
		}
		if !errors.Is(err, fleet.ErrConflict) {
			return err
		}
	}
	return apiErr(6, "%s %s changed status concurrently: try again", s.kind.Display, id)
}

type updateRequest struct {
	Owner            *string `json:"owner"`
	Reauthentication *bool   `json:"reauthentication_enabled"`
}

// patch changes what the original lets users change: whether clients
// reauthenticate (the owner or an org admin) and the owner (an admin of
// the instance's organisation only). fleetkit has no account service, so
// the new owner is not checked against one.
func (s *Handler) patch(w http.ResponseWriter, r *http.Request, p auth.Principal) error {
	var req updateRequest
	if err := httpjson.Decode(w, r, &req, httpjson.DecodeOptions{MaxBody: s.opts.MaxBody}); err != nil {
		return &apiError{code: 17, reason: "Unable to read request body: " + err.Error(), status: httpjson.StatusOf(err)}
	}
	id := r.PathValue("id")
	for range len(fleet.Statuses()) + 1 {
		inst, err := s.visibleInstance(r.Context(), id, p)
		if err != nil {
			return err
		}
		if (inst.Owner != p.Username && !p.OrgAdmin) || inst.Organisation != p.Organisation {
			return apiErr(11, "User not authorized to perform this action")
		}
		u := fleet.Update{ID: id, From: inst.Status}
		if req.Owner != nil {
			if *req.Owner == "" {
				return apiErr(33, "owner is not valid. Minimum length 1 is required.")
			}
			if !p.OrgAdmin || inst.Organisation == "" {
				return apiErr(11, "User not authorized to perform this action: only an organisation administrator changes the owner")
			}
			u.Owner = req.Owner
		}
		if req.Reauthentication != nil {
			off := !*req.Reauthentication
			u.NoReauthentication = &off
		}
		if u.Owner == nil && u.NoReauthentication == nil {
			return apiErr(21, "Failed to update %s %s: no field to update (owner, reauthentication_enabled)", s.kind.Display, id)
		}
		updated, err := s.st.UpdateInstance(r.Context(), u)
		if err == nil {
			httpjson.Write(w, http.StatusOK, s.instanceJSON(updated))
			return nil
		}
		if !errors.Is(err, fleet.ErrConflict) {
			return err
		}
	}
	return apiErr(6, "%s %s changed status concurrently: try again", s.kind.Display, id)
}

func (s *Handler) cloudProviders(w http.ResponseWriter, _ *http.Request, _ auth.Principal) error {
	items := make([]map[string]any, 0, len(s.opts.CloudProviders))
	for _, p := range s.opts.CloudProviders {
		items = append(items, map[string]any{"kind": "CloudProvider", "id": p.ID, "name": p.ID, "display_name": p.DisplayName, "enabled": true})
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"kind": "CloudProviderList", "page": 1, "size": len(items), "total": len(items), "items": items})
	return nil
}

func (s *Handler) regions(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	// An unknown provider has no regions: an empty list, as in the
	// original, not a 404.
	cp, _ := s.provider(r.PathValue("id"))
	items := make([]map[string]any, 0, len(cp.Regions))
	for _, rg := range cp.Regions {
		capacity := make([]map[string]any, 0, len(rg.InstanceTypes))
		for _, t := range rg.InstanceTypes {
			full, err := s.regionFull(r.Context(), cp.ID, rg, t)
			if err != nil {
				return err
			}
			capacity = append(capacity, map[string]any{"instance_type": t, "max_capacity_reached": full})
		}
		items = append(items, map[string]any{"kind": "CloudRegion", "id": rg.ID, "display_name": rg.DisplayName, "enabled": true,
			"supported_instance_types": rg.InstanceTypes, "capacity": capacity})
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"kind": "CloudRegionList", "page": 1, "size": len(items), "total": len(items), "items": items})
	return nil
}

// serviceStatus answers whether the service can take no more instances:
// every instance type of every region is at its limit.
func (s *Handler) serviceStatus(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	full := true
	for _, cp := range s.opts.CloudProviders {
		for _, rg := range cp.Regions {
			for _, t := range rg.InstanceTypes {
				f, err := s.regionFull(r.Context(), cp.ID, rg, t)
				if err != nil {
					return err
				}
				full = full && f
			}
		}
	}
	httpjson.Write(w, http.StatusOK, map[string]any{s.kind.Plural: map[string]any{"max_capacity_reached": full}})
	return nil
}

// sizes returns the sizes of instance type t.
func (s *Handler) sizes(t string) []string {
	if sz, ok := s.opts.Sizes[t]; ok && len(sz) > 0 {
		return sz
	}
	return []string{"x1"}
}

// instanceTypes answers the instance types a region supports, with their
// sizes and, for trial types, the lifespan of their instances. An unknown
// provider or region is refused as at create (codes 30 and 31).
func (s *Handler) instanceTypes(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	cp, ok := s.provider(r.PathValue("provider"))
	if !ok {
		return apiErr(30, "Provider not supported: %q", r.PathValue("provider"))
	}
	ri := slices.IndexFunc(cp.Regions, func(rg Region) bool { return rg.ID == r.PathValue("region") })
	if ri < 0 {
		return apiErr(31, "Region %q not supported by %s", r.PathValue("region"), cp.ID)
	}
	types := make([]map[string]any, 0, len(cp.Regions[ri].InstanceTypes))
	for _, t := range cp.Regions[ri].InstanceTypes {
		var lifespan any // null: the instances live until deleted
		if d, ok := s.opts.Trials[t]; ok && d > 0 {
			lifespan = int64(d / time.Second)
		}
		sizes := make([]map[string]any, 0, len(s.sizes(t)))
		for _, sz := range s.sizes(t) {
			// One unit of capacity is one unit of quota (Options.Units).
			units := s.svc.Units(t, sz)
			sizes = append(sizes, map[string]any{"id": sz, "display_name": sz, "lifespan_seconds": lifespan,
				"capacity_consumed": units, "quota_consumed": units})
		}
		types = append(types, map[string]any{"id": t, "display_name": strings.ToUpper(t[:1]) + t[1:], "sizes": sizes})
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"instance_types": types})
	return nil
}

func (s *Handler) errorsList(w http.ResponseWriter, _ *http.Request, _ auth.Principal) error {
	cat := errorCatalogue(s.kind)
	codes := make([]int, 0, len(cat))
	for c := range cat {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	items := make([]errorBody, 0, len(codes))
	for _, c := range codes {
		items = append(items, s.errorBody(c, cat[c].reason))
	}
	httpjson.Write(w, http.StatusOK, map[string]any{"kind": "ErrorList", "page": 1, "size": len(items), "total": len(items), "items": items})
	return nil
}

func (s *Handler) errorGet(w http.ResponseWriter, r *http.Request, _ auth.Principal) error {
	code, err := strconv.Atoi(r.PathValue("id"))
	def, ok := errorCatalogue(s.kind)[code]
	if err != nil || !ok {
		return apiErr(7, "error with id='%s' not found", r.PathValue("id"))
	}
	httpjson.Write(w, http.StatusOK, s.errorBody(code, def.reason))
	return nil
}

// versionMetadata answers GET <base>: the version and its collections.
func (s *Handler) versionMetadata(w http.ResponseWriter, _ *http.Request, _ auth.Principal) error {
	httpjson.Write(w, http.StatusOK, s.version())
	return nil
}

// apiMetadata answers GET /api/<plural>_mgmt: the API and its versions.
func (s *Handler) apiMetadata(w http.ResponseWriter, _ *http.Request, _ auth.Principal) error {
	root := strings.TrimSuffix(s.kind.BasePath(), "/v1")
	httpjson.Write(w, http.StatusOK, map[string]any{
		"kind": "API", "id": strings.TrimPrefix(root, "/api/"), "href": root, "versions": []map[string]any{s.version()},
	})
	return nil
}

func (s *Handler) version() map[string]any {
	b := s.kind.BasePath()
	ref := func(id, kind string) map[string]any {
		return map[string]any{"id": id, "kind": kind, "href": b + "/" + id}
	}
	return map[string]any{
		"kind": "APIVersion", "id": "v1", "href": b,
		"collections": []map[string]any{
			ref(s.kind.Plural, s.kind.Display+"RequestList"),
			ref("cloud_providers", "CloudProviderList"),
			ref("errors", "ErrorList"),
		},
	}
}

func (s *Handler) openapiDoc(w http.ResponseWriter, _ *http.Request, _ auth.Principal) error {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.openapi)
	return nil
}
