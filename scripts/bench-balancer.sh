#!/usr/bin/env bash
# bench-balancer.sh: examples/loadbalancer against NGINX and HAProxy, same
# backends, same weights, same load, on the same run, all on 127.0.0.1.
#
# Starts 4 minimal Go backends (balancer/internal/benchbackend: 2 on version
# 1.0, 2 on 2.0), our load balancer with ratio 1.0:60 / 2.0:40, NGINX and
# HAProxy with the same upstreams (weights 30,30,20,20, keep-alive HTTP/1.1
# to the upstream: NGINX keepalive 256, HAProxy http-reuse always), then
# runs wrk with the same POST body against each, ROUNDS times in alternating
# order, and prints requests/s, p50 and p99 of each, CPU per request, the
# per-backend split, and the ratios ours/nginx and ours/haproxy (median of
# the ratios of adjacent rounds, robust to a shared machine's drifting load,
# and the ratio of the means). Goal (issue 23): throughput >= 1.0x both,
# p99 <= 1.0x both, CPU per request <= 1.0x NGINX.
#
# Usage: scripts/bench-balancer.sh            (from anywhere in the repo)
# Tunables (environment): DURATION=5s WARMUP=2s CONNECTIONS=64 THREADS=2
#   ROUNDS=6 PROCS=<nproc> (GOMAXPROCS of the balancer = NGINX
#   worker_processes = HAProxy nbthread) BASE_PORT=19100 GOGC=400 (the
#   balancer's) BODY=<bytes> (size of the POST body; default the 35-byte
#   hello world) PEERS="nginx haproxy" (which peers to run)
#   BASE_REV=<git revision>: also run examples/loadbalancer as of that
#   revision ("base", built from git archive) in the same rounds, and print
#   the ratios ours/base: an A/B of a change in one run.
#   OURS_FLAGS, BASE_FLAGS: extra flags of examples/loadbalancer for ours
#   and base (e.g. BASE_REV=HEAD BASE_FLAGS=-event-loop=false: its event
#   loops, the default, against a goroutine per connection, same build).
# Needs go, nginx, haproxy, wrk and curl in PATH; with INSTALL=1 it installs
# the missing Debian packages (apt-get install nginx-light haproxy wrk curl),
# else it says so and stops.
set -euo pipefail

DURATION=${DURATION:-5s}
WARMUP=${WARMUP:-2s}
CONNECTIONS=${CONNECTIONS:-64}
THREADS=${THREADS:-2}
ROUNDS=${ROUNDS:-6}
PROCS=${PROCS:-$(nproc)}
BASE_PORT=${BASE_PORT:-19100}
LB_GOGC=${GOGC:-400}
BASE_REV=${BASE_REV:-}
BODY=${BODY:-}
PEERS=${PEERS:-nginx haproxy}

die() { echo "bench-balancer: $*" >&2; exit 1; }
if [ "${INSTALL:-}" = 1 ]; then
	missing=()
	for t in nginx:nginx-light haproxy:haproxy wrk:wrk curl:curl; do
		command -v "${t%%:*}" >/dev/null 2>&1 || missing+=("${t#*:}")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null ||
			die "apt-get install ${missing[*]} failed"
	fi
fi
need() { command -v "$1" >/dev/null 2>&1 || die "$1 not found in PATH; $2 (or run with INSTALL=1)"; }
need go "install Go 1.26"
case " $PEERS " in *" nginx "*) need nginx "install it with: apt-get install nginx-light (or nginx)" ;; esac
case " $PEERS " in *" haproxy "*) need haproxy "install it with: apt-get install haproxy" ;; esac
need wrk "install it with: apt-get install wrk"
need curl "install it with: apt-get install curl"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/bench-balancer.XXXXXX")
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

