package storetest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/auth"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/fleettest"
	"github.com/fleetkit/fleetkit/fleet/httpapi"
	"github.com/fleetkit/fleetkit/fleet/httpapi/openapitest"
	"github.com/fleetkit/fleetkit/fleet/inmem"
	"github.com/fleetkit/fleetkit/fleet/lease"
	"github.com/fleetkit/fleetkit/fleet/quota"
	"github.com/fleetkit/fleetkit/fleet/search"
)

// RunLifecycle runs the lifecycle suite: a whole fleet.Service on the
// store, driven through its REST API.
func RunLifecycle(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, newStore NewStore)
	}{
		{"CreateToReadyToDeleted", testCreateToReady},
		{"SyncNotSupported", testSyncNotSupported},
		{"BadRequests", testBadRequests},
		{"DuplicateName", testDuplicateName},
		{"ConcurrentDuplicateName", testConcurrentDuplicateName},
		{"Quota", testQuota},
		{"QuotaAcrossReplicas", func(t *testing.T, ns NewStore) { st := ns(t); QuotaAcrossReplicas(t, st, st) }},
		{"Search", testAPISearch},
		{"Visibility", testVisibility},
		{"Authentication", testAuthentication},
		{"DenyList", testDenyList},
		{"NoCapacity", testNoCapacity},
		{"DataPlaneFailure", testDataPlaneFailure},
		{"TrialExpiry", testTrialExpiry},
		{"Catalogues", testCatalogues},
		{"KafkaKind", testKafkaKind},
		{"Patch", testPatch},
		{"Failover2Replicas", func(t *testing.T, ns NewStore) { testFailover(t, ns, 2) }},
		{"Failover3Replicas", func(t *testing.T, ns NewStore) { testFailover(t, ns, 3) }},
		{"DataPlaneDrift", testDataPlaneDrift},
		{"CreateThenDelete", testCreateThenDelete},
		{"Sweep", testSweep},
		{"ReadyReportsLoss", testReadyReportsLoss},
		{"HostNotReused", testHostNotReused},
		{"SizeUnits", testSizeUnits},
		{"SuspendResume", testSuspendResume},
		{"CreateOptions", testCreateOptions},
		{"TrailingSlash", testTrailingSlash},
		{"QuotaCheckFails", testQuotaCheckFails},
		{"KafkaIssue19", testKafkaIssue19},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newStore) })
	}
}

var (
	alice   = fleettest.User{Name: "alice"}
	bob     = fleettest.User{Name: "bob"}
	carol   = fleettest.User{Name: "carol", Org: "acme"}
	dave    = fleettest.User{Name: "dave", Org: "acme"}
	mallory = fleettest.User{Name: "mallory"}
	nobody  = fleettest.User{}
)

// Harness is a running Service on an httptest server.
type Harness struct {
	Service *fleet.Service
	Client  *fleettest.Client
	DP      *inmem.DataPlane
	Store   fleet.Store
}

// HarnessOptions are the options of a Harness: the Service's and its
// API's.
type HarnessOptions struct {
	fleet.Options
	API httpapi.Options
}

// NewHarness starts a Service on st with fast test intervals (and a 3 s
// lease TTL where leader election is on), the
// in-memory data plane (its instances answer HTTP) and one local cluster;
// mutate adjusts the options. Everything stops at the end of the test.
func NewHarness(t *testing.T, st fleet.Store, mutate func(*HarnessOptions)) *Harness {
	t.Helper()
	secret := []byte("test-secret")
	authn, err := auth.NewJWTAuthenticator(auth.JWTOptions{HS256Secret: secret})
	require.NoError(t, err)
	dp := inmem.NewDataPlane(inmem.DataPlaneOptions{Listen: true})
	opts := HarnessOptions{Options: fleet.Options{
		Kind: fleet.Dinosaur, Clusters: cluster.Defaults(), DataPlane: dp,
		Interval: 250 * time.Millisecond, RetryInterval: 20 * time.Millisecond,
		// A shared store (PostgreSQL) always elects leaders: with the
		// default 15 s TTL one lease renewal missed under load would stall
		// a worker for longer than the tests wait.
		LeaseTTL: 3 * time.Second,
	}, API: httpapi.Options{Auth: authn}}
	if mutate != nil {
		mutate(&opts)
	}
	svc, err := fleet.New(st, opts.Options)
	require.NoError(t, err)
	api, err := httpapi.New(svc, opts.API)
	require.NoError(t, err)
	srv := httptest.NewServer(api)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { assert.NoError(t, svc.Run(ctx)) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		srv.Close()
		_ = dp.Close()
	})
	kind, err := opts.Kind.Normalize()
	require.NoError(t, err)
	c := &fleettest.Client{BaseURL: srv.URL, Kind: kind, Secret: secret}
	// Every exchange of the API tests is checked against the document the
	// server serves: the document is the contract.
	c.Check = openapitest.Fetch(t, c).Check
	return &Harness{Service: svc, DP: dp, Store: st, Client: c}
}

const waitFor = 20 * time.Second

func (h *Harness) create(t *testing.T, u fleettest.User, body map[string]any) fleettest.Response {
	t.Helper()
	return h.Client.Do(t, u, http.MethodPost, "dinosaurs?async=true", body)
}

func (h *Harness) mustCreate(t *testing.T, u fleettest.User, name string) string {
	t.Helper()
	r := h.create(t, u, map[string]any{"name": name})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	return r.Str("id")
}

