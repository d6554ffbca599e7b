package deprecation

import (
	"errors"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultMetricsNamespace prefixes the Collector's own metric names.
const DefaultMetricsNamespace = "fleetkit"

// CollectorOptions configures a Collector.
type CollectorOptions struct {
	// Registerer is where NewCollector registers the collector. nil
	// registers it nowhere: no metrics, unless the caller registers the
	// returned Collector itself. The default registry is never used.
	Registerer prometheus.Registerer
	// Namespace prefixes the metric names: <Namespace>_deprecation_...;
	// "" means DefaultMetricsNamespace.
	Namespace string
	// Kdave also emits kdave's metrics, with its exact names and labels
	// (wf_k8s_deprecated_versions_info and the others), so that kdave's
	// dashboards and alerts keep working.
	Kdave bool
}

// Collector exports a ScanReport as Prometheus metrics:
//
//	<ns>_deprecation_api_objects{release, namespace, kind, api_version, name,
//	    replacement, deprecated_in, removed_in, state}
//	    objects of a release using a deprecated or removed API (one series
//	    per finding; identical objects in one release add up)
//	<ns>_deprecation_releases                      releases scanned
//	<ns>_deprecation_releases_deprecated           releases with a deprecated API (deprecated or removal-soon)
//	<ns>_deprecation_releases_removed              releases with a removed API
//	<ns>_deprecation_releases_corrupt              releases whose storage could not be decoded
//	<ns>_deprecation_scan_duration_seconds         duration of the last scan
//	<ns>_deprecation_last_scan_timestamp_seconds   when the last scan finished
//	<ns>_deprecation_target_info{k8s_version}      the release checked against
//
// Times are values, not labels. Before the first scan only the release
// counts (0) are exported. It reads the report on every scrape through
// the function given to NewCollector, so it never holds stale state.
type Collector struct {
	report func() *ScanReport
	kdave  bool

	objects, releases, deprecated, removed, corrupt, duration, lastRun, target *prometheus.Desc
	kdaveInfo, kdaveJob, kdaveReleases, kdaveDeprecated, kdaveRemoved          *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// NewCollector returns a Collector of the reports that report returns
// (typically Cache.Report; nil means no data yet) and registers it with
// opts.Registerer, if not nil.
func NewCollector(report func() *ScanReport, opts CollectorOptions) (*Collector, error) {
	if report == nil {
		return nil, errors.New("deprecation: NewCollector: nil report func")
	}
	ns := opts.Namespace
	if ns == "" {
		ns = DefaultMetricsNamespace
	}
	name := func(n string) string { return prometheus.BuildFQName(ns, "deprecation", n) }
	c := &Collector{
		report: report,
		kdave:  opts.Kdave,
		objects: prometheus.NewDesc(name("api_objects"),
			"Objects of a deployed Helm release that use a deprecated or removed API version.",
			[]string{"release", "namespace", "kind", "api_version", "name", "replacement", "deprecated_in", "removed_in", "state"}, nil),
		releases:   prometheus.NewDesc(name("releases"), "Deployed Helm releases scanned.", nil, nil),
		deprecated: prometheus.NewDesc(name("releases_deprecated"), "Deployed Helm releases using a deprecated API version (deprecated or removed within two minor releases).", nil, nil),
		removed:    prometheus.NewDesc(name("releases_removed"), "Deployed Helm releases using an API version removed in the target release.", nil, nil),
		corrupt:    prometheus.NewDesc(name("releases_corrupt"), "Deployed Helm releases whose storage could not be decoded.", nil, nil),
		duration:   prometheus.NewDesc(name("scan_duration_seconds"), "Duration of the last scan of the releases.", nil, nil),
		lastRun:    prometheus.NewDesc(name("last_scan_timestamp_seconds"), "When the last scan of the releases finished, in seconds since the Unix epoch.", nil, nil),
		target:     prometheus.NewDesc(name("target_info"), "The Kubernetes release the releases were checked against.", []string{"k8s_version"}, nil),
		kdaveInfo: prometheus.NewDesc("wf_k8s_deprecated_versions_info", "Deprecated API versions",
			[]string{"deprecated", "removed", "kind", "api_version", "name", "release_name", "namespace", "helm_version",
				"replacement_api", "deprecated_in_version", "removed_in_version", "release_last_update", "k8s_version",
				"removed_in_next_release", "removed_in_next_2_releases"}, nil),
		kdaveJob:        prometheus.NewDesc("wf_k8s_deprecated_versions_job_info", "Deprecated API versions Job information", []string{"last_run", "duration_seconds"}, nil),
		kdaveReleases:   prometheus.NewDesc("wf_k8s_deployed_releases", "Total number of the deployed releases", nil, nil),
		kdaveDeprecated: prometheus.NewDesc("wf_k8s_deployed_releases_with_deprecated_api_version", "Total number of the deployed releases that have deprecated apiVersions", nil, nil),
		kdaveRemoved:    prometheus.NewDesc("wf_k8s_deployed_releases_with_removed_api_version", "Total number of the deployed releases that have removed apiVersions", nil, nil),
	}
	if opts.Registerer != nil {
		if err := opts.Registerer.Register(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.objects, c.releases, c.deprecated, c.removed, c.corrupt, c.duration, c.lastRun, c.target} {
		ch <- d
	}
	if c.kdave {
		for _, d := range []*prometheus.Desc{c.kdaveInfo, c.kdaveJob, c.kdaveReleases, c.kdaveDeprecated, c.kdaveRemoved} {
			ch <- d
		}
	}
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	rep := c.report()
	if rep == nil {
		rep = &ScanReport{}
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	deprecated, removed := rep.releaseCounts()
	gauge(c.releases, float64(len(rep.Releases)))
	gauge(c.deprecated, float64(deprecated))
	gauge(c.removed, float64(removed))
	gauge(c.corrupt, float64(len(rep.Corrupt)))
	if !rep.Finished.IsZero() {
		gauge(c.duration, rep.Duration().Seconds())
		gauge(c.lastRun, float64(rep.Finished.UnixNano())/1e9)
		gauge(c.target, 1, rep.Target.String())
	}
	for _, s := range countSeries(rep, objectLabels) {
		gauge(c.objects, float64(s.n), s.labels...)
	}
	if !c.kdave {
		return
	}
	kdDeprecated, kdRemoved := 0, 0
	for i := range rep.Releases {
		var dep, rem bool
		for _, f := range rep.Releases[i].Findings {
			dep = dep || isDeprecatedAt(f.Rule, f.Target)
			rem = rem || f.State == StateRemoved
		}
		if dep {
			kdDeprecated++
		}
		if rem {
			kdRemoved++
		}
	}
	gauge(c.kdaveReleases, float64(len(rep.Releases)))
	gauge(c.kdaveDeprecated, float64(kdDeprecated))
	gauge(c.kdaveRemoved, float64(kdRemoved))
	if !rep.Finished.IsZero() {
		gauge(c.kdaveJob, 1, rep.Finished.UTC().Format("2006-01-02T15:04:05"), strconv.Itoa(int(rep.Duration().Seconds())))
	}
	for _, s := range countSeries(rep, kdaveLabels) {
		gauge(c.kdaveInfo, 1, s.labels...)
	}
}

// series is one label set and the number of findings that gave it.
type series struct {
	labels []string
	n      int
}

// countSeries returns the series of the findings of rep's releases, in
// order, merging findings with identical labels (labels returning nil
// skips a finding) (two identical objects in
// one release would otherwise be a duplicate series, which Prometheus
// rejects).
func countSeries(rep *ScanReport, labels func(*Release, *Finding) []string) []series {
	var out []series
	index := make(map[string]int)
	for i := range rep.Releases {
		r := &rep.Releases[i]
		for j := range r.Findings {
			l := labels(r, &r.Findings[j])
			if l == nil {
				continue
			}
			k := strings.Join(l, "\xff")
			if at, ok := index[k]; ok {
				out[at].n++
				continue
			}
			index[k] = len(out)
			out = append(out, series{labels: l, n: 1})
		}
	}
	return out
}

func objectLabels(r *Release, f *Finding) []string {
	return []string{r.Name, r.Namespace, f.Kind, f.APIVersion, f.Name, f.Rule.ReplacementAPI,
		f.Rule.DeprecatedIn.String(), f.Rule.RemovedIn.String(), f.State.String()}
}

// kdaveLabels are kdave's labels: "true"/"false", versions as "v1.22.0"
// or "n/a", the release's update time as `helm list` prints it. Like
// kdave, it skips objects neither deprecated nor removed in the target
// (an API removed soon without a deprecation).
func kdaveLabels(r *Release, f *Finding) []string {
	if !isDeprecatedAt(f.Rule, f.Target) && f.State != StateRemoved {
		return nil
	}
	updated := "-"
	if !r.Updated.IsZero() {
		updated = r.Updated.String()
	}
	t := f.Target
	return []string{
		strconv.FormatBool(isDeprecatedAt(f.Rule, t)),
		strconv.FormatBool(f.State == StateRemoved),
		f.Kind, f.APIVersion, f.Name, r.Name, r.Namespace, "v3",
		orNA(f.Rule.ReplacementAPI), orNA(f.Rule.DeprecatedIn.String()), orNA(f.Rule.RemovedIn.String()),
		updated, t.String(),
		strconv.FormatBool(isRemovedAt(f.Rule, Version{Major: t.Major, Minor: t.Minor + 1, Patch: t.Patch})),
		strconv.FormatBool(isRemovedAt(f.Rule, Version{Major: t.Major, Minor: t.Minor + 2, Patch: t.Patch})),
	}
}

// isDeprecatedAt and isRemovedAt are kdave's tests: the release is at or
// after deprecated-in (removed-in).
func isDeprecatedAt(r Rule, t Version) bool {
	return !r.DeprecatedIn.IsZero() && !t.Less(r.DeprecatedIn)
}
func isRemovedAt(r Rule, t Version) bool { return !r.RemovedIn.IsZero() && !t.Less(r.RemovedIn) }

func orNA(s string) string {
	if s == "" {
		return "n/a"
	}
	return s
}
