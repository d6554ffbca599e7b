package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleetkit/fleetkit/fleet/cluster"
)

// Defaults of Options (a zero field means its default; each field's
// documentation says the value) and of Query, and the bound of Query.Size.
const (
	defaultInterval    = 5 * time.Second  // Options.Interval
	defaultConcurrency = 4                // Options.Concurrency
	defaultLeaseTTL    = 15 * time.Second // Options.LeaseTTL
	// Per-status timeouts (the original's): Options.Timeouts.
	defaultAcceptedTimeout     = time.Hour
	defaultPreparingTimeout    = 5 * time.Minute
	defaultProvisioningTimeout = time.Hour
	// defaultPageSize is the page size when Query.Size is 0; maxPageSize
	// bounds Query.Size.
	defaultPageSize = 100
	maxPageSize     = 1000
)

// dataPlaneLease is the lease (after the kind's name) of the workers that
// drive the data plane: provisioning, ready, deprovision and deleting.
const dataPlaneLease = "dataplane"

// Options configures a Service. Zero fields mean the documented defaults.
type Options struct {
	// Kind is the resource kind (required: Name at least).
	Kind Kind

	// Clusters are created at Run (existing IDs are kept as they are).
	Clusters []cluster.Cluster
	// Deprovision names clusters that Run retires (DeprovisionCluster): a
	// cluster is unregistered by naming it here, not by leaving it out.
	Deprovision []string
	// ClusterProvider drives clusters; nil means clusters that need no
	// provisioning (provisioned and deleted at once).
	ClusterProvider cluster.Provider
	// Terraform installs what instances need on a provisioned cluster:
	// the steps run in order, every pass, until all report done.
	Terraform []func(ctx context.Context, c cluster.Cluster) (done bool, err error)
	// DataPlane runs instances; nil means one that runs them nowhere: ready
	// at once at a made-up host (fleet/inmem.DataPlane is the in-memory
	// one with knobs, fleet/dataplane runs them as machines,
	// fleet/agentplane through agents on the clusters). A DataPlane that
	// is a ClusterView adjusts the clusters placement sees.
	DataPlane DataPlane
	// Resources are the external resources; nil means none.
	Resources ExternalResources
	// Placement picks clusters; nil means the original's: the first cluster
	// (by ID) that is ready, matches the instance's cloud provider, region,
	// multi-AZ and instance type, and has its units free.
	Placement Placement
	// Units is the capacity units an instance consumes, by plan
	// ("standard.x2") or by instance type ("standard"): a plan without an
	// entry takes its type's, a type without one 1 (Service.Units). The
	// API records them in the instance at creation; they count towards
	// the quota and the cluster's capacity.
	Units map[string]int
	// Denied, when set, tells the owners who may not use the service at
	// all: the general worker deprovisions their instances and the API
	// refuses them (Service.Denied). It must be safe for concurrent use
	// and must not block; quota.DenyList's Denied method is one.
	Denied func(owner, organisation string) bool

	// Timeouts fail an instance that stays longer in a status; nil means
	// accepted 1h, preparing 5m, provisioning 1h. A zero entry: no timeout.
	Timeouts map[Status]time.Duration
	// Interval is the workers' resync interval (0: five seconds);
	// in-process changes wake workers at once.
	Interval time.Duration
	// Concurrency bounds each worker's reconciles (0: 4).
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
	// leases (""; a random ID); LeaseTTL is 15 seconds when 0.
	LeaderElection bool
	Holder         string
	LeaseTTL       time.Duration

	// Registerer receives the metrics (nil: none).
	Registerer prometheus.Registerer
	// Logger receives errors (nil: slog.Default()).
	Logger *slog.Logger
}

// denyList is what the general worker asks (Options.Denied).
type denyList interface {
	Denied(owner, organisation string) bool
}

// denyFunc adapts Options.Denied to denyList.
type denyFunc func(owner, organisation string) bool

func (f denyFunc) Denied(owner, organisation string) bool { return f(owner, organisation) }

