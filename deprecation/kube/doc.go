// Package kube finds the deprecated and removed APIs that a cluster's live
// objects were written with, as pluto's detect-api-resources does.
//
// The API server converts every object to whatever version a client asks
// for, so an object's own apiVersion says nothing about how it was
// written. Two records do: the kubectl.kubernetes.io/last-applied-
// configuration annotation that kubectl apply leaves (the manifest as
// applied), and the object's managed fields, where the server notes the
// apiVersion each manager wrote fields with. Scanner lists every listable
// resource of the cluster, metadata only (no spec, no Secret data), page
// by page, and checks both records of each object with a
// deprecation.Checker. A manager that wrote an object through
// flowcontrol.apiserver.k8s.io/v1beta3 is found after the upgrade that
// removed it, although the object now reads as v1.
//
// Scanner is safe for concurrent use; Scan blocks until the scan is done.
//
// Logging: the API server answers a LIST of a deprecated API with a
// warning, and a scan lists every resource; New sends these warnings to
// Options.Logger at debug level (nil means slog.Default()) instead of
// client-go's default, which prints them on stderr.
//
//	s, err := kube.New(restConfig, kube.Options{})
//	if err != nil {
//		return err
//	}
//	rep, err := s.Scan(ctx, checker)
//	if err != nil {
//		return err
//	}
//	rep.Write(os.Stdout, deprecation.FormatWide)
package kube
