package gitops

import (
	"regexp"
	"strings"
)

// varPattern matches Flux's ${var}, ${var:=default} and ${var:-default}.
var varPattern = regexp.MustCompile(`\$\{([_a-zA-Z][_a-zA-Z0-9]*)(?:(:=|:-)([^}]*))?\}`)

// substitute replaces Flux post-build variables in s. A variable without
// a value and without a default becomes empty, as in Flux.
func substitute(s string, vars map[string]string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return varPattern.ReplaceAllStringFunc(s, func(m string) string {
		sub := varPattern.FindStringSubmatch(m)
		if v, ok := vars[sub[1]]; ok && (v != "" || sub[2] == "") {
			return v
		}
		return sub[3]
	})
}
