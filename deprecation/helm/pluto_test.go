package helm_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/fleetkit/fleetkit/deprecation"
)

// plutoDisagreement is a field where kdave's built-in rules and pluto's
// published versions file differ, and why kdave's value stands.
type plutoDisagreement struct {
	field    string // "missing", "deprecated-in", "removed-in", "replacement-api", "replacement-available-in"
	pluto    string
	kdave    string
	evidence string
}

// Evidence shared by many rows.
const (
	evLifecycle = "k8s.io/api v0.37.2's generated APILifecycle method of the type (checked by this test)"
	evAvailable = "pluto leaves replacement-available-in empty, which its own isReplacementAvailableIn reads as " +
		"never available (exit 4 for every such object); the replacement's k8s.io/api APILifecycleIntroduced " +
		"gives the release (checked by this test)"
	evGuide        = "the Kubernetes Deprecated API Migration Guide lists the API as deprecated in the release kdave gives"
	evNoSuchKind   = "no such kind: pluto's row never matches an object"
	evCertManager  = "cert-manager.io/v1 and acme.cert-manager.io/v1 are served since cert-manager v0.16 (cert-manager v0.16 release notes); pluto leaves the field empty, read as never available"
	evCertMgrACME  = "Order and Challenge are acme.cert-manager.io kinds; cert-manager.io/v1 has no Order or Challenge (cert-manager API reference)"
	evCertMgrV011  = "cert-manager v0.11 serves cert-manager.io/v1alpha2 and acme.cert-manager.io/v1alpha2, the groups it renamed to (cert-manager v0.11 upgrade notes); pluto leaves the field empty"
	evIstio        = "security.istio.io/v1beta1 is served since Istio 1.4 (AuthorizationPolicy) and 1.5 (PeerAuthentication, RequestAuthentication), the releases that deprecated the old kinds (Istio release notes); pluto leaves the field empty"
	evFlowcontrol  = "the migration guide names both replacements, flowcontrol.apiserver.k8s.io/v1 (from 1.29) and v1beta3 (from 1.26); kdave keeps shared/reference/deprecations.md's v1"
	evFlowcontrolB = "k8s.io/api's APILifecycleReplacement of flowcontrol v1beta1 is v1beta3, which the migration guide names too (available since 1.26)"
)

// plutoErrors lists every disagreement between kdave's built-in rules and
// pluto's published versions file (testdata/pluto-versions.yaml), keyed by
// "apiVersion kind". TestPlutoVersionsFile fails on any disagreement not
// listed here and on any listed one that no longer occurs.
var plutoErrors = map[string][]plutoDisagreement{
	"extensions/v1beta1 Deployment":                    {{"deprecated-in", "v1.9.0", "v1.8.0", evLifecycle}},
	"apps/v1beta1 Deployment":                          {{"deprecated-in", "v1.9.0", "v1.8.0", evLifecycle}},
	"apps/v1beta1 StatefulSet":                         {{"deprecated-in", "v1.9.0", "v1.8.0", evLifecycle}},
	"extensions/v1beta1 DaemonSet":                     {{"deprecated-in", "v1.9.0", "v1.8.0", evLifecycle}},
	"extensions/v1beta1 ReplicaSet":                    {{"deprecated-in", "", "v1.8.0", evLifecycle}},
	"apps/v1beta2 ReplicaSet":                          {{"deprecated-in", "", "v1.9.0", evLifecycle}},
	"apps/v1beta1 ReplicaSet":                          {{"deprecated-in", "", "v1.8.0", evGuide + " (1.8, with the rest of apps/v1beta1)"}},
	"scheduling.k8s.io/v1alpha1 PriorityClass":         {{"replacement-available-in", "", "v1.14.0", evAvailable}},
	"storage.k8s.io/v1beta1 CSIDriver":                 {{"replacement-available-in", "v1.19.0", "v1.18.0", evAvailable}},
	"storage.k8s.io/v1beta1 StorageClass":              {{"deprecated-in", "v1.6.0", "v1.19.0", evLifecycle}},
	"storage.k8s.io/v1beta1 VolumeAttachment":          {{"deprecated-in", "v1.13.0", "v1.19.0", evLifecycle}},
	"authentication.k8s.io/v1beta1 TokenReview":        {{"deprecated-in", "v1.6.0", "v1.19.0", evLifecycle}},
	"coordination.k8s.io/v1beta1 Lease":                {{"deprecated-in", "v1.14.0", "v1.19.0", evLifecycle}},
	"events.k8s.io/v1beta1 Event":                      {{"deprecated-in", "v1.19.0", "v1.22.0", evLifecycle}},
	"autoscaling/v2beta2 HorizontalPodAutoscaler":      {{"replacement-available-in", "", "v1.23.0", evAvailable}},
	"flowcontrol.apiserver.k8s.io/v1beta1 FlowControl": {{"missing", "", "", evNoSuchKind}},
	"flowcontrol.apiserver.k8s.io/v1beta1 FLowSchema":  {{"missing", "", "", evNoSuchKind + " (misspelt FlowSchema)"}},
	"flowcontrol.apiserver.k8s.io/v1beta1 PriorityLevelConfiguration": {
		{"deprecated-in", "v1.24.0", "v1.23.0", evLifecycle},
		{"removed-in", "v1.29.0", "v1.26.0", evLifecycle},
		{"replacement-available-in", "", "v1.26.0", evAvailable + "; " + evFlowcontrolB},
	},
	"flowcontrol.apiserver.k8s.io/v1beta2 FlowSchema": {
		{"deprecated-in", "v1.24.0", "v1.26.0", evLifecycle},
		{"replacement-api", "flowcontrol.apiserver.k8s.io/v1beta3", "flowcontrol.apiserver.k8s.io/v1", evFlowcontrol},
		{"replacement-available-in", "", "v1.29.0", evAvailable},
	},
	"flowcontrol.apiserver.k8s.io/v1beta2 PriorityLevelConfiguration": {
		{"deprecated-in", "v1.24.0", "v1.26.0", evLifecycle},
		{"replacement-api", "flowcontrol.apiserver.k8s.io/v1beta3", "flowcontrol.apiserver.k8s.io/v1", evFlowcontrol},
		{"replacement-available-in", "", "v1.29.0", evAvailable},
	},
	"rbac.istio.io AuthorizationPolicies": {{"missing", "", "", evNoSuchKind + ": rbac.istio.io has no version and no kind AuthorizationPolicies; kdave's row is rbac.istio.io/v1alpha1 (every kind), removed in Istio 1.6"}},
	"authentication.istio.io/v1alpha1 ":   {{"replacement-available-in", "", "v1.5.0", evIstio}},
}

