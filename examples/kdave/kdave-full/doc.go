// Command kdave-full is kdave with everything that needs Helm, client-go
// and kustomize: Helm charts rendered for the target, the cluster's Helm
// releases and the apiVersions its live objects were written with
// (check -cluster), Flux repositories built offline (check -flux), and the
// Prometheus exporter (serve). kdave runs it for those commands; it takes
// the same command lines as kdave.
//
//	kdave-full check [-target v1.NN] [flags] PATH... | -cluster | -flux PATH
//	kdave-full serve [-addr :8000] [flags]
package main
