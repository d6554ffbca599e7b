package gitops

import (
	"maps"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/fleetkit/fleetkit/deprecation"
)

// stableAPIs are built-in group/versions that no rule covers, with the
// release that first served them (empty: before any release a target can
// name). Helm's own default set is the client library's scheme, which
// still lists APIs the target no longer serves, so charts that test
// .Capabilities.APIVersions.Has would pick removed APIs.
var stableAPIs = []struct{ apiVersion, since string }{
	{"v1", ""},
	{"admissionregistration.k8s.io/v1", "v1.16.0"},
	{"apiextensions.k8s.io/v1", "v1.16.0"},
	{"apiregistration.k8s.io/v1", ""},
	{"apps/v1", ""},
	{"authentication.k8s.io/v1", ""},
	{"authorization.k8s.io/v1", ""},
	{"autoscaling/v1", ""},
	{"autoscaling/v2", "v1.23.0"},
	{"batch/v1", ""},
	{"certificates.k8s.io/v1", "v1.19.0"},
	{"coordination.k8s.io/v1", ""},
	{"discovery.k8s.io/v1", "v1.21.0"},
	{"events.k8s.io/v1", "v1.19.0"},
	{"flowcontrol.apiserver.k8s.io/v1", "v1.29.0"},
	{"networking.k8s.io/v1", ""},
	{"node.k8s.io/v1", "v1.20.0"},
	{"policy/v1", "v1.21.0"},
	{"rbac.authorization.k8s.io/v1", ""},
	{"scheduling.k8s.io/v1", ""},
	{"storage.k8s.io/v1", ""},
}

// builtinAPIs returns the group/versions, and group/version/kinds, that
// Kubernetes target serves, as far as the rules and stableAPIs tell: an
// API removed in or before target is not served, a replacement is served
// from the release it became available in.
func builtinAPIs(rules *deprecation.RuleSet, target deprecation.Version) map[string]bool {
	served := make(map[string]bool)
	for _, a := range stableAPIs {
		if a.since == "" || !target.Less(deprecation.MustParseVersion(a.since)) {
			served[a.apiVersion] = true
		}
	}
	// A replacement API may itself be removed later (extensions/v1beta1
	// → policy/v1beta1 → policy/v1): what a rule removes stays removed.
	removed := make(map[string]bool)
	var k8s []deprecation.Rule
	for _, r := range rules.Rules() {
		if r.Component != "" && r.Component != deprecation.ComponentKubernetes {
			continue
		}
		k8s = append(k8s, r)
		if !r.RemovedIn.IsZero() && !target.Less(r.RemovedIn) {
			removed[r.APIVersion+"/"+r.Kind] = true
		}
	}
	add := func(apiVersion, kind string) {
		if removed[apiVersion+"/"+kind] {
			return
		}
		served[apiVersion] = true
		if kind != "" {
			served[apiVersion+"/"+kind] = true
		}
	}
	for _, r := range k8s {
		add(r.APIVersion, r.Kind)
		if r.ReplacementAvailable(target) {
			add(r.ReplacementAPI, r.Kind)
		}
	}
	return served
}

// isCRD reports whether o is a CustomResourceDefinition.
func isCRD(o Object) bool {
	return o.Kind == "CustomResourceDefinition" && o.group() == "apiextensions.k8s.io"
}

// addCRD adds the group/versions and group/version/kinds a CRD serves.
func addCRD(apis map[string]bool, o Object) {
	group, kind := str(o.Body, "spec", "group"), str(o.Body, "spec", "names", "kind")
	if group == "" {
		return
	}
	versions := list(o.Body, "spec", "versions")
	if v := str(o.Body, "spec", "version"); v != "" { // apiextensions.k8s.io/v1beta1
		versions = append(versions, map[string]any{"name": v})
	}
	for _, v := range versions {
		name := str(v, "name")
		if served, ok := v["served"].(bool); name == "" || (ok && !served) {
			continue
		}
		apis[group+"/"+name] = true
		if kind != "" {
			apis[group+"/"+name+"/"+kind] = true
		}
	}
}

// servedAPIs returns what HelmRelease charts see as served: the target's
// built-in APIs, the CRDs in the repository and its build output, and
// Options.APIVersions, sorted.
func (b *builder) servedAPIs() chartutil.VersionSet {
	apis := builtinAPIs(b.checker.Rules(), b.checker.Target())
	b.mu.Lock()
	maps.Copy(apis, b.crds)
	b.mu.Unlock()
	for _, a := range b.opts.APIVersions {
		if a = strings.TrimSpace(a); a != "" {
			apis[a] = true
		}
	}
	return slices.Sorted(maps.Keys(apis))
}