func init() {
	// Rows that only lack replacement-available-in: typed lists (pluto
	// gives it for the item kind but not the list), the rbac v1beta1 rows,
	// and the cert-manager rows.
	for _, kind := range []string{"ClusterRoleBindingList", "ClusterRoleList", "RoleList", "RoleBindingList"} {
		plutoErrors["rbac.authorization.k8s.io/v1alpha1 "+kind] = []plutoDisagreement{{"replacement-available-in", "", "v1.8.0", evAvailable}}
	}
	for _, kind := range []string{"ClusterRoleBinding", "ClusterRole", "ClusterRoleBindingList", "ClusterRoleList", "Role", "RoleBinding", "RoleList", "RoleBindingList"} {
		plutoErrors["rbac.authorization.k8s.io/v1beta1 "+kind] = []plutoDisagreement{{"replacement-available-in", "", "v1.8.0", evAvailable}}
	}
	for key, v := range map[string]string{
		"policy/v1beta1 PodDisruptionBudgetList":          "v1.21.0",
		"autoscaling/v2beta1 HorizontalPodAutoscalerList": "v1.23.0",
		"autoscaling/v2beta2 HorizontalPodAutoscalerList": "v1.23.0",
		"batch/v1beta1 CronJobList":                       "v1.21.0",
	} {
		plutoErrors[key] = []plutoDisagreement{{"replacement-available-in", "", v, evAvailable}}
	}
	for _, kind := range []string{"Certificate", "Issuer", "ClusterIssuer", "CertificateRequest"} {
		plutoErrors["certmanager.k8s.io/v1alpha1 "+kind] = []plutoDisagreement{{"replacement-available-in", "", "v0.11.0", evCertMgrV011}}
		for _, ver := range []string{"v1alpha2", "v1alpha3", "v1beta1"} {
			plutoErrors["cert-manager.io/"+ver+" "+kind] = []plutoDisagreement{{"replacement-available-in", "", "v0.16.0", evCertManager}}
		}
	}
	for _, kind := range []string{"Order", "Challenge"} {
		plutoErrors["certmanager.k8s.io/v1alpha1 "+kind] = []plutoDisagreement{
			{"replacement-api", "cert-manager.io/v1alpha2", "acme.cert-manager.io/v1alpha2", evCertMgrACME},
			{"replacement-available-in", "", "v0.11.0", evCertMgrV011},
		}
		for _, ver := range []string{"v1alpha2", "v1alpha3", "v1beta1"} {
			plutoErrors["acme.cert-manager.io/"+ver+" "+kind] = []plutoDisagreement{
				{"replacement-api", "cert-manager.io/v1", "acme.cert-manager.io/v1", evCertMgrACME},
				{"replacement-available-in", "", "v0.16.0", evCertManager},
			}
		}
	}
}

