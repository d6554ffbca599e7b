package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/fleetkit/fleetkit/fleet/auth"
	"github.com/fleetkit/fleetkit/fleet/quota"
)

// CloudProvider is a cloud instances may be placed on.
type CloudProvider struct {
	ID          string
	DisplayName string
	Regions     []Region
}

// Region is a region of a CloudProvider.
type Region struct {
	ID          string
	DisplayName string
	// InstanceTypes the region supports; the first is the default of a
	// create without a plan.
	InstanceTypes []string
	// Limits caps the live instances of a type in the region (absent: no
	// cap); a create over it is refused with code 24.
	Limits map[string]int
}

// DefaultCloudProviders is the original's default: aws, us-east-1.
func DefaultCloudProviders() []CloudProvider {
	return []CloudProvider{{
		ID: "aws", DisplayName: "Amazon Web Services",
		Regions: []Region{{ID: "us-east-1", DisplayName: "US East, N. Virginia", InstanceTypes: []string{"standard", "developer"}}},
	}}
}

// DefaultClusters is one local cluster for DefaultCloudProviders.
func DefaultClusters() []Cluster {
	return []Cluster{{ID: "local", CloudProvider: "aws", Region: "us-east-1", MultiAZ: true, Status: ClusterAccepted}}
}

// Default per-status timeouts (the original's).
const (
	DefaultAcceptedTimeout     = time.Hour
	DefaultPreparingTimeout    = 5 * time.Minute
	DefaultProvisioningTimeout = time.Hour
)

// Options configures a Service. Zero fields mean the documented defaults.
type Options struct {
	// Kind is the resource kind (required: Name at least).
	Kind Kind
	// Auth identifies callers (required).
	Auth auth.Authenticator

	// CloudProviders offered; nil means DefaultCloudProviders.
	CloudProviders []CloudProvider
	// Clusters are created at Run (existing IDs are kept as they are).
	Clusters []Cluster
	// ClusterProvider drives clusters; nil means an InmemClusterProvider.
	ClusterProvider ClusterProvider
	// Terraform steps run on provisioned clusters.
	Terraform []TerraformStep
	// DataPlane runs instances; nil means an InmemDataPlane.
	DataPlane DataPlane
	// Resources are the external resources; nil means InmemResources.
	Resources ExternalResources
	// Placement picks clusters; nil means FirstReady.
	Placement Placement
	// Units is the capacity units of an instance type (absent: 1).
	Units map[string]int
	// Quota, when set, is checked before every create.
	Quota quota.Checker
	// DenyList, when set, refuses its owners and deprovisions their
	// instances.
	DenyList DenyList
	// Trials gives instance types a lifetime: they expire and are
	// deprovisioned after it.
	Trials map[string]time.Duration

	// Timeouts fail an instance that stays longer in a status; nil means
	// accepted 1h, preparing 5m, provisioning 1h. A zero entry: no timeout.
	Timeouts map[Status]time.Duration
	// Interval is the workers' resync interval (0: DefaultInterval);
	// in-process changes wake workers at once.
	Interval time.Duration
	// Concurrency bounds each worker's reconciles (0: DefaultConcurrency).
	// A worker drains about Concurrency instances per write latency, so to
	// keep up with a flood of creates it should exceed the number of
	// concurrent API clients; stores write concurrent updates together,
	// so a high value costs few round trips.
	Concurrency int
	// RetryInterval is how often an instance waiting for capacity or for
	// the data plane is looked at again (0: one second).
	RetryInterval time.Duration

	// SweepInterval is how often a data plane that lists what it runs
	// (Sweeper) is swept of what no live instance owns (0: six
	// Intervals). Such a data plane must run this Service's instances
	// only.
	SweepInterval time.Duration

	// LeaderElection runs each worker only while this replica holds its
	// lease in the store; needed when several replicas share a database,
	// so a store that says it is shared (SharedStore: fleet/postgres)
	// turns it on whatever this says. Holder names this replica in the
	// leases (""; a random ID); LeaseTTL is DefaultLeaseTTL when 0.
	LeaderElection bool
	Holder         string
	LeaseTTL       time.Duration

	// MaxBody bounds request bodies (0: 64 KiB).
	MaxBody int64
	// Registerer receives the metrics (nil: none).
	Registerer prometheus.Registerer
	// Logger receives errors (nil: slog.Default()).
	Logger *slog.Logger
}

