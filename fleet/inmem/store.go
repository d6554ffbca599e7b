package inmem

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fleetkit/fleetkit/fleet"
	"github.com/fleetkit/fleetkit/fleet/cluster"
	"github.com/fleetkit/fleetkit/fleet/lease"
	"github.com/fleetkit/fleetkit/fleet/search"
)

// Store is the in-memory fleet.Store: the rows live in maps under one
// mutex, so every write is atomic and serialised, as in a database with a
// single writer. It passes fleet/storetest's conformance suite. It is safe
// for concurrent use, never blocks on I/O and holds nothing after the
// process ends; several replicas cannot share it (use fleet/postgres).
type Store struct {
	mu        sync.Mutex
	instances map[string]fleet.Instance      // guarded by mu: by ID
	clusters  map[string]cluster.Cluster     // guarded by mu: by ID
	leases    map[string]lease.Lease         // guarded by mu: by name
	agents    map[agentKey]fleet.AgentReport // guarded by mu: by kind and cluster
}

var (
	_ fleet.Store        = (*Store)(nil)
	_ fleet.AgentReports = (*Store)(nil)
)

// NewStore returns an empty store.
func NewStore() *Store {
	return &Store{instances: map[string]fleet.Instance{}, clusters: map[string]cluster.Cluster{}, leases: map[string]lease.Lease{}, agents: map[agentKey]fleet.AgentReport{}}
}

// now is the store's clock, in UTC like the SQL stores'.
func now() time.Time { return time.Now().UTC() }

// CreateInstance implements fleet.Store.
func (s *Store) CreateInstance(ctx context.Context, inst fleet.Instance) error {
	return s.CreateInstanceChecked(ctx, inst, func(int) error { return nil })
}

