package kubetest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
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

	"k8s.io/client-go/rest"

	"github.com/fleetkit/fleetkit/internal/testenv"
)

// KubeVersion is the Kubernetes release scripts/kube-testenv.sh builds.
const KubeVersion = "1.37.1"

// Errors of Start and StartNode.
var (
	// ErrMissing is returned when a binary or a host facility (root, a
	// tool, the pause image) the environment needs is not there.
	ErrMissing = errors.New("kubetest: not installed")
)

// CacheDir returns fleetkit's cache directory: $FLEETKIT_CACHE, else
// $XDG_CACHE_HOME/fleetkit, else ~/.cache/fleetkit, as the scripts use it.
func CacheDir() string {
	if d := os.Getenv("FLEETKIT_CACHE"); d != "" {
		return d
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "fleetkit")
}

// BinDir returns where the binaries are looked for: $FLEETKIT_KUBE_BIN, else
// the cache directory of scripts/kube-testenv.sh.
func BinDir() string {
	if d := os.Getenv("FLEETKIT_KUBE_BIN"); d != "" {
		return d
	}
	return filepath.Join(CacheDir(), "kube", "v"+KubeVersion)
}

// Server is a running etcd and kube-apiserver.
type Server struct {
	dir        string
	host       string
	token      string
	caPEM      []byte
	kubeconfig string
	procs      []*proc // apiserver last: stopped first

	stopOnce sync.Once
	stopErr  error
}

// Config returns a client configuration for the server: bearer token of
// a system:masters user, the server verified against the test CA, and
// client-side rate limits high enough for benchmarks.
func (s *Server) Config() *rest.Config {
	return &rest.Config{
		Host:            s.host,
		BearerToken:     s.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.caPEM},
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
	extra := append([]string{"--endpoint-reconciler-type=none"}, opts.APIServerArgs...)
	if err := s.start(ctx, etcdBin, apiBin, extra); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, etcdBin, apiBin string, extra []string) error {
	ip := net.IPv4(127, 0, 0, 1)
	pki, err := writePKI(s.dir, []net.IP{ip}, []string{"localhost"})
	if err != nil {
		return err
	}
	return s.startControlPlane(ctx, etcdBin, apiBin, ip.String(), pki, extra)
}

// startControlPlane starts etcd on free loopback ports and kube-apiserver
// on a free port of bindIP, and waits until the API server is ready.
func (s *Server) startControlPlane(ctx context.Context, etcdBin, apiBin, bindIP string, pki *pki, extra []string) error {
	etcdPorts, err := freePorts("127.0.0.1", 2)
	if err != nil {
		return err
	}
	apiPort, err := freePorts(bindIP, 1)
	if err != nil {
		return err
	}
	clientURL := "http://127.0.0.1:" + strconv.Itoa(etcdPorts[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPorts[1])
	s.host = "https://" + net.JoinHostPort(bindIP, strconv.Itoa(apiPort[0]))
	s.token, s.caPEM = pki.token, pki.caPEM
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
		"--etcd-servers=" + clientURL, "--bind-address=" + bindIP, "--secure-port=" + strconv.Itoa(apiPort[0]),
		"--advertise-address=" + bindIP, "--cert-dir=" + filepath.Join(s.dir, "certs"),
		"--tls-cert-file=" + pki.certFile, "--tls-private-key-file=" + pki.keyFile,
		"--service-account-key-file=" + pki.saKeyFile, "--service-account-signing-key-file=" + pki.saKeyFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--token-auth-file=" + pki.tokenFile, "--authorization-mode=AlwaysAllow",
		"--service-cluster-ip-range=" + ServiceCIDR}, extra...)...)
	if err != nil {
		return err
	}
	s.procs = append(s.procs, api)
	tlsCfg, err := s.tlsConfig()
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}}
	defer client.CloseIdleConnections()
	return waitReady(ctx, api, client, s.host+"/readyz", s.token, 90*time.Second)
}

func (s *Server) tlsConfig() (*tls.Config, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.caPEM) {
		return nil, errors.New("kubetest: no CA certificate")
	}
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, nil
}

func (s *Server) writeKubeconfig() error {
	s.kubeconfig = filepath.Join(s.dir, "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: kubetest
  cluster:
    server: %s
    certificate-authority-data: %s
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
`, s.host, base64.StdEncoding.EncodeToString(s.caPEM), s.token)
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

	shared shared[*Server]
}

// Get returns the shared server, starting it on first use. Without the
// binaries it reports them missing through testenv.Missing (skip, or fail
// under CI=true); when the server cannot start it fails the test. Under
// -short it skips.
func (e *Env) Get(t testing.TB) *Server {
	t.Helper()
	return e.shared.get(t, "run scripts/kube-testenv.sh", func() (*Server, error) {
		return Start(context.Background(), e.Options)
	})
}

// Stop stops the shared server if it was started; a later Get fails.
func (e *Env) Stop() error { return e.shared.stop() }

// shared is an environment a package's tests share, started by the first
// get.
type shared[T interface{ Stop() error }] struct {
	once    sync.Once
	v       T
	started bool // v is running
	err     error
}

// get returns the environment, calling start on first use. An error
// wrapping ErrMissing is reported through testenv.Missing with the hint;
// others fail the test.
func (s *shared[T]) get(t testing.TB, hint string, start func() (T, error)) T {
	t.Helper()
	testenv.Short(t)
	s.once.Do(func() {
		s.v, s.err = start()
		s.started = s.err == nil
	})
	switch {
	case errors.Is(s.err, ErrMissing):
		testenv.Missing(t, "%v: %s", s.err, hint)
	case s.err != nil:
		t.Fatalf("kubetest: %v", s.err)
	case !s.started:
		t.Fatal("kubetest: Get after Stop")
	}
	return s.v
}

func (s *shared[T]) stop() error {
	s.once.Do(func() {}) // no start after stop
	if !s.started {
		return nil
	}
	return s.v.Stop()
}