// Service is a fleet manager for one kind: the workers (Run) over one
// Store. Its REST API is fleet/httpapi, built on the Service. Safe for
// concurrent use.
type Service struct {
	kind Kind
	opts Options
	raw  Store
	st   Store // notifying
	m    *serviceMetrics
	rt   *runtime
	log  *slog.Logger
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
	if opts.ClusterProvider == nil {
		opts.ClusterProvider = readyClusters{}
	}
	if opts.DataPlane == nil {
		opts.DataPlane = newMemDataPlane()
	}
	if opts.Resources == nil {
		opts.Resources = noResources{}
	}
	if opts.Placement == nil {
		opts.Placement = firstReady{}
	}
	if opts.Timeouts == nil {
		opts.Timeouts = map[Status]time.Duration{
			StatusAccepted: defaultAcceptedTimeout, StatusPreparing: defaultPreparingTimeout, StatusProvisioning: defaultProvisioningTimeout,
		}
	}
	if opts.Interval <= 0 {
		opts.Interval = defaultInterval
	}
	if opts.RetryInterval <= 0 {
		opts.RetryInterval = time.Second
	}
	if opts.SweepInterval <= 0 {
		opts.SweepInterval = 6 * opts.Interval
	}
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	m, err := newServiceMetrics(opts.Registerer, kind.Name)
	if err != nil {
		return nil, err
	}
	n := newNotifier()
	s := &Service{kind: kind, opts: opts, raw: st, st: newNotifyingStore(st, n), m: m, log: log}
	s.st = observingStore{Store: s.st, m: m}
	worker := func(status Status, r reconciler) statusWorker {
		w := statusWorker{Status: status, Reconciler: r, Interval: opts.Interval, Concurrency: opts.Concurrency, Timeout: opts.Timeouts[status]}
		return w
	}
	ar := &acceptedReconciler{st: s.st, placement: opts.Placement, retry: opts.RetryInterval}
	if v, ok := opts.DataPlane.(ClusterView); ok {
		ar.view = v
	}
	accepted := worker(StatusAccepted, ar)
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
	workers := []statusWorker{
		accepted, preparing, provisioning,
		worker(StatusReady, &readyReconciler{st: s.st, dp: opts.DataPlane, res: opts.Resources, poll: opts.RetryInterval, kind: kind}),
		worker(StatusDeprovision, &deprovisionReconciler{st: s.st, dp: opts.DataPlane, poll: opts.RetryInterval}),
		worker(StatusDeleting, &deletingReconciler{st: s.st, dp: opts.DataPlane, res: opts.Resources, poll: opts.RetryInterval}),
		worker(StatusSuspending, &suspendingReconciler{st: s.st, dp: opts.DataPlane}),
		worker(StatusResuming, &provisioningReconciler{st: s.st, dp: opts.DataPlane, poll: opts.RetryInterval, status: StatusResuming}),
	}
	general := &generalWorker{st: s.st, kind: kind.Name, m: m}
	if opts.Denied != nil {
		general.deny = denyFunc(opts.Denied)
	}
	cw := &clusterWorker{st: s.st, provider: opts.ClusterProvider, terraform: opts.Terraform}
	jobs := []job{
		{Name: "general", Interval: opts.Interval, Run: general.pass},
		{Name: "clusters", Interval: opts.Interval, Run: cw.pass},
	}
	if sw, ok := opts.DataPlane.(Sweeper); ok {
		sweep := &sweeper{st: s.st, running: sw, kind: kind.Name, log: log}
		sweep.grace = opts.SweepInterval
		jobs = append(jobs, job{Name: "sweep", Interval: opts.SweepInterval, Everywhere: true, Run: sweep.pass})
	}
	ropts := runtimeOptions{Kind: kind.Name, Notifier: n, Holder: opts.Holder, LeaseTTL: opts.LeaseTTL, Logger: log, metrics: m}
	if shared, ok := st.(SharedStore); ok && shared.NeedsLeader() {
		// Replicas share this store: two running the same worker would
		// each start every instance.
		opts.LeaderElection = true
		s.opts.LeaderElection = true
	}
	if opts.LeaderElection {
		ropts.Leases = st
	}
	// Leases are per kind: prefix the names. The workers that drive the
	// data plane share one lease: a data plane may be per replica (local
	// processes), and with provisioning led by one replica and ready by
	// the other, every instance would be started on both, and one of the
	// two swept — after a failover, the whole fleet twice.
	for i := range workers {
		workers[i].Name = kind.Name + "/" + string(workers[i].Status)
		switch workers[i].Status {
		case StatusProvisioning, StatusReady, StatusDeprovision, StatusDeleting, StatusSuspending, StatusResuming:
			workers[i].Lease = kind.Name + "/" + dataPlaneLease
		}
	}
	for i := range jobs {
		jobs[i].Name = kind.Name + "/" + jobs[i].Name
	}
	if s.rt, err = newRuntime(s.st, workers, jobs, ropts); err != nil {
		return nil, err
	}
	return s, nil
}

