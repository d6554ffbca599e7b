package process_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/internal/linterbin"
	"github.com/fleetkit/fleetkit/machines/machinestest"
	"github.com/fleetkit/fleetkit/machines/process"
)

var bin *linterbin.Builder

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "serve":
		serveForever()
	case "parent":
		parentHelper()
	}
	dir, err := os.MkdirTemp("", "fleetkit-process-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = linterbin.New(dir)
	code := testenv.Run(m)
	_ = os.RemoveAll(dir)
	os.Exit(testenv.CheckLeaks(code))
}

func newProvider(t testing.TB, opts process.Options) *process.Provider {
	t.Helper()
	p, err := process.New(opts)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close() })
	return p
}

func linterSpec(t testing.TB, language, version string) machines.Spec {
	s := linterbin.Spec(language, version)
	s.Command = bin.Path(t)
	s.HealthPath = machines.DefaultHealthPath
	s.StartTimeout = 20 * time.Second
	s.Labels["test"] = t.Name()
	return s
}

func pidOf(t testing.TB, m machines.Machine) int {
	t.Helper()
	pid, err := strconv.Atoi(m.Labels[process.LabelPID])
	require.NoError(t, err)
	return pid
}

// groupGone reports whether no live process of the group pgid is left.
// Zombies do not count: the killed children of a killed leader wait for
// whatever reaps orphans here, which may be slow or absent.
func groupGone(pgid int) bool {
	if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		return true
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) >= 3 && fields[2] == strconv.Itoa(pgid) && fields[0] != "Z" && fields[0] != "X" {
			return false
		}
	}
	return true
}

func TestNewRejectsInvalidOptions(t *testing.T) {
	_, err := process.New(process.Options{StopTimeout: -time.Second})
	require.Error(t, err)
}

func TestCreateRejectsInvalidSpec(t *testing.T) {
	p := newProvider(t, process.Options{})
	tests := []struct {
		name string
		spec machines.Spec
	}{
		{"no command", machines.Spec{Name: "python-1.0"}},
		{"unknown command", machines.Spec{Command: "fleetkit-no-such-binary"}},
		{"reserved label", machines.Spec{Command: "true", Labels: map[string]string{"io.fleetkit.x": "y"}}},
		{"relative health path", machines.Spec{Command: "true", HealthPath: "health"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Create(t.Context(), tt.spec)
			require.ErrorIs(t, err, machines.ErrInvalidSpec)
		})
	}
	ms, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Empty(t, ms)
}

func TestRemoveUnknown(t *testing.T) {
	p := newProvider(t, process.Options{})
	require.ErrorIs(t, p.Remove(t.Context(), "process-42"), machines.ErrNotFound)
}

func TestCreateLintRemove(t *testing.T) {
	testenv.Short(t)
	tests := []struct{ language, version, code string }{
		{"python", "1.0", "print('hello world')\n"},
		{"python", "2.0", "print('hello world')\n"},
		{"java", "1.0", "class A {\n}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.language+"-"+tt.version, func(t *testing.T) {
			p := newProvider(t, process.Options{})
			m, err := p.Create(t.Context(), linterSpec(t, tt.language, tt.version))
			require.NoError(t, err)
			language, version := linterbin.LanguageVersion(m)
			assert.Equal(t, tt.language, language)
			assert.Equal(t, tt.version, version)
			assert.Equal(t, machines.StateRunning, m.State)
			assert.Equal(t, "true", m.Labels[machines.LabelManaged])
			assert.Equal(t, t.Name(), m.Labels["test"])
			host, _, err := net.SplitHostPort(m.Address)
			require.NoError(t, err)
			assert.Equal(t, "127.0.0.1", host)

			status, h := linterbin.GetHealth(t, m)
			require.Equal(t, http.StatusOK, status)
			assert.Equal(t, linterbin.Health{Version: tt.version, Language: tt.language}, h)

			status, lb := linterbin.Lint(t, m, tt.code)
			require.Equal(t, http.StatusOK, status)
			assert.True(t, lb.Result, lb.Details)
			assert.Equal(t, tt.language, lb.Language)
			assert.Equal(t, tt.version, lb.Version)
			status, h = linterbin.GetHealth(t, m)
			require.Equal(t, http.StatusOK, status)
			assert.EqualValues(t, 1, h.RequestCount)

			ms, err := p.List(t.Context(), nil)
			require.NoError(t, err)
			require.Len(t, ms, 1)
			assert.Equal(t, m, ms[0])

			pid := pidOf(t, m)
			require.NoError(t, p.Remove(t.Context(), m.ID))
			assert.True(t, groupGone(pid), "process group %d still alive", pid)
			_, err = net.DialTimeout("tcp", m.Address, time.Second)
			assert.Error(t, err, "the address still accepts connections")
			ms, err = p.List(t.Context(), nil)
			require.NoError(t, err)
			assert.Empty(t, ms)
			require.ErrorIs(t, p.Remove(t.Context(), m.ID), machines.ErrNotFound)
		})
	}
}

