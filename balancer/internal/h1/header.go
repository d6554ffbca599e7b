package h1

import (
	"net/http"
	"strings"
)

// headerSpace is the storage of a parsed header that a connection reuses
// for each request: the map and the backing array of its values.
type headerSpace struct {
	h    http.Header
	vals []string
}

// parseHeaderLines parses CRLF-separated header lines (a final CRLF is
// optional) into a Header, calling field for each name and value (false gives up).
// It accepts only what http.ReadResponse and http.ReadRequest parse alike:
// canonical token names (other spellings are left to them, which
// canonicalize) and values without control characters, trimmed of spaces
// and tabs. The values of single-valued keys share one backing array.
// With space, the Header is built in its storage (the previous one it held
// is overwritten); with nil, in new storage.
func parseHeaderLines(space *headerSpace, lines string, field func(k, v string) bool) (http.Header, bool) {
	n := strings.Count(lines, "\r\n") + 1
	var h http.Header
	var vals []string
	if space == nil {
		h, vals = make(http.Header, n), make([]string, n)
	} else {
		if space.h == nil {
			space.h = make(http.Header, n)
		}
		if cap(space.vals) < n {
			space.vals = make([]string, n)
		}
		h, vals = space.h, space.vals[:n]
		clear(h)
		clear(vals)
	}
	for i := 0; lines != ""; i++ {
		var line string
		line, lines, _ = strings.Cut(lines, "\r\n")
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			return nil, false
		}
		if k, ok = headerKey(k); !ok {
			return nil, false
		}
		v = strings.Trim(v, " \t")
		for j := 0; j < len(v); j++ {
			if b := v[j]; (b < ' ' && b != '\t') || b == 0x7f {
				return nil, false
			}
		}
		if !field(k, v) {
			return nil, false
		}
		if vv, dup := h[k]; dup {
			h[k] = append(vv, v)
			continue
		}
		vals[i] = v
		h[k] = vals[i : i+1 : i+1]
	}
	return h, true
}

// headerKey returns the header name k in canonical form ("Content-Type",
// as net/http gives it), copied only when k is not; false when k is not a
// non-empty token.
func headerKey(k string) (string, bool) {
	if k == "" {
		return "", false
	}
	canonical, upper := true, true
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c >= 'A' && c <= 'Z':
			canonical = canonical && upper
		case c >= 'a' && c <= 'z':
			canonical = canonical && !upper
		case c >= '0' && c <= '9':
		case c == '-':
			upper = true
			continue
		case strings.IndexByte("!#$%&'*+.^_`|~", c) >= 0:
		default:
			return "", false
		}
		upper = false
	}
	if !canonical {
		k = http.CanonicalHeaderKey(k)
	}
	return k, true
}

// parseLength parses a Content-Length value: decimal digits only.
func parseLength(v string) (int64, bool) {
	if v == "" || len(v) > 15 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, false
		}
		n = n*10 + int64(v[i]-'0')
	}
	return n, true
}

// validName reports whether name, the path after the fast path's prefix,
// is one it takes: letters, digits and "-._+", starting with a letter or digit. Any
// other path (escapes, dot segments, slashes) goes to net/http.
func validName(name string) bool {
	if name == "" || !isAlnum(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '-' && c != '.' && c != '_' && c != '+' {
			return false
		}
	}
	return true
}

// validQuery reports whether q holds only visible ASCII other than '#'.
func validQuery(q string) bool {
	for i := 0; i < len(q); i++ {
		if c := q[i]; c <= ' ' || c >= 0x7f || c == '#' {
			return false
		}
	}
	return true
}

// validHost reports whether h is a plain host[:port] or [v6]:port; others
// go to net/http, which knows every rule.
func validHost(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !isAlnum(c) && c != '.' && c != '-' && c != ':' && c != '[' && c != ']' && c != '_' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// IsHopHeader reports whether k is a hop-by-hop header (RFC 9110 7.6.1), or
// Expect, which a proxy that read the body has answered: such headers are
// not passed on.
func IsHopHeader(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
		"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "Expect":
		return true
	}
	return false
}
