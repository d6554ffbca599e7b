package quota

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

// Errors of this package. The fleet API answers ErrMaxInstances with code
// 5, ErrInsufficient with code 120 and ErrDenied with code 4 (403 each).
var (
	// ErrMaxInstances means the owner or organisation reached its maximum
	// number of instances.
	ErrMaxInstances = errors.New("quota: maximum allowed instances reached")
	// ErrInsufficient means the quota does not allow the instance type.
	ErrInsufficient = errors.New("quota: insufficient quota")
	// ErrDenied means the owner or organisation may not use the service.
	ErrDenied = errors.New("quota: denied")
	// ErrInvalid wraps every reason a quota or deny list file is refused.
	ErrInvalid = errors.New("quota: invalid list")
)

// Checker decides whether an owner may create one more instance. The API
// consults it before an instance is created, in the store transaction that
// inserts it. Implementations are safe for concurrent use and quick: the
// check runs under the store's lock on the owner's scope.
type Checker interface {
	// CheckQuota returns nil, or an error wrapping ErrMaxInstances (the
	// scope has Live instances already and may not have more) or
	// ErrInsufficient (the instance type is not allowed).
	CheckQuota(ctx context.Context, req Request) error
}

// Request is one creation to check.
type Request struct {
	Owner, Organisation, InstanceType string
	// Live is the capacity units the live instances of the kind in the
	// owner's scope (organisation, else owner) consume: their number when
	// each is one unit.
	Live int
	// Units is the capacity units the new instance consumes (0: one).
	Units int
}

// CheckerFunc adapts a function to Checker.
type CheckerFunc func(ctx context.Context, req Request) error

// CheckQuota calls f.
func (f CheckerFunc) CheckQuota(ctx context.Context, req Request) error { return f(ctx, req) }

// List is the reference Checker, read from a quota list file like the
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
// max_allowed_instances counts capacity units, as the original's
// streaming units: an instance of a size of 2 units counts as two.
// An organisation entry applies to every member; a user entry applies to a
// user whose token has no organisation in the list. An empty
// instance_types allows every type. It is immutable and safe for
// concurrent use.
type List struct {
	Organisations   []Entry `yaml:"organisations"`
	RegisteredUsers []Entry `yaml:"registered_users"`
	Default         *Entry  `yaml:"default"`
}

// Entry is the allowance of one organisation or user.
type Entry struct {
	ID                  string   `yaml:"id"`
	Username            string   `yaml:"username"`
	MaxAllowedInstances int      `yaml:"max_allowed_instances"`
	InstanceTypes       []string `yaml:"instance_types"`
}

var _ Checker = (*List)(nil)

// LoadList reads a quota list file.
func LoadList(path string) (*List, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("quota: read quota list: %w", err)
	}
	return ParseList(b)
}

// ParseList parses a quota list document.
func ParseList(b []byte) (*List, error) {
	var q List
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&q); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: quota list: %v", ErrInvalid, err)
	}
	for _, e := range append(append([]Entry(nil), q.Organisations...), q.RegisteredUsers...) {
		if e.MaxAllowedInstances < 0 {
			return nil, fmt.Errorf("%w: quota list: negative max_allowed_instances", ErrInvalid)
		}
	}
	return &q, nil
}

// CheckQuota implements Quota.
func (q *List) CheckQuota(_ context.Context, req Request) error {
	e := q.entry(req.Owner, req.Organisation)
	if e == nil {
		return fmt.Errorf("%w: %s has no quota", ErrInsufficient, req.Owner)
	}
	if len(e.InstanceTypes) > 0 && !slices.Contains(e.InstanceTypes, req.InstanceType) {
		return fmt.Errorf("%w: instance type %q is not allowed", ErrInsufficient, req.InstanceType)
	}
	// As the original's streaming units: a size counts as many instances
	// as it consumes capacity units.
	if req.Live+max(req.Units, 1) > e.MaxAllowedInstances {
		return fmt.Errorf("%w: %d + %d of %d", ErrMaxInstances, req.Live, max(req.Units, 1), e.MaxAllowedInstances)
	}
	return nil
}

func (q *List) entry(owner, org string) *Entry {
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

// DenyList is the reference deny list, read from a file; its Denied
// method is a fleet.Options.Denied:
//
//	users: [mallory]
//	organisations: [evil-corp]
//
// It is immutable and safe for concurrent use.
type DenyList struct {
	Users         []string `yaml:"users"`
	Organisations []string `yaml:"organisations"`
}

// LoadDenyList reads a deny list file.
func LoadDenyList(path string) (*DenyList, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("quota: read deny list: %w", err)
	}
	var d DenyList
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&d); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: deny list: %v", ErrInvalid, err)
	}
	return &d, nil
}

// Denied reports whether the owner or organisation is on the list.
func (d *DenyList) Denied(owner, organisation string) bool {
	return slices.Contains(d.Users, owner) || (organisation != "" && slices.Contains(d.Organisations, organisation))
}