func assertError(t *testing.T, r fleettest.Response, status int, code string) {
	t.Helper()
	require.Equal(t, status, r.Status, "%s", r.Raw)
	assert.Equal(t, "DINOSAURS-MGMT-"+code, r.Code(), "%s", r.Raw)
	assert.Equal(t, code, r.Str("id"))
	assert.Equal(t, "Error", r.Str("kind"))
	assert.Equal(t, "/api/dinosaurs_mgmt/v1/errors/"+code, r.Str("href"))
	assert.NotEmpty(t, r.Str("reason"))
	assert.NotEmpty(t, r.Str("operation_id"))
}

func testCreateToReady(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), nil)
	r := h.create(t, alice, map[string]any{"name": "rex", "cloud_provider": "aws", "region": "us-east-1", "plan": "standard.x1"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	id := r.Str("id")
	assert.Len(t, id, 20)
	assert.Equal(t, "Dinosaur", r.Str("kind"))
	assert.Equal(t, "/api/dinosaurs_mgmt/v1/dinosaurs/"+id, r.Str("href"))
	assert.Equal(t, "accepted", r.Str("status"))
	assert.Equal(t, "alice", r.Str("owner"))
	assert.Equal(t, "standard", r.Str("instance_type"))

	ready := h.Client.WaitStatus(t, alice, id, "ready", waitFor)
	assert.Equal(t, "local", ready.Str("cluster_id"))
	host := ready.Str("host")
	require.NotEmpty(t, host)
	resp, err := http.Get("http://" + host + "/")
	require.NoError(t, err, "the ready instance answers")
	b, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, string(b), "rex")

	list := h.Client.Do(t, alice, http.MethodGet, "dinosaurs", nil)
	require.Equal(t, http.StatusOK, list.Status)
	assert.Equal(t, "DinosaurRequestList", list.Str("kind"))
	assert.EqualValues(t, 1, list.Body["total"])

	del := h.Client.Do(t, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil)
	require.Equal(t, http.StatusAccepted, del.Status, "%s", del.Raw)
	assert.Empty(t, del.Raw)
	again := h.Client.Do(t, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil)
	assert.Contains(t, []int{http.StatusAccepted, http.StatusNotFound}, again.Status, "deleting again")

	h.Client.WaitStatus(t, alice, id, "gone", waitFor)
	inst, err := h.Store.GetInstance(context.Background(), id)
	require.NoError(t, err, "the row is kept")
	assert.NotNil(t, inst.DeletedAt, "soft deleted")
	assert.Equal(t, fleet.StatusDeleting, inst.Status)
	assert.Empty(t, runningIDs(t, h.DP), "removed from the data plane")
	_, err = http.Get("http://" + host + "/")
	assert.Error(t, err, "the instance no longer answers")

	// The name is free again.
	h.mustCreate(t, alice, "rex")
}

func testSyncNotSupported(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), nil)
	r := h.Client.Do(t, alice, http.MethodPost, "dinosaurs", map[string]any{"name": "rex"})
	assertError(t, r, http.StatusBadRequest, "103")
	assert.Equal(t, "Synchronous action is not supported, use async=true parameter", r.Str("reason"))
	id := h.mustCreate(t, alice, "rex")
	r = h.Client.Do(t, alice, http.MethodDelete, "dinosaurs/"+id, nil)
	assertError(t, r, http.StatusBadRequest, "103")
}

func testBadRequests(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), nil)
	tests := []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"no name", map[string]any{}, 400, "33"},
		{"upper case", map[string]any{"name": "Rex"}, 400, "32"},
		{"leading dash", map[string]any{"name": "-rex"}, 400, "32"},
		{"trailing dash", map[string]any{"name": "rex-"}, 400, "32"},
		{"underscore", map[string]any{"name": "re_x"}, 400, "32"},
		{"leading digit", map[string]any{"name": "1rex"}, 400, "32"},
		{"too long", map[string]any{"name": strings.Repeat("a", 33)}, 400, "34"},
		{"unknown provider", map[string]any{"name": "rex", "cloud_provider": "gcp"}, 400, "30"},
		{"unknown region", map[string]any{"name": "rex", "region": "mars-1"}, 400, "31"},
		{"malformed plan", map[string]any{"name": "rex", "plan": "huge"}, 400, "42"},
		{"unknown instance type", map[string]any{"name": "rex", "plan": "enterprise.x1"}, 400, "41"},
		{"unknown size", map[string]any{"name": "rex", "plan": "standard.x9"}, 400, "42"},
		{"name not a string", map[string]any{"name": 7}, 400, "17"},
		{"not an object", "rex", 400, "17"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := h.Client.Do(t, alice, http.MethodPost, "dinosaurs?async=true", tt.body)
			assertError(t, r, tt.status, tt.code)
		})
	}
	h.mustCreate(t, alice, strings.Repeat("a", 32))
	h.mustCreate(t, alice, "r")
	h.mustCreate(t, alice, "rex-2-b")

	r := h.Client.Do(t, alice, http.MethodGet, "dinosaurs/nosuchid", nil)
	assertError(t, r, http.StatusNotFound, "7")
	r = h.Client.Do(t, alice, http.MethodDelete, "dinosaurs/nosuchid?async=true", nil)
	assertError(t, r, http.StatusNotFound, "7")
	r = h.Client.Do(t, alice, http.MethodPut, "dinosaurs/nosuchid", nil)
	assertError(t, r, http.StatusMethodNotAllowed, "10")
	r = h.Client.Do(t, alice, http.MethodGet, "/api/nothing/here", nil)
	assertError(t, r, http.StatusNotFound, "7")
	for _, q := range []string{"page=x", "size=y", "orderBy=color", "orderBy=name%20up"} {
		r = h.Client.Do(t, alice, http.MethodGet, "dinosaurs?"+q, nil)
		assertError(t, r, http.StatusBadRequest, "21")
	}
	// Out-of-range numbers are normalised, as the original does.
	for q, want := range map[string][2]int{
		"page=0": {1, 3}, "page=-3": {1, 3}, "size=0": {1, 3}, "size=100000": {1, 3}, "page=2&size=2": {2, 1}, "page=9": {9, 0},
	} {
		r = h.Client.Do(t, alice, http.MethodGet, "dinosaurs?"+q, nil)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", q, r.Raw)
		assert.EqualValues(t, want[0], r.Body["page"], q)
		assert.Len(t, r.Items(), want[1], q)
		assert.EqualValues(t, 3, r.Body["total"], q)
	}
}

