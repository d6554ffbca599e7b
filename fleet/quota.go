package fleet

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"gopkg.in/yaml.v3"
)

// Quota decides whether an owner may create one more instance. It is
// consulted by the API before an instance is created. Implementations are
// safe for concurrent use.
type Quota interface {
	// CheckQuota returns nil, or an error wrapping ErrMaxInstances (the
	// scope has Live instances already and may not have more) or
	// ErrInsufficientQuota (the instance type is not allowed).
	CheckQuota(ctx context.Context, req QuotaRequest) error
}

// QuotaRequest is one creation to check.
type QuotaRequest struct {
	Owner, Organisation, InstanceType string
	// Live is the number of live instances of the kind in the owner's
	// scope (organisation, else owner).
	Live int
}

// QuotaFunc adapts a function to Quota.
type QuotaFunc func(ctx context.Context, req QuotaRequest) error

// CheckQuota calls f.
func (f QuotaFunc) CheckQuota(ctx context.Context, req QuotaRequest) error { return f(ctx, req) }

// QuotaList is the reference Quota, read from a quota list file like the
// original's quota-management-list:
//
//	organisations:
//	  - id: acme
//	    max_allowed_instances: 5
//	    instance_types: [standard, developer]
//	registered_users:
//	  - username: alice
//	    max_allowed_instances: 2
//	    instance_types: [standard]
//	default:            # everyone else; omit to refuse them
//	  max_allowed_instances: 1
//	  instance_types: [developer]
//
// An organisation entry applies to every member; a user entry applies to a
// user whose token has no organisation in the list. An empty
// instance_types allows every type. It is immutable and safe for
// concurrent use.
type QuotaList struct {
	Organisations   []QuotaEntry `yaml:"organisations"`
	RegisteredUsers []QuotaEntry `yaml:"registered_users"`
	Default         *QuotaEntry  `yaml:"default"`
}

// QuotaEntry is the allowance of one organisation or user.
type QuotaEntry struct {
	ID                  string   `yaml:"id"`
	Username            string   `yaml:"username"`
	MaxAllowedInstances int      `yaml:"max_allowed_instances"`
	InstanceTypes       []string `yaml:"instance_types"`
}

var _ Quota = (*QuotaList)(nil)

// LoadQuotaList reads a quota list file.
func LoadQuotaList(path string) (*QuotaList, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fleet: read quota list: %w", err)
	}
	return ParseQuotaList(b)
}

// ParseQuotaList parses a quota list document.
func ParseQuotaList(b []byte) (*QuotaList, error) {
	var q QuotaList
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&q); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: quota list: %v", ErrInvalid, err)
	}
	for _, e := range append(append([]QuotaEntry(nil), q.Organisations...), q.RegisteredUsers...) {
		if e.MaxAllowedInstances < 0 {
			return nil, fmt.Errorf("%w: quota list: negative max_allowed_instances", ErrInvalid)
		}
	}
	return &q, nil
}

// CheckQuota implements Quota.
func (q *QuotaList) CheckQuota(_ context.Context, req QuotaRequest) error {
	e := q.entry(req.Owner, req.Organisation)
	if e == nil {
		return fmt.Errorf("%w: %s has no quota", ErrInsufficientQuota, req.Owner)
	}
	if len(e.InstanceTypes) > 0 && !slices.Contains(e.InstanceTypes, req.InstanceType) {
		return fmt.Errorf("%w: instance type %q is not allowed", ErrInsufficientQuota, req.InstanceType)
	}
	if req.Live >= e.MaxAllowedInstances {
		return fmt.Errorf("%w: %d of %d", ErrMaxInstances, req.Live, e.MaxAllowedInstances)
	}
	return nil
}

func (q *QuotaList) entry(owner, org string) *QuotaEntry {
	if org != "" {
		for i := range q.Organisations {
			if q.Organisations[i].ID == org {
				return &q.Organisations[i]
			}
		}
	}
	for i := range q.RegisteredUsers {
		if q.RegisteredUsers[i].Username == owner {
			return &q.RegisteredUsers[i]
		}
	}
	return q.Default
}

// DenyList tells whether an owner may use the service at all. Denied
// owners get 403 from the API and their instances are deprovisioned by the
// general worker. Safe for concurrent use; must not block.
type DenyList interface {
	Denied(owner, organisation string) bool
}

// StaticDenyList is the reference DenyList, read from a file:
//
//	users: [mallory]
//	organisations: [evil-corp]
//
// It is immutable and safe for concurrent use.
type StaticDenyList struct {
	Users         []string `yaml:"users"`
	Organisations []string `yaml:"organisations"`
}

var _ DenyList = (*StaticDenyList)(nil)

// LoadDenyList reads a deny list file.
func LoadDenyList(path string) (*StaticDenyList, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fleet: read deny list: %w", err)
	}
	var d StaticDenyList
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&d); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: deny list: %v", ErrInvalid, err)
	}
	return &d, nil
}

// Denied implements DenyList.
func (d *StaticDenyList) Denied(owner, organisation string) bool {
	return slices.Contains(d.Users, owner) || (organisation != "" && slices.Contains(d.Organisations, organisation))
}
