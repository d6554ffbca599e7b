// Package agenttest is a control plane for tests of agents: an httptest
// server that speaks the agent API's wire contract (desired instances with
// ETag long-polls, status reports, heartbeats, bearer tokens), whose
// desired set the test controls and whose received reports it reads.
//
//	cp := agenttest.NewControlPlane(t, fleet.Dinosaur, "c1")
//	cp.Set(cp.Instance("id1", "rex"))
//	... run an agent with cp.URL(), cp.Token ...
//	r, _ := cp.Last() // the last complete report
//
// A ControlPlane is safe for concurrent use.
package agenttest

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/agent"
)

// ControlPlane is the agent API of one cluster and kind.
type ControlPlane struct {
	// Kind, Cluster and Token are what an agent needs to be let in.
	Kind    fleet.Kind
	Cluster string
	Token   string
	srv     *httptest.Server

	// mu guards the fields below.
	mu      sync.Mutex
	items   map[string]agent.Instance
	version int
	changed chan struct{} // closed when items change
	down    bool          // answer 503 to everything: the agent is cut off
	reports []map[string]fleet.InstanceReport
	beats   []agent.Heartbeat
	lists   int
	refused int // calls refused for their token
}

// NewControlPlane starts a control plane for cluster, closed when the test
// ends. Its token is "tok-<cluster>".
func NewControlPlane(t testing.TB, kind fleet.Kind, cluster string) *ControlPlane {
	cp := &ControlPlane{Kind: kind, Cluster: cluster, Token: "tok-" + cluster,
		items: map[string]agent.Instance{}, changed: make(chan struct{})}
	base := kind.BasePath() + "/agent-clusters/{id}"
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+base+"/"+kind.Plural, cp.list)
	mux.HandleFunc("PUT "+base+"/"+kind.Plural+"/status", cp.report)
	mux.HandleFunc("PUT "+base+"/status", cp.heartbeat)
	cp.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cp.mu.Lock()
		down := cp.down
		cp.mu.Unlock()
		switch {
		case down:
			http.Error(w, `{"kind":"Error","reason":"down"}`, http.StatusServiceUnavailable)
		case subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+cp.Token)) != 1:
			cp.mu.Lock()
			cp.refused++
			cp.mu.Unlock()
			http.Error(w, `{"kind":"Error","reason":"bad token"}`, http.StatusUnauthorized)
		case r.PathValue("id") != "" && r.PathValue("id") != cluster:
			http.Error(w, `{"kind":"Error","reason":"other cluster"}`, http.StatusForbidden)
		default:
			mux.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(cp.srv.Close)
	return cp
}

func (cp *ControlPlane) etagLocked() string {
	ids := slices.Sorted(maps.Keys(cp.items))
	b, _ := json.Marshal(ids)
	sum := sha256.Sum256(fmt.Appendf(b, "%d", cp.version))
	return `"` + hex.EncodeToString(sum[:8]) + `"`
}

func (cp *ControlPlane) list(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("id") != cp.Cluster {
		http.Error(w, "no such cluster", http.StatusNotFound)
		return
	}
	cp.mu.Lock()
	cp.lists++
	tag, changed := cp.etagLocked(), cp.changed
	cp.mu.Unlock()
	if r.Header.Get("If-None-Match") == tag {
		wait, _ := time.ParseDuration(r.URL.Query().Get("wait"))
		if wait <= 0 || wait > time.Minute {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-changed:
		case <-t.C:
			w.WriteHeader(http.StatusNotModified)
			return
		case <-r.Context().Done():
			return
		}
	}
	cp.mu.Lock()
	items := slices.Collect(maps.Values(cp.items))
	tag = cp.etagLocked()
	cp.mu.Unlock()
	w.Header().Set("ETag", tag)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"kind": cp.Kind.Display + "List", "items": items})
}

func (cp *ControlPlane) report(w http.ResponseWriter, r *http.Request) {
	var rep map[string]fleet.InstanceReport
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&rep); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cp.mu.Lock()
	cp.reports = append(cp.reports, rep)
	cp.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (cp *ControlPlane) heartbeat(w http.ResponseWriter, r *http.Request) {
	var hb agent.Heartbeat
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&hb); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	cp.mu.Lock()
	cp.beats = append(cp.beats, hb)
	cp.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// Set makes insts the desired set (waking the long polls).
func (cp *ControlPlane) Set(insts ...agent.Instance) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	cp.items = map[string]agent.Instance{}
	for _, i := range insts {
		cp.items[i.ID] = i
	}
	cp.version++
	close(cp.changed)
	cp.changed = make(chan struct{})
}

// SetDown makes the control plane answer 503 to everything (down) or
// serve again.
func (cp *ControlPlane) SetDown(down bool) {
	cp.mu.Lock()
	cp.down = down
	cp.mu.Unlock()
}

// Last returns the last report received (nil before any) and how many
// came.
func (cp *ControlPlane) Last() (map[string]fleet.InstanceReport, int) {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	if len(cp.reports) == 0 {
		return nil, 0
	}
	return cp.reports[len(cp.reports)-1], len(cp.reports)
}

// Heartbeats returns the heartbeats received.
func (cp *ControlPlane) Heartbeats() []agent.Heartbeat {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return slices.Clone(cp.beats)
}

// Instance returns a desired instance of the control plane's kind.
func (cp *ControlPlane) Instance(id, name string) agent.Instance {
	return agent.Instance{ID: id, Kind: cp.Kind.Display, Name: name, Owner: "alice", OrganisationID: "org1",
		InstanceType: "standard", SizeID: "x1", CloudProvider: "aws", Region: "us-east-1", Status: "provisioning"}
}

// URL is the control plane's base URL.
func (cp *ControlPlane) URL() string { return cp.srv.URL }

// Refused counts the calls refused for their token.
func (cp *ControlPlane) Refused() int {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return cp.refused
}

// Reports returns every report received, oldest first.
func (cp *ControlPlane) Reports() []map[string]fleet.InstanceReport {
	cp.mu.Lock()
	defer cp.mu.Unlock()
	return slices.Clone(cp.reports)
}

// Percentile is the p-th percentile (nearest rank) of ds, for the
// benchmarks' latency figures.
func Percentile(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, max(0, (len(s)*p+99)/100-1))]
}
