package machinestest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/machines"
)

// Harness is what RunConformance needs to know of a provider.
type Harness struct {
	// New returns a provider whose machines carry the provider label name
	// (at most 40 characters, letters, digits and dashes). The suite calls
	// it again with the same name to play a manager that restarted; the
	// harness cleans up whatever the providers leave when the test ends.
	New func(t *testing.T, name string) machines.Provider
	// Spec returns the spec of a linter service (fleetkit's wire contract:
	// GET /health, POST /lint; version 1.2 exits with status 3 after a lint
	// of empty code) of language and version that the provider runs: its
	// Command or Image and its Args. The suite sets HealthPath and
	// StartTimeout and adds its own Labels.
	Spec func(t *testing.T, language, version string) machines.Spec
	// Adopts says whether a new provider with the same name owns the
	// machines of an old one (docker, kubernetes) or not (process: they are
	// the old value's children and stop with it).
	Adopts bool
}

// RunConformance runs the provider conformance suite: create, health,
// address, list by label selector, get, remove, idempotent remove,
// adoption by a restarted provider, context cancellation, start timeout,
// invalid specs and, for a machines.Watcher, a reported exit. Every provider runs
// it, the in-memory one of this package too:
//
//	func TestConformance(t *testing.T) {
//		machinestest.RunConformance(t, machinestest.Harness{New: ..., Spec: ...})
//	}
//
// Subtests run one after another, each with providers of its own.
func RunConformance(t *testing.T, h Harness) {
	var b [3]byte
	_, _ = rand.Read(b[:])
	run := hex.EncodeToString(b[:])
	tests := []struct {
		name string
		fn   func(t *testing.T, s *suite)
	}{
		{"CreateHealthAddress", testCreateHealthAddress},
		{"ListAndGet", testListAndGet},
		{"Remove", testRemove},
		{"RemoveIdempotent", testRemoveIdempotent},
		{"Adoption", testAdoption},
		{"ContextCancellation", testContextCancellation},
		{"StartTimeout", testStartTimeout},
		{"InvalidSpec", testInvalidSpec},
		{"WatchExit", testWatchExit},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &suite{h: h, name: "conf-" + run + "-" + string(rune('a'+i))}
			tt.fn(t, s)
		})
	}
}

type suite struct {
	h    Harness
	name string // the provider name of this subtest
}

// provider returns a provider of the subtest's name whose machines are
// removed when the test ends, whatever happened.
func (s *suite) provider(t *testing.T) machines.Provider {
	t.Helper()
	p := s.h.New(t, s.name)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if ms, err := p.List(ctx, nil); err == nil {
			for _, m := range ms {
				_ = p.Remove(ctx, m.ID)
			}
		}
		closeProvider(p)
	})
	return p
}

func closeProvider(p machines.Provider) {
	if c, ok := p.(io.Closer); ok {
		_ = c.Close()
	}
}

// spec is a healthy python linter of version, labelled with labels too.
func (s *suite) spec(t *testing.T, version string, labels map[string]string) machines.Spec {
	sp := s.h.Spec(t, "python", version)
	sp.HealthPath = machines.DefaultHealthPath
	if sp.StartTimeout == 0 {
		sp.StartTimeout = time.Minute
	}
	sp.Labels = maps.Clone(sp.Labels)
	if sp.Labels == nil {
		sp.Labels = map[string]string{}
	}
	maps.Copy(sp.Labels, labels)
	return sp
}

func testCreateHealthAddress(t *testing.T, s *suite) {
	p := s.provider(t)
	before := time.Now()
	m, err := p.Create(t.Context(), s.spec(t, "1.0", map[string]string{"suite": "conformance"}))
	require.NoError(t, err)
	after := time.Now()

	assert.NotEmpty(t, m.ID)
	assert.Equal(t, machines.StateRunning, m.State)
	assert.Empty(t, m.Reason)
	for k, v := range map[string]string{
		"suite":                "conformance",
		machines.LabelManaged:  "true",
		machines.LabelProvider: s.name,
	} {
		assert.Equal(t, v, m.Labels[k], "label %s", k)
	}
	assert.False(t, m.CreatedAt.Before(before.Add(-time.Second)) || m.CreatedAt.After(after.Add(time.Second)),
		"CreatedAt %v is not between %v and %v", m.CreatedAt, before, after)
	host, port, err := net.SplitHostPort(m.Address)
	require.NoError(t, err, "address %q", m.Address)
	assert.NotNil(t, net.ParseIP(host), "address %q has no IP", m.Address)
	assert.NotEqual(t, "0", port)

	// Create returned once /health answers: it answers at the address.
	status, body := get(t, m, machines.DefaultHealthPath)
	require.Equal(t, http.StatusOK, status, body)
	var h struct{ Version, Language string }
	require.NoError(t, json.Unmarshal([]byte(body), &h))
	assert.Equal(t, "1.0", h.Version)
	assert.Equal(t, "python", h.Language)
	status, body = post(t, m, "/lint", `{"code": "x = 1\n"}`)
	require.Equal(t, http.StatusOK, status, body)
	var l struct {
		Result  bool
		Version string
	}
	require.NoError(t, json.Unmarshal([]byte(body), &l))
	assert.True(t, l.Result, body)
	assert.Equal(t, "1.0", l.Version)

	ms, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, ms, 1)
	assertSame(t, m, ms[0])
	got, err := p.Get(t.Context(), m.ID)
	require.NoError(t, err)
	assertSame(t, m, got)
}

