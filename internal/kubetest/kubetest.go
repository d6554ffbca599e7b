// Package kubetest runs a real etcd and kube-apiserver on loopback for
// integration tests, from binaries built once by scripts/kube-testenv.sh
// (no downloads are possible here; recipe in
// shared/reference/kube-testenv.md).
//
// A test package shares one server: declare an Env and ask it for the
// server in each test that needs one; it starts on first use.
//
//	var kube kubetest.Env
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		srv := kube.Get(t) // skips (fails under CI=true) without the binaries
//		client := kubernetes.NewForConfigOrDie(srv.Config())
//	}
//
// The processes are started with a parent-death signal from a thread that
// lives as long as they should, so they die with the test binary even
// though testenv.Main exits without running deferred calls; Start removes
// the directories that dead test binaries left behind.
package kubetest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/fleetkit/fleetkit/internal/testenv"
)

// KubeVersion is the Kubernetes release scripts/kube-testenv.sh builds.
const KubeVersion = "1.37.1"

// ErrMissing is returned by Start when the binaries are not installed.
var ErrMissing = errors.New("kubetest: etcd and kube-apiserver not found")

// BinDir returns where the binaries are looked for: $FLEETKIT_KUBE_BIN, else
// the cache directory of scripts/kube-testenv.sh.
func BinDir() string {
	if d := os.Getenv("FLEETKIT_KUBE_BIN"); d != "" {
		return d
	}
	cache := os.Getenv("FLEETKIT_CACHE")
	if cache == "" {
		base := os.Getenv("XDG_CACHE_HOME")
		if base == "" {
			home, _ := os.UserHomeDir()
			base = filepath.Join(home, ".cache")
		}
		cache = filepath.Join(base, "fleetkit")
	}
	return filepath.Join(cache, "kube", "v"+KubeVersion)
}

// Server is a running etcd and kube-apiserver.
type Server struct {
	dir        string
	host       string
	token      string
	kubeconfig string
	procs      []*proc // apiserver last: stopped first

	stopOnce sync.Once
	stopErr  error
}

// Config returns a client configuration for the server: bearer token of
// a system:masters user, TLS verification off (the certificate is
// self-signed), and client-side rate limits high enough for benchmarks.
func (s *Server) Config() *rest.Config {
	return &rest.Config{
		Host:            s.host,
		BearerToken:     s.token,
		TLSClientConfig: rest.TLSClientConfig{Insecure: true},
		QPS:             1000,
		Burst:           2000,
	}
}

// Kubeconfig returns the path of a kubeconfig file for the server.
func (s *Server) Kubeconfig() string { return s.kubeconfig }

// Dir returns the server's working directory (data, logs).
func (s *Server) Dir() string { return s.dir }

// Options configures Start. The zero value is ready.
type Options struct {
	// BinDir holds etcd and kube-apiserver; "" means BinDir().
	BinDir string
	// APIServerArgs are extra kube-apiserver flags, e.g.
	// "--runtime-config=resource.k8s.io/v1beta1=true" to serve a
	// deprecated API that is off by default.
	APIServerArgs []string
}

// Start starts etcd and kube-apiserver on free loopback ports and waits
// until the API server is ready. It returns an error wrapping ErrMissing
// when a binary is absent. Call Stop when done.
func Start(ctx context.Context, opts Options) (*Server, error) {
	binDir := opts.BinDir
	if binDir == "" {
		binDir = BinDir()
	}
	etcdBin, apiBin := filepath.Join(binDir, "etcd"), filepath.Join(binDir, "kube-apiserver")
	for _, b := range []string{etcdBin, apiBin} {
		if fi, err := os.Stat(b); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("%w: no executable %s", ErrMissing, b)
		}
	}
	removeStaleDirs()
	dir, err := os.MkdirTemp("", fmt.Sprintf("fleetkit-kubetest-%d-", os.Getpid()))
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir}
	if err := s.start(ctx, etcdBin, apiBin, opts.APIServerArgs); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, etcdBin, apiBin string, extra []string) error {
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	clientURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	s.host = "https://127.0.0.1:" + strconv.Itoa(ports[2])

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	keyFile := filepath.Join(s.dir, "sa.key")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600); err != nil {
		return err
	}
	tok := make([]byte, 16)
	if _, err := rand.Read(tok); err != nil {
		return err
	}
	s.token = hex.EncodeToString(tok)
	tokenFile := filepath.Join(s.dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(s.token+",admin,admin-uid,system:masters\n"), 0o600); err != nil {
		return err
	}
	if err := s.writeKubeconfig(); err != nil {
		return err
	}

	etcd, err := startProc(s.dir, "etcd", etcdBin,
		"--name=t", "--data-dir="+filepath.Join(s.dir, "etcd-data"),
		"--listen-client-urls="+clientURL, "--advertise-client-urls="+clientURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=t="+peerURL, "--unsafe-no-fsync", "--quota-backend-bytes=8589934592",
		"--log-level=warn")
	if err != nil {
		return err
	}
	s.procs = append(s.procs, etcd)
	if err := waitReady(ctx, etcd, http.DefaultClient, clientURL+"/health", "", 30*time.Second); err != nil {
		return err
	}

	api, err := startProc(s.dir, "kube-apiserver", apiBin, append([]string{
		"--etcd-servers=" + clientURL, "--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(ports[2]),
		"--advertise-address=127.0.0.1", "--cert-dir=" + filepath.Join(s.dir, "certs"),
		"--service-account-key-file=" + keyFile, "--service-account-signing-key-file=" + keyFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--token-auth-file=" + tokenFile, "--authorization-mode=AlwaysAllow",
		"--service-cluster-ip-range=10.96.0.0/16", "--endpoint-reconciler-type=none"}, extra...)...)
	if err != nil {
		return err
	}
	s.procs = append(s.procs, api)
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // self-signed test server
	return waitReady(ctx, api, insecure, s.host+"/readyz", s.token, 90*time.Second)
}

