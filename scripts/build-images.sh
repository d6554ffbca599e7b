#!/usr/bin/env bash
# Builds the linter images fleetkit/linter:1.0, 1.1, 1.2 and 2.0 from
# examples/linter/Dockerfile, the fleet manager's image (its data plane
# runs it as the per-instance service with -provider docker) from
# examples/fleet-manager/Dockerfile, and the load balancer's and the machine
# manager's images (the chart deploy/linter-fleet runs them) from
# examples/loadbalancer and examples/machine-manager, kdave's exporter
# (fleetkit/kdave:latest, the chart deploy/kdave runs it) from
# examples/kdave, and the fleet agent's (the agent data plane's, in each
# data-plane cluster) from examples/fleet-agent: static binaries on an
# empty base, so no registry is needed.
#
# Idempotent: each image carries the label io.fleetkit.inputs, a hash of
# everything that went into it (the static binary, the Dockerfile, the build
# arguments). An image whose label matches what would be built now is left
# alone, so a warm run costs six `go build`s that the build cache answers.
# Binaries are built with -trimpath and without VCS stamps, so the same
# source gives the same bytes whatever the commit or checkout path.
#
# Usage: scripts/build-images.sh [LINTER_PREFIX [FLEET_MANAGER_TAG [LOADBALANCER_TAG [MACHINE_MANAGER_TAG [FLEET_AGENT_TAG]]]]]
# (kdave's tag: $KDAVE_TAG, default fleetkit/kdave:latest)
set -euo pipefail
cd "$(dirname "$0")/.."
prefix="${1:-fleetkit/linter}"
fleet_tag="${2:-fleetkit/fleet-manager:latest}"
lb_tag="${3:-fleetkit/loadbalancer:latest}"
mm_tag="${4:-fleetkit/machine-manager:latest}"
agent_tag="${5:-fleetkit/fleet-agent:latest}"
cache="${FLEETKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetkit}"
label=io.fleetkit.inputs
ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT

# Two runs at once (two checkouts, a developer and a test) would race on
# the same tags: take turns.
mkdir -p "$cache"
exec 9>"$cache/images.lock"
flock 9

# ensure TAG DIR [BUILD_ARG...]: builds DIR as TAG unless TAG already holds
# exactly these inputs. docker build's log is shown only when it fails.
ensure() {
	local tag="$1" dir="$2"
	shift 2
	local inputs have args=()
	inputs="$({
		(cd "$dir" && sha256sum -- *)
		printf 'build-arg %s\n' "$@"
	} | sha256sum | cut -d' ' -f1)"
	have="$(docker image inspect -f "{{index .Config.Labels \"$label\"}}" "$tag" 2>/dev/null || true)"
	if [ "$have" = "$inputs" ]; then
		echo "up to date $tag"
		return
	fi
	for a in "$@"; do args+=(--build-arg "$a"); done
	if ! docker build "${args[@]}" --label "$label=$inputs" -t "$tag" "$dir" >"$ctx/build.log" 2>&1; then
		cat "$ctx/build.log" >&2
		exit 1
	fi
	echo "built $tag"
}

gobuild() {
	CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags='-s -w' -o "$1" "$2"
}

mkdir "$ctx/linter" "$ctx/fleet-manager"
gobuild "$ctx/linter/linter" ./examples/linter
cp examples/linter/Dockerfile "$ctx/linter/"
for v in 1.0 1.1 1.2 2.0; do
	ensure "$prefix:$v" "$ctx/linter" "VERSION=$v"
done

gobuild "$ctx/fleet-manager/fleet-manager" ./examples/fleet-manager
cp examples/fleet-manager/Dockerfile "$ctx/fleet-manager/"
ensure "$fleet_tag" "$ctx/fleet-manager"

for b in loadbalancer:"$lb_tag" machine-manager:"$mm_tag" fleet-agent:"$agent_tag"; do
	name="${b%%:*}" tag="${b#*:}"
	mkdir "$ctx/$name"
	gobuild "$ctx/$name/$name" "./examples/$name"
	cp "examples/$name/Dockerfile" "$ctx/$name/"
	ensure "$tag" "$ctx/$name"
done

# kdave's image holds kdave-full, which has every command kdave has and
# serve, under the name kdave: one binary, no delegation.
mkdir "$ctx/kdave"
gobuild "$ctx/kdave/kdave" ./examples/kdave/kdave-full
cp examples/kdave/Dockerfile "$ctx/kdave/"
ensure "${KDAVE_TAG:-fleetkit/kdave:latest}" "$ctx/kdave"

# A rebuilt tag leaves its old image untagged; drop such leftovers of ours
# (the Dockerfiles label every fleetkit image with io.fleetkit.component).
docker image prune -f --filter label=io.fleetkit.component >/dev/null
