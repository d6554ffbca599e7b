#!/usr/bin/env bash
# Removes what fleetkit's commands leave on a machine, so the next
# `make test` starts as it would on a new one: fleetkit's Docker containers
# (io.fleetkit.managed, or from an image labelled io.fleetkit.component)
# and images (fleetkit/*, fleetkit-test/*, or labelled), the PostgreSQL
# server of scripts/start-postgres.sh, what a dead test node left on the
# host (scripts/kube-testenv.sh down), and the cache directory
# (${FLEETKIT_CACHE:-~/.cache/fleetkit}: kube binaries, staticcheck, the
# database). Debian packages and Go's module and build caches stay; for a
# colder start add `go clean -cache -modcache`.
set -euo pipefail
cd "$(dirname "$0")/.."
cache="${FLEETKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetkit}"

if docker info >/dev/null 2>&1; then
	containers="$({
		docker ps -aq --filter label=io.fleetkit.managed
		docker ps -aq --filter label=io.fleetkit.component
	} | sort -u)"
	if [ -n "$containers" ]; then
		echo "clean: removing $(echo "$containers" | wc -l) container(s)"
		docker rm -f $containers >/dev/null
	fi
	images="$({
		docker images -q --filter label=io.fleetkit.component
		docker images -q --filter reference='fleetkit/*'
		docker images -q --filter reference='fleetkit-test/*'
	} | sort -u)"
	if [ -n "$images" ]; then
		echo "clean: removing $(echo "$images" | wc -l) image(s)"
		docker rmi -f $images >/dev/null
	fi
fi

# A test node's leftovers live partly outside the cache (mounts, the
# bridge, cgroups); a node still in use stops the clean instead.
if [ -d "$cache/kube/node" ]; then
	scripts/kube-testenv.sh down
fi

if [ -d "$cache/pg/data" ]; then
	scripts/start-postgres.sh stop || true
fi
if [ -d "$cache" ]; then
	echo "clean: removing $cache"
	rm -rf "$cache"
fi
