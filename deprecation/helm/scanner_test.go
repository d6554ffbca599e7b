package helm_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
)

const (
	oldIngress = `apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: web
`
	oldCronJob = `apiVersion: batch/v1beta1
kind: CronJob
metadata:
  name: nightly
`
	current = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
---
apiVersion: v1
kind: Service
metadata:
  name: web
`
	oldPDBHook = `apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: hook-pdb
`
)

// finding is the part of a finding the tests compare.
type finding struct{ Source, APIVersion, Kind, Name string }

func findings(r deprecation.Release) []finding {
	var out []finding
	for _, f := range r.Findings {
		out = append(out, finding{f.Source, f.APIVersion, f.Kind, f.Name})
	}
	return out
}

// scanAll runs a scan and returns the report.
func scanAll(t *testing.T, s deprecation.ReleaseScanner) *deprecation.ScanReport {
	t.Helper()
	rep, err := deprecation.ScanReleases(context.Background(), s, nil)
	require.NoError(t, err)
	return rep
}

// cluster fills a fake clientset with releases in two namespaces.
func cluster(t *testing.T) *pagingClient {
	t.Helper()
	c := newFake()
	// shop/web: rev 1 superseded, rev 2 and 3 both labelled deployed (an
	// interrupted upgrade): rev 3 wins. Its hook uses a removed API.
	storeSecret(t, c, testRelease("shop", "web", 1, release.StatusSuperseded, oldIngress+"---\n"+oldCronJob))
	storeSecret(t, c, testRelease("shop", "web", 2, release.StatusDeployed, oldIngress+"---\n"+oldCronJob))
	storeSecret(t, c, testRelease("shop", "web", 3, release.StatusDeployed, current+"---\n"+oldCronJob,
		hook("web-chart/templates/pre-install.yaml", oldPDBHook)))
	// shop/api: current APIs only, 10 revisions (v10 sorts before v2).
	for rev := 1; rev <= 10; rev++ {
		st := release.StatusSuperseded
		if rev == 10 {
			st = release.StatusDeployed
		}
		storeSecret(t, c, testRelease("shop", "api", rev, st, current))
	}
	// billing/web: same release name, other namespace, old ingress.
	storeSecret(t, c, testRelease("billing", "web", 1, release.StatusDeployed, oldIngress))
	// billing/gone: uninstalled with --keep-history: not deployed.
	storeSecret(t, c, testRelease("billing", "gone", 1, release.StatusUninstalled, oldIngress))
	// Corrupt releases, labelled deployed.
	corruptSecret(t, c, "billing", "bad-base64", 1, []byte("!!! not base64 !!!"))
	corruptSecret(t, c, "billing", "bad-gzip", 1, b64([]byte("\x1f\x8b\x08 truncated gzip")))
	corruptSecret(t, c, "billing", "bad-json", 4, b64(gzipped([]byte(`{"name": "bad-json", "manifest": `))))
	corruptSecret(t, c, "billing", "no-data", 1, nil)
	// A release stored before Helm compressed them: plain JSON is valid.
	corruptSecret(t, c, "billing", "plain", 1, b64([]byte(`{"name":"plain","version":1,"manifest":"apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: p\n"}`)))
	return newPagingClient(c)
}

func TestScan(t *testing.T) {
	for _, tt := range []struct {
		name      string
		pageSize  int64
		workers   int
		wantPages int
	}{
		{"one page", 0, 0, 1},
		{"pages of 2, 1 worker", 2, 1, 5},
		{"pages of 3, 4 workers", 3, 4, 3},
		{"pages of 1, 8 workers", 1, 8, 9},
	} {
		t.Run(tt.name, func(t *testing.T) {
			client := cluster(t)
			s, err := helm.New(client, helm.Options{Target: deprecation.MustParseVersion("v1.25"), PageSize: tt.pageSize, Workers: tt.workers})
			require.NoError(t, err)
			rep := scanAll(t, s)

			wantLimit := tt.pageSize
			if wantLimit == 0 {
				wantLimit = helm.DefaultPageSize
			}
			calls := client.Calls()
			require.Len(t, calls, tt.wantPages, "9 deployed-labelled secrets")
			for i, c := range calls {
				assert.Equal(t, "owner=helm,status=deployed", c.LabelSelector)
				assert.Equal(t, wantLimit, c.Limit)
				assert.Equal(t, i == 0, c.Continue == "", "call %d", i)
			}

			assert.Equal(t, deprecation.MustParseVersion("v1.25"), rep.Target)
			var got []string
			for _, r := range rep.Releases {
				got = append(got, r.Namespace+"/"+r.Name)
			}
			assert.Equal(t, []string{"billing/plain", "billing/web", "shop/api", "shop/web"}, got)

			plain, bweb, api, sweb := rep.Releases[0], rep.Releases[1], rep.Releases[2], rep.Releases[3]
			assert.Len(t, plain.Findings, 1)
			assert.Equal(t, []finding{{"secret/billing/sh.helm.release.v1.web.v1/manifest", "extensions/v1beta1", "Ingress", "web"}}, findings(bweb))
			assert.Equal(t, 10, api.Revision)
			assert.Empty(t, api.Findings)
			assert.Equal(t, 2, api.Documents)

			assert.Equal(t, 3, sweb.Revision, "the highest deployed revision wins")
			assert.Equal(t, "shop", sweb.Namespace)
			assert.Equal(t, "web-chart", sweb.Chart)
			assert.Equal(t, "1.2.3", sweb.ChartVersion)
			assert.Equal(t, "4.5", sweb.AppVersion)
			assert.Equal(t, "2026-01-02T03:04:05Z", sweb.Updated.UTC().Format("2006-01-02T15:04:05Z07:00"))
			assert.Equal(t, "secret/shop/sh.helm.release.v1.web.v3", sweb.Source)
			assert.Equal(t, []finding{
				{"secret/shop/sh.helm.release.v1.web.v3/manifest", "batch/v1beta1", "CronJob", "nightly"},
				{"secret/shop/sh.helm.release.v1.web.v3/hooks/web-chart/templates/pre-install.yaml", "policy/v1beta1", "PodDisruptionBudget", "hook-pdb"},
			}, findings(sweb), "hooks are checked too")
			assert.Equal(t, 4, sweb.Documents)

			require.Len(t, rep.Corrupt, 4)
			want := map[string]string{
				"bad-base64": "base64", "bad-gzip": "gzip", "bad-json": "json", "no-data": "no release data",
			}
			for _, r := range rep.Corrupt {
				assert.Equal(t, "billing", r.Namespace)
				require.ErrorIs(t, r.Err, deprecation.ErrCorruptRelease, r.Name)
				assert.Contains(t, r.Err.Error(), want[r.Name], r.Name)
			}
			assert.Equal(t, 4, rep.Corrupt[2].Revision, "bad-json: revision from the labels")
			assert.Equal(t, "secret/billing/sh.helm.release.v1.bad-json.v4", rep.Corrupt[2].Source)
		})
	}
}

func TestScanNamespace(t *testing.T) {
	client := cluster(t)
	s, err := helm.New(client, helm.Options{Namespace: "shop", Target: deprecation.MustParseVersion("v1.25")})
	require.NoError(t, err)
	rep := scanAll(t, s)
	require.Len(t, rep.Releases, 2)
	assert.Empty(t, rep.Corrupt)
	for _, r := range rep.Releases {
		assert.Equal(t, "shop", r.Namespace)
	}
}

func TestScanConfigMaps(t *testing.T) {
	c := newFake()
	storeConfigMap(t, c, testRelease("cm", "legacy", 1, release.StatusDeployed, oldIngress))
	storeSecret(t, c, testRelease("sec", "web", 1, release.StatusDeployed, oldIngress))
	client := newPagingClient(c)

	s, err := helm.New(client, helm.Options{ConfigMaps: true, NoSecrets: true, PageSize: 1})
	require.NoError(t, err)
	rep := scanAll(t, s)
	require.Len(t, rep.Releases, 1)
	assert.Equal(t, "configmap/cm/sh.helm.release.v1.legacy.v1", rep.Releases[0].Source)
	assert.Len(t, rep.Releases[0].Findings, 1)

	s, err = helm.New(client, helm.Options{ConfigMaps: true})
	require.NoError(t, err)
	assert.Len(t, scanAll(t, s).Releases, 2)
}

func TestScanReadsClusterVersionEveryScan(t *testing.T) {
	c := newFake()
	storeSecret(t, c, testRelease("ns", "web", 1, release.StatusDeployed, oldCronJob)) // batch/v1beta1: deprecated 1.21, removed 1.25
	disc := c.Discovery().(*fakediscovery.FakeDiscovery)
	s, err := helm.New(c, helm.Options{})
	require.NoError(t, err)

	for _, tt := range []struct {
		gitVersion string
		target     string
		state      deprecation.State
	}{
		{"v1.22.3-eks-a5565ad", "v1.22.3", deprecation.StateDeprecated},
		{"v1.24.0", "v1.24.0", deprecation.StateRemovalSoon},
		{"v1.25.1+k3s1", "v1.25.1", deprecation.StateRemoved},
	} {
		disc.FakedServerVersion = &version.Info{GitVersion: tt.gitVersion}
		rep := scanAll(t, s)
		assert.Equal(t, tt.target, rep.Target.String())
		require.Len(t, rep.Releases[0].Findings, 1)
		assert.Equal(t, tt.state, rep.Releases[0].Findings[0].State, tt.gitVersion)
	}

	disc.FakedServerVersion = &version.Info{GitVersion: "garbage"}
	_, err = s.Scan(context.Background(), func(deprecation.Release) error { return nil })
	require.ErrorIs(t, err, helm.ErrServerVersion)
}

func TestScanErrors(t *testing.T) {
	t.Run("list fails", func(t *testing.T) {
		c := newFake()
		boom := errors.New("apiserver down")
		c.PrependReactor("list", "secrets", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, boom })
		s, err := helm.New(c, helm.Options{Target: deprecation.MustParseVersion("v1.25")})
		require.NoError(t, err)
		_, err = deprecation.ScanReleases(context.Background(), s, nil)
		require.ErrorIs(t, err, boom)
	})
	t.Run("fn fails", func(t *testing.T) {
		client := cluster(t)
		s, err := helm.New(client, helm.Options{Target: deprecation.MustParseVersion("v1.25")})
		require.NoError(t, err)
		stop := errors.New("stop")
		n := 0
		_, err = s.Scan(context.Background(), func(deprecation.Release) error { n++; return stop })
		require.ErrorIs(t, err, stop)
		assert.Equal(t, 1, n)
	})
	t.Run("cancelled", func(t *testing.T) {
		client := cluster(t)
		s, err := helm.New(client, helm.Options{Target: deprecation.MustParseVersion("v1.25"), PageSize: 1})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = s.Scan(ctx, func(deprecation.Release) error { return nil })
		require.ErrorIs(t, err, context.Canceled)
	})
	t.Run("expired continue token restarts the listing", func(t *testing.T) {
		client := cluster(t)
		client.expireAt = 2
		s, err := helm.New(client, helm.Options{Target: deprecation.MustParseVersion("v1.25"), PageSize: 2})
		require.NoError(t, err)
		rep := scanAll(t, s)
		assert.Len(t, rep.Releases, 4)
		assert.Len(t, rep.Corrupt, 4)
		calls := client.Calls()
		assert.Empty(t, calls[3].Continue, "restarted from the start")
	})
}

func TestNew(t *testing.T) {
	c := newFake()
	for _, tt := range []struct {
		name string
		opts helm.Options
	}{
		{"negative page size", helm.Options{PageSize: -1}},
		{"negative workers", helm.Options{Workers: -1}},
		{"nothing to scan", helm.Options{NoSecrets: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := helm.New(c, tt.opts)
			require.ErrorIs(t, err, helm.ErrInvalidOptions)
		})
	}
	_, err := helm.New(nil, helm.Options{})
	require.ErrorIs(t, err, helm.ErrInvalidOptions)
}