func testDuplicateName(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), nil)
	h.mustCreate(t, alice, "rex")
	r := h.create(t, alice, map[string]any{"name": "rex"})
	assertError(t, r, http.StatusConflict, "36")
	h.mustCreate(t, bob, "rex") // another owner's scope
	h.mustCreate(t, carol, "rex")
	r = h.create(t, dave, map[string]any{"name": "rex"})
	assertError(t, r, http.StatusConflict, "36") // same organisation
}

func testConcurrentDuplicateName(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), nil)
	const n = 12
	created, taken := race(t, n, errRefused, func(int) error {
		return outcome(h.create(t, alice, map[string]any{"name": "race"}), http.StatusConflict, "36")
	})
	assert.Equal(t, 1, created, "exactly one create wins")
	assert.Equal(t, n-1, taken)
	_, total, err := h.Store.ListInstances(context.Background(), fleet.Query{Search: search.Cond{Field: "name", Op: search.OpEq, Values: []string{"race"}}, Size: -1})
	require.NoError(t, err)
	assert.Equal(t, 1, total)
}

// errRefused is the outcome of a create refused with the expected code.
var errRefused = errors.New("refused")

// outcome maps a create's answer: nil when accepted, errRefused when
// refused with status and code, else an error that describes it.
func outcome(r fleettest.Response, status int, code string) error {
	switch {
	case r.Status == http.StatusAccepted:
		return nil
	case r.Status == status && r.Code() == "DINOSAURS-MGMT-"+code:
		return errRefused
	}
	return fmt.Errorf("answer %d %s", r.Status, r.Raw)
}

func testQuota(t *testing.T, newStore NewStore) {
	q, err := quota.ParseList([]byte(`
organisations:
  - id: acme
    max_allowed_instances: 2
registered_users:
  - username: alice
    max_allowed_instances: 1
    instance_types: [standard]
default:
  max_allowed_instances: 1
  instance_types: [developer]
`))
	require.NoError(t, err)
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) { o.API.Quota = q })
	h.mustCreate(t, alice, "one")
	assertError(t, h.create(t, alice, map[string]any{"name": "two"}), http.StatusForbidden, "5")
	r := h.create(t, bob, map[string]any{"name": "std", "plan": "standard.x1"})
	assertError(t, r, http.StatusForbidden, "120")
	r = h.create(t, bob, map[string]any{"name": "dev", "plan": "developer.x1"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	h.mustCreate(t, carol, "a")
	h.mustCreate(t, dave, "b")
	assertError(t, h.create(t, carol, map[string]any{"name": "c"}), http.StatusForbidden, "5")

	// Deleting releases the quota once the row is soft deleted.
	list := h.Client.Do(t, alice, http.MethodGet, "dinosaurs", nil)
	require.Len(t, list.Items(), 1)
	id := list.Items()[0]["id"].(string)
	require.Equal(t, http.StatusAccepted, h.Client.Do(t, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil).Status)
	h.Client.WaitStatus(t, alice, id, "gone", waitFor)
	h.mustCreate(t, alice, "two")
}

// QuotaAcrossReplicas runs two Services, as two replicas, on a and b (two
// handles on one database, or one handle twice) and sends concurrent
// creates for one owner to both: exactly the quota's maximum succeed, the
// others get the original's code 5.
func QuotaAcrossReplicas(t *testing.T, a, b fleet.Store) {
	q, err := quota.ParseList([]byte(`
registered_users:
  - username: alice
    max_allowed_instances: 1
  - username: bob
    max_allowed_instances: 3
`))
	require.NoError(t, err)
	replicas := []*Harness{
		NewHarness(t, a, func(o *HarnessOptions) { o.API.Quota = q }),
		NewHarness(t, b, func(o *HarnessOptions) { o.API.Quota = q }),
	}
	for _, tt := range []struct {
		user fleettest.User
		max  int
	}{{alice, 1}, {bob, 3}} {
		t.Run(fmt.Sprintf("max %d", tt.max), func(t *testing.T) {
			const n = 16
			created, refused := race(t, n, errRefused, func(i int) error {
				r := replicas[i%2].create(t, tt.user, map[string]any{"name": fmt.Sprintf("d-%d", i)})
				return outcome(r, http.StatusForbidden, "5")
			})
			assert.Equal(t, tt.max, created)
			assert.Equal(t, n-tt.max, refused)
			list := replicas[0].Client.Do(t, tt.user, http.MethodGet, "dinosaurs", nil)
			assert.Len(t, list.Items(), tt.max)
		})
	}
}

func testAPISearch(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) { o.Clusters = nil }) // stay accepted
	for _, n := range []string{"rex", "raptor", "trike", "stego", "bronto"} {
		h.mustCreate(t, alice, n)
	}
	h.mustCreate(t, bob, "bobs-rex")
	tests := []struct {
		search string
		want   []string
	}{
		{"name = rex", []string{"rex"}},
		{"name like r% or name = trike", []string{"rex", "raptor", "trike"}},
		{"name IN ('stego', bronto) AND status = accepted", []string{"stego", "bronto"}},
		{"name not in (rex, raptor) and name ilike '%O'", []string{"stego", "bronto"}},
		{"owner = bob", nil}, // bob's instances are not alice's to see
		{"name like %rex", []string{"rex"}},
		{"name = 'rex; DROP TABLE instances'", nil}, // a value, never SQL
	}
	for _, tt := range tests {
		t.Run(tt.search, func(t *testing.T) {
			r := h.Client.Do(t, alice, http.MethodGet, "dinosaurs?search="+urlQuery(tt.search), nil)
			require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
			var got []string
			for _, it := range r.Items() {
				got = append(got, it["name"].(string))
			}
			assert.ElementsMatch(t, tt.want, got)
		})
	}
	bad := []string{
		"color = red",
		"name = ",
		"name == rex",
		"name = rex and",
		"name in rex",
		"name = 'rex",
		"(name = rex",
		"name = rex; DROP TABLE instances",
		strings.TrimSuffix(strings.Repeat("name = a or ", 11), " or "),
	}
	for _, s := range bad {
		t.Run("bad/"+s, func(t *testing.T) {
			r := h.Client.Do(t, alice, http.MethodGet, "dinosaurs?search="+urlQuery(s), nil)
			assertError(t, r, http.StatusBadRequest, "23")
		})
	}
	r := h.Client.Do(t, alice, http.MethodGet, "dinosaurs?page=2&size=2&orderBy=name%20desc", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.EqualValues(t, 5, r.Body["total"])
	assert.EqualValues(t, 2, r.Body["size"])
	assert.EqualValues(t, 2, r.Body["page"])
	var names []string
	for _, it := range r.Items() {
		names = append(names, it["name"].(string))
	}
	assert.Equal(t, []string{"rex", "raptor"}, names, "trike stego | rex raptor | bronto")
}

