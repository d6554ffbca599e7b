package deprecation

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func v(s string) Version { return MustParseVersion(s) }

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    Version
		wantErr bool
	}{
		{"v1.22.0", Version{1, 22, 0}, false},
		{"1.22", Version{1, 22, 0}, false},
		{"v1.27.3-eks-a5565ad", Version{1, 27, 3}, false},
		{"v1.28.2+k3s1", Version{1, 28, 2}, false},
		{" v0.11.0 ", Version{0, 11, 0}, false},
		{"", Version{}, true},
		{"v1", Version{}, true},
		{"v1.x", Version{}, true},
		{"v1.2.3.4", Version{}, true},
		{"v1.-2", Version{}, true},
		{"v1..2", Version{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseVersion(tt.in)
			if tt.wantErr {
				require.ErrorIs(t, err, ErrInvalidVersion)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestVersionCompareAndText(t *testing.T) {
	assert.True(t, v("v1.9").Less(v("v1.10")))
	assert.True(t, v("v1.22.0").Less(v("v1.22.1")))
	assert.True(t, v("v0.99").Less(v("v1.0")))
	assert.Equal(t, 0, v("1.22").Compare(v("v1.22.0")))
	assert.Equal(t, "v1.22.0", v("1.22").String())
	assert.Equal(t, "", Version{}.String())

	var got Version
	require.NoError(t, got.UnmarshalText([]byte("v1.25.3")))
	assert.Equal(t, Version{1, 25, 3}, got)
	require.NoError(t, got.UnmarshalText(nil))
	assert.True(t, got.IsZero())
}

// reference is the table of ../shared/reference/deprecations.md, row by
// row; the embedded rules must agree with it.
var reference = []struct {
	apiVersion  string
	kinds       string
	deprecated  string
	removed     string
	replacement string
}{
	{"extensions/v1beta1", "Deployment DaemonSet ReplicaSet", "1.8", "1.16", "apps/v1"},
	{"apps/v1beta1", "Deployment StatefulSet ReplicaSet", "1.8", "1.16", "apps/v1"},
	{"apps/v1beta2", "Deployment StatefulSet DaemonSet ReplicaSet", "1.9", "1.16", "apps/v1"},
	{"extensions/v1beta1", "NetworkPolicy", "1.9", "1.16", "networking.k8s.io/v1"},
	{"extensions/v1beta1", "PodSecurityPolicy", "1.10", "1.16", "policy/v1beta1"},
	{"admissionregistration.k8s.io/v1beta1", "MutatingWebhookConfiguration ValidatingWebhookConfiguration", "1.16", "1.22", "admissionregistration.k8s.io/v1"},
	{"apiextensions.k8s.io/v1beta1", "CustomResourceDefinition", "1.16", "1.22", "apiextensions.k8s.io/v1"},
	{"apiregistration.k8s.io/v1beta1", "APIService", "1.10", "1.22", "apiregistration.k8s.io/v1"},
	{"authentication.k8s.io/v1beta1", "TokenReview", "1.19", "1.22", "authentication.k8s.io/v1"},
	{"authorization.k8s.io/v1beta1", "SubjectAccessReview LocalSubjectAccessReview SelfSubjectAccessReview SelfSubjectRulesReview", "1.19", "1.22", "authorization.k8s.io/v1"},
	{"certificates.k8s.io/v1beta1", "CertificateSigningRequest", "1.19", "1.22", "certificates.k8s.io/v1"},
	{"coordination.k8s.io/v1beta1", "Lease", "1.19", "1.22", "coordination.k8s.io/v1"},
	{"extensions/v1beta1", "Ingress", "1.14", "1.22", "networking.k8s.io/v1"},
	{"networking.k8s.io/v1beta1", "Ingress IngressClass", "1.19", "1.22", "networking.k8s.io/v1"},
	{"rbac.authorization.k8s.io/v1beta1", "ClusterRole ClusterRoleBinding Role RoleBinding", "1.17", "1.22", "rbac.authorization.k8s.io/v1"},
	{"scheduling.k8s.io/v1beta1", "PriorityClass", "1.14", "1.22", "scheduling.k8s.io/v1"},
	{"storage.k8s.io/v1beta1", "CSINode", "1.17", "1.22", "storage.k8s.io/v1"}, // the table says 1.17–1.19
	{"storage.k8s.io/v1beta1", "CSIDriver StorageClass VolumeAttachment", "1.19", "1.22", "storage.k8s.io/v1"},
	{"batch/v1beta1", "CronJob", "1.21", "1.25", "batch/v1"},
	{"discovery.k8s.io/v1beta1", "EndpointSlice", "1.21", "1.25", "discovery.k8s.io/v1"},
	{"events.k8s.io/v1beta1", "Event", "1.22", "1.25", "events.k8s.io/v1"},
	{"autoscaling/v2beta1", "HorizontalPodAutoscaler", "1.22", "1.25", "autoscaling/v2"},
	{"policy/v1beta1", "PodDisruptionBudget", "1.21", "1.25", "policy/v1"},
	{"policy/v1beta1", "PodSecurityPolicy", "1.21", "1.25", ""},
	{"node.k8s.io/v1beta1", "RuntimeClass", "1.22", "1.25", "node.k8s.io/v1"},
	{"autoscaling/v2beta2", "HorizontalPodAutoscaler", "1.23", "1.26", "autoscaling/v2"},
	{"flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema PriorityLevelConfiguration", "1.23", "1.26", "flowcontrol.apiserver.k8s.io/v1beta3"},
	{"storage.k8s.io/v1beta1", "CSIStorageCapacity", "1.24", "1.27", "storage.k8s.io/v1"},
	{"flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema PriorityLevelConfiguration", "1.26", "1.29", "flowcontrol.apiserver.k8s.io/v1"},
	{"flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema PriorityLevelConfiguration", "1.29", "1.32", "flowcontrol.apiserver.k8s.io/v1"},
}

func TestDefaultRulesCoverReference(t *testing.T) {
	rules := DefaultRules()
	n := 0
	for _, row := range reference {
		for _, kind := range strings.Fields(row.kinds) {
			n++
			t.Run(row.apiVersion+"/"+kind, func(t *testing.T) {
				r, ok := rules.Lookup(row.apiVersion, kind)
				require.True(t, ok, "no rule")
				assert.Equal(t, kind, r.Kind)
				assert.Equal(t, v(row.deprecated), r.DeprecatedIn)
				assert.Equal(t, v(row.removed), r.RemovedIn)
				assert.Equal(t, row.replacement, r.ReplacementAPI)
				assert.Equal(t, ComponentKubernetes, r.Component)
			})
		}
	}
	assert.Greater(t, rules.Len(), n, "the table has the later alpha/beta removals too")
}

func TestDefaultRulesAreConsistent(t *testing.T) {
	rules := DefaultRules()
	assert.Equal(t, v("v1.37.0"), rules.Newest(ComponentKubernetes))
	assert.Equal(t, []string{"cert-manager", "istio", "k8s"}, rules.Components())
	assert.Equal(t, []string{"k8s", "cert-manager", "istio"}, BuiltinComponents())
	for _, r := range rules.Rules() {
		assert.NoError(t, r.validate(), "%s %s", r.APIVersion, r.Kind)
		if r.Component == ComponentKubernetes {
			assert.NotEmpty(t, r.Kind, "%s: Kubernetes rules name their kind", r.APIVersion)
			assert.False(t, strings.HasSuffix(r.Kind, "List"), "%s %s: lists match their item's rule", r.APIVersion, r.Kind)
		}
		if r.ReplacementAPI != "" {
			assert.NotEqual(t, r.APIVersion, r.ReplacementAPI)
			// A replacement without the release it arrived in counts
			// as unavailable (exit 4), as in pluto.
			assert.False(t, r.ReplacementAvailableIn.IsZero(), "%s %s: replacement-available-in", r.APIVersion, r.Kind)
			repl, replaced := rules.Lookup(r.ReplacementAPI, r.Kind)
			// A replacement may itself be deprecated later, but not before
			// the API it replaces is removed.
			if replaced && !repl.RemovedIn.IsZero() {
				assert.False(t, repl.RemovedIn.Less(r.RemovedIn), "%s %s: replacement %s removed first", r.APIVersion, r.Kind, r.ReplacementAPI)
			}
		}
	}
}

func TestLoadRules(t *testing.T) {
	f, err := os.Open("testdata/rules/cert-manager.yaml")
	require.NoError(t, err)
	defer f.Close()
	extra, err := LoadRules(f)
	require.NoError(t, err)
	assert.Equal(t, 3, extra.Len())
	assert.Equal(t, v("v1.5.0"), extra.Newest("cert-manager"))

	def, err := BuiltinRules(ComponentKubernetes)
	require.NoError(t, err)
	merged := Merge(def, extra, nil)
	assert.Equal(t, def.Len()+2, merged.Len(), "CronJob replaced, two rules added")
	cron, ok := merged.Lookup("batch/v1beta1", "CronJob")
	require.True(t, ok)
	assert.Equal(t, v("v1.40.0"), cron.RemovedIn, "the later file wins")
	cron, _ = def.Lookup("batch/v1beta1", "CronJob")
	assert.Equal(t, v("v1.25.0"), cron.RemovedIn, "merging does not change its inputs")
	assert.Equal(t, v("v1.37.0"), merged.Newest(ComponentKubernetes))
	assert.Equal(t, v("v1.5.0"), merged.Newest("cert-manager"))
	assert.Equal(t, Version{}, merged.Newest("istio"))

	// Merge keeps the newest declared target of a component.
	older, err := LoadRules(strings.NewReader("deprecated-versions: [{version: a/v1, kind: K, removed-in: v1.2.0}]\ntarget-versions: {k8s: v1.25.0}\n"))
	require.NoError(t, err)
	assert.Equal(t, v("v1.37.0"), Merge(def, older).Newest(ComponentKubernetes))
	assert.Equal(t, v("v1.37.0"), Merge(older, def).Newest(ComponentKubernetes))
}

func TestLoadRulesPlutoFile(t *testing.T) {
	// An excerpt of pluto's own versions.yaml: empty deprecated-in and an
	// empty kind (the whole apiVersion) are accepted.
	in := `deprecated-versions:
  - version: extensions/v1beta1
    kind: ReplicaSet
    deprecated-in: ""
    removed-in: v1.16.0
    replacement-api: apps/v1
    replacement-available-in: v1.9.0
    component: k8s
  - version: authentication.istio.io/v1alpha1
    kind: ""
    deprecated-in: v1.5.0
    removed-in: v1.6.0
    replacement-api: security.istio.io/v1beta1
    component: istio
target-versions:
  k8s: v1.25.0
  istio: v1.6.0
`
	rules, err := LoadRules(strings.NewReader(in))
	require.NoError(t, err)
	r, ok := rules.Lookup("authentication.istio.io/v1alpha1", "Policy")
	require.True(t, ok, "an empty kind matches every kind")
	assert.Equal(t, "istio", r.Component)
	rs, ok := rules.Lookup("extensions/v1beta1", "ReplicaSet")
	require.True(t, ok)
	assert.True(t, rs.DeprecatedIn.IsZero())
	assert.Equal(t, v("v1.25.0"), rules.Newest(ComponentKubernetes))
}

func TestLoadRulesErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", "empty rules file"},
		{"no rules", "target-versions: {k8s: v1.25.0}\n", "no deprecated-versions"},
		{"not yaml", "deprecated-versions: [\n", "did not find"},
		{"unknown field", "deprecated-versions:\n- {version: a/v1, kind: K, removed_in: v1.2.0}\n", "field removed_in not found"},
		{"bad version", "deprecated-versions:\n- {version: a/v1, kind: K, removed-in: soon}\n", "invalid version"},
		{"no versions", "deprecated-versions:\n- {version: a/v1, kind: K}\n", "neither deprecated-in nor removed-in"},
		{"removed before deprecated", "deprecated-versions:\n- {version: a/v1, kind: K, deprecated-in: v1.5.0, removed-in: v1.4.0}\n", "before deprecated-in"},
		{"no apiVersion", "deprecated-versions:\n- {kind: K, removed-in: v1.4.0}\n", "is not an apiVersion"},
		{"bad kind", "deprecated-versions:\n- {version: a/v1, kind: a/K, removed-in: v1.4.0}\n", "is not a kind"},
		{"bad target", "deprecated-versions:\n- {version: a/v1, kind: K, removed-in: v1.4.0}\ntarget-versions: {k8s: ''}\n", "target-versions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadRules(strings.NewReader(tt.in))
			require.ErrorIs(t, err, ErrInvalidRules)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	t.Run("testdata", func(t *testing.T) {
		f, err := os.Open("testdata/rules/bad-field.yaml")
		require.NoError(t, err)
		defer f.Close()
		_, err = LoadRules(f)
		require.ErrorIs(t, err, ErrInvalidRules)
	})
}

func TestRuleStateAt(t *testing.T) {
	// Deprecated in 1.29, removed in 1.32, replacement from 1.29.
	beta3 := Rule{APIVersion: "flowcontrol.apiserver.k8s.io/v1beta3", Kind: "FlowSchema",
		DeprecatedIn: v("1.29"), RemovedIn: v("1.32"), ReplacementAPI: "flowcontrol.apiserver.k8s.io/v1", ReplacementAvailableIn: v("1.29")}
	// Alpha, removed without deprecation.
	alpha := Rule{APIVersion: "networking.k8s.io/v1alpha1", Kind: "ClusterCIDR", RemovedIn: v("1.29")}
	// Deprecated, no removal planned; the replacement's release unknown,
	// so not known to be available (pluto's reading).
	forever := Rule{APIVersion: "example.com/v1", Kind: "Widget", DeprecatedIn: v("1.20"), ReplacementAPI: "example.com/v2"}

	tests := []struct {
		rule      Rule
		target    string
		want      State
		next1     bool // removed in the next release
		next2     bool // removed within the next two
		replaceOK bool
	}{
		{beta3, "v1.26.0", StateNone, false, false, false},
		{beta3, "v1.28.9", StateNone, false, false, false},
		{beta3, "v1.29.0", StateDeprecated, false, false, true},
		{beta3, "v1.30.0", StateRemovalSoon, false, true, true},
		{beta3, "v1.31.5", StateRemovalSoon, true, true, true},
		{beta3, "v1.32.0", StateRemoved, false, false, true},
		{beta3, "v1.40.0", StateRemoved, false, false, true},
		{alpha, "v1.26.0", StateNone, false, false, false},
		{alpha, "v1.27.0", StateRemovalSoon, false, true, false},
		{alpha, "v1.28.0", StateRemovalSoon, true, true, false},
		{alpha, "v1.29.0", StateRemoved, false, false, false},
		{forever, "v1.19.0", StateNone, false, false, false},
		{forever, "v1.20.0", StateDeprecated, false, false, false},
		{forever, "v1.99.0", StateDeprecated, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.rule.Kind+"@"+tt.target, func(t *testing.T) {
			target := v(tt.target)
			assert.Equal(t, tt.want, tt.rule.StateAt(target))
			assert.Equal(t, tt.next1, tt.rule.removedWithin(target, 1), "removed in next release")
			assert.Equal(t, tt.next2, tt.rule.removedWithin(target, 2), "removed in next two releases")
			assert.Equal(t, tt.replaceOK, tt.rule.ReplacementAvailable(target))
		})
	}
}

func TestStateText(t *testing.T) {
	for _, s := range []State{StateNone, StateDeprecated, StateRemovalSoon, StateRemoved} {
		b, err := s.MarshalText()
		require.NoError(t, err)
		var got State
		require.NoError(t, got.UnmarshalText(b))
		assert.Equal(t, s, got)
	}
	var s State
	assert.Error(t, s.UnmarshalText([]byte("gone")))
	assert.Equal(t, "State(9)", State(9).String())
}

func TestRuleGroupVersion(t *testing.T) {
	g, ver := Rule{APIVersion: "apps/v1beta1"}.GroupVersion()
	assert.Equal(t, []string{"apps", "v1beta1"}, []string{g, ver})
	g, ver = Rule{APIVersion: "v1"}.GroupVersion()
	assert.Equal(t, []string{"", "v1"}, []string{g, ver})
}

func TestBuiltinRulesByComponent(t *testing.T) {
	k8s, err := BuiltinRules(ComponentKubernetes)
	require.NoError(t, err)
	assert.Equal(t, []string{"k8s"}, k8s.Components())
	cm, err := BuiltinRules("cert-manager", "istio")
	require.NoError(t, err)
	assert.Equal(t, []string{"cert-manager", "istio"}, cm.Components())
	assert.Equal(t, v("v1.5.3"), cm.Newest("cert-manager"), "pluto's default target")
	assert.Equal(t, v("v1.11.0"), cm.Newest("istio"))
	assert.Equal(t, DefaultRules().Len(), k8s.Len()+cm.Len())
	all, err := BuiltinRules()
	require.NoError(t, err)
	assert.Same(t, DefaultRules(), all)

	_, err = BuiltinRules("k8s", "linkerd")
	require.ErrorIs(t, err, ErrUnknownComponent)
	assert.Contains(t, err.Error(), "k8s, cert-manager, istio")

	sel, err := DefaultRules().Select("istio")
	require.NoError(t, err)
	assert.Equal(t, []string{"istio"}, sel.Components())
	assert.Equal(t, map[string]Version{"istio": v("v1.11.0")}, sel.Targets())
	r, ok := sel.Lookup("rbac.istio.io/v1alpha1", "ServiceRole")
	require.True(t, ok, "a whole-group rule")
	assert.Equal(t, "istio", r.Component)
	_, ok = sel.Lookup("batch/v1beta1", "CronJob")
	assert.False(t, ok)
	_, err = sel.Select("k8s")
	require.ErrorIs(t, err, ErrUnknownComponent)
}

func TestRuleSetCheckTarget(t *testing.T) {
	rules := DefaultRules()
	for _, ok := range []string{"v1.37.0", "v1.37.9", "v1.16.0", "v1.0"} {
		assert.NoError(t, rules.CheckTarget(v(ok)), ok)
	}
	for _, bad := range []string{"v1.38.0", "v1.50.2", "v2.0"} {
		err := rules.CheckTarget(v(bad))
		require.ErrorIs(t, err, ErrUnknownTarget, bad)
		assert.Contains(t, err.Error(), "reviewed against v1.37.0")
	}
	// Rules without a declared Kubernetes target accept any.
	cm, err := BuiltinRules("cert-manager")
	require.NoError(t, err)
	assert.NoError(t, cm.CheckTarget(v("v1.99")))
}

func TestLookupTypedList(t *testing.T) {
	rules := DefaultRules()
	// pluto has rows for typed lists; here a <Kind>List matches <Kind>.
	for _, kind := range []string{"ClusterRoleBindingList", "CronJobList", "PodDisruptionBudgetList"} {
		r, ok := rules.Lookup(map[string]string{
			"ClusterRoleBindingList":  "rbac.authorization.k8s.io/v1beta1",
			"CronJobList":             "batch/v1beta1",
			"PodDisruptionBudgetList": "policy/v1beta1",
		}[kind], kind)
		require.True(t, ok, kind)
		assert.Equal(t, strings.TrimSuffix(kind, "List"), r.Kind)
	}
	_, ok := rules.Lookup("v1", "List")
	assert.False(t, ok, "List itself is no kind of a rule")
	_, ok = rules.Lookup("batch/v1", "CronJobList")
	assert.False(t, ok)
}
