package fleet

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"time"
)

// Instance is one managed resource of a Kind (a dinosaur, a kafka).
type Instance struct {
	ID   string
	Kind string // Kind.Name
	Name string
	// Owner is the username that created it; Organisation its organisation
	// ("" when the token had none). Names are unique among live instances
	// of a kind within Scope().
	Owner         string
	Organisation  string
	CloudProvider string
	Region        string
	MultiAZ       bool
	InstanceType  string
	// Size is the size of the instance type the instance has (the second
	// half of the API's plan, "x1" in "standard.x1"); "" when not given.
	Size string
	// Units is the capacity units the instance consumes, recorded at
	// creation (Service.Units of its type and size): they count towards
	// its scope's quota and its cluster's capacity. Stores record 0 as 1.
	Units int
	// BillingModel is how the instance is billed, as the original's
	// billing_model ("standard", "enterprise", "marketplace", "eval");
	// fleetkit records it and bills nothing.
	BillingModel string
	Status       Status
	FailedReason string
	ClusterID    string
	// Host is where the running instance answers, set when ready.
	Host string
	// NoReauthentication turns off the periodic reauthentication of the
	// instance's clients (the API's reauthentication_enabled: false); the
	// zero value is the original's default, on.
	NoReauthentication bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
	// StatusSince is when the instance entered Status: per-state timeouts
	// count from it.
	StatusSince time.Time
	// ExpiresAt is set for trial instances; nil means never.
	ExpiresAt *time.Time
	// DeletedAt is set when the row is soft deleted.
	DeletedAt *time.Time
}

// Scope is what names are unique within: the organisation, else the owner.
func (i Instance) Scope() string { return scopeOf(i.Owner, i.Organisation) }

// scopeOf returns the uniqueness and visibility scope of an owner.
func scopeOf(owner, organisation string) string {
	if organisation != "" {
		return "org:" + organisation
	}
	return "user:" + owner
}

// xidEncoding is the alphabet of xid (base32hex, lower case).
var xidEncoding = base32.NewEncoding("0123456789abcdefghijklmnopqrstuv").WithPadding(base32.NoPadding)

// NewID returns a 20-character xid-style ID: 4 bytes of Unix seconds (so
// IDs sort roughly by creation) and 8 random bytes.
func NewID() string {
	var b [12]byte
	binary.BigEndian.PutUint32(b[:4], uint32(time.Now().Unix()))
	_, _ = rand.Read(b[4:]) // crypto/rand.Read never fails
	return xidEncoding.EncodeToString(b[:])
}
