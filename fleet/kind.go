package fleet

import (
	"fmt"
	"regexp"
	"strings"
)

// Kind is the resource a fleet manages. The whole package is generic over
// it: the API paths, the error code prefix and the JSON "kind" fields
// follow from it.
type Kind struct {
	// Name is the singular lower-case name: "dinosaur", "kafka".
	Name string
	// Plural is the plural used in paths; "" means Name + "s".
	Plural string
	// Display is the name in JSON bodies: "Dinosaur"; "" means Name with
	// its first letter upper-cased.
	Display string
	// HostField is the JSON name of Instance.Host in API bodies; "" means
	// "host" (Kafka's is "bootstrap_server_host").
	HostField string
}

// The kinds of the seeds. Treat them as constants.
var (
	Dinosaur = Kind{Name: "dinosaur", Plural: "dinosaurs", Display: "Dinosaur"}
	Kafka    = Kind{Name: "kafka", Plural: "kafkas", Display: "Kafka", HostField: "bootstrap_server_host"}
)

var kindNameRE = regexp.MustCompile(`^[a-z][a-z0-9]*$`)

// Normalize fills the defaults and validates k.
func (k Kind) Normalize() (Kind, error) {
	if !kindNameRE.MatchString(k.Name) {
		return k, fmt.Errorf("%w: kind name %q must match %s", ErrInvalid, k.Name, kindNameRE)
	}
	if k.Plural == "" {
		k.Plural = k.Name + "s"
	}
	if !kindNameRE.MatchString(k.Plural) {
		return k, fmt.Errorf("%w: kind plural %q must match %s", ErrInvalid, k.Plural, kindNameRE)
	}
	if k.Display == "" {
		k.Display = strings.ToUpper(k.Name[:1]) + k.Name[1:]
	}
	if k.HostField == "" {
		k.HostField = "host"
	}
	return k, nil
}

// BasePath is the API prefix: "/api/dinosaurs_mgmt/v1".
func (k Kind) BasePath() string { return "/api/" + k.plural() + "_mgmt/v1" }

// CodePrefix prefixes error codes: "DINOSAURS-MGMT".
func (k Kind) CodePrefix() string { return strings.ToUpper(k.plural()) + "-MGMT" }

func (k Kind) plural() string {
	if k.Plural == "" {
		return k.Name + "s"
	}
	return k.Plural
}
