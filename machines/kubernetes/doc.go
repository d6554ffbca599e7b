// Package kubernetes is a machines.Provider whose machines are Pods, on
// any Kubernetes cluster, through client-go.
//
// One machine is one Pod in the provider's namespace, named after the
// Spec's Name (fleetkit-python-1-0-1a2b3c), labelled with the
// Spec's labels and the machines.Label* ones — io.fleetkit.provider is the
// owner's label: a new Provider with the same Name adopts the Pods of an
// old one, as a restarted manager must. Its one container runs Spec.Image
// with Spec's arguments (appended to the image's entrypoint, as Docker
// does) and listens on Spec.Port (machines.DefaultPort), probed for
// readiness on Spec.HealthPath. It runs locked down: as a non-root user,
// with a read-only root filesystem, no privilege escalation, every
// capability dropped, the runtime's seccomp profile and no service account
// token; with the provider's resource requests and limits. The address of
// a machine is its Pod IP and port: callers must reach Pod IPs (run in the
// cluster, or on a node).
//
//   - Create returns when the kubelet reports the Pod Ready, found by
//     watching (the informer), never by polling; a missing image or a
//     container that exits while starting fails it at once, and the Pod is
//     deleted.
//   - Remove deletes the Pod with the provider's grace period and returns
//     when it is gone.
//   - List and Get read the informer's cache of the provider's Pods
//     (selected by label on the server; List's selector is matched in
//     the cache, without a request). Pods that do not serve show as
//     machines.StateExited with the kubelet's reason in Machine.Reason:
//     "CrashLoopBackOff: ... (last exit: OOMKilled, exit code 137)",
//     "Evicted: The node was low on resource: memory...", "ErrImagePull:
//     ...".
//   - Watch reports each exit of a machine's container (the kubelet
//     restarts it: RestartPolicy Always), a failed Pod (evicted) and a Pod
//     deleted by someone else.
//
// The tests run on a real single-node cluster (internal/kubetest) with the
// real fleetkit/linter images, and pass the conformance suite of
// machines/machinestest like the process and Docker providers.
//
// # Concurrency
//
// A Provider is safe for concurrent use; its methods block on I/O and
// honour their ctx. Close stops its informer; the Pods keep running.
//
// # Usage
//
//	cfg, err := rest.InClusterConfig() // or clientcmd for a kubeconfig
//	client, err := clientset.NewForConfig(cfg)
//	p, err := kubernetes.New(client, kubernetes.Options{Name: "linters", Namespace: "fleet"})
//	if err != nil { ... }
//	defer p.Close()
//	m, err := p.Create(ctx, machines.Spec{
//		Name:       "python-1.0",
//		Image:      "fleetkit/linter:1.0",
//		Args:       linter.Args("python", "1.0", "{addr}"),
//		HealthPath: machines.DefaultHealthPath,
//	})
//	// m.Address is "10.244.0.7:8080"
package kubernetes
