// Package cli is kdave's command line, shared by its two binaries: kdave,
// which checks manifests (files, directories, stdin) and links nothing but
// package deprecation, so that it starts small; and kdave-full, which adds
// what needs Helm, client-go and kustomize (charts rendered for the target,
// the cluster's Helm releases and live objects, Flux repositories, the
// exporter). kdave hands a command that needs those to kdave-full, with the
// same arguments.
//
// The check command takes pluto's flags as well as kdave's, before or
// after the paths, and pluto's commands are accepted as aliases
// (detect-files, detect, detect-helm, detect-api-resources,
// detect-all-in-cluster, list-versions).
//
// Run is not safe to call concurrently with itself on the same streams;
// each call blocks until the command is done.
package cli