BACKEND_PORTS=($((BASE_PORT + 1)) $((BASE_PORT + 2)) $((BASE_PORT + 3)) $((BASE_PORT + 4)))
BACKEND_VERSIONS=(1.0 1.0 2.0 2.0)
NGINX_WEIGHTS=(30 30 20 20) # = ratio 60/40 split over 2 backends per version
LB_PORT=$((BASE_PORT + 10))
OLD_PORT=$((BASE_PORT + 11))
NGINX_PORT=$((BASE_PORT + 20))
HAPROXY_PORT=$((BASE_PORT + 30))
SECRET=bench-secret

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
wait_port() {
	local i
	for i in $(seq 1 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.05
	done
	die "nothing listens on 127.0.0.1:$1 after 5s"
}
# Each balancer's admin listener (for /metrics) is its port + 100.
for p in "${BACKEND_PORTS[@]}" "$LB_PORT" "$OLD_PORT" "$NGINX_PORT" "$HAPROXY_PORT" $((LB_PORT + 100)) $((OLD_PORT + 100)); do
	port_free "$p" || die "port $p is taken; set BASE_PORT to another base"
done

echo "== building"
(cd "$ROOT" && go build -o "$TMP/loadbalancer" ./examples/loadbalancer)
(cd "$ROOT" && go build -o "$TMP/benchbackend" ./balancer/internal/benchbackend)
TARGETS="ours $PEERS"
if [ -n "$BASE_REV" ]; then
	mkdir -p "$TMP/base-src"
	(cd "$ROOT" && git archive "$BASE_REV") | tar -x -C "$TMP/base-src"
	(cd "$TMP/base-src" && go build -o "$TMP/loadbalancer-base" ./examples/loadbalancer)
	TARGETS="$TARGETS base"
fi

echo "== starting ${#BACKEND_PORTS[@]} backends"
args=()
for i in "${!BACKEND_PORTS[@]}"; do
	args+=(-backend "127.0.0.1:${BACKEND_PORTS[$i]}=${BACKEND_VERSIONS[$i]}")
done
"$TMP/benchbackend" "${args[@]}" &
PIDS+=($!)
for p in "${BACKEND_PORTS[@]}"; do wait_port "$p"; done

admin() { # PORT PATH BODY
	curl -fsS -X POST -H 'Content-Type: application/json' -d "$3" "http://127.0.0.1:$1$2" >/dev/null ||
		die "admin call $2 on :$1 failed"
}
start_lb() { # BINARY PORT FLAGS
	echo "== starting $1 $3 (GOMAXPROCS=$PROCS GOGC=$LB_GOGC) on :$2"
	# shellcheck disable=SC2086 # FLAGS are words
	GOMAXPROCS=$PROCS GOGC=$LB_GOGC FLEETKIT_SECRET_KEY=$SECRET "$1" -addr "127.0.0.1:$2" -admin-addr "127.0.0.1:$(($2 + 100))" $3 2>"$1.log" &
	PIDS+=($!)
	echo $! >"$1.pid"
	wait_port "$2"
	local i
	for i in "${!BACKEND_PORTS[@]}"; do
		admin "$2" /add "{\"lang\":\"python\",\"version\":\"${BACKEND_VERSIONS[$i]}\",\"uri\":\"http://127.0.0.1:${BACKEND_PORTS[$i]}\",\"secretKey\":\"$SECRET\"}"
	done
	admin "$2" /ratio "{\"lang\":\"python\",\"versionRatio\":{\"1.0\":60,\"2.0\":40},\"secretKey\":\"$SECRET\"}"
}
start_lb "$TMP/loadbalancer" "$LB_PORT" "${OURS_FLAGS:-}"
if [ -n "$BASE_REV" ]; then start_lb "$TMP/loadbalancer-base" "$OLD_PORT" "${BASE_FLAGS:-}"; fi

start_nginx() {
	echo "== starting nginx ($(nginx -v 2>&1 | sed 's/.*: //'), worker_processes $PROCS) on :$NGINX_PORT"
	mkdir -p "$TMP/nginx"
	{
		echo "worker_processes $PROCS;"
		echo "daemon off;"
		echo "pid $TMP/nginx/nginx.pid;"
		echo "error_log $TMP/nginx/error.log warn;"
		echo "events { worker_connections 4096; multi_accept on; }"
		echo "http {"
		echo "  access_log off;"
		echo "  client_body_temp_path $TMP/nginx/body; proxy_temp_path $TMP/nginx/proxy;"
		echo "  fastcgi_temp_path $TMP/nginx/fastcgi; uwsgi_temp_path $TMP/nginx/uwsgi; scgi_temp_path $TMP/nginx/scgi;"
		echo "  keepalive_requests 1000000;"
		echo "  client_max_body_size 2m; client_body_buffer_size 1m; # bodies in memory, as ours"
		echo "  upstream lint_python {"
		for i in "${!BACKEND_PORTS[@]}"; do
			echo "    server 127.0.0.1:${BACKEND_PORTS[$i]} weight=${NGINX_WEIGHTS[$i]};"
		done
		echo "    keepalive 256;"
		echo "    keepalive_requests 1000000;"
		echo "  }"
		echo "  server {"
		echo "    listen 127.0.0.1:$NGINX_PORT;"
		echo "    location = /lint/python {"
		echo "      proxy_pass http://lint_python/lint;"
		echo "      proxy_http_version 1.1;"
		echo "      proxy_set_header Connection \"\";"
		echo "    }"
		echo "  }"
		echo "}"
	} >"$TMP/nginx/nginx.conf"
	nginx -p "$TMP/nginx" -e "$TMP/nginx/error.log" -c "$TMP/nginx/nginx.conf" &
	PIDS+=($!)
	NGINX_PID=$!
	wait_port "$NGINX_PORT"
}
start_haproxy() {
	echo "== starting haproxy ($(haproxy -v 2>&1 | awk 'NR == 1 { print $3 }'), nbthread $PROCS) on :$HAPROXY_PORT"
	mkdir -p "$TMP/haproxy"
	{
		echo "global"
		echo "  nbthread $PROCS"
		echo "  maxconn 8000 # within the FD limit (2 per connection + slack)"
		echo "  tune.bufsize 262144 # a 200 KB body in one buffer, as ours and NGINX keep it"
		echo "defaults"
		echo "  mode http"
		echo "  option http-keep-alive"
		echo "  http-reuse always"
		echo "  timeout connect 5s"
		echo "  timeout client 30s"
		echo "  timeout server 30s"
		echo "  timeout http-keep-alive 120s"
		echo "frontend lint"
		echo "  bind 127.0.0.1:$HAPROXY_PORT"
		echo "  http-request return status 404 unless { path /lint/python }"
		echo "  default_backend lint_python"
		echo "backend lint_python"
		echo "  balance roundrobin"
		echo "  http-request set-path /lint"
		for i in "${!BACKEND_PORTS[@]}"; do
			echo "  server b$i 127.0.0.1:${BACKEND_PORTS[$i]} weight ${NGINX_WEIGHTS[$i]}"
		done
	} >"$TMP/haproxy/haproxy.cfg"
	haproxy -db -f "$TMP/haproxy/haproxy.cfg" 2>"$TMP/haproxy/error.log" &
	PIDS+=($!)
	HAPROXY_PID=$!
	wait_port "$HAPROXY_PORT"
}
NGINX_PID= HAPROXY_PID=
case " $PEERS " in *" nginx "*) start_nginx ;; esac
case " $PEERS " in *" haproxy "*) start_haproxy ;; esac

