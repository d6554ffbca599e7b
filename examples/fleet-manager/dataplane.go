package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"syscall"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/dataplane"
	"github.com/fleetkit/fleetkit/fleet/inmem"
	"github.com/fleetkit/fleetkit/machines"
	"github.com/fleetkit/fleetkit/machines/docker"
	"github.com/fleetkit/fleetkit/machines/process"
)

// Data plane choices of -provider.
const (
	providerProcess = "process"
	providerDocker  = "docker"
	providerMemory  = "memory"
)

// DefaultInstanceImage is the image of the per-instance service on Docker:
// this binary FROM scratch, built by scripts/build-images.sh.
const DefaultInstanceImage = "fleetkit/fleet-manager:latest"

// dataPlaneOptions says what runs the instances.
type dataPlaneOptions struct {
	// Provider is process, docker or memory.
	Provider string
	// Image is the per-instance service's image (docker).
	Image string
	// Name prefixes the machine providers' names: on Docker a restarted
	// manager with the same Name adopts the containers it left running.
	Name string
}

// newDataPlane returns the data plane of o for the clusters: one machine
// provider per cluster, each running the per-instance service (this binary's
// "instance" subcommand) as one machine per instance. stop closes what
// the data plane owns: the process provider stops its machines, since they
// cannot outlive it; Docker containers keep running for the next start.
func newDataPlane(ctx context.Context, o dataPlaneOptions, kind fleet.Kind, clusters []cluster.Cluster) (_ fleet.DataPlane, stop func(), _ error) {
	if o.Provider == providerMemory {
		dp := inmem.NewDataPlane(inmem.DataPlaneOptions{Listen: true})
		return dp, func() { _ = dp.Close() }, nil
	}
	if len(clusters) == 0 {
		return nil, nil, fmt.Errorf("-provider %s: the config declares no clusters to run instances on", o.Provider)
	}
	args := []string{"instance", "-addr", "{addr}"}
	var (
		command string
		newOne  func(name string) (machines.Provider, error)
		closers []func()
	)
	closeAll := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	switch o.Provider {
	case providerProcess:
		exe, err := os.Executable()
		if err != nil {
			return nil, nil, fmt.Errorf("-provider process runs this binary's instance subcommand: %w", err)
		}
		command = exe
		args = append(args, "-exit-with-parent") // where there is no parent-death signal
		var parentDeath syscall.Signal
		if runtime.GOOS == "linux" {
			parentDeath = syscall.SIGKILL
		}
		newOne = func(name string) (machines.Provider, error) {
			// The instances die with the manager at once, even when it is
			// killed: a replica that takes over cannot adopt processes, so
			// any survivor would be an orphan serving on a port no row
			// records.
			p, err := process.New(process.Options{Name: name, ParentDeathSignal: parentDeath})
			if err == nil {
				closers = append(closers, func() { _ = p.Close() })
			}
			return p, err
		}
	case providerDocker:
		cli, err := dockerClient(ctx, o.Image)
		if err != nil {
			return nil, nil, err
		}
		closers = append(closers, func() { _ = cli.Close() })
		newOne = func(name string) (machines.Provider, error) {
			p, err := docker.New(docker.Options{Name: name, Client: cli})
			if err == nil {
				closers = append(closers, func() { _ = p.Close() })
			}
			return p, err
		}
	default:
		return nil, nil, fmt.Errorf("-provider %q: want process, docker or memory", o.Provider)
	}
	providers := make(map[string]machines.Provider, len(clusters))
	for _, c := range clusters {
		p, err := newOne(fmt.Sprintf("%s-%s-%s", o.Name, kind.Name, c.ID))
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		providers[c.ID] = p
	}
	dp, err := dataplane.New(dataplane.Options{
		Providers: providers,
		Spec: func(i fleet.Instance) machines.Spec {
			return machines.Spec{
				Name:       i.Kind,
				Command:    command,
				Image:      o.Image,
				Args:       append(slices.Clip(args), "-id", i.ID, "-kind", i.Kind, "-name", i.Name), // a copy: specs are built concurrently
				HealthPath: instanceHealthPath(i),
			}
		},
		Probe: dataplane.HTTPProbe(instanceHealthPath, 0),
	})
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	return dp, closeAll, nil
}

// instanceHealthPath is the health check of an instance's service that
// only that instance answers 200.
func instanceHealthPath(i fleet.Instance) string { return "/health/" + i.ID }

// dockerClient connects to the engine and checks that the instance image
// is there, so that a missing image fails the start rather than every
// instance.
func dockerClient(ctx context.Context, image string) (*client.Client, error) {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, fmt.Errorf("-provider docker: %w", err)
	}
	// Negotiate before any concurrent use: the client negotiates lazily on
	// its first request, and two first requests at once race inside it.
	cli.NegotiateAPIVersion(ctx)
	if _, err := cli.ImageInspect(ctx, image); err != nil {
		_ = cli.Close()
		if cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("-provider docker: image %s is not on the engine (build it with scripts/build-images.sh, or set -instance-image)", image)
		}
		return nil, fmt.Errorf("-provider docker: %w", err)
	}
	return cli, nil
}
