package deprecation

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// Version is a release version such as v1.22.0. Kubernetes versions are
// compared on major, minor and patch only: a suffix such as "-eks-a5565ad"
// or "+k3s1" is accepted by ParseVersion and dropped. The zero Version
// means "unset" (an empty deprecated-in or removed-in in a rules file).
// Version is comparable, so it can be used with == and as a map key.
type Version struct {
	Major, Minor, Patch int
}

// ParseVersion parses "v1.22", "1.22.3" or "v1.27.3-eks-a5565ad". The
// leading "v" is optional; major and minor are required.
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(t, "-+"); i >= 0 {
		t = t[:i]
	}
	parts := strings.Split(t, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("%w: %q: want v<major>.<minor>[.<patch>]", ErrInvalidVersion, s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || p == "" || p[0] == '+' {
			return Version{}, fmt.Errorf("%w: %q: %q is not a number", ErrInvalidVersion, s, p)
		}
		n[i] = v
	}
	return Version{Major: n[0], Minor: n[1], Patch: n[2]}, nil
}

// MustParseVersion is ParseVersion for constants; it panics on error.
func MustParseVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// String returns "v1.22.0", or "" for the zero Version.
func (v Version) String() string {
	if v.IsZero() {
		return ""
	}
	return fmt.Sprintf("v%d.%d.%d", v.Major, v.Minor, v.Patch)
}

// IsZero reports whether v is unset.
func (v Version) IsZero() bool { return v == Version{} }

// Compare returns -1, 0 or +1 as v is older than, equal to or newer than w.
func (v Version) Compare(w Version) int {
	if c := cmp.Compare(v.Major, w.Major); c != 0 {
		return c
	}
	if c := cmp.Compare(v.Minor, w.Minor); c != 0 {
		return c
	}
	return cmp.Compare(v.Patch, w.Patch)
}

// Less reports whether v is older than w.
func (v Version) Less(w Version) bool { return v.Compare(w) < 0 }

// minorsLater returns the first release n minor versions after v's minor
// line: v1.30.4 and n=2 give v1.32.0.
func (v Version) minorsLater(n int) Version {
	return Version{Major: v.Major, Minor: v.Minor + n}
}

// MarshalText implements encoding.TextMarshaler; the zero Version is "".
func (v Version) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; "" is the zero Version.
func (v *Version) UnmarshalText(b []byte) error {
	if len(strings.TrimSpace(string(b))) == 0 {
		*v = Version{}
		return nil
	}
	p, err := ParseVersion(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}
