package docker

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/docker/go-connections/nat"

	"github.com/fleetkit/fleetkit/machines"
)

var (
	_ machines.Provider = (*Provider)(nil)
	_ machines.Watcher  = (*Provider)(nil)
	_ io.Closer         = (*Provider)(nil)
)

// LabelCreated records when Create was called, RFC 3339 with nanoseconds,
// so that List orders machines as precisely as Create saw them.
const LabelCreated = machines.LabelPrefix + "created"

// DefaultHostIP is where container ports are published.
const DefaultHostIP = "127.0.0.1"

// Options configure a Provider. The zero value is ready to use.
type Options struct {
	// Name is the provider label of the containers; "" means "docker". Two
	// Provider values with the same Name on the same engine own the same
	// containers: that is how a restarted manager finds its machines.
	Name string
	// Client talks to the engine; nil means a client from the environment
	// (DOCKER_HOST, ...) with API version negotiation, closed by Close. A
	// client given here is not closed by Close.
	Client client.APIClient
	// StopTimeout is how long Remove lets a container stop after SIGTERM
	// before the engine kills it; 0 means machines.DefaultStopTimeout. It
	// is rounded up to whole seconds.
	StopTimeout time.Duration
	// Network, when set, makes containers join this network; their address
	// is then the container's IP on it and no port is published.
	Network string
	// HostIP is where the service port is published when Network is empty;
	// "" means DefaultHostIP. The host port is always ephemeral.
	HostIP string
}

// Provider runs machines as Docker containers. It is safe for concurrent
// use.
type Provider struct {
	opts      Options
	cli       client.APIClient
	ownClient bool
	closeOnce sync.Once
	// negotiate runs the client's API version negotiation once, before any
	// other call: the client negotiates lazily on its first request, and two
	// first requests at once race inside it.
	negotiate sync.Once

	// mu guards known and removing.
	mu sync.Mutex
	// known remembers the machines seen running, so that an exited
	// container (whose ports are gone) is still listed with its address.
	known map[string]machines.Machine
	// removing holds the containers this value is removing, with when, so
	// that Watch does not report their exit.
	removing map[string]time.Time
}

// New returns a Provider. With no Options.Client it connects to the engine
// named by the environment, negotiating the API version; it does not
// contact the engine yet.
func New(opts Options) (*Provider, error) {
	if opts.StopTimeout < 0 {
		return nil, errors.New("docker: negative StopTimeout")
	}
	opts.Name = cmp.Or(opts.Name, "docker")
	opts.StopTimeout = cmp.Or(opts.StopTimeout, machines.DefaultStopTimeout)
	opts.HostIP = cmp.Or(opts.HostIP, DefaultHostIP)
	if net.ParseIP(opts.HostIP) == nil {
		return nil, fmt.Errorf("docker: HostIP %q is not an IP address", opts.HostIP)
	}
	p := &Provider{
		opts:     opts,
		cli:      opts.Client,
		known:    make(map[string]machines.Machine),
		removing: make(map[string]time.Time),
	}
	if p.cli == nil {
		cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
		if err != nil {
			return nil, fmt.Errorf("docker: creating client: %w", err)
		}
		p.cli, p.ownClient = cli, true
	}
	return p, nil
}

// negotiated makes sure the API version has been negotiated.
func (p *Provider) negotiated(ctx context.Context) {
	p.negotiate.Do(func() { p.cli.NegotiateAPIVersion(ctx) })
}

// Close closes the client if New made it. Containers keep running: a new
// Provider with the same Name finds them. It is idempotent.
func (p *Provider) Close() error {
	var err error
	p.closeOnce.Do(func() {
		if p.ownClient {
			err = p.cli.Close()
		}
	})
	return err
}

