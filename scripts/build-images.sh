#!/usr/bin/env bash
# Builds the linter images fleetkit/linter:1.0, 1.1, 1.2 and 2.0 from
# examples/linter/Dockerfile, and the fleet manager's image (its data plane
# runs it as the per-instance service with -provider docker) from
# examples/fleet-manager/Dockerfile: static binaries on an empty base, so no
# registry is needed.
# Usage: scripts/build-images.sh [LINTER_PREFIX [FLEET_MANAGER_TAG]]
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-fleetkit/linter}"
fleet_tag="${2:-fleetkit/fleet-manager:latest}"
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT

# build TAG DIR [ARGS...]: docker build exits non-zero on a failed step;
# show its log only then.
build() {
	local tag="$1" dir="$2"
	shift 2
	if ! docker build "$@" -t "$tag" "$dir" >"$ctx/build.log" 2>&1; then
		cat "$ctx/build.log" >&2
		exit 1
	fi
	echo "built $tag"
}

mkdir "$ctx/linter" "$ctx/fleet-manager"
CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$ctx/linter/linter" ./examples/linter
cp examples/linter/Dockerfile "$ctx/linter/"
for v in 1.0 1.1 1.2 2.0; do
	build "$prefix:$v" "$ctx/linter" --build-arg "VERSION=$v"
done

CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$ctx/fleet-manager/fleet-manager" ./examples/fleet-manager
cp examples/fleet-manager/Dockerfile "$ctx/fleet-manager/"
build "$fleet_tag" "$ctx/fleet-manager"
