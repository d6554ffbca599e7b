package fleet

import "github.com/fleetkit/fleetkit/fleet/cluster"

// The worker runtime is internal to the Service; its tests (in
// runtime_test.go) reach it under these names.
type (
	Worker         = statusWorker
	Job            = job
	Runtime        = runtime
	RuntimeOptions = runtimeOptions
	Reconciler     = reconciler
	ReconcilerFunc = reconcilerFunc
	Request        = request
	Result         = result
	Notifier       = notifier
)

var (
	NewRuntime     = newRuntime
	NewNotifier    = newNotifier
	NotifyingStore = newNotifyingStore
)

// FirstReady is the default placement, tested on its own.
type FirstReady = firstReady

// Defaults and data the tests check.
const DefaultInterval = defaultInterval

func Transitions[S Status | cluster.Status]() map[S][]S { return transitions[S]() }
