// Package rollout is fleetkit's machine manager: it creates and removes the
// machines of a linter fleet through a machines.Provider, rolls a new
// version out step by step (the seed's gradual update: 1, 5, 10, 50, 100
// percent by default), and keeps a Router — the load balancer, in-process
// or remote — in step with the machines and the traffic ratio.
//
// # The model
//
// Each configured language has a Phase: the current version and, during an
// update, the target version and a step index. InitUpdate, Update and
// Rollback move the phase (Rollback from the first step cancels the update;
// right after an update completes it undoes the last step) and persist it
// in a small JSON state file, written atomically. At step p of N live
// machines, MachineSplit gives ceil(N·p/100) machines to the new version but
// keeps one old machine while p < 100 and N > 1; Ratio gives the router the
// weights {old: total-p', new: p'}.
//
// The Manager reconciles level-based: every pass lists the provider's
// machines (found by the LabelOwner label, so a restarted manager finds
// what it created), folds in health, reads what the router holds (a
// RouterReader) and converges machines and router to the phase and to the
// language's desired machine count, which is state (the state file) like
// the phase. Moving forward, machines move surge-first — create a machine
// of the short version, wait until it answers /health, add it to the
// router, take a surplus machine out of the router, remove it — and the
// ratio follows; moving back (rollback, abort), the machines of the version
// traffic returns to are all created first, then the ratio moves, then the
// surplus goes: capacity never drops. A machine that fails its health check
// (machines/health) or exits is unhealthy for good: out of the router, kept
// in Status holding its place (or, with ReplaceUnhealthy, replaced) until
// its version leaves the rollout. A router with a Generation token
// (RouterGeneration) is read every RouterCheckInterval, so a restarted
// balancer is served again within a second. With Options.Metrics (the
// balancer's metrics; BalancerMetrics reads them) the manager keeps the
// last minutes of every version's request rate, error rate and latency;
// the automatic mode (AutoOptions) judges every step by them and by the new
// version's machine failures, the last step included, and advances or
// aborts the update.
//
// Create stops at MaxMachinesPerLanguage and MaxMachines (409). A Router
// that is also an EjectionReporter (the balancer, in-process or through its
// Client) has the backends its passive health ejected shown in Status and
// on the page: the manager's own health marking stays as the design says
// (unhealthy for good), while an ejection is the balancer's temporary
// state. The automatic mode's default source counts only failures the
// backends caused (5xx and connection failures), not what clients caused.
//
// Handler serves the wire contract's machine manager API (/create,
// /remove, /delete, /init-update, /update, /rollback, /status), /abort and
// /history, and an HTML status page at / (charts, verdicts, ejected
// backends, promote/abort/rollback buttons). Every mutating call must be declared
// application/json, and carry HandlerOptions.Secret when one is set.
// The YAML configuration file of the machine-manager binary lives with
// it (examples/machine-manager/config); this package takes Options.
//
// # Concurrency
//
// A Manager is safe for concurrent use. Operations on one language are
// serialized (a /create during an update waits for the step to finish and
// then gets the version that is short); languages proceed in parallel.
// Operations block on I/O while machines start (bounded by StartTimeout)
// and honour ctx. Run owns the background work (health checks, exit
// events, the router's generation, metrics, automatic mode, and the
// passes: an internal/reconcile engine keyed by language, woken by those
// events, resynced every ResyncInterval, retrying a failed language with
// backoff) and must run for the manager to notice failures; it
// returns when its ctx is done. A phase change never waits behind a pass
// that is still creating machines: the pass gives way between two.
//
// # Usage
//
//	provider, _ := process.New(process.Options{})
//	router, _ := balancer.NewClient("http://127.0.0.1:8080", secret, balancer.ClientOptions{})
//	mgr, err := rollout.New(provider, router, rollout.Options{
//		Languages: map[string]rollout.Language{"python": {
//			Version: "1.0",
//			Versions: map[string]rollout.VersionSpec{
//				"1.0": {Command: "linter"}, "2.0": {Command: "linter"},
//			},
//		}},
//		IsNotFound: func(err error) bool { return errors.Is(err, balancer.ErrUnknownBackend) },
//	})
//	if err != nil { ... }
//	go mgr.Run(ctx)
//	http.Handle("/", rollout.NewHandler(mgr, rollout.HandlerOptions{}))
//
//	_, _ = mgr.Create(ctx, "python")               // a 1.0 machine
//	_ = mgr.InitUpdate(ctx, "python", "2.0")       // step 1: 1% of traffic to 2.0
//	_ = mgr.Update(ctx, "python")                  // step 2: 5%
package rollout