// CreateInstanceChecked implements fleet.Store: the count, the
// check and the insert hold the store's lock.
func (s *Store) CreateInstanceChecked(_ context.Context, inst fleet.Instance, check func(live int) error) error {
	if inst.ID == "" {
		return fmt.Errorf("%w: instance without ID", fleet.ErrInvalid)
	}
	if !inst.Status.Valid() {
		return fmt.Errorf("%w: status %q", fleet.ErrInvalid, inst.Status)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	live := 0
	for _, i := range s.instances {
		if i.DeletedAt == nil && i.Kind == inst.Kind && i.Scope() == inst.Scope() {
			live++
		}
	}
	if err := check(live); err != nil {
		return err
	}
	if _, ok := s.instances[inst.ID]; ok {
		return fmt.Errorf("%w: instance %s", cluster.ErrExists, inst.ID)
	}
	if inst.DeletedAt == nil {
		for _, i := range s.instances {
			if i.DeletedAt == nil && i.Kind == inst.Kind && i.Name == inst.Name && i.Scope() == inst.Scope() {
				return fmt.Errorf("%w: %s %q", fleet.ErrNameTaken, inst.Kind, inst.Name)
			}
		}
		if err := s.hostFree(inst.ID, inst.Host); err != nil {
			return err
		}
	}
	s.instances[inst.ID] = clone(inst)
	return nil
}

// hostFree returns ErrHostTaken when another live row records host.
// Called with mu held.
func (s *Store) hostFree(id, host string) error {
	if host == "" {
		return nil
	}
	for _, i := range s.instances {
		if i.ID != id && i.DeletedAt == nil && i.Host == host {
			return fmt.Errorf("%w: %s", fleet.ErrHostTaken, host)
		}
	}
	return nil
}

// GetInstance implements fleet.Store.
func (s *Store) GetInstance(_ context.Context, id string) (fleet.Instance, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.instances[id]
	if !ok {
		return fleet.Instance{}, fmt.Errorf("%w: instance %s", fleet.ErrNotFound, id)
	}
	return clone(i), nil
}

// ListInstances implements fleet.Store.
func (s *Store) ListInstances(_ context.Context, q fleet.Query) ([]fleet.Instance, int, error) {
	s.mu.Lock()
	var sel []fleet.Instance
	var err error
	for _, i := range s.instances {
		var ok bool
		if ok, err = selects(q, i); err != nil {
			break
		}
		if ok {
			sel = append(sel, clone(i))
		}
	}
	s.mu.Unlock()
	if err != nil || q.Size < 0 || len(sel) == 0 {
		return nil, len(sel), err
	}
	if err := sortInstances(sel, q.OrderBy); err != nil {
		return nil, 0, err
	}
	size := q.PageSize()
	from := (max(q.Page, 1) - 1) * size
	if from >= len(sel) {
		return nil, len(sel), nil
	}
	return sel[from:min(from+size, len(sel))], len(sel), nil
}

// selects reports whether q selects i.
func selects(q fleet.Query, i fleet.Instance) (bool, error) {
	switch {
	case !q.IncludeDeleted && i.DeletedAt != nil,
		q.Kind != "" && i.Kind != q.Kind,
		q.Organisation != "" && i.Organisation != q.Organisation,
		q.Organisation == "" && q.Owner != "" && i.Owner != q.Owner,
		len(q.Statuses) > 0 && !slices.Contains(q.Statuses, i.Status),
		q.ClusterID != "" && i.ClusterID != q.ClusterID:
		return false, nil
	}
	if q.Search == nil {
		return true, nil
	}
	return matches(q.Search, i)
}

// field returns the searchable or orderable field of i.
func field(i fleet.Instance, name string) (string, bool) {
	switch name {
	case "id":
		return i.ID, true
	case "name":
		return i.Name, true
	case "owner":
		return i.Owner, true
	case "organisation":
		return i.Organisation, true
	case "cloud_provider":
		return i.CloudProvider, true
	case "region":
		return i.Region, true
	case "status":
		return string(i.Status), true
	case "instance_type":
		return i.InstanceType, true
	case "cluster_id":
		return i.ClusterID, true
	}
	return "", false
}

// matches evaluates a search expression on i, as the SQL stores render it.
func matches(e search.Expr, i fleet.Instance) (bool, error) {
	switch e := e.(type) {
	case search.Cond:
		if !slices.Contains(search.Fields(), e.Field) {
			return false, search.Errorf("field %q", e.Field)
		}
		v, _ := field(i, e.Field)
		one := len(e.Values) == 1
		switch {
		case e.Op == search.OpEq && one:
			return v == e.Values[0], nil
		case e.Op == search.OpNe && one:
			return v != e.Values[0], nil
		case e.Op == search.OpIn && len(e.Values) > 0:
			return slices.Contains(e.Values, v), nil
		case e.Op == search.OpNotIn && len(e.Values) > 0:
			return !slices.Contains(e.Values, v), nil
		case e.Op == search.OpLike && one:
			return like(e.Values[0], false).MatchString(v), nil
		case e.Op == search.OpILike && one:
			return like(e.Values[0], true).MatchString(v), nil
		}
		return false, search.Errorf("operator %q with %d values", e.Op, len(e.Values))
	case search.And, search.Or:
		terms, all := []search.Expr(nil), false
		if a, ok := e.(search.And); ok {
			terms, all = a, true
		} else {
			terms = e.(search.Or)
		}
		if len(terms) == 0 {
			return false, search.Errorf("empty %s", map[bool]string{true: "AND", false: "OR"}[all])
		}
		for _, t := range terms {
			ok, err := matches(t, i)
			if err != nil {
				return false, err
			}
			if ok != all {
				return ok, nil
			}
		}
		return all, nil
	}
	return false, search.Errorf("unknown expression %T", e)
}

// like compiles a SQL LIKE pattern: % any run, _ any one character.
func like(pattern string, fold bool) *regexp.Regexp {
	var b strings.Builder
	if fold {
		b.WriteString("(?i)")
	}
	b.WriteString("^")
	for _, r := range pattern {
		switch r {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// sortInstances orders by the terms (created_at first when none), then ID.
func sortInstances(is []fleet.Instance, order []fleet.Order) error {
	if len(order) == 0 {
		order = []fleet.Order{{Field: "created_at"}}
	}
	for _, o := range order {
		if _, ok := field(fleet.Instance{}, o.Field); !ok && !slices.Contains([]string{"created_at", "updated_at", "status_since"}, o.Field) {
			return fmt.Errorf("%w: cannot order by %q", fleet.ErrInvalid, o.Field)
		}
	}
	slices.SortStableFunc(is, func(a, b fleet.Instance) int {
		for _, o := range order {
			c := compareField(a, b, o.Field)
			if o.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return strings.Compare(a.ID, b.ID)
	})
	return nil
}

func compareField(a, b fleet.Instance, name string) int {
	switch name {
	case "created_at":
		return a.CreatedAt.Compare(b.CreatedAt)
	case "updated_at":
		return a.UpdatedAt.Compare(b.UpdatedAt)
	case "status_since":
		return a.StatusSince.Compare(b.StatusSince)
	}
	va, _ := field(a, name)
	vb, _ := field(b, name)
	return strings.Compare(va, vb)
}

// fenced returns ErrStaleFence unless f is zero or the lease's current
// token. Called with mu held.
func (s *Store) fenced(f lease.Fence) error {
	if f.IsZero() {
		return nil
	}
	if l, ok := s.leases[f.Lease]; !ok || l.Token != f.Token {
		return fmt.Errorf("%w: lease %s token %d", lease.ErrStaleFence, f.Lease, f.Token)
	}
	return nil
}

// UpdateInstance implements fleet.Store.
func (s *Store) UpdateInstance(_ context.Context, u fleet.Update) (fleet.Instance, error) {
	to := u.To
	if to == "" {
		to = u.From
	}
	if err := fleet.CheckTransition(u.From, to); err != nil {
		return fleet.Instance{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i, ok := s.instances[u.ID]
	if !ok || i.DeletedAt != nil {
		return fleet.Instance{}, fmt.Errorf("%w: instance %s", fleet.ErrNotFound, u.ID)
	}
	if i.Status != u.From {
		return fleet.Instance{}, &fleet.ConflictError{ID: u.ID, Expected: string(u.From), Actual: string(i.Status)}
	}
	if err := s.fenced(u.Fence); err != nil {
		return fleet.Instance{}, err
	}
	if u.Host != nil && !u.SoftDelete {
		if err := s.hostFree(i.ID, *u.Host); err != nil {
			return fleet.Instance{}, err
		}
	}
	if u.Owner != nil {
		if *u.Owner == "" {
			return fleet.Instance{}, fmt.Errorf("%w: empty owner for %s", fleet.ErrInvalid, u.ID)
		}
		moved := i
		moved.Owner = *u.Owner
		for _, o := range s.instances {
			if o.ID != i.ID && o.DeletedAt == nil && o.Kind == i.Kind && o.Name == i.Name && o.Scope() == moved.Scope() {
				return fleet.Instance{}, fmt.Errorf("%w: %s", fleet.ErrNameTaken, i.Name)
			}
		}
	}
	t := now()
	i.UpdatedAt = t
	if to != i.Status {
		i.Status, i.StatusSince = to, t
	}
	if u.ClusterID != nil {
		i.ClusterID = *u.ClusterID
	}
	if u.Host != nil {
		i.Host = *u.Host
	}
	if u.FailedReason != nil {
		i.FailedReason = *u.FailedReason
	}
	if u.Owner != nil {
		i.Owner = *u.Owner
	}
	if u.NoReauthentication != nil {
		i.NoReauthentication = *u.NoReauthentication
	}
	if u.SoftDelete {
		i.DeletedAt = &t
	}
	s.instances[i.ID] = i
	return clone(i), nil
}

// CreateCluster implements fleet.Store.
func (s *Store) CreateCluster(_ context.Context, c cluster.Cluster) error {
	if c.ID == "" {
		return fmt.Errorf("%w: cluster without ID", fleet.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.clusters[c.ID]; ok {
		return fmt.Errorf("%w: cluster %s", cluster.ErrExists, c.ID)
	}
	c = c.Created(now())
	c.InstanceTypes = slices.Clone(c.InstanceTypes)
	s.clusters[c.ID] = c
	return nil
}

// GetCluster implements fleet.Store.
func (s *Store) GetCluster(_ context.Context, id string) (cluster.Cluster, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clusters[id]
	if !ok {
		return cluster.Cluster{}, fmt.Errorf("%w: cluster %s", fleet.ErrNotFound, id)
	}
	c.InstanceTypes = slices.Clone(c.InstanceTypes)
	return c, nil
}

// ListClusters implements fleet.Store.
func (s *Store) ListClusters(_ context.Context) ([]cluster.Cluster, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]cluster.Cluster, 0, len(s.clusters))
	for _, c := range s.clusters {
		c.InstanceTypes = slices.Clone(c.InstanceTypes)
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b cluster.Cluster) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// UpdateCluster implements fleet.Store.
func (s *Store) UpdateCluster(_ context.Context, u cluster.Update) (cluster.Cluster, error) {
	to := u.To
	if to == "" {
		to = u.From
	}
	if err := fleet.CheckTransition(u.From, to); err != nil {
		return cluster.Cluster{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clusters[u.ID]
	if !ok {
		return cluster.Cluster{}, fmt.Errorf("%w: cluster %s", fleet.ErrNotFound, u.ID)
	}
	if c.Status != u.From {
		return cluster.Cluster{}, &fleet.ConflictError{ID: u.ID, Expected: string(u.From), Actual: string(c.Status)}
	}
	if err := s.fenced(u.Fence); err != nil {
		return cluster.Cluster{}, err
	}
	t := now()
	c.UpdatedAt = t
	if to != c.Status {
		c.Status, c.StatusSince = to, t
	}
	if u.FailedReason != nil {
		c.FailedReason = *u.FailedReason
	}
	s.clusters[c.ID] = c
	c.InstanceTypes = slices.Clone(c.InstanceTypes)
	return c, nil
}

// AcquireLease implements fleet.Store.
func (s *Store) AcquireLease(_ context.Context, name, holder string, ttl time.Duration) (lease.Lease, error) {
	if name == "" || holder == "" || ttl <= 0 {
		return lease.Lease{}, fmt.Errorf("%w: lease needs a name, a holder and a positive ttl", fleet.ErrInvalid)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := now()
	cur, ok := s.leases[name]
	l := lease.Lease{Name: name, Holder: holder, Token: 1, ExpiresAt: t.Add(ttl)}
	switch {
	case !ok:
	case cur.Holder == holder:
		l.Token = cur.Token // renewal
	case cur.ExpiresAt.After(t):
		return lease.Lease{}, fmt.Errorf("%w: %s held by %s until %s", lease.ErrHeld, name, cur.Holder, cur.ExpiresAt.Format(time.RFC3339Nano))
	default:
		l.Token = cur.Token + 1 // take-over: the new token fences the old holder
	}
	s.leases[name] = l
	return l, nil
}

// ReleaseLease implements fleet.Store.
func (s *Store) ReleaseLease(_ context.Context, l lease.Lease) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.leases[l.Name]; ok && cur.Holder == l.Holder && cur.Token == l.Token {
		cur.ExpiresAt = time.Unix(0, 0).UTC()
		s.leases[l.Name] = cur
	}
	return nil
}

// clone copies the pointer fields of i, so that callers never share them
// with the stored row.
func clone(i fleet.Instance) fleet.Instance {
	if i.ExpiresAt != nil {
		t := *i.ExpiresAt
		i.ExpiresAt = &t
	}
	if i.DeletedAt != nil {
		t := *i.DeletedAt
		i.DeletedAt = &t
	}
	return i
}