// Create creates and starts a container of spec.Image, labelled as this
// provider's, with its service port published on HostIP (or on Network),
// and waits until it is running and, with spec.HealthPath, healthy. A
// container that fails to start in time is removed with its volumes.
func (p *Provider) Create(ctx context.Context, spec machines.Spec) (machines.Machine, error) {
	p.negotiated(ctx)
	if err := spec.Validate(); err != nil {
		return machines.Machine{}, err
	}
	if spec.Image == "" {
		return machines.Machine{}, fmt.Errorf("%w: image is empty", machines.ErrInvalidSpec)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, spec.Timeout(), machines.ErrStartTimeout)
	defer cancel()

	port := cmp.Or(spec.Port, machines.DefaultPort)
	cport := nat.Port(strconv.Itoa(port) + "/tcp")
	args, env := spec.Expand(net.JoinHostPort("0.0.0.0", strconv.Itoa(port)))
	labels := spec.MachineLabels(p.opts.Name, port)
	created := time.Now()
	labels[LabelCreated] = created.UTC().Format(time.RFC3339Nano)

	cfg := &container.Config{
		Image:        spec.Image,
		Cmd:          args,
		Labels:       labels,
		ExposedPorts: nat.PortSet{cport: struct{}{}},
	}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cfg.Env = append(cfg.Env, k+"="+env[k])
	}
	host := &container.HostConfig{}
	if p.opts.Network != "" {
		host.NetworkMode = container.NetworkMode(p.opts.Network)
	} else {
		host.PortBindings = nat.PortMap{cport: {{HostIP: p.opts.HostIP, HostPort: ""}}}
	}
	name := containerName(spec)
	resp, err := p.cli.ContainerCreate(ctx, cfg, host, nil, nil, name)
	if err != nil && ctx.Err() != nil {
		// We gave up, but the engine goes on creating: remove it by name.
		p.discardName(name)
	}
	if cerrdefs.IsNotFound(err) {
		// The engine API does not pull; neither does the provider.
		return machines.Machine{}, fmt.Errorf("%w: image %s is not on the engine (build or pull it first): %v", machines.ErrInvalidSpec, spec.Image, err)
	}
	if err != nil {
		return machines.Machine{}, fmt.Errorf("docker: creating container of %s: %w", spec.Image, startErr(ctx, err))
	}
	id := resp.ID
	fail := func(err error) (machines.Machine, error) {
		logs := p.logs(id)
		p.discard(id)
		return machines.Machine{}, fmt.Errorf("docker: container %.12s of %s: %w%s", id, spec.Image, err, logs)
	}
	if err := p.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return fail(startErr(ctx, err))
	}
	info, err := p.cli.ContainerInspect(ctx, id)
	if err != nil {
		return fail(startErr(ctx, err))
	}
	addr, err := p.address(info, cport)
	if err != nil {
		// A container that exited at once has no published port: say it
		// exited, as a later exit would.
		if info.State != nil && !info.State.Running {
			if again, ierr := p.cli.ContainerInspect(ctx, id); ierr == nil {
				info = again
			}
			return fail(exitedErr(info))
		}
		return fail(err)
	}
	var lastInspect time.Time
	err = machines.WaitReady(ctx, addr, machines.WaitOptions{
		Path: spec.HealthPath,
		Alive: func(ctx context.Context) error {
			if time.Since(lastInspect) < 100*time.Millisecond {
				return nil
			}
			lastInspect = time.Now()
			info, err := p.cli.ContainerInspect(ctx, id)
			if err != nil {
				return startErr(ctx, err)
			}
			if s := info.State; s == nil || !s.Running {
				return exitedErr(info)
			}
			return nil
		},
	})
	if err != nil {
		return fail(err)
	}
	if info.Config != nil && info.Config.Labels != nil {
		labels = info.Config.Labels // the image's labels too, as List sees them
	}
	m := machines.Machine{
		ID:        id,
		Address:   addr,
		Labels:    labels,
		CreatedAt: created,
		State:     machines.StateRunning,
	}
	p.mu.Lock()
	p.known[id] = m
	p.mu.Unlock()
	return clone(m), nil
}

