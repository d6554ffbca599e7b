// Package gitops builds a Flux GitOps repository offline, in dependency
// order and in parallel, and checks what it renders for deprecated APIs.
//
// Build reads the repository once, finds the Flux Kustomizations (and the
// HelmRelease, HelmRepository, GitRepository, OCIRepository, ConfigMap and
// Secret objects next to them), and builds each Kustomization's spec.path
// in-process with kustomize over an in-memory copy of the repository, so
// nothing is ever written into it: a path without a kustomization.yaml is
// built from one generated in memory that lists every manifest in the
// tree. postBuild.substitute and substituteFrom are applied with Flux's
// ${var} and ${var:=default} syntax. A Kustomization's own kustomize
// settings (targetNamespace, namePrefix, nameSuffix, patches, images,
// components) are written into its path's kustomization as
// kustomize-controller does, and commonMetadata is set on every object.
// dependsOn orders the builds; Kustomizations found in build output join
// the graph; a broken Kustomization fails itself and its dependants, not
// the run; a cycle is reported on each node in it.
//
// A Kustomization is identified as Flux applies it: when the build of
// another Kustomization renders its file (the one whose spec.path holds
// it), the node is the rendered object — renamed by that build's
// namePrefix or namespace, with that build's variables substituted — and
// waits for that build; the file as read is used only when no build
// renders it. dependsOn names the rendered names.
//
// HelmReleases found in build output become nodes too, ordered after the
// Kustomization that holds them and their dependsOn. A chart in the
// repository, or in a GitRepository mapped to a directory by
// Options.Sources, is rendered in-process with the Helm SDK, with
// spec.values and valuesFrom (ConfigMap or Secret, valuesKey,
// targetPath) and the Kubernetes version set to the target, so charts
// that branch on it render what the target would get; likewise
// .Capabilities.APIVersions holds what the target serves (the built-in
// APIs the deprecation rules have not removed by then), the CRDs of the
// repository and Options.APIVersions. HelmReleases render after every
// Kustomization is built. Remote charts are not fetched: they are
// reported as skipped with ErrRemoteChart.
//
// Each node's result holds its objects (CRDs and Secrets left out unless
// asked for), the images they use and the deprecation findings of one
// shared deprecation.Checker.
//
// Concurrency: Build is safe to call from several goroutines. Kustomize
// builds run in parallel, each over its own view of the in-memory
// repository; only a repository with a kustomization that sets a custom
// OpenAPI schema (process-wide state in kyaml) builds one at a time.
//
// Usage:
//
//	res, err := gitops.Build(ctx, gitops.Options{Path: "./clusters/prod"})
//	if err != nil {
//		return err
//	}
//	for _, n := range res.Nodes {
//		fmt.Println(n.ID, n.Status, n.Images, len(n.Findings))
//	}
package gitops
