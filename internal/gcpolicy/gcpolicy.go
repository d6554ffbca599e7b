// Package gcpolicy sets the garbage collector's policy of a short-lived
// command whose work is one burst of allocation, such as an offline build
// of a GitOps repository.
package gcpolicy

import (
	"os"
	"runtime/debug"
)

// BatchLimit is the heap size at which Batch lets the collector run.
const BatchLimit = 1 << 30

// Batch turns the collector's proportional pacing off and lets it run only
// as the heap nears BatchLimit, unless the user set GOGC or GOMEMLIMIT
// (theirs wins). A build's garbage dies with the process: collecting it
// during the run cost a third of the CPU and kept two cores from halving
// the wall time (BENCHMARKS.md, issue 21). A heap that outgrows the limit
// is still collected, at most half the CPU going to it, as Go's memory
// limit does. restore puts back the policy in force before.
func Batch() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	percent := debug.SetGCPercent(-1)
	limit := debug.SetMemoryLimit(BatchLimit)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}
