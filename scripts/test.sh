#!/usr/bin/env bash
# The whole test suite, from a fresh machine: installs what the integration
# tests need (Debian packages), checks the Docker Engine, builds slow test
# tools once into a cache outside the repository, then runs
# `go test -race ./...` and a short run of every fuzz target
# (scripts/fuzz.sh). Extra arguments go to `go test`.
#
# Under CI=true an integration test whose dependency is missing fails
# instead of skipping, so this script is what makes CI green.
#
#   scripts/test.sh --fresh [ARGS...]
#
# first removes what earlier runs left on this machine — fleetkit's Docker
# containers and images, the PostgreSQL server and the whole cache directory
# (kube binaries, staticcheck, the database) — so the run sees the machine
# as a new one would (Debian packages and Go's own caches stay; see the
# README for a colder start).
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${FLEETKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetkit}"
export FLEETKIT_CACHE="$cache"

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

if [ "${1:-}" = --fresh ]; then
	shift
	scripts/clean.sh
fi
mkdir -p "$cache/bin"

# Debian packages: the peer tools the linters are checked against, and the
# corpora they are checked on.
need=()
command -v pycodestyle >/dev/null || need+=(pycodestyle)
command -v checkstyle >/dev/null || need+=(checkstyle)
[ -d /usr/lib/python3.11 ] || need+=(libpython3.11-stdlib)
[ -f /usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip ] || need+=(openjdk-17-source)
if [ ${#need[@]} -gt 0 ]; then
	echo "test.sh: installing ${need[*]}"
	as_root apt-get update -qq
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${need[@]}" >/dev/null
fi
# Headless Chromium for the machine manager's status page (rollout's browser
# test); what it only recommends (a desktop's worth) is not needed headless.
if ! command -v chromium >/dev/null; then
	echo "test.sh: installing chromium"
	as_root apt-get update -qq
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

# The Docker Engine: the machines/docker tests drive real containers.
if ! docker info >/dev/null 2>&1; then
	echo "test.sh: Docker Engine not reachable; trying to start it"
	as_root service docker start >/dev/null 2>&1 || as_root dockerd >/tmp/fleetkit-dockerd.log 2>&1 &
	for _ in $(seq 30); do docker info >/dev/null 2>&1 && break; sleep 1; done
fi

# PostgreSQL on a free loopback port, for fleet/postgres (reused between runs).
eval "$(scripts/start-postgres.sh)"

# The images the Docker and Kubernetes tests run (fleetkit/linter:*,
# fleetkit/fleet-manager, fleetkit/loadbalancer, fleetkit/machine-manager),
# rebuilt only when what goes into them changed.
if docker info >/dev/null 2>&1; then
	scripts/build-images.sh
fi

# Kubernetes built once from Go modules: etcd and kube-apiserver for the
# Helm release scanner's tests; the kubelet, scheduler, controller-manager,
# kube-proxy, CNI plugins and pause image of the single-node cluster
# (internal/kubetest.Cluster) the machines/kubernetes tests run Pods on, and
# deploy installs its chart into.
# Packages that need the node take turns on it (a lock in the cache).
FLEETKIT_KUBE_BIN="$(scripts/kube-testenv.sh)"
export FLEETKIT_KUBE_BIN

# -count=1: go's test cache cannot see what these tests depend on outside
# the repository (images, the database, the kube binaries), so a cached pass
# could hide a machine that lost them. A -count of the caller's wins.
go test -race -timeout 45m -count=1 "$@" ./...

# Every fuzz target for a short time (FLEETKIT_FUZZTIME, default 10s each;
# 0 leaves them out), so an input that crashes a parser is found here.
if [ "${FLEETKIT_FUZZTIME:-10s}" != 0 ]; then
	scripts/fuzz.sh
fi
