package helm_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/fleetkit/fleetkit/deprecation"
)

// lifecycle is implemented by the prerelease types of k8s.io/api: their
// generated methods are the authority on when an API was deprecated and
// removed.
type lifecycle interface {
	APILifecycleDeprecated() (major, minor int)
	APILifecycleRemoved() (major, minor int)
}

// notManifests are k8s.io/api types with a lifecycle that are request
// bodies of subresources or webhook payloads, not objects anyone writes in
// a manifest.
var notManifests = []string{"Scale", "DeploymentRollback", "Eviction", "ConversionReview"}

// TestRulesMatchGeneratedLifecycle cross-checks the built-in Kubernetes
// rules against k8s.io/api both ways: every rule whose type it still ships
// (List kinds included, through the rule of their item) has its deprecated
// and removed releases, and every type it ships with a deprecation or
// removal has a rule. (The test lives here, not in package deprecation,
// because that package must not depend on client-go, even in its tests.)
func TestRulesMatchGeneratedLifecycle(t *testing.T) {
	rules, err := deprecation.BuiltinRules(deprecation.ComponentKubernetes)
	require.NoError(t, err)
	checked := 0
	for gvk := range scheme.Scheme.AllKnownTypes() {
		obj, err := scheme.Scheme.New(gvk)
		require.NoError(t, err)
		lc, ok := obj.(lifecycle)
		if !ok {
			continue
		}
		depMajor, depMinor := lc.APILifecycleDeprecated()
		remMajor, remMinor := lc.APILifecycleRemoved()
		if depMajor == 0 && remMajor == 0 {
			continue // not deprecated
		}
		item := strings.TrimSuffix(gvk.Kind, "List")
		if slices.Contains(notManifests, item) {
			continue
		}
		apiVersion := schema.GroupVersion{Group: gvk.Group, Version: gvk.Version}.String()
		checked++
		t.Run(apiVersion+"/"+gvk.Kind, func(t *testing.T) {
			r, ok := rules.Lookup(apiVersion, gvk.Kind)
			require.True(t, ok, "k8s.io/api deprecates it: the table needs a rule")
			assert.Equal(t, item, r.Kind, "a list matches its item's rule")
			assert.Equal(t, deprecation.Version{Major: remMajor, Minor: remMinor}, r.RemovedIn, "removed-in")
			assert.Equal(t, deprecation.Version{Major: depMajor, Minor: depMinor}, r.DeprecatedIn, "deprecated-in")
		})
	}
	// extensions/v1beta1 … resource.k8s.io/v1beta2 and their lists: a
	// cross-check that checked nothing would prove nothing.
	require.Greater(t, checked, 150)
	t.Logf("checked %d k8s.io/api types against the rules", checked)

	// The other way: rules k8s.io/api no longer ships come from the
	// migration guide; those it ships agree (above).
	shipped := 0
	for _, r := range rules.Rules() {
		group, version := r.GroupVersion()
		if _, err := scheme.Scheme.New(schema.GroupVersionKind{Group: group, Version: version, Kind: r.Kind}); err == nil {
			shipped++
		}
	}
	assert.Greater(t, shipped, 70)
}
