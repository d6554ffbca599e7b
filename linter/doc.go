// Package linter lints source code and serves it over HTTP: the linter
// service of the linter fleet.
//
// A [Linter] checks one [Source] and returns [Diagnostic]s carrying the
// codes and 1-based positions of the tool it models. Rule sets are
// [Language]s kept in a [Registry] that users extend with their own; the
// built-in ones live in subpackages so that this package stays small:
//
//   - [github.com/fleetkit/fleetkit/linter/python]: pycodestyle's checks;
//   - [github.com/fleetkit/fleetkit/linter/java]: checkstyle's checks.
//
// A [Config] selects rules as the peer tools do: its zero value is the
// peer's default configuration (pycodestyle's default selection for
// Python), Select and Ignore follow pycodestyle, ExtendIgnore flake8, and
// Options carry a language's own settings.
//
// [Service] is the http.Handler of the wire contract (POST /lint, GET
// /health). The four versions of the reference service are configurations
// of the same code, returned by [VersionProfile]: 1.0 is the baseline (the
// language's default configuration without its newline-at-end-of-file
// rule), 1.1 adds latency, 1.2 crashes for good on empty code, and 2.0
// adds the newline-at-end-of-file rule back. A request may carry its own
// rule configuration ([RequestConfig]) over the machine's.
//
// Linters, the Registry and Service are safe for concurrent use.
//
//	reg, _ := linter.NewRegistry(python.Language(), java.Language())
//	lang, _ := reg.Lookup("python")
//	cfg, faults, _ := linter.VersionProfile(lang, linter.Version10)
//	l, _ := lang.New(cfg)
//	svc, _ := linter.NewService(linter.ServiceOptions{
//		Language: lang.Name, Version: linter.Version10, Linter: l, Faults: faults,
//		Config: cfg, New: lang.New, // requests may carry their own "config"
//	})
//	http.ListenAndServe("127.0.0.1:8081", svc)
package linter