func urlQuery(s string) string {
	r := strings.NewReplacer("%", "%25", " ", "%20", "'", "%27", "&", "%26", "=", "%3D", "+", "%2B", "#", "%23", ";", "%3B")
	return r.Replace(s)
}

func testVisibility(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) { o.Clusters = nil })
	aliceID := h.mustCreate(t, alice, "rex")
	carolID := h.mustCreate(t, carol, "trike")
	tests := []struct {
		user   fleettest.User
		id     string
		status int
	}{
		{alice, aliceID, 200},
		{bob, aliceID, 404},
		{carol, aliceID, 404},
		{carol, carolID, 200},
		{dave, carolID, 200}, // same organisation
		{alice, carolID, 404},
	}
	for _, tt := range tests {
		t.Run(tt.user.Name+"/"+tt.id, func(t *testing.T) {
			r := h.Client.Do(t, tt.user, http.MethodGet, "dinosaurs/"+tt.id, nil)
			assert.Equal(t, tt.status, r.Status, "%s", r.Raw)
		})
	}
	assertError(t, h.Client.Do(t, bob, http.MethodDelete, "dinosaurs/"+aliceID+"?async=true", nil), http.StatusNotFound, "7")
	r := h.Client.Do(t, bob, http.MethodGet, "dinosaurs", nil)
	require.Equal(t, http.StatusOK, r.Status)
	assert.Empty(t, r.Items())
	r = h.Client.Do(t, dave, http.MethodGet, "dinosaurs", nil)
	require.Len(t, r.Items(), 1)
	assert.Equal(t, "trike", r.Items()[0]["name"])
	// Still alive: bob's delete did nothing.
	assert.Equal(t, "accepted", h.Client.Do(t, alice, http.MethodGet, "dinosaurs/"+aliceID, nil).Str("status"))

	// Within an organisation, members see each other's instances, but only
	// the owner or an organisation administrator deletes one.
	assertError(t, h.Client.Do(t, dave, http.MethodDelete, "dinosaurs/"+carolID+"?async=true", nil), http.StatusNotFound, "7")
	assert.Equal(t, "accepted", h.Client.Do(t, carol, http.MethodGet, "dinosaurs/"+carolID, nil).Str("status"))
	otherAdmin := fleettest.User{Name: "eve", Org: "globex", OrgAdmin: true}
	assertError(t, h.Client.Do(t, otherAdmin, http.MethodDelete, "dinosaurs/"+carolID+"?async=true", nil), http.StatusNotFound, "7")
	admin := fleettest.User{Name: "erin", Org: "acme", OrgAdmin: true}
	r = h.Client.Do(t, admin, http.MethodDelete, "dinosaurs/"+carolID+"?async=true", nil)
	assert.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	r = h.Client.Do(t, carol, http.MethodDelete, "dinosaurs/"+carolID+"?async=true", nil)
	assert.Contains(t, []int{http.StatusAccepted, http.StatusNotFound}, r.Status, "the owner deletes again (or it is gone already): %s", r.Raw)
}