// TestPlutoVersionsFile cross-checks kdave's built-in rules against every
// row of pluto's published versions file: each field either agrees or the
// disagreement is recorded in plutoErrors with the evidence. Where the
// evidence is k8s.io/api's lifecycle methods, the test checks it.
func TestPlutoVersionsFile(t *testing.T) {
	f, err := os.Open("testdata/pluto-versions.yaml")
	require.NoError(t, err)
	defer f.Close()
	pluto, err := deprecation.LoadRules(f)
	require.NoError(t, err)
	ours := deprecation.DefaultRules()
	require.Equal(t, []string{"cert-manager", "istio", "k8s"}, pluto.Components(), "pluto's components are all built in")

	got := map[string][]plutoDisagreement{}
	rows := 0
	for _, p := range pluto.Rules() {
		rows++
		key := p.APIVersion + " " + p.Kind
		kind := p.Kind
		if kind == "" {
			kind = "AnyKind"
		}
		o, ok := ours.Lookup(p.APIVersion, kind)
		if !ok {
			got[key] = append(got[key], plutoDisagreement{field: "missing"})
			continue
		}
		assert.Equal(t, p.Component, o.Component, key)
		for _, d := range []struct{ field, pluto, kdave string }{
			{"deprecated-in", p.DeprecatedIn.String(), o.DeprecatedIn.String()},
			{"removed-in", p.RemovedIn.String(), o.RemovedIn.String()},
			{"replacement-api", p.ReplacementAPI, o.ReplacementAPI},
			{"replacement-available-in", p.ReplacementAvailableIn.String(), o.ReplacementAvailableIn.String()},
		} {
			if d.pluto != d.kdave {
				got[key] = append(got[key], plutoDisagreement{field: d.field, pluto: d.pluto, kdave: d.kdave})
			}
		}
	}
	assert.Equal(t, 88, rows, "every row of the file")

	strip := func(m map[string][]plutoDisagreement) map[string][]string {
		out := map[string][]string{}
		for k, ds := range m {
			for _, d := range ds {
				out[k] = append(out[k], fmt.Sprintf("%s: pluto %q, kdave %q", d.field, d.pluto, d.kdave))
			}
			slices.Sort(out[k])
		}
		return out
	}
	assert.Equal(t, strip(plutoErrors), strip(got), "every disagreement with pluto is recorded, and every recorded one occurs")

	// The evidence that k8s.io/api gives, checked.
	checked := 0
	for key, ds := range plutoErrors {
		apiVersion, kind, _ := strings.Cut(key, " ")
		for _, d := range ds {
			switch {
			case strings.Contains(d.evidence, evLifecycle):
				lc := lifecycleOf(t, apiVersion, strings.TrimSuffix(kind, "List"))
				require.NotNil(t, lc, "%s: k8s.io/api ships it", key)
				major, minor := lc.APILifecycleDeprecated()
				if d.field == "removed-in" {
					major, minor = lc.APILifecycleRemoved()
				}
				assert.Equal(t, d.kdave, deprecation.Version{Major: major, Minor: minor}.String(), "%s %s", key, d.field)
				checked++
			case strings.HasPrefix(d.evidence, evAvailable):
				r, _ := ours.Lookup(apiVersion, kind)
				intro := introducedOf(t, r.ReplacementAPI, strings.TrimSuffix(kind, "List"))
				require.NotNil(t, intro, "%s: k8s.io/api ships the replacement %s", key, r.ReplacementAPI)
				assert.Equal(t, d.kdave, intro.String(), "%s: %s introduced", key, r.ReplacementAPI)
				checked++
			}
		}
	}
	t.Logf("%d rows, %d disagreements recorded, %d checked against k8s.io/api", rows, len(plutoErrors), checked)
}

type introduced interface {
	APILifecycleIntroduced() (major, minor int)
}

// lifecycleOf returns k8s.io/api's lifecycle methods of apiVersion and
// kind, nil when it does not ship the type.
func lifecycleOf(t *testing.T, apiVersion, kind string) lifecycle {
	t.Helper()
	gv, err := schema.ParseGroupVersion(apiVersion)
	require.NoError(t, err)
	obj, err := scheme.Scheme.New(gv.WithKind(kind))
	if err != nil {
		return nil
	}
	lc, _ := obj.(lifecycle)
	return lc
}

// introducedOf returns the release k8s.io/api says apiVersion and kind
// were introduced in, nil when it does not ship the type.
func introducedOf(t *testing.T, apiVersion, kind string) *deprecation.Version {
	t.Helper()
	gv, err := schema.ParseGroupVersion(apiVersion)
	require.NoError(t, err)
	obj, err := scheme.Scheme.New(gv.WithKind(kind))
	if err != nil {
		return nil
	}
	in, ok := obj.(introduced)
	if !ok {
		return nil
	}
	major, minor := in.APILifecycleIntroduced()
	return &deprecation.Version{Major: major, Minor: minor}
}
