#!/usr/bin/env bash
# Builds the linter images fleetkit/linter:1.0, 1.1, 1.2 and 2.0 from
# examples/linter/Dockerfile: a static binary on an empty base, so no
# registry is needed. Usage: scripts/build-images.sh [TAG_PREFIX]
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-fleetkit/linter}"
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT

CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$ctx/linter" ./examples/linter
cp examples/linter/Dockerfile "$ctx/"
for v in 1.0 1.1 1.2 2.0; do
	# docker build exits non-zero on a failed step; show its log only then.
	if ! docker build --build-arg "VERSION=$v" -t "$prefix:$v" "$ctx" >"$ctx/build.log" 2>&1; then
		cat "$ctx/build.log" >&2
		exit 1
	fi
	echo "built $prefix:$v"
done