func testAuthentication(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), nil)
	assertError(t, h.Client.Do(t, nobody, http.MethodGet, "dinosaurs", nil), http.StatusUnauthorized, "15")
	assertError(t, h.Client.Do(t, nobody, http.MethodPost, "dinosaurs?async=true", map[string]any{"name": "rex"}), http.StatusUnauthorized, "15")
	assertError(t, h.Client.Do(t, nobody, http.MethodGet, "cloud_providers", nil), http.StatusUnauthorized, "15")

	wrong, err := auth.NewHS256Token([]byte("other-secret"), "alice", "", time.Hour)
	require.NoError(t, err)
	expired, err := auth.NewHS256Token(h.Client.Secret, "alice", "", -time.Hour)
	require.NoError(t, err)
	for name, header := range map[string]string{
		"wrong key": "Bearer " + wrong, "expired": "Bearer " + expired, "garbage": "Bearer abc.def.ghi", "basic": "Basic YWxpY2U6eA==",
	} {
		t.Run(name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodGet, h.Client.BaseURL+"/api/dinosaurs_mgmt/v1/dinosaurs", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", header)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			_ = resp.Body.Close()
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		})
	}
	// Public: the error catalogue and the OpenAPI document.
	assert.Equal(t, http.StatusOK, h.Client.Do(t, nobody, http.MethodGet, "errors", nil).Status)
	assert.Equal(t, http.StatusOK, h.Client.Do(t, nobody, http.MethodGet, "openapi", nil).Status)
}

// switchDenyList denies mallory, and alice once deny is set.
type switchDenyList struct{ deny atomic.Bool }

func (d *switchDenyList) Denied(owner, _ string) bool {
	return owner == "mallory" || (owner == "alice" && d.deny.Load())
}

func testDenyList(t *testing.T, newStore NewStore) {
	deny := &switchDenyList{}
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) { o.Denied = deny.Denied })
	r := h.create(t, mallory, map[string]any{"name": "evil"})
	assertError(t, r, http.StatusForbidden, "4")

	id := h.mustCreate(t, alice, "rex")
	h.Client.WaitStatus(t, alice, id, "ready", waitFor)
	deny.deny.Store(true)
	h.Client.WaitStatus(t, alice, id, "gone", waitFor) // deprovisioned by the general worker
	inst, err := h.Store.GetInstance(context.Background(), id)
	require.NoError(t, err)
	assert.NotNil(t, inst.DeletedAt)
}

func testNoCapacity(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) {
		o.Clusters = []cluster.Cluster{{ID: "full", CloudProvider: "aws", Region: "us-east-1", MultiAZ: true, Capacity: 1}}
		o.Timeouts = map[fleet.Status]time.Duration{fleet.StatusAccepted: 3 * time.Second}
	})
	// The cluster is ready first, and the accepted timeout is seconds: on a
	// loaded host the first instance must still fit, and only the second
	// time out.
	require.Eventually(t, func() bool {
		c, err := h.Store.GetCluster(context.Background(), "full")
		return err == nil && c.Status == cluster.Ready
	}, waitFor, 10*time.Millisecond)
	first := h.mustCreate(t, alice, "first")
	h.Client.WaitStatus(t, alice, first, "ready", waitFor)
	second := h.mustCreate(t, alice, "second")
	r := h.Client.WaitStatus(t, alice, second, "failed", waitFor)
	assert.Equal(t, "Region us-east-1 in cloud provider aws cannot accept standard Dinosaur at the moment.", r.Str("failed_reason"))
	assert.Empty(t, r.Str("cluster_id"))
}

func testDataPlaneFailure(t *testing.T, newStore NewStore) {
	var dp *inmem.DataPlane
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) {
		dp = inmem.NewDataPlane(inmem.DataPlaneOptions{Fail: func(i fleet.Instance) string {
			if i.Name == "doomed" {
				return "data plane: out of dinosaur eggs"
			}
			return ""
		}})
		o.DataPlane = dp
	})
	t.Cleanup(func() { _ = dp.Close() })
	id := h.mustCreate(t, alice, "doomed")
	r := h.Client.WaitStatus(t, alice, id, "failed", waitFor)
	assert.Equal(t, "data plane: out of dinosaur eggs", r.Str("failed_reason"))
	ok := h.mustCreate(t, alice, "fine")
	h.Client.WaitStatus(t, alice, ok, "ready", waitFor)
	// A failed instance can be deleted.
	require.Equal(t, http.StatusAccepted, h.Client.Do(t, alice, http.MethodDelete, "dinosaurs/"+id+"?async=true", nil).Status)
	h.Client.WaitStatus(t, alice, id, "gone", waitFor)
}

