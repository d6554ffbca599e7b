package process_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/internal/testenv"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/machinestest"
	"github.com/fleetkit/fleetkit/machines/process"
)

func answers(addr string) bool {
	resp, err := http.Get("http://" + addr + "/health")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// sessionOf returns the session ID of pid (/proc/<pid>/stat field 6).
func sessionOf(t *testing.T, pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	require.NoError(t, err)
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	sid, err := strconv.Atoi(f[3])
	require.NoError(t, err)
	return sid
}

// Machines recorded in a state file outlive a Provider closed with
// KeepOnClose, and the next Provider of that file adopts them: List, Remove
// and Watch work on them as on its own. Two Providers cannot share the
// file, and IDs are never reused.
func TestStateFileAdoptsMachines(t *testing.T) {
	testenv.Short(t)
	if runtime.GOOS != "linux" {
		t.Skip("the start time that guards against reused PIDs is read from /proc")
	}
	state := filepath.Join(t.TempDir(), "machines.json")
	p1, err := process.New(process.Options{StateFile: state, KeepOnClose: true, StopTimeout: 2 * time.Second})
	require.NoError(t, err)
	_, err = process.New(process.Options{StateFile: state})
	require.ErrorContains(t, err, "held by another process", "one Provider per state file")
	ctx := context.Background()
	var ms []machines.Machine
	for range 2 {
		m, err := p1.Create(ctx, linterSpec(t, "python", "1.0"))
		require.NoError(t, err)
		ms = append(ms, m)
		t.Cleanup(func() { _ = syscall.Kill(-pidOf(t, m), syscall.SIGKILL) })
		assert.Equal(t, pidOf(t, m), sessionOf(t, pidOf(t, m)), "a session of its own")
	}
	require.NoError(t, p1.Close())
	for _, m := range ms {
		assert.True(t, answers(m.Address), "a closed Provider with KeepOnClose leaves %s running", m.Address)
	}

	p2 := newProvider(t, process.Options{StateFile: state, StopTimeout: 2 * time.Second})
	got, err := p2.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, got, 2)
	for i, m := range got {
		assert.Equal(t, ms[i].ID, m.ID)
		assert.Equal(t, ms[i].Address, m.Address)
		assert.Equal(t, machines.StateRunning, m.State)
		assert.Equal(t, ms[i].Labels, m.Labels)
	}
	events := make(chan machines.Event, 4)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = p2.Watch(wctx, func(e machines.Event) { events <- e }) }()
	require.Eventually(t, func() bool { return p2.Watchers() == 1 }, 10*time.Second, time.Millisecond)

	require.NoError(t, p2.Remove(ctx, ms[0].ID))
	assert.True(t, groupGone(pidOf(t, ms[0])), "Remove stops an adopted machine")
	require.NoError(t, syscall.Kill(pidOf(t, ms[1]), syscall.SIGKILL)) // a crash
	select {
	case e := <-events:
		assert.Equal(t, ms[1].ID, e.Machine.ID)
		assert.Equal(t, machines.StateExited, e.Machine.State)
	case <-time.After(10 * time.Second):
		t.Fatal("the exit of an adopted machine is not reported")
	}
	got, err = p2.List(ctx, nil)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, machines.StateExited, got[0].State)

	m3, err := p2.Create(ctx, linterSpec(t, "python", "1.0"))
	require.NoError(t, err)
	assert.NotContains(t, []string{ms[0].ID, ms[1].ID}, m3.ID, "IDs are not reused")
	require.NoError(t, p2.Close())
	assert.True(t, groupGone(pidOf(t, m3)), "without KeepOnClose, Close stops the machines")
}

// A manager killed by SIGKILL leaves its machines running (no
// ParentDeathSignal) and recorded; the next Provider adopts them.
func TestStateFileSurvivesSIGKILL(t *testing.T) {
	testenv.Short(t)
	if runtime.GOOS != "linux" {
		t.Skip("the start time that guards against reused PIDs is read from /proc")
	}
	state := filepath.Join(t.TempDir(), "machines.json")
	cmd, pid, addr := startParent(t, 0, state)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	resp, err := http.Get("http://" + addr + "/")
	require.NoError(t, err, "the machine outlives its killed manager")
	_ = resp.Body.Close()

	p := newProvider(t, process.Options{StateFile: state, StopTimeout: 2 * time.Second})
	got, err := p.List(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, addr, got[0].Address)
	assert.Equal(t, strconv.Itoa(pid), got[0].Labels[process.LabelPID])
	require.NoError(t, p.Close())
	assert.True(t, groupGone(pid))
}

func TestKeepOnCloseRefusesParentDeathSignal(t *testing.T) {
	_, err := process.New(process.Options{KeepOnClose: true, ParentDeathSignal: syscall.SIGKILL})
	require.Error(t, err)
}

// A manager killed between a machine's fork and the record of its PID
// leaves a record without one; the next Provider finds the process by the
// marker in its environment and adopts it (the fault suite found the
// orphan this left).
func TestStateFileFindsAMachineStartedButNotRecorded(t *testing.T) {
	testenv.Short(t)
	if runtime.GOOS != "linux" {
		t.Skip("processes are found by their environment in /proc")
	}
	state := filepath.Join(t.TempDir(), "machines.json")
	exe, err := os.Executable()
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	cmd := exec.Command(exe, "-test.run=^$", addr)
	cmd.Env = append(os.Environ(), helperEnv+"=serve", "FLEETKIT_MACHINE="+state+"#process-7")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	require.NoError(t, os.WriteFile(state, fmt.Appendf(nil,
		`{"version":1,"seq":7,"machines":[{"id":"process-7","pid":0,"address":%q,"language":"python","version":"1.0","labels":{"a":"b"}}]}`,
		addr), 0o600))

	p := newProvider(t, process.Options{StateFile: state, StopTimeout: 2 * time.Second})
	got, err := p.List(context.Background(), nil)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "process-7", got[0].ID)
	assert.Equal(t, addr, got[0].Address)
	assert.Equal(t, machines.StateRunning, got[0].State)
	require.NoError(t, p.Remove(context.Background(), "process-7"))
	require.Eventually(t, func() bool { return groupGone(cmd.Process.Pid) }, 10*time.Second, 10*time.Millisecond)
}

// With a state file and KeepOnClose the provider passes the conformance
// suite as one that adopts: a new provider of the same file owns the
// machines of a closed one.
func TestConformancePersistent(t *testing.T) {
	testenv.Short(t)
	if runtime.GOOS != "linux" {
		t.Skip("the start time that guards against reused PIDs is read from /proc")
	}
	dir := t.TempDir()
	machinestest.RunConformance(t, machinestest.Harness{
		New: func(t *testing.T, name string) machines.Provider {
			p, err := process.New(process.Options{Name: name, StopTimeout: time.Second,
				StateFile: filepath.Join(dir, name+".json"), KeepOnClose: true})
			require.NoError(t, err)
			t.Cleanup(func() { // KeepOnClose: the test removes what is left
				ms, _ := p.List(context.Background(), nil)
				for _, m := range ms {
					_ = p.Remove(context.Background(), m.ID)
				}
				_ = p.Close()
			})
			return p
		},
		Spec: func(t *testing.T, language, version string) machines.Spec {
			return linterSpec(t, language, version)
		},
		Adopts: true,
	})
}