# cpu_ticks TARGET: user+system CPU clock ticks used so far by the target's
# processes (NGINX: master and workers). CPU per request is the figure a
# shared machine's load disturbs least.
pids_of() {
	case $1 in
	ours) cat "$TMP/loadbalancer.pid" ;;
	base) cat "$TMP/loadbalancer-base.pid" ;;
	haproxy) echo "$HAPROXY_PID" ;;
	*) echo "$NGINX_PID" && pgrep -P "$NGINX_PID" ;;
	esac
}
cpu_ticks() {
	local p t=0
	for p in $(pids_of "$1"); do
		t=$((t + $(awk '{ print $14 + $15 }' "/proc/$p/stat")))
	done
	echo "$t"
}
TICK_HZ=$(getconf CLK_TCK)

if [ -n "$BODY" ]; then
	# {"code":"xxx…"} of BODY bytes.
	cat >"$TMP/post.lua" <<LUA
wrk.method = "POST"
wrk.body = '{"code":"' .. string.rep("x", $BODY - 11) .. '"}'
wrk.headers["Content-Type"] = "application/json"
LUA
else
	cat >"$TMP/post.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"code":"print(\'hello world\')\\n"}'
wrk.headers["Content-Type"] = "application/json"
LUA
fi

url() {
	case $1 in
	ours) echo "http://127.0.0.1:$LB_PORT/lint/python" ;;
	base) echo "http://127.0.0.1:$OLD_PORT/lint/python" ;;
	haproxy) echo "http://127.0.0.1:$HAPROXY_PORT/lint/python" ;;
	*) echo "http://127.0.0.1:$NGINX_PORT/lint/python" ;;
	esac
}