func testTrialExpiry(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) {
		o.API.Trials = map[string]time.Duration{"developer": 500 * time.Millisecond}
	})
	r := h.create(t, alice, map[string]any{"name": "trial", "plan": "developer.x1"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	require.NotNil(t, r.Body["expires_at"])
	std := h.mustCreate(t, alice, "forever")
	h.Client.WaitStatus(t, alice, r.Str("id"), "gone", waitFor)
	assert.Equal(t, "ready", h.Client.WaitStatus(t, alice, std, "ready", waitFor).Str("status"))
}

func testCatalogues(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) {
		o.API.Sizes = map[string][]string{"standard": {"x1", "x2"}}
		o.API.Trials = map[string]time.Duration{"developer": 48 * time.Hour}
		o.API.CloudProviders = httpapi.DefaultCloudProviders()
		o.API.CloudProviders[0].Regions[0].Limits = map[string]int{"developer": 1}
	})
	r := h.Client.Do(t, alice, http.MethodGet, "instance_types/aws/us-east-1", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.JSONEq(t, `{"instance_types": [
		{"id": "standard", "display_name": "Standard", "sizes": [
			{"id": "x1", "display_name": "x1", "lifespan_seconds": null, "capacity_consumed": 1, "quota_consumed": 1},
			{"id": "x2", "display_name": "x2", "lifespan_seconds": null, "capacity_consumed": 1, "quota_consumed": 1}]},
		{"id": "developer", "display_name": "Developer", "sizes": [
			{"id": "x1", "display_name": "x1", "lifespan_seconds": 172800, "capacity_consumed": 1, "quota_consumed": 1}]}]}`, string(r.Raw))
	assertError(t, h.Client.Do(t, alice, http.MethodGet, "instance_types/gcp/us-east-1", nil), http.StatusBadRequest, "30")
	assertError(t, h.Client.Do(t, alice, http.MethodGet, "instance_types/aws/mars-1", nil), http.StatusBadRequest, "31")
	assertError(t, h.Client.Do(t, nobody, http.MethodGet, "instance_types/aws/us-east-1", nil), http.StatusUnauthorized, "15")
	r = h.create(t, alice, map[string]any{"name": "big", "plan": "standard.x2"})
	require.Equal(t, http.StatusAccepted, r.Status, "a configured size: %s", r.Raw)

	r = h.Client.Do(t, alice, http.MethodGet, "cloud_providers", nil)
	require.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, "CloudProviderList", r.Str("kind"))
	require.Len(t, r.Items(), 1)
	assert.Equal(t, "aws", r.Items()[0]["id"])
	capacity := func() any {
		r := h.Client.Do(t, alice, http.MethodGet, "cloud_providers/aws/regions", nil)
		require.Equal(t, http.StatusOK, r.Status)
		require.Len(t, r.Items(), 1)
		assert.Equal(t, "us-east-1", r.Items()[0]["id"])
		return r.Items()[0]["capacity"]
	}
	assert.Equal(t, []any{
		map[string]any{"instance_type": "standard", "max_capacity_reached": false},
		map[string]any{"instance_type": "developer", "max_capacity_reached": false},
	}, capacity())
	r = h.create(t, bob, map[string]any{"name": "trial", "plan": "developer.x1"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	assertError(t, h.create(t, carol, map[string]any{"name": "trial2", "plan": "developer.x1"}), http.StatusForbidden, "24")
	assert.Equal(t, []any{
		map[string]any{"instance_type": "standard", "max_capacity_reached": false},
		map[string]any{"instance_type": "developer", "max_capacity_reached": true},
	}, capacity())
	r = h.Client.Do(t, alice, http.MethodGet, "status", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.JSONEq(t, `{"dinosaurs": {"max_capacity_reached": false}}`, string(r.Raw), "standard has no limit")
	r = h.Client.Do(t, alice, http.MethodGet, "cloud_providers/gcp/regions", nil)
	require.Equal(t, http.StatusOK, r.Status, "an unknown provider has no regions, as in the original: %s", r.Raw)
	assert.Empty(t, r.Items())

	r = h.Client.Do(t, nobody, http.MethodGet, "/api/dinosaurs_mgmt/v1", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.Equal(t, "APIVersion", r.Str("kind"))
	assert.Equal(t, "v1", r.Str("id"))
	assert.Equal(t, "/api/dinosaurs_mgmt/v1", r.Str("href"))
	assert.Contains(t, string(r.Raw), `"href":"/api/dinosaurs_mgmt/v1/dinosaurs"`)
	r = h.Client.Do(t, nobody, http.MethodGet, "/api/dinosaurs_mgmt", nil)
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.Equal(t, "API", r.Str("kind"))
	assert.Equal(t, "dinosaurs_mgmt", r.Str("id"))

	r = h.Client.Do(t, nobody, http.MethodGet, "errors", nil)
	require.Equal(t, http.StatusOK, r.Status)
	codes := map[string]bool{}
	for _, it := range r.Items() {
		codes[it["code"].(string)] = true
	}
	// Every code of the original this API can return, and no other.
	want := []int{4, 5, 6, 7, 9, 10, 11, 15, 17, 21, 23, 24, 30, 31, 32, 33, 34, 35, 36, 41, 42, 103, 120, 121}
	for _, c := range want {
		assert.True(t, codes[fmt.Sprintf("DINOSAURS-MGMT-%d", c)], "code %d in the catalogue", c)
	}
	assert.Len(t, codes, len(want))
	assert.Equal(t, float64(len(want)), r.Body["total"])
	for code, reason := range map[string]string{
		"6": "An entity with the specified unique values already exists", "11": "Account is unauthorized to perform this action",
		"35": "Only multiAZ Dinosaurs are supported, use multi_az=true", "121": "Failed to check quota",
	} {
		e := h.Client.Do(t, nobody, http.MethodGet, "errors/"+code, nil)
		require.Equal(t, http.StatusOK, e.Status, "%s", e.Raw)
		assert.Equal(t, reason, e.Str("reason"))
		assert.Equal(t, "DINOSAURS-MGMT-"+code, e.Str("code"))
	}
	r = h.Client.Do(t, nobody, http.MethodGet, "errors/36", nil)
	require.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, "Dinosaur cluster name is already used", r.Str("reason"))
	r = h.Client.Do(t, nobody, http.MethodGet, "errors/41", nil)
	require.Equal(t, http.StatusOK, r.Status)
	assert.Equal(t, "Instance Type not supported", r.Str("reason"))
	assertError(t, h.Client.Do(t, nobody, http.MethodGet, "errors/999", nil), http.StatusNotFound, "7")
}

// testPatch: PATCH changes reauthentication_enabled (owner or org admin)
// and the owner (org admin only), with the original's codes.
func testPatch(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) { o.Clusters = nil })
	r := h.create(t, carol, map[string]any{"name": "rex", "reauthentication_enabled": false})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	assert.Equal(t, false, r.Body["reauthentication_enabled"], "create takes it")
	id := r.Str("id")
	path := "dinosaurs/" + id
	admin := fleettest.User{Name: "erin", Org: "acme", OrgAdmin: true}

	r = h.Client.Do(t, carol, http.MethodPatch, path, map[string]any{"reauthentication_enabled": true})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.Equal(t, true, r.Body["reauthentication_enabled"])
	assert.Equal(t, true, h.Client.Do(t, carol, http.MethodGet, path, nil).Body["reauthentication_enabled"], "stored")

	assertError(t, h.Client.Do(t, dave, http.MethodPatch, path, map[string]any{"reauthentication_enabled": false}), http.StatusForbidden, "11")
	assertError(t, h.Client.Do(t, carol, http.MethodPatch, path, map[string]any{"owner": "dave"}), http.StatusForbidden, "11")
	assertError(t, h.Client.Do(t, admin, http.MethodPatch, path, map[string]any{"owner": ""}), http.StatusBadRequest, "33")
	assertError(t, h.Client.Do(t, admin, http.MethodPatch, path, map[string]any{}), http.StatusBadRequest, "21")
	assertError(t, h.Client.Do(t, admin, http.MethodPatch, path, map[string]any{"owner": 7}), http.StatusBadRequest, "17")
	assertError(t, h.Client.Do(t, alice, http.MethodPatch, path, map[string]any{"reauthentication_enabled": false}), http.StatusNotFound, "7")
	assertError(t, h.Client.Do(t, admin, http.MethodPatch, "dinosaurs/nosuchid", map[string]any{"owner": "dave"}), http.StatusNotFound, "7")

	r = h.Client.Do(t, admin, http.MethodPatch, path, map[string]any{"owner": "dave", "reauthentication_enabled": false})
	require.Equal(t, http.StatusOK, r.Status, "%s", r.Raw)
	assert.Equal(t, "dave", r.Str("owner"))
	assert.Equal(t, false, r.Body["reauthentication_enabled"])
	// The new owner may now delete it; the old one may not.
	assertError(t, h.Client.Do(t, carol, http.MethodDelete, path+"?async=true", nil), http.StatusNotFound, "7")
	r = h.Client.Do(t, dave, http.MethodDelete, path+"?async=true", nil)
	assert.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
}

