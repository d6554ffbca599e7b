// Package helmtest puts Helm releases into a real cluster for the
// integration tests of deprecation/helm and of the kdave exporter: charts
// built in code, installed and upgraded with the Helm SDK (action.Install,
// action.Upgrade), plus the damage real clusters have (a corrupt release
// Secret, two revisions labelled deployed).
//
// A Kubernetes 1.37 API server refuses objects of removed APIs, so charts
// with removed APIs are installed with the Helm SDK over the real storage
// (release Secrets in the cluster) but with Helm's printing kube client,
// which renders and records without applying: the stored release is the
// one `helm install` would store on an older cluster. Charts with served
// APIs, including resource.k8s.io/v1beta1 (deprecated in 1.35, removed in
// 1.38; the server must run with
// --runtime-config=resource.k8s.io/v1beta1=true), are fully installed.
//
// Populate fills a cluster once per test binary with the releases of
// Releases and Corrupt; AbandonedRenders is the leak-check option of test
// binaries that cut a render off.
package helmtest
