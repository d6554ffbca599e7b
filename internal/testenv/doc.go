// Package testenv decides what an integration test does when a dependency
// (a binary, a server, the Docker Engine) is missing: under CI=true it
// fails, otherwise it skips and says why, so plain `go test ./...` works
// on any machine and still names what it did not run.
//
// A package whose code or tests start goroutines uses MainLeakChecked
// instead of Main, so its tests fail when they leave goroutines running
// (go.uber.org/goleak):
//
//	func TestMain(m *testing.M) { testenv.MainLeakChecked(m) }
package testenv