# Sanity: both answer 200 with the backend's body.
for t in $TARGETS; do
	out=$(curl -fsS -X POST -H 'Content-Type: application/json' -d '{"code":"x"}' "$(url "$t")") ||
		die "$t does not answer POST /lint/python"
	case $out in *'"result":true'*) ;; *) die "$t answered: $out" ;; esac
done

counts() { # the backends' request counts, space separated
	local p
	for p in "${BACKEND_PORTS[@]}"; do
		curl -fsS "http://127.0.0.1:$p/health" | sed 's/.*"requestCount":\([0-9]*\).*/\1/'
		echo
	done | paste -sd' '
}

# to_ms converts a wrk latency (812.00us, 1.23ms, 1.02s) to milliseconds.
to_ms() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n += 0; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'; }

# run TARGET ROUND: warm up, measure, record "rps p50 p99 errors" in $TMP/TARGET.ROUND.
run() {
	local target=$1 round=$2 out before after
	wrk -t"$THREADS" -c"$CONNECTIONS" -d"$WARMUP" -s "$TMP/post.lua" "$(url "$target")" >/dev/null
	before=$(counts)
	local t0 t1
	t0=$(cpu_ticks "$target")
	out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -s "$TMP/post.lua" "$(url "$target")")
	t1=$(cpu_ticks "$target")
	after=$(counts)
	echo "$out" >"$TMP/wrk-$target-$round.txt"
	local rps p50 p99 errs split reqs cpu
	rps=$(echo "$out" | awk '/^Requests\/sec:/ { print $2 }')
	reqs=$(echo "$out" | awk '/ requests in / { print $1 }')
	cpu=$(awk -v t="$((t1 - t0))" -v hz="$TICK_HZ" -v n="$reqs" 'BEGIN { printf "%.1f", t / hz / n * 1e6 }')
	p50=$(to_ms "$(echo "$out" | awk '$1 == "50%" { print $2 }')")
	p99=$(to_ms "$(echo "$out" | awk '$1 == "99%" { print $2 }')")
	errs=$(echo "$out" | awk '/Non-2xx or 3xx responses:/ { n += $NF } /Socket errors:/ { gsub(",", ""); n += $4 + $6 + $8 + $10 } END { print n + 0 }')
	split=$(paste -d' ' <(echo "$before" | tr ' ' '\n') <(echo "$after" | tr ' ' '\n') |
		awk '{ d[NR] = $2 - $1; s += d[NR] } END { for (i = 1; i <= NR; i++) printf "%s%.1f%%", (i > 1 ? "/" : ""), 100 * d[i] / s }')
	echo "$rps $p50 $p99 $errs $cpu $split" >"$TMP/$target.$round"
	printf "  %-6s round %d: %10.0f req/s  p50 %7.3f ms  p99 %7.3f ms  CPU %6.1f us/req  errors %s  backends %s\n" \
		"$target" "$round" "$rps" "$p50" "$p99" "$cpu" "$errs" "$split"
}

