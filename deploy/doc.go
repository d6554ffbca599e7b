// Package deploy holds fleetkit's deployment manifests, as Helm charts:
//
//   - linter-fleet runs the linter fleet on Kubernetes — the load balancer
//     behind a Service, and the machine manager with -provider kubernetes,
//     whose linters are Pods it creates, watches and deletes in its own
//     namespace (a Role limited to Pods).
//   - kdave runs `kdave serve`, the exporter of the deployed Helm releases'
//     deprecated and removed APIs, with a ClusterRole that only lists the
//     release Secrets, and optional ServiceMonitor, PrometheusRule alerts
//     and Grafana dashboard.
//   - fleet-manager runs the fleet manager (configuration in a ConfigMap,
//     database URL and keys from Secrets, no Kubernetes rights), and
//     fleet-agent the agent of one data-plane cluster (a Role in the
//     instances' namespace only).
//
// Build the images, then install:
//
//	scripts/build-images.sh
//	helm install fleet deploy/linter-fleet --namespace linters --create-namespace
//	helm install kdave deploy/kdave --namespace monitoring --create-namespace
//
// The package has no Go API: its tests lint and render the charts, and
// install them into a real single-node cluster (internal/kubetest).
package deploy
