package machinestest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/linter"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/machinestest"
)

func newProvider(t *testing.T, opts machinestest.Options) *machinestest.Provider {
	p := machinestest.New(opts)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func spec(version string) machines.Spec {
	return machines.Spec{Args: linter.Args("python", version, "{addr}"), HealthPath: machines.DefaultHealthPath}
}

type lintAnswer struct {
	Result      bool   `json:"result"`
	Details     string `json:"details"`
	Diagnostics []struct {
		Line   int    `json:"line"`
		Column int    `json:"column"`
		Code   string `json:"code"`
	} `json:"diagnostics"`
	Version string `json:"version"`
}

func lint(t *testing.T, m machines.Machine, code string) (int, lintAnswer) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"code": code})
	resp, err := http.Post(m.URL()+"/lint", "application/json", bytes.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var a lintAnswer
	_ = json.NewDecoder(resp.Body).Decode(&a)
	return resp.StatusCode, a
}

func healthOf(t *testing.T, m machines.Machine) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(m.URL() + "/health")
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	var h map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&h)
	return resp.StatusCode, h
}

func TestFakeLinter(t *testing.T) {
	tests := []struct {
		version, code string
		wantStatus    int
		wantResult    bool
	}{
		{"1.0", "print('hello world')", http.StatusOK, true},
		{"2.0", "print('hello world')", http.StatusOK, false},
		{"2.0", "print('hello world')\n", http.StatusOK, true},
		{"1.1", "x\n", http.StatusOK, true},
		{"1.2", "x\n", http.StatusOK, true},
	}
	p := newProvider(t, machinestest.Options{SlowDelay: time.Millisecond})
	for _, tt := range tests {
		t.Run(tt.version+"/"+tt.code, func(t *testing.T) {
			m, err := p.Create(t.Context(), spec(tt.version))
			require.NoError(t, err)
			status, a := lint(t, m, tt.code)
			require.Equal(t, tt.wantStatus, status)
			assert.Equal(t, tt.wantResult, a.Result, a.Details)
			assert.Equal(t, tt.version, a.Version)
			if !tt.wantResult {
				require.Len(t, a.Diagnostics, 1)
				assert.Equal(t, "W292", a.Diagnostics[0].Code)
				assert.Equal(t, 1, a.Diagnostics[0].Line)
				assert.Equal(t, 21, a.Diagnostics[0].Column)
			}
			hs, h := healthOf(t, m)
			require.Equal(t, http.StatusOK, hs)
			assert.Equal(t, map[string]any{"version": tt.version, "language": "python", "requestCount": 1.0}, h)
			n, err := p.Lints(m.ID)
			require.NoError(t, err)
			assert.EqualValues(t, 1, n)
		})
	}
}

func TestCreateListRemove(t *testing.T) {
	p := newProvider(t, machinestest.Options{Name: "mm"})
	var created []machines.Machine
	for _, v := range []string{"1.0", "2.0", "1.0"} {
		s := spec(v)
		s.Labels = map[string]string{"owner": "test"}
		m, err := p.Create(t.Context(), s)
		require.NoError(t, err)
		assert.Equal(t, "mm", m.Labels[machines.LabelProvider])
		assert.Equal(t, "test", m.Labels["owner"])
		assert.Equal(t, machines.StateRunning, m.State)
		created = append(created, m)
	}
	ms, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Equal(t, created, ms, "List is oldest first")

	require.NoError(t, p.Remove(t.Context(), created[1].ID))
	ms, err = p.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Equal(t, []machines.Machine{created[0], created[2]}, ms)
	status, _ := healthOf(t, created[1])
	assert.Zero(t, status, "a removed machine must not answer")
	require.ErrorIs(t, p.Remove(t.Context(), created[1].ID), machines.ErrNotFound)

	// Callers' changes to a returned machine do not leak back.
	ms[0].Labels["owner"] = "changed"
	again, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Equal(t, "test", again[0].Labels["owner"])
}

func TestFailCreates(t *testing.T) {
	p := newProvider(t, machinestest.Options{})
	boom := errors.New("boom")
	p.FailCreates(2, boom)
	for range 2 {
		_, err := p.Create(t.Context(), spec("1.0"))
		require.ErrorIs(t, err, boom)
	}
	_, err := p.Create(t.Context(), spec("1.0"))
	require.NoError(t, err)

	p.FailCreates(1, nil)
	_, err = p.Create(t.Context(), spec("1.0"))
	require.ErrorIs(t, err, machines.ErrStartTimeout)

	_, err = p.Create(t.Context(), machines.Spec{Args: linter.Args("python", "", "{addr}")})
	require.ErrorIs(t, err, machines.ErrInvalidSpec, "the fake linter needs a version")
	_, err = p.Create(t.Context(), machines.Spec{Args: []string{"-language", "python", "-version", "1.0", "-no-such-flag"}})
	require.ErrorIs(t, err, machines.ErrInvalidSpec, "the fake linter refuses flags the linter does not know")
}

