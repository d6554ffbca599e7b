// Command gitops builds a Flux GitOps repository locally, with
// flux-local's commands and flags, so its users' CI scripts carry over:
//
//	gitops get ks|hr|cluster|images [NAME] [flags]
//	gitops build ks|hr|all [NAME] [flags]
//	gitops diff ks|hr|images [NAME] [--path-orig DIR | --branch-orig REF] [flags]
//	gitops test [flags]
//
// Everything runs in-process (kustomize and the Helm SDK, over an
// in-memory copy of the repository), in dependency order and in
// parallel; building one Kustomization or HelmRelease builds only what it
// needs. The exit code is 0 on success, 1 on an error or a failed test,
// 2 on bad usage.
package main
