package kubetest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fleetkit/fleetkit/internal/childproc"
)

// proc is a component of the environment, started through childproc so
// that it dies with the test binary however the binary ends.
type proc struct {
	name string
	log  string
	cmd  *exec.Cmd
	cp   *childproc.Proc
}

// startProc starts bin in dir with its output in dir/name.log, and writes
// its PID to dir/name.pid so that a later run can find it.
func startProc(dir, name, bin string, args ...string) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p := &proc{name: name, log: logPath}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if p.cp, err = childproc.Start(p.cmd, func() { logf.Close() }); err != nil {
		logf.Close()
		return nil, fmt.Errorf("kubetest: start %s: %w", name, err)
	}
	_ = os.WriteFile(filepath.Join(dir, name+".pid"), fmt.Appendf(nil, "%d\n", p.cmd.Process.Pid), 0o600)
	return p, nil
}

// stop sends SIGTERM, and SIGKILL after grace, and waits for the exit.
func (p *proc) stop(grace time.Duration) error {
	defer p.cp.Release()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.cp.Exited():
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.cp.Exited()
	}
	return nil
}

// alive returns an error when the process has exited.
func (p *proc) alive() error {
	select {
	case <-p.cp.Exited():
		return fmt.Errorf("kubetest: %s exited (%v):\n%s", p.name, p.cp.Err(), p.tail())
	default:
		return nil
	}
}

// tail returns the end of the process's log, for error messages.
func (p *proc) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return strings.TrimSpace(string(b))
}

// waitReady polls url (with a bearer token if set) until it answers 200,
// the process exits, or the timeout passes.
func waitReady(ctx context.Context, p *proc, client *http.Client, url, token string, timeout time.Duration) error {
	last := ""
	return poll(ctx, timeout, p.name, []*proc{p}, func(ctx context.Context) (bool, string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err.Error()
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			last = err.Error()
			return false, last
		}
		resp.Body.Close()
		last = resp.Status
		return resp.StatusCode == http.StatusOK, last
	})
}

// poll calls check every 100ms until it reports done, one of procs exits,
// ctx ends or the timeout passes; errors quote check's last words and the
// log of the process concerned.
func poll(ctx context.Context, timeout time.Duration, what string, procs []*proc, check func(context.Context) (done bool, last string)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		done, last := check(ctx)
		if done {
			return nil
		}
		for _, p := range procs {
			if err := p.alive(); err != nil {
				return fmt.Errorf("kubetest: waiting for %s: %w", what, err)
			}
		}
		select {
		case <-ctx.Done():
			logs := ""
			if len(procs) > 0 {
				logs = ":\n" + procs[len(procs)-1].tail()
			}
			return fmt.Errorf("kubetest: %s not ready after %v (last: %s)%s", what, timeout, last, logs)
		case <-tick.C:
		}
	}
}

// freePorts returns n distinct free ports on ip. They are free when
// returned; another process could take one before it is used, which
// Start reports as a start failure.
func freePorts(ip string, n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
