// Package deprecation finds Kubernetes objects that use deprecated or
// removed API versions, the job of kdave, pluto and kube-no-trouble.
//
// It holds the pure-Go core: embedded, versioned tables of API
// deprecations and removals for Kubernetes and for the components pluto
// knows (DefaultRules, BuiltinRules, RuleSet.Select), extra rules read from
// files in pluto's versions.yaml format (LoadRules, Merge), a comparable
// Version type, the State of a rule in a target release, a manifest
// Checker that reads files as pluto's detect-files does (CheckPaths), and
// a Report with pluto's exit codes and flags (ExitCodeWith, OnlyRemoved)
// and output formats (kdave's table; pluto's normal, wide, custom,
// markdown, csv, json and yaml). Scanning Helm releases and live objects
// in a cluster lives in subpackages, so importing deprecation does not
// pull in client-go or Helm.
//
// # Releases, cache and metrics
//
// A ReleaseScanner (deprecation/helm implements it over Helm's storage
// Secrets) streams deployed releases with their findings. A Cache serves
// the last ScanReport from memory, starts one background scan when a read
// finds it older than the interval, keeps it in a data file across
// restarts, and reports health. A Collector exports a report as Prometheus
// metrics, optionally under kdave's metric names too.
//
// Logging: the Cache is the only part that logs (scan failures, data file
// problems), to CacheOptions.Logger; nil means slog.Default(). Metrics:
// NewCollector registers with CollectorOptions.Registerer; nil means no
// metrics. Nothing in the package touches the default registry.
//
// # States
//
// For a target release t, a rule's API is StateRemoved when removed-in <=
// t, StateRemovalSoon when it is still served but removed within the next
// two minor releases, StateDeprecated when deprecated-in <= t and removal
// is further away, and StateNone otherwise (not reported). A finding whose
// replacement API is missing or not yet served in t has
// ReplacementAvailable false.
//
// # Speed
//
// Checker.Check splits a stream into documents and reads each document's
// top-level apiVersion and kind with a byte scanner. Only documents that a
// rule affects in the target (and Lists, which are expanded) are parsed
// as YAML to read their name and namespace. Documents written in a form
// the scanner does not fully understand (anchors, tags, escapes, values on
// a continuation line, quoted scalars and flow collections over several
// lines) are always parsed, so the pre-scan never hides a finding. The
// other documents go through a validator, a byte scan that recognises the
// block YAML generators write and sends anything else to the parser: so
// every broken document is reported (Result.Errors, with its index and
// line) at the cost of a scan, and the check goes on with the next one.
// Options.Lazy skips the validator.
//
// # Hostile input
//
// Streams in UTF-16 or UTF-32 are decoded; binary data is one error. A
// document whose Lists, reached through YAML aliases, expand past
// MaxAliasedObjects objects, that holds more than MaxObjectsPerDocument
// objects, or nests Lists deeper than MaxListDepth, is reported as an
// error, its findings dropped. CheckPaths reads at most
// PathOptions.MaxFileSize bytes of a file.
//
// # Concurrency
//
// RuleSet and Checker are immutable and safe for concurrent use; Check
// does no I/O and does not block. Report is a plain value, not safe for
// concurrent use.
//
// # Usage
//
//	rules := deprecation.DefaultRules()
//	if f, err := os.Open("extra-rules.yaml"); err == nil {
//		extra, err := deprecation.LoadRules(f)
//		f.Close()
//		if err != nil {
//			return err
//		}
//		rules = deprecation.Merge(rules, extra)
//	}
//	c, err := deprecation.NewChecker(rules, deprecation.Options{
//		Target: deprecation.MustParseVersion("v1.25"),
//	})
//	if err != nil {
//		return err
//	}
//	res, err := c.Check(ctx, "manifest.yaml", data)
//	if err != nil {
//		return err // ctx was cancelled
//	}
//	rep := &deprecation.Report{Target: c.Target()}
//	rep.Add(res)
//	rep.WriteWith(os.Stdout, deprecation.WriteOptions{Format: deprecation.FormatWide})
//	os.Exit(rep.ExitCodeWith(deprecation.ExitOptions{IgnoreDeprecations: true}))
//
// The table's rows come from k8s.io/api's generated lifecycle methods and
// the Kubernetes deprecated API migration guide; the cross-checks of the
// rows against k8s.io/api and against pluto's published versions file live
// in deprecation/helm's tests (they import k8s.io/api).
package deprecation
