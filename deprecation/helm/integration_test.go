package helm_test

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/client-go/kubernetes"

	"github.com/fleetkit/fleetkit/deprecation"
	"github.com/fleetkit/fleetkit/deprecation/helm"
	"github.com/fleetkit/fleetkit/deprecation/helm/helmtest"
	"github.com/fleetkit/fleetkit/internal/kubetest"
	"github.com/fleetkit/fleetkit/internal/testenv"
)

// kube is this package's API server, started by the first test that
// needs it.
var kube = kubetest.Env{Options: kubetest.Options{APIServerArgs: helmtest.APIServerArgs}}

func TestMain(m *testing.M) {
	code := testenv.Run(m)
	// The shared API server outlives the tests; stopped here, its
	// processes and the clients' connections to it end before the leak
	// check.
	_ = kube.Stop()
	os.Exit(testenv.CheckLeaks(code, helmtest.AbandonedRenders()))
}

// populated fills the API server with helmtest's releases once.
var populated sync.Once

func realCluster(t *testing.T) kubernetes.Interface {
	t.Helper()
	srv := kube.Get(t)
	client, err := kubernetes.NewForConfig(srv.Config())
	require.NoError(t, err)
	populated.Do(func() { helmtest.Populate(t, srv.Kubeconfig(), client) })
	return client
}

func TestScanRealAPIServer(t *testing.T) {
	client := realCluster(t)
	for _, pageSize := range []int64{0, 1, 2} {
		s, err := helm.New(client, helm.Options{PageSize: pageSize, Workers: 2})
		require.NoError(t, err)
		rep := scanAll(t, s)

		assert.Equal(t, "v"+kubetest.KubeVersion, rep.Target.String(), "the cluster's version")
		var got []string
		for _, r := range rep.Releases {
			got = append(got, helmtest.String(r.Namespace, r.Name, r.Revision))
		}
		assert.Equal(t, helmtest.Releases, got, "page size %d", pageSize)
		require.Len(t, rep.Corrupt, 1)
		assert.Equal(t, helmtest.Corrupt, helmtest.String(rep.Corrupt[0].Namespace, rep.Corrupt[0].Name, rep.Corrupt[0].Revision))
		require.ErrorIs(t, rep.Corrupt[0].Err, deprecation.ErrCorruptRelease)

		byName := map[string]deprecation.Release{}
		for _, r := range rep.Releases {
			byName[r.Namespace+"/"+r.Name] = r
		}
		type short struct {
			Kind, APIVersion, Name string
			State                  deprecation.State
			Hook                   bool
		}
		shorten := func(r deprecation.Release) []short {
			var out []short
			for _, f := range r.Findings {
				out = append(out, short{f.Kind, f.APIVersion, f.Name, f.State, !strings.HasSuffix(f.Source, "/manifest")})
			}
			return out
		}
		assert.ElementsMatch(t, []short{
			{"ResourceClaimTemplate", "resource.k8s.io/v1beta1", "web-gpu", deprecation.StateRemovalSoon, false},
			{"DeviceClass", "resource.k8s.io/v1beta1", "shop-web-gpu", deprecation.StateRemovalSoon, true},
		}, shorten(byName["shop/web"]))
		assert.ElementsMatch(t, []short{
			{"ResourceClaimTemplate", "resource.k8s.io/v1beta1", "web-gpu", deprecation.StateRemovalSoon, false},
			{"DeviceClass", "resource.k8s.io/v1beta1", "billing-web-gpu", deprecation.StateRemovalSoon, true},
		}, shorten(byName["billing/web"]))
		assert.ElementsMatch(t, []short{
			{"Ingress", "extensions/v1beta1", "legacy", deprecation.StateRemoved, false},
			{"PodDisruptionBudget", "policy/v1beta1", "legacy-hook", deprecation.StateRemoved, true},
		}, shorten(byName["billing/legacy"]))
		assert.Empty(t, byName["billing/clean"].Findings)
		assert.Equal(t, "web", byName["shop/web"].Chart)
		assert.Equal(t, "1.0.0", byName["shop/web"].ChartVersion)
		assert.False(t, byName["shop/web"].Updated.IsZero())
	}
}

func TestScanRealAPIServerNamespace(t *testing.T) {
	client := realCluster(t)
	s, err := helm.New(client, helm.Options{Namespace: "shop", Target: deprecation.MustParseVersion("v1.38")})
	require.NoError(t, err)
	rep := scanAll(t, s)
	require.Len(t, rep.Releases, 1)
	assert.Equal(t, "web", rep.Releases[0].Name)
	for _, f := range rep.Releases[0].Findings {
		assert.Equal(t, deprecation.StateRemoved, f.State, "fixed target v1.38")
	}
	assert.Len(t, rep.Corrupt, 1)
}
