// Package deploy holds fleetkit's deployment manifests: the Helm chart
// linter-fleet runs the linter fleet on Kubernetes — the load balancer
// behind a Service, and the machine manager with -provider kubernetes,
// whose linters are Pods it creates, watches and deletes in its own
// namespace (a Role limited to Pods).
//
//	scripts/build-images.sh
//	helm install fleet deploy/linter-fleet --namespace linters --create-namespace
//
// The package has no Go API: its tests lint and render the chart, and
// install it into a real single-node cluster (internal/kubetest).
package deploy