// startErr turns the expiry of Create's deadline into ErrStartTimeout.
func startErr(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, machines.ErrStartTimeout) {
		return fmt.Errorf("%w: %v", machines.ErrStartTimeout, err)
	}
	return err
}

func exitedErr(info container.InspectResponse) error {
	if info.State == nil {
		return fmt.Errorf("%w: no state", machines.ErrExited)
	}
	return fmt.Errorf("%w: status %s, exit code %d %s", machines.ErrExited, info.State.Status, info.State.ExitCode, info.State.Error)
}

// address returns where the service of a started container answers.
func (p *Provider) address(info container.InspectResponse, cport nat.Port) (string, error) {
	ns := info.NetworkSettings
	if ns == nil {
		return "", errors.New("no network settings")
	}
	if p.opts.Network != "" {
		n, ok := ns.Networks[p.opts.Network]
		if !ok || n.IPAddress == "" {
			return "", fmt.Errorf("no IP address on network %s", p.opts.Network)
		}
		return net.JoinHostPort(n.IPAddress, cport.Port()), nil
	}
	for _, b := range ns.Ports[cport] {
		if b.HostPort != "" {
			return net.JoinHostPort(dialIP(b.HostIP, p.opts.HostIP), b.HostPort), nil
		}
	}
	return "", fmt.Errorf("port %s is not published", cport)
}

// dialIP turns a wildcard binding into an address one can dial.
func dialIP(bound, configured string) string {
	ip := cmp.Or(bound, configured)
	if parsed := net.ParseIP(ip); parsed == nil || parsed.IsUnspecified() {
		return "127.0.0.1"
	}
	return ip
}

// logs returns the last lines of a container's output for an error
// message, or "".
func (p *Provider) logs(id string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rc, err := p.cli.ContainerLogs(ctx, id, container.LogsOptions{ShowStdout: true, ShowStderr: true, Tail: "20"})
	if err != nil {
		return ""
	}
	defer rc.Close()
	var b bytes.Buffer
	_, _ = stdcopy.StdCopy(&b, &b, io.LimitReader(rc, 16<<10))
	s := strings.TrimSpace(b.String())
	if s == "" {
		return ""
	}
	return "; output:\n" + s
}

// discard removes a container Create gave up on, with a context of its own
// since Create's may have expired.
func (p *Provider) discard(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.StopTimeout+30*time.Second)
	defer cancel()
	p.markRemoving(id)
	_ = p.cli.ContainerRemove(ctx, id, container.RemoveOptions{RemoveVolumes: true, Force: true})
}

