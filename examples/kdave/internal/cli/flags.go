package cli

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// listFlag collects comma-separated values, repeatable (pluto's
// StringSlice flags: --columns, --components).
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			*l = append(*l, item)
		}
	}
	return nil
}

// mapFlag collects key=value pairs, comma-separated, repeatable (pluto's
// StringToString flag --target-versions k8s=v1.30,cert-manager=v1.15;
// -sources name=path).
type mapFlag map[string]string

func (m mapFlag) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}

func (m mapFlag) Set(v string) error {
	for _, kv := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(kv, "=")
		k, val = strings.TrimSpace(k), strings.TrimSpace(val)
		if !ok || k == "" || val == "" {
			return fmt.Errorf("want key=value, got %q", kv)
		}
		m[k] = val
	}
	return nil
}

// appendFlag adds each value to a list (-d DIR adds a path).
type appendFlag []string

func (a *appendFlag) String() string { return strings.Join(*a, ",") }

func (a *appendFlag) Set(v string) error {
	*a = append(*a, v)
	return nil
}

// shorthandValues are pluto's one-letter flags that take a value; pluto
// (pflag) accepts it attached: -owide, -ojson, -tk8s=v1.25.
const shorthandValues = "otfdn"

// splitAttached rewrites "-owide" as "-o", "wide" when "owide" is not a
// flag of fs, as pflag reads it.
func splitAttached(fs *flag.FlagSet, args []string) []string {
	var out []string
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...)
		}
		if len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.IndexByte(shorthandValues, a[1]) >= 0 {
			name, _, _ := strings.Cut(a[1:], "=")
			if fs.Lookup(name) == nil {
				out = append(out, a[:2], strings.TrimPrefix(a[2:], "="))
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// parseInterleaved parses flags anywhere among the arguments, as users
// type them (kdave check dir/ -o json): what is not a flag is a path.
// After "--" everything is a path.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	args = splitAttached(fs, args)
	var paths []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return paths, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(paths, rest...), nil
		}
		paths = append(paths, rest[0])
		args = rest[1:]
	}
}
