package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleetkit/fleetkit/internal/childproc"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

// URLEnv names the variable holding the shared server's URL.
const URLEnv = "FLEETKIT_TEST_POSTGRES_URL"

// SharedURL returns the shared server's URL, or reports it missing.
func SharedURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(URLEnv)
	if u == "" {
		testenv.Missing(t, "%s is not set (eval \"$(scripts/start-postgres.sh)\" starts a server)", URLEnv)
	}
	return u
}

// FreshDB creates an empty database on the shared server and returns its
// URL; it is dropped when the test ends.
func FreshDB(t testing.TB) string {
	t.Helper()
	shared := SharedURL(t)
	u, err := url.Parse(shared)
	if err != nil {
		t.Fatalf("pgtest: %s: %v", URLEnv, err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "fleetkit_t_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, shared)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, shared)
		if err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	u.Path = "/" + name
	return u.String()
}

// Server is a private PostgreSQL server: Stop and Start it at will.
type Server struct {
	bin, dir, data string
	port           int
	cred           *syscall.Credential // the postgres user when run as root

	mu   sync.Mutex
	proc *serverProc // guarded by mu: nil while stopped
}

type serverProc struct {
	cmd  *exec.Cmd
	proc *childproc.Proc
}

// binDir finds the server binaries scripts/start-postgres.sh installs.
func binDir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return ""
}

// Start initialises a database cluster in a new temporary directory and
// starts a server on a free loopback port; it is stopped and removed when
// the test ends. As root the server runs as the postgres user (it refuses
// root), as scripts/start-postgres.sh does.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := binDir()
	if bin == "" {
		testenv.Missing(t, "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (scripts/start-postgres.sh installs them)")
	}
	dir, err := os.MkdirTemp("", "fleetkit-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	s := &Server{bin: bin, dir: dir, data: filepath.Join(dir, "data")}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			testenv.Missing(t, "running as root needs the postgres user (scripts/start-postgres.sh creates it): %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		s.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", s.data, "-U", "fleetkit", "--auth=trust", "-E", "UTF8", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = ln.Addr().(*net.TCPAddr).Port
	_ = ln.Close()
	t.Cleanup(func() { s.Stop(t) })
	s.Start(t)
	return s
}

// URL is the server's database URL (database postgres, user fleetkit).
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://fleetkit@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// Start starts the server (again) and returns once it accepts queries.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return
	}
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.data, "-p", strconv.Itoa(s.port), "-k", s.dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=100")
	logf, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	cp, err := childproc.Start(cmd, func() { logf.Close() }) // killed with the test binary
	if err != nil {
		logf.Close()
		t.Fatalf("pgtest: start postgres: %v", err)
	}
	p := &serverProc{cmd: cmd, proc: cp}
	s.proc = p
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		c, err := pgx.Connect(ctx, s.URL())
		if err == nil {
			_ = c.Close(ctx)
			return
		}
		select {
		case <-cp.Exited():
			log, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
			t.Fatalf("pgtest: postgres exited: %s", log)
		case <-ctx.Done():
			t.Fatalf("pgtest: postgres not ready: %v", err)
		case <-time.After(20 * time.Millisecond): // polling the condition, not a fixed wait
		}
	}
}

// Stop shuts the server down fast (SIGINT: connections are ended, like
// pg_ctl stop -m fast) and returns once it has exited.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	p := s.proc
	s.proc = nil
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.proc.Exited():
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.proc.Exited()
		t.Error("pgtest: postgres did not stop within 60s; killed")
	}
	p.proc.Release()
}

// Restart stops and starts the server: what pg_ctl restart -m fast does.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop(t)
	s.Start(t)
}