// testKafkaKind drives the API of the kafka kind: its paths, its kinds and
// its host field (bootstrap_server_host), every exchange checked against
// the document the kafka API serves.
func testKafkaKind(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), func(o *HarnessOptions) { o.Kind = fleet.Kafka })
	r := h.Client.Do(t, alice, http.MethodPost, "kafkas?async=true", map[string]any{"name": "events", "plan": "standard.x1"})
	require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
	id := r.Str("id")
	assert.Equal(t, "Kafka", r.Str("kind"))
	assert.Equal(t, "/api/kafkas_mgmt/v1/kafkas/"+id, r.Str("href"))
	assert.Equal(t, true, r.Body["reauthentication_enabled"])
	for _, absent := range []string{"bootstrap_server_host", "host", "failed_reason", "cluster_id", "expires_at"} {
		assert.NotContains(t, r.Body, absent, "not sent before it has a value")
	}

	ready := h.Client.WaitStatus(t, alice, id, "ready", waitFor)
	assert.NotEmpty(t, ready.Str("bootstrap_server_host"))
	assert.NotContains(t, ready.Body, "host")
	list := h.Client.Do(t, alice, http.MethodGet, "kafkas?orderBy=name%20asc", nil)
	require.Equal(t, http.StatusOK, list.Status)
	assert.Equal(t, "KafkaRequestList", list.Str("kind"))
	require.Len(t, list.Items(), 1)

	r = h.Client.Do(t, alice, http.MethodPost, "kafkas?async=true", map[string]any{"name": "events"})
	require.Equal(t, http.StatusConflict, r.Status, "%s", r.Raw)
	assert.Equal(t, "KAFKAS-MGMT-36", r.Code())
	assert.Equal(t, "/api/kafkas_mgmt/v1/errors/36", r.Str("href"))
	for _, path := range []string{"cloud_providers", "cloud_providers/aws/regions", "errors", "errors/7", "/api/kafkas_mgmt/v1", "/api/kafkas_mgmt"} {
		r = h.Client.Do(t, alice, http.MethodGet, path, nil)
		assert.Equal(t, http.StatusOK, r.Status, "%s: %s", path, r.Raw)
	}
	r = h.Client.Do(t, alice, http.MethodGet, "/api/dinosaurs_mgmt/v1/dinosaurs", nil)
	assert.Equal(t, http.StatusNotFound, r.Status, "another kind's paths are not served")

	del := h.Client.Do(t, alice, http.MethodDelete, "kafkas/"+id+"?async=true", nil)
	require.Equal(t, http.StatusAccepted, del.Status, "%s", del.Raw)
	h.Client.WaitStatus(t, alice, id, "gone", waitFor)
}

// partitioned cuts a replica off from the database while cut is set, as
// if it had died: every call fails, so it can neither renew nor release
// its leases nor move an instance.
type partitioned struct {
	fleet.Store
	cut atomic.Bool
}

var errPartitioned = fmt.Errorf("partitioned from the database")

func (p *partitioned) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (lease.Lease, error) {
	if p.cut.Load() {
		return lease.Lease{}, errPartitioned
	}
	return p.Store.AcquireLease(ctx, name, holder, ttl)
}

