#!/usr/bin/env bash
# The scripted abuse run of RELIABILITY.md: starts the quickstart fleet
# (balancer, machine manager, two linters per language, all local
# processes) on free loopback ports, runs scripts/abuse against it (steady
# well-behaved load beside large answers, slow inputs, random paths,
# invented methods and slowloris connections), prints the figures, and
# stops the fleet. Exit status 1 when a well-behaved request failed, a
# healthy backend left the rotation, /metrics grew, or a slowloris or idle
# connection outlived the run.
#
# The balancer's timeout is 2 s here, so that slow inputs run past it:
# they must be 504s to their clients and nothing more.
#
#   scripts/abuse.sh [-duration 30s] [-rate 200] [-slowloris 64] [-large-every 5s] [-slow-every 10s]
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
qs_pid=""
cleanup() {
	if [ -n "$qs_pid" ]; then
		kill "$qs_pid" 2>/dev/null || true
		wait "$qs_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

go build -o "$work/" ./examples/quickstart ./examples/linter ./scripts/abuse
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
lb="127.0.0.1:$(free_port)"
mm="127.0.0.1:$(free_port)"
secret="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
FLEETKIT_SECRET_KEY="$secret" "$work/quickstart" -lb-addr "$lb" -mm-addr "$mm" -linter-bin "$work/linter" \
	-health-interval 1s -lb-timeout 2s >"$work/quickstart.log" 2>&1 &
qs_pid=$!
for _ in $(seq 120); do
	curl -sf "http://$mm/status" >/dev/null 2>&1 && break
	kill -0 "$qs_pid" 2>/dev/null || { cat "$work/quickstart.log"; exit 1; }
	sleep 0.5
done
FLEETKIT_SECRET_KEY="$secret" "$work/abuse" -lb "http://$lb" -mm "http://$mm" -pid "$qs_pid" -expect 4 "$@"
