#!/usr/bin/env bash
# Starts a throwaway PostgreSQL server for fleetkit's fleet/postgres tests
# and prints the line to export its URL:
#
#   eval "$(scripts/start-postgres.sh)"
#   go test -race ./fleet/...
#
# The cluster lives in a cache directory outside the repository
# (${FLEETKIT_CACHE:-$HOME/.cache/fleetkit}/pg) and is reused between runs.
# The server listens on a free loopback port only. Running the script again
# while the server is up just prints the URL again. Installs the Debian
# package postgresql when no server binaries are found. Stop it with
#   scripts/start-postgres.sh stop
set -euo pipefail

cache="${FLEETKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/fleetkit}"
dir="$cache/pg"
data="$dir/data"
db="fleetkit_test"
user="fleetkit"

log() { echo "start-postgres: $*" >&2; }

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

find_bin() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
			echo "$d"
			return 0
		fi
	done
	if command -v pg_ctl >/dev/null && command -v initdb >/dev/null; then
		dirname "$(command -v pg_ctl)"
		return 0
	fi
	return 1
}

bin="$(find_bin || true)"
if [ -z "$bin" ]; then
	log "PostgreSQL server binaries not found; installing the Debian package postgresql"
	as_root apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq postgresql >&2
	bin="$(find_bin)"
fi

# The server refuses to run as root: run it as the postgres user then.
run() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

url() {
	echo "postgres://$user@127.0.0.1:$(cat "$dir/port")/$db?sslmode=disable"
}

if [ "${1:-}" = stop ]; then
	if [ -f "$data/postmaster.pid" ]; then
		run "$bin/pg_ctl" -D "$data" -m fast -w stop >&2
	fi
	exit 0
fi

mkdir -p "$dir"
if [ "$(id -u)" = 0 ]; then
	id postgres >/dev/null 2>&1 || useradd --system --home-dir "$dir" --shell /usr/sbin/nologin postgres
	chown postgres "$dir"
	# postgres must be able to reach the directory through its parents.
	p="$dir"
	while [ "$p" != / ]; do
		p="$(dirname "$p")"
		chmod o+x "$p" 2>/dev/null || true
	done
fi

if [ -f "$dir/port" ] && run "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1; then
	url_now="$(url)"
	if run "$bin/pg_isready" -q -h 127.0.0.1 -p "$(cat "$dir/port")"; then
		echo "export FLEETKIT_TEST_POSTGRES_URL='$url_now'"
		exit 0
	fi
fi

# A cluster initialised by another major version (the cache outlived a
# package upgrade) cannot be started by these binaries: start over.
major="$("$bin/pg_ctl" --version | sed -n 's/.* \([0-9][0-9]*\)\..*/\1/p')"
if [ -f "$data/PG_VERSION" ] && [ "$(cat "$data/PG_VERSION")" != "$major" ]; then
	log "$data was made by PostgreSQL $(cat "$data/PG_VERSION"), not $major: initialising it again"
	rm -rf "$data"
fi

if [ ! -f "$data/PG_VERSION" ]; then
	log "initdb in $data"
	run "$bin/initdb" -D "$data" -U "$user" --auth=trust -E UTF8 --no-instructions >&2
fi

free_port() {
	python3 - <<'EOF' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()
EOF
}

port="$(free_port)"
echo "$port" >"$dir/port"
log "starting PostgreSQL ($bin) on 127.0.0.1:$port"
run "$bin/pg_ctl" -D "$data" -l "$dir/server.log" -w -t 60 \
	-o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
	start >&2

for _ in $(seq 60); do
	run "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" && break
	sleep 0.5
done
run "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" || {
	log "server did not become ready; see $dir/server.log"
	exit 1
}

if ! run "$bin/psql" -h 127.0.0.1 -p "$port" -U "$user" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1; then
	run "$bin/createdb" -h 127.0.0.1 -p "$port" -U "$user" "$db" >&2
fi

echo "export FLEETKIT_TEST_POSTGRES_URL='$(url)'"
