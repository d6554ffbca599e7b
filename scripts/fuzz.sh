#!/usr/bin/env bash
# Runs every fuzz target of the module for a short time each (CI does, after
# the tests): a target that finds a crashing input fails the run, and the
# input is written under the package's testdata/fuzz for a regression test.
#
#   scripts/fuzz.sh [PKG...]          FLEETKIT_FUZZTIME=10s (per target)
#
# Without arguments it finds the targets itself (`func FuzzX(f *testing.F)`
# in any _test.go file); go test -fuzz takes one package and one target a
# call, so each runs on its own.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime="${FLEETKIT_FUZZTIME:-10s}"
pkgs=("$@")
[ ${#pkgs[@]} -gt 0 ] || pkgs=(./...)

failed=0
while read -r dir; do
	[ -n "$dir" ] || continue
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*(f \*testing\.F)' "$dir"/*_test.go | sed 's/^func \(Fuzz[A-Za-z0-9_]*\).*/\1/' | sort -u); do
		echo "fuzz: $dir $target ($fuzztime)"
		if ! go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$dir" >"${TMPDIR:-/tmp}/fleetkit-fuzz.log" 2>&1; then
			cat "${TMPDIR:-/tmp}/fleetkit-fuzz.log"
			echo "fuzz: $dir $target FAILED"
			failed=1
		fi
	done
done < <(go list -f '{{if .TestGoFiles}}{{.Dir}}{{end}}{{if .XTestGoFiles}} {{.Dir}}{{end}}' "${pkgs[@]}" | tr ' ' '\n' | sort -u |
	while read -r d; do [ -n "$d" ] && grep -lq '^func Fuzz' "$d"/*_test.go 2>/dev/null && echo "$d"; done)
exit "$failed"
