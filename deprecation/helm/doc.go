// Package helm checks the deployed Helm v3 releases of a cluster for
// deprecated and removed Kubernetes APIs: it implements
// deprecation.ReleaseScanner over Helm's storage.
//
// Helm v3 stores each revision of a release in a Secret (or, with the
// configmap driver, a ConfigMap) named sh.helm.release.v1.<name>.v<rev>,
// labelled owner=helm, name, status and version, whose "release" value is
// base64(gzip(JSON of the release)). The Scanner LISTs only the objects
// labelled owner=helm,status=deployed, a page at a time with
// Limit/Continue (the API server pages, and superseded revisions are never
// read), decodes each into the few fields it needs (name, revision,
// status, chart metadata, manifest, hooks' manifests; never the chart's
// templates or values into Go values) and checks the manifest and the
// hooks with a deprecation.Checker, on a bounded pool of workers while the
// next page is fetched. Peak memory is bounded by the page size and the
// number of workers, not by the number of releases, except for the
// findings themselves.
//
// When Helm left several revisions of a release labelled deployed (an
// interrupted upgrade), the highest revision wins, even when it is the
// one that cannot be decoded. A storage object that cannot be decoded
// (bad base64, gzip or JSON, or no data) becomes a Release with Err set
// and the scan goes on.
// Without a fixed target, the cluster's version is read on every scan.
//
// # Concurrency
//
// A Scanner is safe for concurrent use; each Scan blocks until done and
// owns the goroutines it starts. Render returns when its context is done,
// but Helm's template engine cannot be stopped: a render cut off runs to
// its end on the goroutine Render started.
//
// The package does not log (Helm's own log output is discarded) and
// exports no metrics: errors and corrupt releases are in what Scan and
// Render return.
//
// # Usage
//
//	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
//	client, err := kubernetes.NewForConfig(cfg)
//	s, err := helm.New(client, helm.Options{})
//	rep, err := deprecation.ScanReleases(ctx, s, nil)
//	rep.Report().WriteTable(os.Stdout)
package helm