func (s *Server) writeKubeconfig() error {
	s.kubeconfig = filepath.Join(s.dir, "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubetest
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: %s
contexts:
- name: kubetest
  context:
    cluster: kubetest
    user: admin
current-context: kubetest
`, s.host, s.token)
	return os.WriteFile(s.kubeconfig, []byte(cfg), 0o600)
}

// Stop stops the API server, then etcd, and removes the working
// directory. It is idempotent.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		var errs []error
		for i := len(s.procs) - 1; i >= 0; i-- {
			errs = append(errs, s.procs[i].stop(10*time.Second))
		}
		errs = append(errs, os.RemoveAll(s.dir))
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// proc is a child process started from a locked OS thread that lives
// until the process is stopped: Pdeathsig fires when the thread that
// started a child exits, so the thread must outlive the child.
type proc struct {
	name   string
	log    string
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	err    error         // the exit status, set before exited is closed
	// release lets the locked thread exit once the process is gone.
	release chan struct{}
}

func startProc(dir, name, bin string, args ...string) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	p := &proc{name: name, log: logPath, exited: make(chan struct{}), release: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		if err := p.cmd.Start(); err != nil {
			logf.Close()
			started <- err
			return
		}
		started <- nil
		go func() {
			p.err = p.cmd.Wait()
			logf.Close()
			close(p.exited)
		}()
		<-p.release
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("kubetest: start %s: %w", name, err)
	}
	return p, nil
}

func (p *proc) stop(grace time.Duration) error {
	defer close(p.release)
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	return nil
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
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		select {
		case <-p.exited:
			return fmt.Errorf("kubetest: %s exited (%v) before it was ready:\n%s", p.name, p.err, p.tail())
		case <-ctx.Done():
			return fmt.Errorf("kubetest: %s not ready after %v (last: %s):\n%s", p.name, timeout, last, p.tail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// freePorts returns n distinct free loopback ports. They are free when
// returned; another process could take one before it is used, which
// Start reports as a start failure.
func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// removeStaleDirs removes the working directories of test binaries that
// are no longer running.
func removeStaleDirs() {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "fleetkit-kubetest-*-*"))
	for _, m := range matches {
		parts := strings.SplitN(strings.TrimPrefix(filepath.Base(m), "fleetkit-kubetest-"), "-", 2)
		pid, err := strconv.Atoi(parts[0])
		if err != nil || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(m)
		}
	}
}

// Env is a server shared by the tests of a package, started on first use.
// The zero value is ready; declare it as a package variable.
type Env struct {
	// Options are used by the first Get.
	Options Options

	once sync.Once
	srv  *Server
	err  error
}

// Get returns the shared server, starting it on first use. Without the
// binaries it reports them missing through testenv.Missing (skip, or fail
// under CI=true); when the server cannot start it fails the test. Under
// -short it skips.
func (e *Env) Get(t testing.TB) *Server {
	t.Helper()
	testenv.Short(t)
	e.once.Do(func() { e.srv, e.err = Start(context.Background(), e.Options) })
	switch {
	case e.srv == nil && e.err == nil:
		t.Fatal("kubetest: Env.Get after Env.Stop")
	case errors.Is(e.err, ErrMissing):
		testenv.Missing(t, "%v: run scripts/kube-testenv.sh", e.err)
	case e.err != nil:
		t.Fatalf("kubetest: %v", e.err)
	}
	return e.srv
}

// Stop stops the shared server if it was started.
func (e *Env) Stop() error {
	e.once.Do(func() {}) // no start after Stop
	if e.srv != nil {
		return e.srv.Stop()
	}
	return nil
}
