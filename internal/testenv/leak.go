package testenv

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"
)

// MainLeakChecked is Main for a package whose code or tests start
// goroutines: it runs the tests with Run and then CheckLeaks, and exits:
//
//	func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }
//
// A package whose tests share an environment that outlives them (a
// kubetest.Env, say) stops it between the two, so that the environment's
// goroutines and the clients' connections to it are gone before the check:
//
//	func TestMain(m *testing.M) {
//		code := testenv.Run(m)
//		_ = kube.Stop()
//		os.Exit(testenv.CheckLeaks(code))
//	}
func MainLeakChecked(m *testing.M, opts ...goleak.Option) { os.Exit(CheckLeaks(Run(m), opts...)) }

// CheckLeaks returns code, the exit code of a test run, unless the run
// passed (code 0) and goroutines started by the tests are still running:
// then it lists them on stderr and returns 1. A failed run is not checked,
// as goleak.VerifyTestMain does: its goroutines are often the failure's
// consequence. goleak retries for about two seconds first, so goroutines
// on their way out are not reported.
//
// opts are goleak options; a goroutine may be ignored only when it
// outlives the tests by design, and the comment on the IgnoreTopFunction
// or IgnoreAnyFunction says why.
func CheckLeaks(code int, opts ...goleak.Option) int {
	if code != 0 {
		return code
	}
	// Connections kept alive by the shared default transport (tests that
	// call http.Get) belong to no code under test; they would otherwise
	// outlive the check by the transport's 90 s idle timeout.
	if t, ok := http.DefaultTransport.(*http.Transport); ok {
		t.CloseIdleConnections()
	}
	if err := goleak.Find(opts...); err != nil {
		fmt.Fprintf(os.Stderr, "goleak: the tests passed but left goroutines running: %v\n", err)
		return 1
	}
	return code
}
