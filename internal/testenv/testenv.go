package testenv

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// skips collects this test binary's integration skips for Main's summary.
// It is process-wide because a test binary is one process.
var skips struct {
	mu    sync.Mutex
	lines []string // guarded by mu
}

// exit holds the functions Run calls after the tests (AtExit). It is
// process-wide because a test binary is one process.
var exit struct {
	mu      sync.Mutex
	running bool     // guarded by mu: Run is running the tests
	fns     []func() // guarded by mu
}

// AtExit registers fn to be called once the tests have run, before Run
// returns (and Main exits, which runs no deferred calls): shared test
// environments stop there. Functions run last registered first. It reports
// false, and registers nothing, when the tests were not started by Run or
// Main, so the caller can say that its TestMain must use them.
func AtExit(fn func()) bool {
	exit.mu.Lock()
	defer exit.mu.Unlock()
	if !exit.running {
		return false
	}
	exit.fns = append(exit.fns, fn)
	return true
}

// Main runs the tests, prints the skip summary (see Run) and exits:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run runs the tests and then prints which integration tests were skipped
// and why, and returns the exit code. `go test ./...` hides a passing
// package's output, so the summary also goes to the terminal (/dev/tty)
// when there is one: a developer who runs plain `go test ./...` sees what
// did not run. Before returning it calls the AtExit functions. TestMain
// functions with their own setup call Run instead of m.Run.
func Run(m *testing.M) int {
	exit.mu.Lock()
	exit.running = true
	exit.mu.Unlock()
	code := m.Run()
	exit.mu.Lock()
	fns := exit.fns
	exit.fns, exit.running = nil, false
	exit.mu.Unlock()
	for i := len(fns) - 1; i >= 0; i-- {
		fns[i]()
	}
	skips.mu.Lock()
	lines := skips.lines
	skips.mu.Unlock()
	if len(lines) > 0 {
		summary := fmt.Sprintf("--- %d integration test(s) skipped:\n    %s\n", len(lines), strings.Join(lines, "\n    "))
		var w io.Writer = os.Stderr
		if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			defer tty.Close()
			w = io.MultiWriter(os.Stderr, tty)
		}
		_, _ = io.WriteString(w, summary)
	}
	return code
}

// InCI reports whether the CI environment variable is set to a true value.
func InCI() bool {
	v, err := strconv.ParseBool(os.Getenv("CI"))
	return err == nil && v
}

// Missing reports a missing dependency: it fails the test under CI and
// skips it otherwise. The message says what is missing and how to get it.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("integration dependency missing (CI=true, so this fails): "+format, args...)
	}
	msg := fmt.Sprintf(format, args...)
	skips.mu.Lock()
	skips.lines = append(skips.lines, t.Name()+": "+msg)
	skips.mu.Unlock()
	t.Skipf("skipping integration test: %s (run `make test` to install it)", msg)
}

// LookPath returns the path of the named binary, or reports it missing.
func LookPath(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, "%s not found in PATH", name)
	}
	return p
}

// Short skips an integration test under `go test -short`. It never fails,
// even in CI: -short is an explicit request to leave the slow tests out.
func Short(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("skipping integration test in -short mode")
	}
}