// Kind returns the service's normalised kind.
func (s *Service) Kind() Kind { return s.kind }

// Store returns the service's store, wrapped so that writes through it wake
// the workers.
func (s *Service) Store() Store { return s.st }

// Units returns the capacity units an instance of instanceType in size
// consumes: Options.Units of the plan "<instanceType>.<size>", else of
// instanceType, else 1.
func (s *Service) Units(instanceType, size string) int {
	for _, key := range []string{instanceType + "." + size, instanceType} {
		if u, ok := s.opts.Units[key]; ok && u > 0 {
			return u
		}
	}
	return 1
}

// Denied reports whether Options.Denied refuses the owner (false without
// it): the API answers such an owner 403.
func (s *Service) Denied(owner, organisation string) bool {
	return s.opts.Denied != nil && s.opts.Denied(owner, organisation)
}

// Suspend suspends the instance with id, as the original's admin update
// (suspended: true) does: a ready or resuming instance goes to suspending,
// and the workers stop it on the data plane (suspended). It keeps its
// cluster and its quota. Suspending a suspending or suspended instance
// does nothing; any other status is a *TransitionError; an instance of
// another kind, or deleted, ErrNotFound.
func (s *Service) Suspend(ctx context.Context, id string) error {
	return s.moveTo(ctx, id, StatusSuspending, StatusSuspended)
}

// Resume resumes the instance with id (the original's admin update with
// suspended: false): a suspended or suspending instance goes to resuming,
// and the workers start it again (ready). Resuming a resuming or ready
// instance does nothing; any other status is a *TransitionError.
func (s *Service) Resume(ctx context.Context, id string) error {
	return s.moveTo(ctx, id, StatusResuming, StatusReady)
}

// moveTo moves instance id to status to unless it is there or at done
// already; a lost swap (a worker moved it meanwhile) is retried.
func (s *Service) moveTo(ctx context.Context, id string, to, done Status) error {
	for {
		inst, err := s.st.GetInstance(ctx, id)
		if err == nil && (inst.Kind != s.kind.Name || inst.DeletedAt != nil) {
			err = fmt.Errorf("%w: instance %s", ErrNotFound, id)
		}
		if err != nil {
			return err
		}
		if inst.Status == to || inst.Status == done {
			return nil
		}
		if err := CheckTransition(inst.Status, to); err != nil {
			return err
		}
		_, err = s.st.UpdateInstance(ctx, Update{ID: id, From: inst.Status, To: to})
		if !errors.Is(err, ErrConflict) {
			return err
		}
	}
}

// DeprovisionCluster retires the cluster with id (deprovisioning): placement
// stops choosing it once its cluster snapshot is read again (within a
// second), and once its last instance is gone the cluster provider deletes
// it (cleanup). Retiring a deprovisioning or
// cleaned-up cluster does nothing; an unknown one is ErrNotFound.
func (s *Service) DeprovisionCluster(ctx context.Context, id string) error {
	for {
		c, err := s.st.GetCluster(ctx, id)
		if err != nil {
			return err
		}
		if c.Status == cluster.Deprovisioning || c.Status == cluster.Cleanup {
			return nil
		}
		_, err = s.st.UpdateCluster(ctx, cluster.Update{ID: id, From: c.Status, To: cluster.Deprovisioning})
		if !errors.Is(err, ErrConflict) {
			return err
		}
	}
}

// Logger returns the logger of Options.Logger (slog.Default() when nil).
func (s *Service) Logger() *slog.Logger { return s.log }

// Run creates the configured clusters that do not exist yet, retires those
// of Options.Deprovision, then runs the workers until ctx is done.
func (s *Service) Run(ctx context.Context) error {
	for _, c := range s.opts.Clusters {
		if c.Status == "" {
			c.Status = cluster.Accepted
		}
		if err := s.st.CreateCluster(ctx, c); err != nil && !errors.Is(err, cluster.ErrExists) {
			if ctx.Err() != nil {
				return nil // stopped while starting
			}
			return fmt.Errorf("fleet: create cluster %s: %w", c.ID, err)
		}
	}
	for _, id := range s.opts.Deprovision {
		if err := s.DeprovisionCluster(ctx, id); err != nil && !errors.Is(err, ErrNotFound) {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("fleet: deprovision cluster %s: %w", id, err)
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