// discardName removes the container a Create gave up on while the engine
// was creating it. The engine may finish only after the client went away,
// so a container not there yet is looked for again for a few seconds.
func (p *Provider) discardName(name string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := p.cli.ContainerRemove(ctx, name, container.RemoveOptions{RemoveVolumes: true, Force: true})
		if err == nil || !cerrdefs.IsNotFound(err) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Remove stops a container of this provider (SIGTERM, then the engine
// kills it after StopTimeout) and removes it with its anonymous volumes.
// A container that is not this provider's is ErrNotFound, even if it exists.
func (p *Provider) Remove(ctx context.Context, id string) error {
	p.negotiated(ctx)
	info, err := p.cli.ContainerInspect(ctx, id)
	if cerrdefs.IsNotFound(err) {
		return fmt.Errorf("%w: %s", machines.ErrNotFound, id)
	}
	if err != nil {
		return fmt.Errorf("docker: inspecting %s: %w", id, err)
	}
	if info.Config == nil || !p.owns(info.Config.Labels) {
		return fmt.Errorf("%w: %s is not a container of provider %q", machines.ErrNotFound, id, p.opts.Name)
	}
	id = info.ID
	p.markRemoving(id)
	secs := int((p.opts.StopTimeout + time.Second - 1) / time.Second)
	if info.State != nil && info.State.Running {
		if err := p.cli.ContainerStop(ctx, id, container.StopOptions{Timeout: &secs}); err != nil && !cerrdefs.IsNotFound(err) {
			return fmt.Errorf("docker: stopping %.12s: %w", id, err)
		}
	}
	err = p.cli.ContainerRemove(ctx, id, container.RemoveOptions{RemoveVolumes: true, Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("docker: removing %.12s: %w", id, err)
	}
	p.mu.Lock()
	delete(p.known, id)
	p.mu.Unlock()
	return nil
}

func (p *Provider) owns(labels map[string]string) bool {
	return labels[machines.LabelManaged] == "true" && labels[machines.LabelProvider] == p.opts.Name
}

// markRemoving records that this value is removing id; entries older than
// a minute are dropped, their die events long delivered.
func (p *Provider) markRemoving(id string) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, at := range p.removing {
		if now.Sub(at) > time.Minute {
			delete(p.removing, k)
		}
	}
	p.removing[id] = now
}

func (p *Provider) isRemoving(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.removing[id]
	return ok
}

// filters selects this provider's containers, and of them those sel
// matches: the engine does the selection.
func (p *Provider) filters(sel machines.Selector) filters.Args {
	f := filters.NewArgs(
		filters.Arg("label", machines.LabelManaged+"=true"),
		filters.Arg("label", machines.LabelProvider+"="+p.opts.Name),
	)
	for _, k := range slices.Sorted(maps.Keys(sel)) {
		f.Add("label", k+"="+sel[k])
	}
	return f
}

// List returns the containers labelled as this provider's that sel
// matches, running or not, oldest first; the engine selects them by
// label. It needs no memory of its own: a new Provider with the same Name
// lists what an old one created.
func (p *Provider) List(ctx context.Context, sel machines.Selector) ([]machines.Machine, error) {
	p.negotiated(ctx)
	cs, err := p.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: p.filters(sel)})
	if err != nil {
		return nil, fmt.Errorf("docker: listing containers: %w", err)
	}
	out := make([]machines.Machine, 0, len(cs))
	seen := make(map[string]bool, len(cs))
	p.mu.Lock()
	for _, c := range cs {
		if !sel.Matches(c.Labels) { // the engine's filter, checked
			continue
		}
		seen[c.ID] = true
		out = append(out, p.rememberLocked(p.fromSummary(c)))
	}
	for id, m := range p.known {
		// Gone from the engine (every container sel matches was listed); a
		// machine still being created is not listed yet.
		if !seen[id] && sel.Matches(m.Labels) && time.Since(m.CreatedAt) > time.Minute {
			delete(p.known, id)
		}
	}
	p.mu.Unlock()
	sortMachines(out)
	return out, nil
}

