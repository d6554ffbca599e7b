package helm_test

import (
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

// TestRulesMatchGeneratedLifecycle cross-checks the embedded rule table
// against k8s.io/api for every type it still ships. (The test lives here,
// not in package deprecation, because that package must not depend on
// client-go, even in its tests.)
func TestRulesMatchGeneratedLifecycle(t *testing.T) {
	checked := 0
	for _, r := range deprecation.DefaultRules().Rules() {
		if r.Kind == "" || (r.Component != "" && r.Component != deprecation.ComponentKubernetes) {
			continue
		}
		group, version := r.GroupVersion()
		obj, err := scheme.Scheme.New(schema.GroupVersionKind{Group: group, Version: version, Kind: r.Kind})
		if err != nil {
			continue // no longer shipped by k8s.io/api: the reference table is the source
		}
		lc, ok := obj.(lifecycle)
		if !ok {
			continue
		}
		checked++
		t.Run(r.APIVersion+"/"+r.Kind, func(t *testing.T) {
			major, minor := lc.APILifecycleRemoved()
			assert.Equal(t, deprecation.Version{Major: major, Minor: minor}, r.RemovedIn, "removed-in")
			major, minor = lc.APILifecycleDeprecated()
			assert.Equal(t, deprecation.Version{Major: major, Minor: minor}, r.DeprecatedIn, "deprecated-in")
		})
	}
	// extensions/v1beta1 … flowcontrol v1beta3 and more are still shipped:
	// a cross-check that checked nothing would prove nothing.
	require.Greater(t, checked, 30)
	t.Logf("checked %d rules against k8s.io/api", checked)
}
