package machines

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"
)

// Errors returned by providers. Callers test them with errors.Is; providers
// wrap them with context.
var (
	// ErrNotFound is returned by Remove and Get for an ID the provider does
	// not own.
	ErrNotFound = errors.New("machines: machine not found")
	// ErrStartTimeout is returned by Create when the machine is not running
	// (or, when the Spec asks, not healthy) within its start timeout. The
	// half-started machine has been removed.
	ErrStartTimeout = errors.New("machines: machine did not start in time")
	// ErrExited is returned by Create when the machine exits while starting.
	ErrExited = errors.New("machines: machine exited while starting")
	// ErrInvalidSpec is returned by Create for a Spec the provider cannot run.
	ErrInvalidSpec = errors.New("machines: invalid spec")
	// ErrClosed is returned by every call on a provider after Close.
	ErrClosed = errors.New("machines: provider closed")
)

// Defaults used when a Spec or an Options field is zero.
const (
	// DefaultStartTimeout bounds Create when Spec.StartTimeout is zero.
	DefaultStartTimeout = 30 * time.Second
	// DefaultStopTimeout is how long Remove waits for a graceful stop before
	// it kills the machine.
	DefaultStopTimeout = 10 * time.Second
	// DefaultHealthPath is the conventional health endpoint (the linter's
	// and the fleet instances' wire contracts use it).
	DefaultHealthPath = "/health"
	// DefaultPort is the service port inside a container.
	DefaultPort = 8080
)

// Labels set by providers on every machine they create. User labels may not
// use the io.fleetkit. prefix.
const (
	LabelPrefix   = "io.fleetkit."
	LabelManaged  = LabelPrefix + "managed"  // always "true"
	LabelProvider = LabelPrefix + "provider" // the provider's Name option
	LabelPort     = LabelPrefix + "port"     // service port inside the machine
)

// Spec describes a machine to create: any service that answers HTTP on a
// port. It knows nothing of what runs; whoever creates machines says what
// they are through Labels (rollout records a linter's language and
// version there). Providers read the fields that apply to them: Image for
// docker and kubernetes, Command for process.
type Spec struct {
	// Name is a short readable name of what runs ("python-1.0"); providers
	// use it in the names they give machines (containers, Pods), with a
	// random suffix. Empty means "machine".
	Name string

	// Image is the container image (docker, kubernetes).
	Image string
	// Command is the program to run (process provider): a path, or a name
	// looked up in PATH.
	Command string
	// Args are the arguments of Command, or the container command (appended
	// to the image's entrypoint; nil keeps the image's own). In Args and
	// Env values, {addr} is replaced by the address the service must
	// listen on and {port} by its port; see Expand.
	Args []string
	// Env is added to the machine's environment.
	Env map[string]string

	// Port is the service port inside a container (docker; 0 means
	// DefaultPort). The process provider picks a free loopback port when 0.
	Port int

	// Labels are recorded with the machine, returned with it and matched
	// by List's selector, so a restarted manager recognises what it
	// created. Keys may not start with LabelPrefix.
	Labels map[string]string

	// StartTimeout bounds Create; 0 means DefaultStartTimeout.
	StartTimeout time.Duration
	// HealthPath, when set, makes Create wait until GET HealthPath answers
	// 200; when empty Create returns once the machine is running.
	HealthPath string
}

// Validate checks the fields every provider needs.
func (s Spec) Validate() error {
	if s.Port < 0 || s.Port > 65535 {
		return fmt.Errorf("%w: port %d out of range", ErrInvalidSpec, s.Port)
	}
	if s.StartTimeout < 0 {
		return fmt.Errorf("%w: negative start timeout", ErrInvalidSpec)
	}
	if s.HealthPath != "" && !strings.HasPrefix(s.HealthPath, "/") {
		return fmt.Errorf("%w: health path %q must start with /", ErrInvalidSpec, s.HealthPath)
	}
	for k := range s.Labels {
		if k == "" {
			return fmt.Errorf("%w: empty label key", ErrInvalidSpec)
		}
		if strings.HasPrefix(k, LabelPrefix) {
			return fmt.Errorf("%w: label %q uses the reserved prefix %s", ErrInvalidSpec, k, LabelPrefix)
		}
	}
	return nil
}

// Timeout returns StartTimeout or its default.
func (s Spec) Timeout() time.Duration {
	if s.StartTimeout > 0 {
		return s.StartTimeout
	}
	return DefaultStartTimeout
}