func TestCreateDelayHonoursContext(t *testing.T) {
	p := newProvider(t, machinestest.Options{CreateDelay: time.Hour})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err := p.Create(ctx, spec("1.0"))
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

// watch collects the provider's events until the test ends.
func watch(t *testing.T, p *machinestest.Provider) <-chan machines.Event {
	events := make(chan machines.Event, 16)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	n := p.Watchers()
	wg.Go(func() { _ = p.Watch(ctx, func(e machines.Event) { events <- e }) })
	require.Eventually(t, func() bool { return p.Watchers() == n+1 }, 5*time.Second, time.Millisecond)
	t.Cleanup(func() { cancel(); wg.Wait() })
	return events
}

func TestMachinesDie(t *testing.T) {
	tests := []struct {
		name string
		kill func(t *testing.T, p *machinestest.Provider, m machines.Machine)
	}{
		{"Kill", func(t *testing.T, p *machinestest.Provider, m machines.Machine) {
			require.NoError(t, p.Kill(m.ID))
		}},
		{"1.2 given empty code", func(t *testing.T, p *machinestest.Provider, m machines.Machine) {
			status, _ := lint(t, m, "")
			assert.Equal(t, http.StatusInternalServerError, status)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, machinestest.Options{})
			events := watch(t, p)
			m, err := p.Create(t.Context(), spec("1.2"))
			require.NoError(t, err)
			tt.kill(t, p, m)
			select {
			case e := <-events:
				assert.Equal(t, m.ID, e.Machine.ID)
				assert.Equal(t, machines.StateExited, e.Machine.State)
				assert.ErrorIs(t, e.Err, machinestest.ErrKilled)
			case <-time.After(5 * time.Second):
				t.Fatal("no event")
			}
			status, _ := healthOf(t, m)
			assert.NotEqual(t, http.StatusOK, status)
			ms, err := p.List(t.Context(), nil)
			require.NoError(t, err)
			require.Len(t, ms, 1)
			assert.Equal(t, machines.StateExited, ms[0].State)
			require.NoError(t, p.Remove(t.Context(), m.ID))
		})
	}
}

func TestRemoveIsNotReported(t *testing.T) {
	p := newProvider(t, machinestest.Options{})
	events := watch(t, p)
	m, err := p.Create(t.Context(), spec("1.0"))
	require.NoError(t, err)
	require.NoError(t, p.Remove(t.Context(), m.ID))
	require.ErrorIs(t, p.Kill(m.ID), machines.ErrNotFound)
	select {
	case e := <-events:
		t.Fatalf("unexpected event %+v", e)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestSetUnhealthy(t *testing.T) {
	p := newProvider(t, machinestest.Options{})
	m, err := p.Create(t.Context(), spec("1.0"))
	require.NoError(t, err)
	require.NoError(t, p.SetUnhealthy(m.ID, true))
	status, _ := healthOf(t, m)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	require.NoError(t, p.SetUnhealthy(m.ID, false))
	status, _ = healthOf(t, m)
	assert.Equal(t, http.StatusOK, status)
}

func TestCustomHandlerAndClose(t *testing.T) {
	p := machinestest.New(machinestest.Options{Handler: func(m machines.Machine) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) })
	}})
	// Create waits for a health path to answer 200, which this handler
	// never does.
	_, err := p.Create(t.Context(), machines.Spec{HealthPath: "/health", StartTimeout: 50 * time.Millisecond})
	require.ErrorIs(t, err, machines.ErrStartTimeout)
	m, err := p.Create(t.Context(), machines.Spec{}) // a custom handler needs no linter command line
	require.NoError(t, err)
	status, _ := healthOf(t, m)
	assert.Equal(t, http.StatusTeapot, status)
	ms, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Len(t, ms, 1, "the failed Create left nothing")
	require.NoError(t, p.Close())
	require.NoError(t, p.Close())
	_, err = p.Create(t.Context(), spec("1.0"))
	require.ErrorIs(t, err, machines.ErrClosed)
	status, _ = healthOf(t, m)
	assert.Zero(t, status)
}

// The in-memory provider passes the suite the real providers pass.
func TestConformance(t *testing.T) {
	machinestest.RunConformance(t, machinestest.Harness{
		New: func(t *testing.T, name string) machines.Provider {
			return newProvider(t, machinestest.Options{Name: name})
		},
		Spec: func(t *testing.T, language, version string) machines.Spec {
			return machines.Spec{Name: language + "-" + version, Args: linter.Args(language, version, "{addr}")}
		},
	})
}