// assertSame checks that a listed machine is the created one.
func assertSame(t *testing.T, want, got machines.Machine) {
	t.Helper()
	assert.Equal(t, want.ID, got.ID)
	assert.Equal(t, want.Address, got.Address)
	assert.Equal(t, want.Labels, got.Labels)
	assert.Equal(t, machines.StateRunning, got.State)
	assert.True(t, want.CreatedAt.Equal(got.CreatedAt), "CreatedAt %v, listed %v", want.CreatedAt, got.CreatedAt)
}

func testListAndGet(t *testing.T, s *suite) {
	p := s.provider(t)
	a, err := p.Create(t.Context(), s.spec(t, "1.0", map[string]string{"group": "a", "release": "1.0", "suite": "conformance"}))
	require.NoError(t, err)
	b, err := p.Create(t.Context(), s.spec(t, "2.0", map[string]string{"group": "b", "release": "2.0", "suite": "conformance"}))
	require.NoError(t, err)

	ms, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	assertSame(t, a, ms[0]) // oldest first
	assertSame(t, b, ms[1])

	for _, tt := range []struct {
		sel  machines.Selector
		want []string
	}{
		{machines.Selector{"group": "a"}, []string{a.ID}},
		{machines.Selector{"group": "b", "release": "2.0"}, []string{b.ID}},
		{machines.Selector{"group": "b", "release": "1.0"}, nil},
		{machines.Selector{"suite": "conformance"}, []string{a.ID, b.ID}},
		{machines.Selector{"suite": "conformance", machines.LabelProvider: s.name}, []string{a.ID, b.ID}},
		{machines.Selector{machines.LabelProvider: s.name + "-other"}, nil},
		{machines.Selector{}, []string{a.ID, b.ID}},
		{nil, []string{a.ID, b.ID}},
		{machines.Selector{"group": "c"}, nil},
		{machines.Selector{"zone": "a"}, nil},
	} {
		got, err := p.List(t.Context(), tt.sel)
		require.NoError(t, err)
		var ids []string
		for _, m := range got {
			ids = append(ids, m.ID)
		}
		assert.Equal(t, tt.want, ids, "List(%v)", tt.sel)
	}

	for _, want := range []machines.Machine{a, b} {
		got, err := p.Get(t.Context(), want.ID)
		require.NoError(t, err)
		assertSame(t, want, got)
	}
	_, err = p.Get(t.Context(), "no-such-machine")
	require.ErrorIs(t, err, machines.ErrNotFound)
}

func testRemove(t *testing.T, s *suite) {
	p := s.provider(t)
	a, err := p.Create(t.Context(), s.spec(t, "1.0", nil))
	require.NoError(t, err)
	b, err := p.Create(t.Context(), s.spec(t, "1.0", nil))
	require.NoError(t, err)

	require.NoError(t, p.Remove(t.Context(), a.ID))
	ms, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, ms, 1, "Remove returns once the machine is gone")
	assert.Equal(t, b.ID, ms[0].ID)
	_, err = p.Get(t.Context(), a.ID)
	require.ErrorIs(t, err, machines.ErrNotFound)
	d := net.Dialer{Timeout: 2 * time.Second}
	if c, err := d.DialContext(t.Context(), "tcp", a.Address); err == nil {
		c.Close()
		t.Errorf("the removed machine's address %s still accepts connections", a.Address)
	}
	status, _ := get(t, b, machines.DefaultHealthPath)
	assert.Equal(t, http.StatusOK, status, "the other machine serves on")
}

func testRemoveIdempotent(t *testing.T, s *suite) {
	p := s.provider(t)
	m, err := p.Create(t.Context(), s.spec(t, "1.0", nil))
	require.NoError(t, err)
	require.NoError(t, p.Remove(t.Context(), m.ID))
	require.ErrorIs(t, p.Remove(t.Context(), m.ID), machines.ErrNotFound)
	require.ErrorIs(t, p.Remove(t.Context(), "no-such-machine"), machines.ErrNotFound)

	// A machine of another provider is not this one's to remove.
	other := (&suite{h: s.h, name: s.name + "-o"}).provider(t)
	o, err := other.Create(t.Context(), s.spec(t, "1.0", nil))
	require.NoError(t, err)
	require.ErrorIs(t, p.Remove(t.Context(), o.ID), machines.ErrNotFound)
	_, err = p.Get(t.Context(), o.ID)
	require.ErrorIs(t, err, machines.ErrNotFound, "nor to get")
	ms, err := other.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Len(t, ms, 1)
}