// Expand returns Args and Env with the placeholders replaced: {addr} by
// addr, {port} by its port. Nil Args stay nil.
func (s Spec) Expand(addr string) (args []string, env map[string]string) {
	port := addr
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		port = addr[i+1:]
	}
	r := strings.NewReplacer("{addr}", addr, "{port}", port)
	if s.Args != nil {
		args = make([]string, len(s.Args))
		for i, a := range s.Args {
			args[i] = r.Replace(a)
		}
	}
	env = make(map[string]string, len(s.Env))
	for k, v := range s.Env {
		env[k] = r.Replace(v)
	}
	return args, env
}

// MachineLabels returns the labels a provider records for a machine of s:
// the user labels plus the managed, provider and port labels.
func (s Spec) MachineLabels(provider string, port int) map[string]string {
	l := make(map[string]string, len(s.Labels)+3)
	maps.Copy(l, s.Labels)
	l[LabelManaged] = "true"
	l[LabelProvider] = provider
	if port > 0 {
		l[LabelPort] = strconv.Itoa(port)
	}
	return l
}

// State says whether a machine is serving.
type State string

// States of a machine. Anything a provider cannot call running (created,
// paused, dead, exited) is reported as StateExited: it does not serve.
const (
	StateRunning State = "running"
	StateExited  State = "exited"
)

// Machine is one running instance of a service.
type Machine struct {
	// ID names the machine to its provider (a container ID, a process key).
	ID string
	// Address is where the service answers, "ip:port". It may be empty for
	// an exited machine.
	Address string
	// Labels are all labels of the machine, including the io.fleetkit. ones.
	Labels    map[string]string
	CreatedAt time.Time
	State     State
	// Reason says what is wrong with the machine as its provider sees it,
	// empty when nothing is: why it does not serve (kubernetes:
	// "CrashLoopBackOff (last exit: OOMKilled, exit code 137)", "Evicted:
	// ...", "ErrImagePull: ...") or why it is not healthy although running
	// ("NotReady: ..."). Callers show it; the State says whether it serves.
	Reason string
}

// URL returns "http://" + Address.
func (m Machine) URL() string { return "http://" + m.Address }

// Provider creates, removes, lists and gets machines. MachineProvider is
// its role in the design; implementations are machines/process,
// machines/docker, machines/kubernetes and machines/machinestest, and
// machinestest.RunConformance checks them all alike.
//
// Implementations are safe for concurrent use. Every method may block on
// I/O and honours ctx.
type Provider interface {
	// Create starts a machine from spec and returns it once it is running
	// with its address, and, when spec.HealthPath is set, once that path
	// answers 200. On failure nothing is left behind: a half-started machine
	// is removed. Errors wrap ErrInvalidSpec, ErrStartTimeout or ErrExited
	// where they apply.
	Create(ctx context.Context, spec Spec) (Machine, error)
	// Remove stops the machine gracefully, kills it after the provider's
	// stop timeout, and forgets it. It returns once the machine is gone; an
	// ID the provider does not own gives ErrNotFound. Removing a machine that
	// has already exited is not an error.
	Remove(ctx context.Context, id string) error
	// List returns the machines this provider owns that sel matches (all
	// of them when sel is empty), running or exited, oldest first. A
	// provider selects where it can (docker: the engine's label filters;
	// kubernetes: its informer's cache), so a caller gets what it asks
	// for, not the whole fleet to filter. Docker and kubernetes find
	// machines from their labels, so a new provider with the same name
	// lists what an old one created.
	List(ctx context.Context, sel Selector) ([]Machine, error)
	// Get returns the machine id, running or exited, as List would;
	// ErrNotFound when the provider does not own it.
	Get(ctx context.Context, id string) (Machine, error)
}

// Selector selects machines by label equality: it matches a machine whose
// labels include every key and value of the Selector. A nil or empty
// Selector matches every machine.
type Selector map[string]string

// Matches reports whether labels include every key and value of s.
func (s Selector) Matches(labels map[string]string) bool {
	for k, v := range s {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Event reports that a machine exited without being removed.
type Event struct {
	// Machine is the machine as last known; Address may be empty.
	Machine Machine
	// ExitCode is the process exit code, -1 when unknown (killed by a signal).
	ExitCode int
	// Err describes the exit; never nil.
	Err  error
	Time time.Time
}

// Watcher is implemented by providers that report machines exiting on
// their own (a crash, an external kill). Exits caused by Remove on the same
// provider value are not reported.
//
// Events wake a reconciler up; List stays the truth (an event can be missed
// while no Watch call runs).
type Watcher interface {
	// Watch calls fn, one event at a time, for every machine that exits,
	// until ctx is done; it then returns ctx.Err(). It returns earlier with
	// an error when watching fails (the Docker event stream broke). Several
	// Watch calls may run at once; each sees every event from its start.
	Watch(ctx context.Context, fn func(Event)) error
}
