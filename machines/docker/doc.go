// Package docker is the machines.Provider of the design: each machine is
// a Docker container, driven through github.com/docker/docker/client with
// the engine named by the environment (DOCKER_HOST, ...) and API version
// negotiation.
//
// Create runs Spec.Image with Spec.Args as the container command (by
// default the linter's "-language L -version V -addr 0.0.0.0:PORT"),
// labelled io.fleetkit.managed=true plus the provider name, language,
// version, creation time and the Spec's labels. The service port
// (Spec.Port, default 8080) is published on 127.0.0.1 with an ephemeral
// host port — or, with Options.Network, the container joins that network
// and its address is its IP there. Create returns once the container runs
// and, with Spec.HealthPath, answers 200; a container that exits or does
// not get ready within the start timeout is removed, and the error quotes
// its last log lines.
//
// Remove stops the container with the configured timeout and removes it
// with its anonymous volumes. List finds the containers by label filter,
// so a new Provider with the same Name rediscovers what an old one created.
// Watch follows the engine's event stream and reports containers that die.
//
// BuildImage builds an image from a tar context with the classic builder
// (no registry is needed for FROM scratch) and fails on the error messages
// the engine puts in the build's JSON output stream.
//
// # Concurrency
//
// A Provider is safe for concurrent use. Every method calls the engine
// and honours its ctx; Watch blocks until its ctx is done or the event
// stream breaks.
//
// # Usage
//
//	p, err := docker.New(docker.Options{Name: "machine-manager", StopTimeout: 10 * time.Second})
//	if err != nil { ... }
//	defer p.Close()
//	m, err := p.Create(ctx, machines.Spec{
//		Name: "python-1.0", Image: "fleetkit/linter:1.0",
//		Args: linter.Args("python", "1.0", "{addr}"), HealthPath: "/health",
//	})
//	// m.Address is 127.0.0.1:<ephemeral port>
package docker