func testAdoption(t *testing.T, s *suite) {
	// Not s.provider: its cleanup would use first after Close (a Docker
	// client reopens a connection nobody closes). second, of the same
	// name, removes first's machines.
	first := s.h.New(t, s.name)
	t.Cleanup(func() { closeProvider(first) })
	m, err := first.Create(t.Context(), s.spec(t, "1.0", map[string]string{"suite": "conformance"}))
	require.NoError(t, err)
	closeProvider(first)

	// A restarted manager: a new provider with the same name.
	second := s.provider(t)
	ms, err := second.List(t.Context(), nil)
	require.NoError(t, err)
	if !s.h.Adopts {
		assert.Empty(t, ms, "this provider's machines stop with it")
		return
	}
	require.Len(t, ms, 1)
	assertSame(t, m, ms[0])
	got, err := second.Get(t.Context(), m.ID)
	require.NoError(t, err)
	assertSame(t, m, got)
	ms, err = second.List(t.Context(), machines.Selector{"suite": "conformance"})
	require.NoError(t, err)
	require.Len(t, ms, 1, "the restarted provider selects what it adopted")
	assertSame(t, m, ms[0])
	status, _ := get(t, ms[0], machines.DefaultHealthPath)
	assert.Equal(t, http.StatusOK, status)
	require.NoError(t, second.Remove(t.Context(), m.ID))
	ms, err = second.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, ms)
}

func testContextCancellation(t *testing.T, s *suite) {
	p := s.provider(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := p.Create(ctx, s.spec(t, "1.0", nil))
	require.ErrorIs(t, err, context.Canceled)
	ms, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, ms)

	// Cancelled while starting: the machine exists but never gets healthy.
	sp := s.spec(t, "1.0", nil)
	sp.HealthPath = "/never-200"
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		defer cancel()
		for ctx.Err() == nil { // until Create's machine shows up
			if ms, err := p.List(t.Context(), nil); err == nil && len(ms) > 0 {
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	_, err = p.Create(ctx, sp)
	wg.Wait()
	require.ErrorIs(t, err, context.Canceled)
	ms, err = p.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, ms, "a cancelled Create leaves nothing behind")
}

func testStartTimeout(t *testing.T, s *suite) {
	p := s.provider(t)
	sp := s.spec(t, "1.0", nil)
	sp.HealthPath = "/never-200"
	sp.StartTimeout = 2 * time.Second
	_, err := p.Create(t.Context(), sp)
	require.ErrorIs(t, err, machines.ErrStartTimeout)
	ms, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, ms, "a timed-out Create leaves nothing behind")
}

func testInvalidSpec(t *testing.T, s *suite) {
	p := s.provider(t)
	for _, mutate := range []func(*machines.Spec){
		func(sp *machines.Spec) { sp.Port = 70000 },
		func(sp *machines.Spec) { sp.Labels = map[string]string{machines.LabelPrefix + "x": "y"} },
		func(sp *machines.Spec) { sp.HealthPath = "health" },
	} {
		sp := s.spec(t, "1.0", nil)
		mutate(&sp)
		_, err := p.Create(t.Context(), sp)
		require.ErrorIs(t, err, machines.ErrInvalidSpec)
	}
	ms, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, ms)
}

func testWatchExit(t *testing.T, s *suite) {
	p := s.provider(t)
	w, ok := p.(machines.Watcher)
	if !ok {
		t.Skip("the provider is not a machines.Watcher")
	}
	events := make(chan machines.Event, 16)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	watching := make(chan struct{})
	wg.Go(func() {
		close(watching)
		_ = w.Watch(ctx, func(e machines.Event) { events <- e })
	})
	t.Cleanup(func() { cancel(); wg.Wait() })
	<-watching

	// A Watch reports exits from its start: Create gives it the machine's
	// whole start to subscribe before the machine crashes.
	m, err := p.Create(t.Context(), s.spec(t, "1.2", nil))
	require.NoError(t, err)
	status, _ := post(t, m, "/lint", `{"code": ""}`)
	assert.GreaterOrEqual(t, status, 500, "a 1.2 linter given empty code fails")
	deadline := time.After(time.Minute)
	for {
		select {
		case e := <-events:
			if e.Machine.ID != m.ID {
				continue
			}
			assert.Equal(t, 3, e.ExitCode, "the linter exits with status 3 when it crashes")
			assert.Equal(t, machines.StateExited, e.Machine.State)
			assert.Error(t, e.Err)
			return
		case <-deadline:
			t.Fatal("no event for the machine that exited")
		}
	}
}

var client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}

func get(t *testing.T, m machines.Machine, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, m.URL()+path, nil)
	require.NoError(t, err)
	return do(t, req)
}

func post(t *testing.T, m machines.Machine, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, m.URL()+path, bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	return do(t, req)
}

// do returns the status and body, or 0 and the error when there is no
// answer.
func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return resp.StatusCode, err.Error()
	}
	return resp.StatusCode, string(b)
}
