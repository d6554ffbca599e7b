package deprecation

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func collectorReport(t *testing.T) *ScanReport {
	t.Helper()
	shop := rsRelease(t, "v1.25", "b", "shop", 3, rsManifest+"---\n"+rsManifest) // every object twice
	rep, err := ScanReleases(context.Background(), rsStatic("v1.25.0",
		shop,
		rsRelease(t, "v1.25", "a", "web", 1, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n"),
		Release{Name: "bad", Namespace: "a", Revision: 2, Err: ErrCorruptRelease},
	), func() time.Time { return time.Unix(1700000000, 0).UTC() })
	require.NoError(t, err)
	rep.Finished = rep.Started.Add(2500 * time.Millisecond)
	return rep
}

func TestCollector(t *testing.T) {
	rep := collectorReport(t)
	reg := prometheus.NewPedanticRegistry()
	_, err := NewCollector(func() *ScanReport { return rep }, CollectorOptions{Registerer: reg})
	require.NoError(t, err)

	want := `
# HELP fleetkit_deprecation_api_objects Objects of a deployed Helm release that use a deprecated or removed API version.
# TYPE fleetkit_deprecation_api_objects gauge
fleetkit_deprecation_api_objects{api_version="autoscaling/v2beta2",deprecated_in="v1.23.0",kind="HorizontalPodAutoscaler",name="hpa",namespace="b",release="shop",removed_in="v1.26.0",replacement="autoscaling/v2",state="removal-soon"} 2
fleetkit_deprecation_api_objects{api_version="policy/v1beta1",deprecated_in="v1.21.0",kind="PodDisruptionBudget",name="pdb",namespace="b",release="shop",removed_in="v1.25.0",replacement="policy/v1",state="removed"} 2
# HELP fleetkit_deprecation_last_scan_timestamp_seconds When the last scan of the releases finished, in seconds since the Unix epoch.
# TYPE fleetkit_deprecation_last_scan_timestamp_seconds gauge
fleetkit_deprecation_last_scan_timestamp_seconds 1.7000000025e+09
# HELP fleetkit_deprecation_releases Deployed Helm releases scanned.
# TYPE fleetkit_deprecation_releases gauge
fleetkit_deprecation_releases 2
# HELP fleetkit_deprecation_releases_corrupt Deployed Helm releases whose storage could not be decoded.
# TYPE fleetkit_deprecation_releases_corrupt gauge
fleetkit_deprecation_releases_corrupt 1
# HELP fleetkit_deprecation_releases_deprecated Deployed Helm releases using a deprecated API version (deprecated or removed within two minor releases).
# TYPE fleetkit_deprecation_releases_deprecated gauge
fleetkit_deprecation_releases_deprecated 1
# HELP fleetkit_deprecation_releases_removed Deployed Helm releases using an API version removed in the target release.
# TYPE fleetkit_deprecation_releases_removed gauge
fleetkit_deprecation_releases_removed 1
# HELP fleetkit_deprecation_scan_duration_seconds Duration of the last scan of the releases.
# TYPE fleetkit_deprecation_scan_duration_seconds gauge
fleetkit_deprecation_scan_duration_seconds 2.5
# HELP fleetkit_deprecation_target_info The Kubernetes release the releases were checked against.
# TYPE fleetkit_deprecation_target_info gauge
fleetkit_deprecation_target_info{k8s_version="v1.25.0"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want)))
	problems, err := testutil.GatherAndLint(reg)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

func TestCollectorKdave(t *testing.T) {
	rep := collectorReport(t)
	reg := prometheus.NewPedanticRegistry()
	_, err := NewCollector(func() *ScanReport { return rep }, CollectorOptions{Registerer: reg, Kdave: true})
	require.NoError(t, err)
	want := `
# HELP wf_k8s_deployed_releases Total number of the deployed releases
# TYPE wf_k8s_deployed_releases gauge
wf_k8s_deployed_releases 2
# HELP wf_k8s_deployed_releases_with_deprecated_api_version Total number of the deployed releases that have deprecated apiVersions
# TYPE wf_k8s_deployed_releases_with_deprecated_api_version gauge
wf_k8s_deployed_releases_with_deprecated_api_version 1
# HELP wf_k8s_deployed_releases_with_removed_api_version Total number of the deployed releases that have removed apiVersions
# TYPE wf_k8s_deployed_releases_with_removed_api_version gauge
wf_k8s_deployed_releases_with_removed_api_version 1
# HELP wf_k8s_deprecated_versions_info Deprecated API versions
# TYPE wf_k8s_deprecated_versions_info gauge
wf_k8s_deprecated_versions_info{api_version="autoscaling/v2beta2",deprecated="true",deprecated_in_version="v1.23.0",helm_version="v3",k8s_version="v1.25.0",kind="HorizontalPodAutoscaler",name="hpa",namespace="b",release_last_update="2026-01-02 03:04:05 +0000 UTC",release_name="shop",removed="false",removed_in_next_2_releases="true",removed_in_next_release="true",removed_in_version="v1.26.0",replacement_api="autoscaling/v2"} 1
wf_k8s_deprecated_versions_info{api_version="policy/v1beta1",deprecated="true",deprecated_in_version="v1.21.0",helm_version="v3",k8s_version="v1.25.0",kind="PodDisruptionBudget",name="pdb",namespace="b",release_last_update="2026-01-02 03:04:05 +0000 UTC",release_name="shop",removed="true",removed_in_next_2_releases="true",removed_in_next_release="true",removed_in_version="v1.25.0",replacement_api="policy/v1"} 1
# HELP wf_k8s_deprecated_versions_job_info Deprecated API versions Job information
# TYPE wf_k8s_deprecated_versions_job_info gauge
wf_k8s_deprecated_versions_job_info{duration_seconds="2",last_run="2023-11-14T22:13:22"} 1
`
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(want),
		"wf_k8s_deprecated_versions_info", "wf_k8s_deprecated_versions_job_info", "wf_k8s_deployed_releases",
		"wf_k8s_deployed_releases_with_deprecated_api_version", "wf_k8s_deployed_releases_with_removed_api_version"))
}

func TestCollectorNoData(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	_, err := NewCollector(func() *ScanReport { return nil }, CollectorOptions{Registerer: reg, Kdave: true, Namespace: "x"})
	require.NoError(t, err)
	n, err := testutil.GatherAndCount(reg)
	require.NoError(t, err)
	assert.Equal(t, 7, n, "only the release counts before the first scan")
	assert.Equal(t, 1, testutil.CollectAndCount(mustCollector(t), "fleetkit_deprecation_releases"))

	_, err = NewCollector(nil, CollectorOptions{})
	require.Error(t, err)
}

// A nil Registerer means no metrics: nothing goes to the default
// registry.
func TestCollectorNilRegisterer(t *testing.T) {
	names := func() []string {
		mfs, err := prometheus.DefaultGatherer.Gather()
		require.NoError(t, err)
		var out []string
		for _, mf := range mfs {
			out = append(out, mf.GetName())
		}
		return out
	}
	before := names()
	rep := collectorReport(t)
	_, err := NewCollector(func() *ScanReport { return rep }, CollectorOptions{Kdave: true})
	require.NoError(t, err)
	assert.Equal(t, before, names())
	for _, n := range before {
		assert.NotContains(t, n, "deprecation")
	}
}

func mustCollector(t *testing.T) *Collector {
	c, err := NewCollector(func() *ScanReport { return nil }, CollectorOptions{})
	require.NoError(t, err)
	return c
}

func ExampleNewCollector() {
	scanner := ReleaseScannerFunc(func(ctx context.Context, fn func(Release) error) (Version, error) {
		return MustParseVersion("v1.30"), fn(Release{Name: "web", Namespace: "shop", Revision: 1})
	})
	cache, err := NewCache(scanner, CacheOptions{Interval: time.Hour})
	if err != nil {
		panic(err)
	}
	defer cache.Close()
	// A binary runs cache.Run(ctx) in the background; here one scan now.
	if _, err := cache.Refresh(context.Background()); err != nil {
		panic(err)
	}
	reg := prometheus.NewRegistry()
	if _, err := NewCollector(cache.Report, CollectorOptions{Registerer: reg}); err != nil {
		panic(err)
	}
	n, _ := testutil.GatherAndCount(reg, "fleetkit_deprecation_releases")
	fmt.Println("series:", n, "healthy:", cache.Health() == nil)
	// Output:
	// series: 1 healthy: true
}