func TestConcurrentCreatesGetDistinctPorts(t *testing.T) {
	testenv.Short(t)
	p := newProvider(t, process.Options{})
	const n = 4
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		got  = map[string]bool{}
		errs []error
	)
	for range n {
		wg.Go(func() {
			m, err := p.Create(t.Context(), linterSpec(t, "python", "1.0"))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			got[m.Address] = true
		})
	}
	wg.Wait()
	require.Empty(t, errs)
	assert.Len(t, got, n)
	ms, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	assert.Len(t, ms, n)
	require.NoError(t, p.Close())
	for _, m := range ms {
		assert.True(t, groupGone(pidOf(t, m)), "Close left %s running", m.ID)
	}
	_, err = p.Create(t.Context(), linterSpec(t, "python", "1.0"))
	require.ErrorIs(t, err, machines.ErrClosed)
}

func TestExitIsReported(t *testing.T) {
	testenv.Short(t)
	p := newProvider(t, process.Options{})
	events := make(chan machines.Event, 4)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Watch(ctx, func(e machines.Event) { events <- e }) })
	t.Cleanup(func() { cancel(); wg.Wait() })

	broken, err := p.Create(t.Context(), linterSpec(t, "python", "1.2"))
	require.NoError(t, err)
	healthy, err := p.Create(t.Context(), linterSpec(t, "python", "1.0"))
	require.NoError(t, err)

	status, _ := linterbin.Lint(t, broken, "")
	assert.GreaterOrEqual(t, status, 500, "a 1.2 linter given empty code must fail")

	select {
	case e := <-events:
		assert.Equal(t, broken.ID, e.Machine.ID)
		assert.Equal(t, broken.Address, e.Machine.Address)
		assert.Equal(t, machines.StateExited, e.Machine.State)
		assert.Equal(t, 3, e.ExitCode, "the linter exits with status 3 when it crashes")
		assert.Error(t, e.Err)
	case <-time.After(10 * time.Second):
		t.Fatal("no exit event")
	}
	ms, err := p.List(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, ms, 2)
	states := map[string]machines.State{ms[0].ID: ms[0].State, ms[1].ID: ms[1].State}
	assert.Equal(t, map[string]machines.State{broken.ID: machines.StateExited, healthy.ID: machines.StateRunning}, states)

	// Removing is not an exit to report, and removing an exited machine works.
	require.NoError(t, p.Remove(t.Context(), healthy.ID))
	require.NoError(t, p.Remove(t.Context(), broken.ID))
	select {
	case e := <-events:
		t.Fatalf("unexpected event for %s: %v", e.Machine.ID, e.Err)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestCreateFailures(t *testing.T) {
	testenv.Short(t)
	sleep := testenv.LookPath(t, "sleep")
	tests := []struct {
		name    string
		spec    func(t *testing.T) machines.Spec
		wantErr error
	}{
		{"never healthy", func(t *testing.T) machines.Spec {
			s := linterSpec(t, "python", "1.0")
			s.HealthPath = "/never-200"
			return s
		}, machines.ErrStartTimeout},
		{"never listens", func(t *testing.T) machines.Spec {
			return machines.Spec{Command: sleep, Args: []string{"60"}}
		}, machines.ErrStartTimeout},
		{"exits at once", func(t *testing.T) machines.Spec {
			s := linterSpec(t, "cobol", "1.0")
			return s
		}, machines.ErrExited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProvider(t, process.Options{StopTimeout: time.Second})
			spec := tt.spec(t)
			spec.StartTimeout = 700 * time.Millisecond
			_, err := p.Create(t.Context(), spec)
			require.ErrorIs(t, err, tt.wantErr)
			ms, err := p.List(t.Context(), nil)
			require.NoError(t, err)
			assert.Empty(t, ms, "a failed create must leave nothing behind")
		})
	}
}

func TestRemoveKillsAfterStopTimeout(t *testing.T) {
	testenv.Short(t)
	sh := testenv.LookPath(t, "sh")
	const stop = 300 * time.Millisecond
	p := newProvider(t, process.Options{StopTimeout: stop})
	// The shell ignores SIGTERM, and so does the sleep it starts after the
	// linter: only SIGKILL to the whole group ends them.
	spec := linterSpec(t, "python", "1.0")
	spec.Command = sh
	// The sleep outlives any test timeout: Remove returns only if it kills.
	spec.Args = []string{"-c", `trap '' TERM; "$0" -language python -version 1.0 -addr {addr}; sleep 86400`, bin.Path(t)}
	m, err := p.Create(t.Context(), spec)
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, p.Remove(t.Context(), m.ID))
	assert.GreaterOrEqual(t, time.Since(start), stop, "Remove must wait for a graceful stop first")
	assert.True(t, groupGone(pidOf(t, m)), "the group survived Remove")
}

// BenchmarkCreateToHealthy measures Create of a python 1.0 linter process
// until its /health answers 200.
func BenchmarkCreateToHealthy(b *testing.B) {
	p := newProvider(b, process.Options{})
	spec := linterSpec(b, "python", "1.0")
	ctx := context.Background()
	for b.Loop() {
		m, err := p.Create(ctx, spec)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := p.Remove(ctx, m.ID); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// The process provider passes the suite every provider passes; by default
// its machines are its children, so a new provider adopts none (with a
// state file it does: TestConformancePersistent).
func TestConformance(t *testing.T) {
	testenv.Short(t)
	machinestest.RunConformance(t, machinestest.Harness{
		New: func(t *testing.T, name string) machines.Provider {
			return newProvider(t, process.Options{Name: name, StopTimeout: time.Second})
		},
		Spec: func(t *testing.T, language, version string) machines.Spec {
			return linterSpec(t, language, version)
		},
	})
}