echo "== wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency (warm-up $WARMUP), $ROUNDS rounds, alternating"
echo "   backend split expected 30.0%/30.0%/20.0%/20.0%"
for round in $(seq 1 "$ROUNDS"); do
	order=$TARGETS
	if [ $((round % 2)) -eq 0 ]; then order=$(echo "$TARGETS" | tr ' ' '\n' | tac | paste -sd' '); fi
	for t in $order; do run "$t" "$round"; done
done

mean() { cat "$TMP/$1".[0-9]* | awk -v f="$2" '{ s += $f } END { printf "%.3f", s / NR }'; }
errors_total() { cat "$TMP/$1".[0-9]* | awk '{ s += $4 } END { print s + 0 }'; }
# The load of a shared machine drifts between rounds, so each round of ours
# is compared with the round of the peer run right next to it, and the
# ratios of these pairs are summarized by their median (and the ratio of
# means is printed too).
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
pair_ratios() { # field (1 = req/s, 3 = p99, 5 = CPU/request) peer
	local round
	for round in $(seq 1 "$ROUNDS"); do
		paste -d' ' "$TMP/ours.$round" "$TMP/$2.$round" | awk -v f="$1" -v n="$(wc -w <"$TMP/ours.$round")" '{ printf "%.4f\n", $f / $(n + f) }'
	done
}
name_of() {
	case $1 in
	ours) echo "fleetkit examples/loadbalancer" ;;
	base) echo "base ($BASE_REV)" ;;
	*) echo "$1" ;;
	esac
}
echo
echo "== result (mean of $ROUNDS rounds; GOMAXPROCS=$PROCS, nginx worker_processes $PROCS, haproxy nbthread $PROCS, $(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg))"
printf "  %-30s %12s %10s %10s %12s %8s\n" target "req/s" "p50 ms" "p99 ms" "CPU us/req" errors
for t in $TARGETS; do
	printf "  %-30s %12.0f %10.3f %10.3f %12.1f %8s\n" "$(name_of "$t")" "$(mean "$t" 1)" "$(mean "$t" 2)" "$(mean "$t" 3)" "$(mean "$t" 5)" "$(errors_total "$t")"
done
for t in $TARGETS; do
	[ "$t" != ours ] || continue
	t_pairs=$(pair_ratios 1 "$t" | paste -sd' ')
	l_pairs=$(pair_ratios 3 "$t" | paste -sd' ')
	c_pairs=$(pair_ratios 5 "$t" | paste -sd' ')
	echo "  per-round pairs ours/$t: throughput $t_pairs; p99 $l_pairs; CPU/request $c_pairs"
	awk -v peer="$t" -v orps="$(mean ours 1)" -v prps="$(mean "$t" 1)" -v op99="$(mean ours 3)" -v pp99="$(mean "$t" 3)" \
		-v tm="$(echo "$t_pairs" | tr ' ' '\n' | median)" -v lm="$(echo "$l_pairs" | tr ' ' '\n' | median)" \
		-v cm="$(echo "$c_pairs" | tr ' ' '\n' | median)" 'BEGIN {
		goal = (peer != "base")
		printf "  ours/%s: throughput %.2fx median of pairs (%.2fx ratio of means)%s; p99 %.2fx (%.2fx)%s; CPU/request %.2fx%s\n",
			peer, tm, orps / prps, (goal ? (tm >= 1.0 ? " goal met" : " goal MISSED") : ""),
			lm, op99 / pp99, (goal ? (lm <= 1.0 ? " goal met" : " goal MISSED") : ""),
			cm, (peer == "nginx" ? (cm <= 1.0 ? " goal met" : " goal MISSED") : "")
	}'
done
