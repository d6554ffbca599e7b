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
// Kustomization that holds them and their dependsOn. They are rendered
// in-process by deprecation/helm's renderer (the one `kdave check chart/`
// uses), with spec.values and valuesFrom (ConfigMap or Secret, valuesKey,
// targetPath, optional) merged as Flux does, spec.postRenderers' kustomize
// patches and images applied, and the Kubernetes version set to the
// target, so charts that branch on it render what the target would get;
// likewise .Capabilities.APIVersions holds what the target serves (the
// built-in APIs the deprecation rules have not removed by then), the CRDs
// of the repository and Options.APIVersions. HelmReleases render after
// every Kustomization is built.
//
// Charts come from the repository or a GitRepository, Bucket or
// ExternalArtifact mapped to a directory by Options.Sources, or are
// remote: a HelmRepository (an HTTP(S) chart repository, or OCI), an
// OCIRepository or a HelmChart named by spec.chartRef. With
// Options.FetchCharts remote charts are fetched with the Helm SDK, each
// (URL, chart, version) once per run however many HelmReleases use it
// (Cache shares that, and renders with equal inputs, between Builds);
// without it they are looked for in Options.ChartCache only and otherwise
// reported as skipped with ErrRemoteChart.
//
// The repository is read from disk or, with Options.FS, from any fs.FS (a
// git revision: see the gitrepo subpackage), into memory, in parallel.
// What a build may read is that copy only: spec.path, kustomize resources
// and chart paths cannot leave it, symlinks are not followed, files above
// 32 MiB are left out, and a YAML file whose aliases expand past the
// decoder's limit is refused (kustomize itself expands aliases without
// one). A chart that renders for longer than Options.RenderTimeout fails
// with ErrRenderTimeout.
//
// Each node's result holds its objects (CRDs and Secrets left out unless
// asked for), the images they use and the deprecation findings of one
// shared deprecation.Checker.
//
// Compare diffs the nodes of two builds (the working tree and another
// version) object by object, as flux-local's diff does, and writes the
// result as a unified diff, or as YAML or JSON for bots; CompareImages
// lists the images that changed. MarshalObject writes an object as YAML in
// a stable key order, so equal objects diff as equal. Result.Served says
// whether the target serves an apiVersion and kind.
//
// Concurrency: Build is safe to call from several goroutines. Kustomize
// builds run in parallel, each over its own view of the in-memory
// repository; only a repository with a kustomization that sets a custom
// OpenAPI schema (process-wide state in kyaml) builds one at a time.
//
// The package does not log: every problem is reported on its node.
//
// A build allocates heavily and its garbage is short-lived: a program that
// runs one build and exits spends about a third less CPU, and two cores
// build about 1.8× faster than one instead of 1.3×, if it lets the
// collector wait for a large heap (debug.SetGCPercent(-1) with
// debug.SetMemoryLimit), as examples/gitops does (BENCHMARKS.md). The
// package leaves that choice to the program.
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
