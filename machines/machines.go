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
	// ErrNotFound is returned by Remove for an ID the provider does not own.
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
	// DefaultHealthPath is the health endpoint of the linter wire contract.
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
	LabelLanguage = LabelPrefix + "language"
	LabelVersion  = LabelPrefix + "version"
	LabelPort     = LabelPrefix + "port" // service port inside the machine
)

// Spec describes a machine to create. Providers read the fields that apply
// to them: Image for docker, Command for process.
type Spec struct {
	// Language and Version of the service; recorded as labels and available
	// to Args and Env as {language} and {version}.
	Language string
	Version  string

	// Image is the container image (docker provider).
	Image string
	// Command is the program to run (process provider): a path, or a name
	// looked up in PATH.
	Command string
	// Args are the arguments of Command, or the container command (appended
	// to the image's entrypoint). Nil means DefaultArgs, the linter's CLI.
	// In Args and Env values, {addr} is replaced by the address the service
	// must listen on, {port} by its port, {language} and {version} by the
	// fields above; see Expand.
	Args []string
	// Env is added to the machine's environment.
	Env map[string]string

	// Port is the service port inside a container (docker; 0 means
	// DefaultPort). The process provider picks a free loopback port when 0.
	Port int

	// Labels are recorded with the machine and returned by List, so a
	// restarted manager can recognise what it created. Keys may not start
	// with LabelPrefix.
	Labels map[string]string

	// StartTimeout bounds Create; 0 means DefaultStartTimeout.
	StartTimeout time.Duration
	// HealthPath, when set, makes Create wait until GET HealthPath answers
	// 200; when empty Create returns once the machine is running.
	HealthPath string
}

// DefaultArgs is the linter service's command line, used when Spec.Args is nil.
func DefaultArgs() []string {
	return []string{"-language", "{language}", "-version", "{version}", "-addr", "{addr}"}
}

// Validate checks the fields every provider needs.
func (s Spec) Validate() error {
	if s.Language == "" {
		return fmt.Errorf("%w: language is empty", ErrInvalidSpec)
	}
	if s.Version == "" {
		return fmt.Errorf("%w: version is empty", ErrInvalidSpec)
	}
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

// Expand returns Args (or DefaultArgs) and Env with the placeholders
// replaced: {addr} by addr, {port} by its port, {language} and {version} by
// the Spec's fields.
func (s Spec) Expand(addr string) (args []string, env map[string]string) {
	port := addr
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		port = addr[i+1:]
	}
	r := strings.NewReplacer("{addr}", addr, "{port}", port, "{language}", s.Language, "{version}", s.Version)
	src := s.Args
	if src == nil {
		src = DefaultArgs()
	}
	args = make([]string, len(src))
	for i, a := range src {
		args[i] = r.Replace(a)
	}
	env = make(map[string]string, len(s.Env))
	for k, v := range s.Env {
		env[k] = r.Replace(v)
	}
	return args, env
}

// MachineLabels returns the labels a provider records for a machine of s:
// the user labels plus the managed, provider, language, version and port
// labels.
func (s Spec) MachineLabels(provider string, port int) map[string]string {
	l := make(map[string]string, len(s.Labels)+5)
	maps.Copy(l, s.Labels)
	l[LabelManaged] = "true"
	l[LabelProvider] = provider
	l[LabelLanguage] = s.Language
	l[LabelVersion] = s.Version
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
	Address  string
	Language string
	Version  string
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

// Provider creates, removes and lists machines. MachineProvider is its role
// in the design; implementations are machines/docker, machines/process and
// machines/machinestest.
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
	// List returns the machines this provider owns, running or exited,
	// oldest first. Providers that can (docker) find them from labels, so a
	// new provider instance with the same name sees what an old one created.
	List(ctx context.Context) ([]Machine, error)
}

// Selector is implemented by providers that select machines by label
// themselves (from an index, or server-side). Callers use Select, which
// falls back to List.
type Selector interface {
	// Select returns the machines, as List would, whose labels include
	// every key and value of labels.
	Select(ctx context.Context, labels map[string]string) ([]Machine, error)
}

// Select returns p's machines whose labels include every key and value of
// labels, oldest first: through p's own Select when it is a Selector, else
// by filtering List.
func Select(ctx context.Context, p Provider, labels map[string]string) ([]Machine, error) {
	if s, ok := p.(Selector); ok {
		return s.Select(ctx, labels)
	}
	all, err := p.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Machine, 0, len(all))
	for _, m := range all {
		if HasLabels(m, labels) {
			out = append(out, m)
		}
	}
	return out, nil
}

// HasLabels reports whether m's labels include every key and value of
// labels.
func HasLabels(m Machine, labels map[string]string) bool {
	for k, v := range labels {
		if got, ok := m.Labels[k]; !ok || got != v {
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