// DenyList tells whether an owner may use the service at all. Denied
// owners get 403 from the API and their instances are deprovisioned by the
// general worker. Safe for concurrent use; must not block.
type DenyList interface {
	Denied(owner, organisation string) bool
}

// Service is a fleet manager for one kind: the REST API (Handler) and the
// workers (Run) over one Store. Safe for concurrent use.
type Service struct {
	kind    Kind
	opts    Options
	raw     Store
	st      Store // notifying
	m       *serviceMetrics
	rt      *Runtime
	log     *slog.Logger
	openapi []byte
	handler http.Handler
}

// New validates opts and assembles a Service on st.
func New(st Store, opts Options) (*Service, error) {
	if st == nil {
		return nil, fmt.Errorf("%w: service needs a store", ErrInvalid)
	}
	kind, err := opts.Kind.Normalize()
	if err != nil {
		return nil, err
	}
	if opts.Auth == nil {
		return nil, fmt.Errorf("%w: service needs an Authenticator", ErrInvalid)
	}
	if opts.CloudProviders == nil {
		opts.CloudProviders = DefaultCloudProviders()
	}
	for _, p := range opts.CloudProviders {
		if p.ID == "" || len(p.Regions) == 0 {
			return nil, fmt.Errorf("%w: cloud provider %q needs an ID and regions", ErrInvalid, p.ID)
		}
		for _, r := range p.Regions {
			if r.ID == "" || len(r.InstanceTypes) == 0 {
				return nil, fmt.Errorf("%w: region %q of %s needs an ID and instance types", ErrInvalid, r.ID, p.ID)
			}
		}
	}
	if opts.ClusterProvider == nil {
		opts.ClusterProvider = &InmemClusterProvider{}
	}
	if opts.DataPlane == nil {
		opts.DataPlane = NewInmemDataPlane(InmemDataPlaneOptions{})
	}
	if opts.Resources == nil {
		opts.Resources = &InmemResources{}
	}
	if opts.Placement == nil {
		opts.Placement = FirstReady{}
	}
	if opts.Timeouts == nil {
		opts.Timeouts = map[Status]time.Duration{
			StatusAccepted: DefaultAcceptedTimeout, StatusPreparing: DefaultPreparingTimeout, StatusProvisioning: DefaultProvisioningTimeout,
		}
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = time.Second
	}
	if opts.SweepInterval <= 0 {
		opts.SweepInterval = 6 * opts.Interval
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = 64 << 10
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	m, err := newServiceMetrics(opts.Registerer, kind.Name)
	if err != nil {
		return nil, err
	}
	n := NewNotifier()
	s := &Service{kind: kind, opts: opts, raw: st, st: NotifyingStore(st, n), m: m, log: log}
	s.st = observingStore{Store: s.st, m: m}
	if s.openapi, err = renderOpenAPI(kind); err != nil {
		return nil, err
	}
	units := func(t string) int {
		if u, ok := opts.Units[t]; ok && u > 0 {
			return u
		}
		return 1
	}
	worker := func(status Status, r Reconciler) Worker {
		w := Worker{Status: status, Reconciler: r, Interval: opts.Interval, Concurrency: opts.Concurrency, Timeout: opts.Timeouts[status]}
		return w
	}
	accepted := worker(StatusAccepted, &acceptedReconciler{st: s.st, placement: opts.Placement, units: units, retry: opts.RetryInterval})
	accepted.TimeoutReason = func(i Instance) string {
		return fmt.Sprintf("Region %s in cloud provider %s cannot accept %s %s at the moment.", i.Region, i.CloudProvider, i.InstanceType, kind.Display)
	}
	preparing := worker(StatusPreparing, &preparingReconciler{st: s.st, res: opts.Resources})
	preparing.TimeoutReason = func(i Instance) string {
		return fmt.Sprintf("failed to create the external resources of %s %s in %s", kind.Display, i.ID, opts.Timeouts[StatusPreparing])
	}
	provisioning := worker(StatusProvisioning, &provisioningReconciler{st: s.st, dp: opts.DataPlane, poll: opts.RetryInterval})
	provisioning.TimeoutReason = func(i Instance) string {
		return fmt.Sprintf("%s %s was not ready on cluster %s within %s", kind.Display, i.ID, i.ClusterID, opts.Timeouts[StatusProvisioning])
	}
	workers := []Worker{
		accepted, preparing, provisioning,
		worker(StatusReady, &readyReconciler{st: s.st, dp: opts.DataPlane, res: opts.Resources, poll: opts.RetryInterval, kind: kind}),
		worker(StatusDeprovision, &deprovisionReconciler{st: s.st, dp: opts.DataPlane}),
		worker(StatusDeleting, &deletingReconciler{st: s.st, dp: opts.DataPlane, res: opts.Resources}),
	}
	general := &generalWorker{st: s.st, kind: kind.Name, deny: opts.DenyList, m: m}
	cw := &clusterWorker{st: s.st, provider: opts.ClusterProvider, terraform: opts.Terraform}
	jobs := []Job{
		{Name: "general", Interval: opts.Interval, Run: general.pass},
		{Name: "clusters", Interval: opts.Interval, Run: cw.pass},
	}
	if sw, ok := opts.DataPlane.(Sweeper); ok {
		sweep := &sweeper{st: s.st, running: sw, kind: kind.Name, log: log}
		sweep.grace = opts.SweepInterval
		jobs = append(jobs, Job{Name: "sweep", Interval: opts.SweepInterval, Everywhere: true, Run: sweep.pass})
	}
	ropts := RuntimeOptions{Kind: kind.Name, Notifier: n, Holder: opts.Holder, LeaseTTL: opts.LeaseTTL, Logger: log, metrics: m}
	if shared, ok := st.(SharedStore); ok && shared.NeedsLeader() {
		// Replicas share this store: two running the same worker would
		// each start every instance.
		opts.LeaderElection = true
		s.opts.LeaderElection = true
	}
	if opts.LeaderElection {
		ropts.Leases = st
	}
	// Leases are per kind: prefix the names.
	for i := range workers {
		workers[i].Name = kind.Name + "/" + string(workers[i].Status)
	}
	for i := range jobs {
		jobs[i].Name = kind.Name + "/" + jobs[i].Name
	}
	if s.rt, err = NewRuntime(s.st, workers, jobs, ropts); err != nil {
		return nil, err
	}
	s.handler = s.routes()
	return s, nil
}

// Kind returns the service's normalised kind.
func (s *Service) Kind() Kind { return s.kind }

// Store returns the service's store, wrapped so that writes through it wake
// the workers.
func (s *Service) Store() Store { return s.st }

// Handler returns the REST API.
func (s *Service) Handler() http.Handler { return s.handler }

// Run creates the configured clusters that do not exist yet, then runs the
// workers until ctx is done.
func (s *Service) Run(ctx context.Context) error {
	for _, c := range s.opts.Clusters {
		if c.Status == "" {
			c.Status = ClusterAccepted
		}
		if err := s.st.CreateCluster(ctx, c); err != nil && !errors.Is(err, ErrExists) {
			if ctx.Err() != nil {
				return nil // stopped while starting
			}
			return fmt.Errorf("fleet: create cluster %s: %w", c.ID, err)
		}
	}
	return s.rt.Run(ctx)
}

// observingStore records the time from creation to every status entered.
type observingStore struct {
	Store
	m *serviceMetrics
}

func (s observingStore) UpdateInstance(ctx context.Context, u Update) (Instance, error) {
	inst, err := s.Store.UpdateInstance(ctx, u)
	if err == nil && u.To != "" && u.To != u.From {
		s.m.sinceCreated.WithLabelValues(string(inst.Status)).Observe(inst.StatusSince.Sub(inst.CreatedAt).Seconds())
	}
	return inst, err
}

func renderOpenAPI(k Kind) ([]byte, error) {
	doc := strings.NewReplacer("{{plural}}", k.Plural, "{{name}}", k.Name, "{{Display}}", k.Display,
		"{{base}}", k.BasePath(), "{{prefix}}", k.CodePrefix()).Replace(openapiTemplate)
	b, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		return nil, fmt.Errorf("fleet: render OpenAPI document: %w", err)
	}
	return b, nil
}

func (s *Service) provider(id string) (CloudProvider, bool) {
	i := slices.IndexFunc(s.opts.CloudProviders, func(p CloudProvider) bool { return p.ID == id })
	if i < 0 {
		return CloudProvider{}, false
	}
	return s.opts.CloudProviders[i], true
}
