// Command kdave finds Kubernetes objects that use deprecated or removed
// API versions, as pluto does, with pluto's flags and exit codes.
//
//	kdave check [flags] PATH...       files, directories, - for stdin
//	kdave list-versions [flags]       the rules
//	kdave detect-files -d DIR ...     pluto's commands, pluto's output
//
// This binary links only package deprecation, so that a check starts in a
// few megabytes. Checking Helm charts, the cluster (-cluster), Flux
// repositories (-flux) and the exporter (serve) need Helm, client-go and
// kustomize: kdave runs the command in kdave-full (go build
// ./examples/kdave/kdave-full), found in $KDAVE_FULL, next to kdave, or on
// PATH, with the same arguments. The exit code is pluto's: 0 nothing found,
// 1 error, 2 deprecated API, 3 removed API, 4 no replacement API in the
// target; the highest that applies wins.
package main