func (p *partitioned) ReleaseLease(ctx context.Context, l lease.Lease) error {
	if p.cut.Load() {
		return errPartitioned
	}
	return p.Store.ReleaseLease(ctx, l)
}

func (p *partitioned) GetInstance(ctx context.Context, id string) (fleet.Instance, error) {
	if p.cut.Load() {
		return fleet.Instance{}, errPartitioned
	}
	return p.Store.GetInstance(ctx, id)
}

func (p *partitioned) ListInstances(ctx context.Context, q fleet.Query) ([]fleet.Instance, int, error) {
	if p.cut.Load() {
		return nil, 0, errPartitioned
	}
	return p.Store.ListInstances(ctx, q)
}

func (p *partitioned) UpdateInstance(ctx context.Context, u fleet.Update) (fleet.Instance, error) {
	if p.cut.Load() {
		return fleet.Instance{}, errPartitioned
	}
	return p.Store.UpdateInstance(ctx, u)
}

func (p *partitioned) ListClusters(ctx context.Context) ([]cluster.Cluster, error) {
	if p.cut.Load() {
		return nil, errPartitioned
	}
	return p.Store.ListClusters(ctx)
}

func (p *partitioned) UpdateCluster(ctx context.Context, u cluster.Update) (cluster.Cluster, error) {
	if p.cut.Load() {
		return cluster.Cluster{}, errPartitioned
	}
	return p.Store.UpdateCluster(ctx, u)
}

// testFailover runs replicas with leader election on one store and one
// data plane, cuts the leader off from the database mid-work (it can
// neither renew nor release its leases, as if it died), and checks that
// another replica takes over and that every instance ends ready, once.
func testFailover(t *testing.T, newStore NewStore, replicas int) {
	st := newStore(t)
	secret := []byte("test-secret")
	authn, err := auth.NewJWTAuthenticator(auth.JWTOptions{HS256Secret: secret})
	require.NoError(t, err)
	dp := inmem.NewDataPlane(inmem.DataPlaneOptions{ReadyAfter: 30 * time.Millisecond})
	const ttl = 800 * time.Millisecond
	start := func(name string, store fleet.Store) *fleettest.Client {
		svc, err := fleet.New(store, fleet.Options{
			Kind: fleet.Dinosaur, Clusters: cluster.Defaults(), DataPlane: dp,
			Interval: 100 * time.Millisecond, RetryInterval: 20 * time.Millisecond,
			LeaderElection: true, Holder: name, LeaseTTL: ttl,
		})
		require.NoError(t, err)
		api, err := httpapi.New(svc, httpapi.Options{Auth: authn})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Go(func() { assert.NoError(t, svc.Run(ctx)) })
		srv := httptest.NewServer(api)
		t.Cleanup(func() { srv.Close(); cancel(); wg.Wait() })
		return &fleettest.Client{BaseURL: srv.URL, Kind: fleet.Dinosaur, Secret: secret}
	}
	leader := &partitioned{Store: st}
	clients := []*fleettest.Client{start("replica-0", leader)}
	// The others start once replica-0 holds the leases, so it leads.
	require.Eventually(t, func() bool {
		_, err := st.AcquireLease(context.Background(), "dinosaur/accepted", "probe", time.Millisecond)
		return err != nil
	}, 10*time.Second, 5*time.Millisecond)
	for i := 1; i < replicas; i++ {
		clients = append(clients, start(fmt.Sprintf("replica-%d", i), st))
	}

	const n = 40
	ids := make([]string, 0, n)
	for i := range n {
		c := clients[i%len(clients)] // every replica serves the API
		if i > n/2 {
			c = clients[1+i%(len(clients)-1)] // the cut-off one cannot
		}
		r := c.Do(t, alice, http.MethodPost, "dinosaurs?async=true", map[string]any{"name": fmt.Sprintf("d-%d", i)})
		require.Equal(t, http.StatusAccepted, r.Status, "%s", r.Raw)
		ids = append(ids, r.Str("id"))
		if i == n/2 {
			leader.cut.Store(true) // the leader loses the database mid-work
		}
	}
	for _, id := range ids {
		clients[1].WaitStatus(t, alice, id, "ready", waitFor)
	}
	assert.Len(t, runningIDs(t, dp), n, "every instance runs on the data plane; none lost")
}

// testDataPlaneDrift loses a ready instance on the data plane (a restart
// of an in-memory data plane, say): the ready worker re-applies it and
// records the new host.
func testDataPlaneDrift(t *testing.T, newStore NewStore) {
	h := NewHarness(t, newStore(t), nil)
	id := h.mustCreate(t, alice, "rex")
	old := h.Client.WaitStatus(t, alice, id, "ready", waitFor).Str("host")
	require.NoError(t, h.DP.Remove(context.Background(), fleet.Instance{ID: id}))
	var host string
	require.Eventually(t, func() bool {
		host = h.Client.Do(t, alice, http.MethodGet, "dinosaurs/"+id, nil).Str("host")
		return host != old && host != ""
	}, waitFor, 10*time.Millisecond)
	resp, err := http.Get("http://" + host + "/")
	require.NoError(t, err, "the re-applied instance answers")
	_ = resp.Body.Close()
	assert.Equal(t, []string{id}, runningIDs(t, h.DP))
}

// runningIDs returns the IDs of the instances dp runs.
func runningIDs(t *testing.T, dp *inmem.DataPlane) []string {
	t.Helper()
	insts, err := dp.Running(context.Background())
	require.NoError(t, err)
	ids := make([]string, 0, len(insts))
	for _, i := range insts {
		ids = append(ids, i.ID)
	}
	return ids
}
