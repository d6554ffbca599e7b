package process_test

import (
	"bufio"
	ctx "context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/process"
)

// helperEnv makes this test binary a helper process: "serve" answers
// HTTP on os.Args[1]; "parent" runs a Provider (with the parent-death
// signal of $FLEETKIT_PROCESS_TEST_SIG), starts one "serve" machine,
// prints its PID and waits to be killed.
const helperEnv = "FLEETKIT_PROCESS_TEST_HELPER"

func serveForever() {
	ln, err := net.Listen("tcp", os.Args[len(os.Args)-1])
	if err != nil {
		os.Exit(2)
	}
	_ = http.Serve(ln, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	os.Exit(2)
}

func parentHelper() {
	sig, _ := strconv.Atoi(os.Getenv("FLEETKIT_PROCESS_TEST_SIG"))
	exe, _ := os.Executable()
	p, err := process.New(process.Options{ParentDeathSignal: syscall.Signal(sig), Env: append(os.Environ(), helperEnv+"=serve"),
		StateFile: os.Getenv("FLEETKIT_PROCESS_TEST_STATE")})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	// Create from a goroutine whose OS thread ends with it: the machine
	// must not take that thread's end for its parent's death.
	done := make(chan machines.Machine)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends here
		m, err := p.Create(ctx.Background(), machines.Spec{Command: exe, Args: []string{"-test.run=^$", "{addr}"},
			HealthPath: "/", StartTimeout: 30 * time.Second})
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		done <- m
	}()
	m := <-done
	fmt.Println(m.Labels[process.LabelPID], m.Address)
	select {}
}

// startParent runs the "parent" helper (a Provider with the parent-death
// signal sig and the state file state) and returns it with its machine's
// PID and address.
func startParent(t *testing.T, sig syscall.Signal, state string) (cmd *exec.Cmd, pid int, addr string) {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd = exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=parent", "FLEETKIT_PROCESS_TEST_SIG="+strconv.Itoa(int(sig)),
		"FLEETKIT_PROCESS_TEST_STATE="+state)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	_, err = fmt.Sscan(line, &pid, &addr)
	require.NoError(t, err, line)
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) })
	return cmd, pid, addr
}

// TestParentDeathSignal kills (SIGKILL) a process running a Provider: with
// ParentDeathSignal its machine dies with it at once; without (the
// default) the machine outlives it, as before.
func TestParentDeathSignal(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	for _, tt := range []struct {
		name     string
		sig      syscall.Signal
		survives bool
	}{
		{"default: machines outlive their parent", 0, true},
		{"SIGKILL with the parent", syscall.SIGKILL, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cmd, pid, addr := startParent(t, tt.sig, "")
			resp, err := http.Get("http://" + addr + "/")
			require.NoError(t, err, "the machine runs after the thread that created it ended")
			_ = resp.Body.Close()

			require.NoError(t, cmd.Process.Kill())
			_ = cmd.Wait()
			if tt.survives {
				assert.False(t, groupGone(pid), "the machine outlives its parent")
				return
			}
			require.Eventually(t, func() bool { return groupGone(pid) }, 10*time.Second, 5*time.Millisecond,
				"the machine dies with its parent")
		})
	}
}
