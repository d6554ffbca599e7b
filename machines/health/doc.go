// Package health checks that machines answer: a Checker polls GET /health
// of a set of targets every Interval, with a Timeout per check, and marks a
// target Unhealthy after FailureThreshold consecutive failures (defaults
// 5s, 2s and 1, as the design asks). Unhealthy is final, as the seed says
// ("unhealthy machines are assumed to stay unhealthy"): the target is not
// checked again until it is added again.
//
// A timeout counts only when the checker itself could run: a check that
// timed out while this process was paused (its host's CPUs taken, by other
// processes or by its own load, for over a quarter of Timeout) is not
// counted, and its Event says so (Event.Paused). Otherwise whoever can
// load the checker's host could get a healthy fleet marked unhealthy.
//
// Each check's result is an Event, given to Options.Notify; Event.Changed
// marks the transitions (Unknown→Healthy, →Unhealthy). Status.Info
// decodes a linter's health answer (version, language, requestCount).
//
// # Concurrency
//
// Add, Remove, Status and Targets are safe from any goroutine while Run
// runs; a target added during Run is checked at once. Run blocks until
// its ctx is done and calls Notify from its own goroutine, one event at a
// time. Check runs a single pass for callers that drive the schedule.
//
// # Usage
//
//	c, err := health.New(health.Options{
//		Interval: 5 * time.Second,
//		Notify: func(e health.Event) {
//			if e.Changed && e.State == health.Unhealthy {
//				router.Remove(e.Target.Address) // take it out of the balancer
//			}
//		},
//	})
//	if err != nil { ... }
//	c.Add(health.Target{ID: m.ID, Address: m.Address})
//	g.Go(func() error { return c.Run(ctx) })
package health