func sortMachines(ms []machines.Machine) {
	slices.SortFunc(ms, func(a, b machines.Machine) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
}

// rememberLocked records a running machine's address, or fills in the
// address an exited one had (its ports are gone), and returns a copy of
// m. p.mu is held.
func (p *Provider) rememberLocked(m machines.Machine) machines.Machine {
	if m.State == machines.StateRunning && m.Address != "" {
		p.known[m.ID] = m
	} else if k, ok := p.known[m.ID]; ok && m.Address == "" {
		m.Address = k.Address
	}
	return clone(m)
}

// Get inspects container id and returns it as List would. A container
// that is not this provider's is ErrNotFound, even if it exists.
func (p *Provider) Get(ctx context.Context, id string) (machines.Machine, error) {
	p.negotiated(ctx)
	info, err := p.cli.ContainerInspect(ctx, id)
	if cerrdefs.IsNotFound(err) {
		return machines.Machine{}, fmt.Errorf("%w: %s", machines.ErrNotFound, id)
	}
	if err != nil {
		return machines.Machine{}, fmt.Errorf("docker: inspecting %s: %w", id, err)
	}
	if info.Config == nil || !p.owns(info.Config.Labels) {
		return machines.Machine{}, fmt.Errorf("%w: %s is not a container of provider %q", machines.ErrNotFound, id, p.opts.Name)
	}
	m := fromLabels(info.ID, info.Config.Labels)
	if m.CreatedAt.IsZero() {
		m.CreatedAt, _ = time.Parse(time.RFC3339Nano, info.Created)
	}
	m.State = machines.StateExited
	if info.State != nil && info.State.Running {
		m.State = machines.StateRunning
		port, _ := strconv.Atoi(m.Labels[machines.LabelPort])
		m.Address, _ = p.address(info, nat.Port(strconv.Itoa(port)+"/tcp"))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.rememberLocked(m), nil
}

func (p *Provider) fromSummary(c container.Summary) machines.Machine {
	m := fromLabels(c.ID, c.Labels)
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Unix(c.Created, 0)
	}
	m.State = machines.StateExited
	if c.State == container.StateRunning {
		m.State = machines.StateRunning
	}
	port, _ := strconv.Atoi(c.Labels[machines.LabelPort])
	if p.opts.Network != "" {
		if c.NetworkSettings != nil {
			if n, ok := c.NetworkSettings.Networks[p.opts.Network]; ok && n.IPAddress != "" && port > 0 {
				m.Address = net.JoinHostPort(n.IPAddress, strconv.Itoa(port))
			}
		}
		return m
	}
	for _, cp := range c.Ports {
		if int(cp.PrivatePort) != port || cp.PublicPort == 0 || cp.Type != "tcp" {
			continue
		}
		// Prefer the IPv4 binding; an engine may list an IPv6 one too.
		if ip := net.ParseIP(cp.IP); m.Address == "" || (ip != nil && ip.To4() != nil) {
			m.Address = net.JoinHostPort(dialIP(cp.IP, p.opts.HostIP), strconv.Itoa(int(cp.PublicPort)))
		}
	}
	return m
}

// fromLabels rebuilds what labels say of a machine.
func fromLabels(id string, labels map[string]string) machines.Machine {
	m := machines.Machine{ID: id, Labels: maps.Clone(labels)}
	if t, err := time.Parse(time.RFC3339Nano, labels[LabelCreated]); err == nil {
		m.CreatedAt = t
	}
	return m
}

// Watch follows the engine's event stream and reports every container of
// this provider that dies without this value removing it: a crash, a
// docker kill, or a Remove by another Provider value. The engine may send
// the event a moment before List reports the container exited.
func (p *Provider) Watch(ctx context.Context, fn func(machines.Event)) error {
	p.negotiated(ctx)
	f := p.filters(nil)
	f.Add("type", string(events.ContainerEventType))
	f.Add("event", string(events.ActionDie))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	msgs, errs := p.cli.Events(ctx, events.ListOptions{Filters: f})
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-errs:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("docker: event stream: %w", err)
		case msg := <-msgs:
			id := msg.Actor.ID
			if p.isRemoving(id) {
				continue
			}
			attrs := msg.Actor.Attributes
			p.mu.Lock()
			m, ok := p.known[id]
			p.mu.Unlock()
			if !ok {
				m = fromLabels(id, attrs)
			}
			m = clone(m)
			m.State = machines.StateExited
			code, err := strconv.Atoi(attrs["exitCode"])
			if err != nil {
				code = -1
			}
			fn(machines.Event{
				Machine:  m,
				ExitCode: code,
				Err:      fmt.Errorf("docker: container %.12s died with exit code %d%s", id, code, p.logs(id)),
				Time:     time.Unix(0, msg.TimeNano),
			})
		}
	}
}

var nameUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// containerName returns a readable unique name from the spec's Name:
// fleetkit-python-1.0-1a2b3c.
func containerName(spec machines.Spec) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return nameUnsafe.ReplaceAllString(fmt.Sprintf("fleetkit-%s-%s", cmp.Or(spec.Name, "machine"), hex.EncodeToString(b[:])), "_")
}

func clone(m machines.Machine) machines.Machine {
	m.Labels = maps.Clone(m.Labels)
	return m
}
