#!/usr/bin/env bash
# bench-kdave.sh: kdave check on a generated corpus of manifests (2,000
# files, 10,000 objects, 21 broken documents; scripts/kdave-corpus), side by
# side in one run with the kdave of another revision and with pluto when a
# pluto binary is given. For each it reports the median wall time and CPU
# time of RUNS runs, the peak resident set size (start-up included:
# /usr/bin/time's maximum RSS of the whole process), and recall and
# precision against the generator's ground truth (objects whose API is
# deprecated or removed in Kubernetes v1.25, pluto's default target).
#
# Usage: scripts/bench-kdave.sh            (from anywhere in the repo)
# Tunables (environment): RUNS=5 BASE=ea56b0d (a git revision whose
#   examples/kdave is built and measured as well; empty: none)
#   PLUTO=/path/to/pluto (FairwindsOps/pluto v5; empty or not executable:
#   pluto is not run, and the script says so) FILES=2000 OBJECTS=10000
#   BROKEN=21 SEED=1 KEEP=dir (keep the corpus and outputs there)
# Needs go and GNU time (/usr/bin/time, Debian package time).
set -euo pipefail

RUNS=${RUNS:-5}
BASE=${BASE-ea56b0d}
PLUTO=${PLUTO-}
FILES=${FILES:-2000}
OBJECTS=${OBJECTS:-10000}
BROKEN=${BROKEN:-21}
SEED=${SEED:-1}

die() { echo "bench-kdave: $*" >&2; exit 1; }
command -v go >/dev/null 2>&1 || die "go not found in PATH"
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install time)"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -n ${KEEP:-} ]]; then
	tmp=$KEEP
	rm -rf "$tmp" && mkdir -p "$tmp"
else
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-kdave.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
fi

(cd "$ROOT" && go build -o "$tmp/kdave" ./examples/kdave && go build -o "$tmp/corpus-tool" ./scripts/kdave-corpus)
"$tmp/corpus-tool" gen -dir "$tmp/corpus" -truth "$tmp/truth.json" -files "$FILES" -objects "$OBJECTS" -broken "$BROKEN" -seed "$SEED"

declare -A cmds
names=(kdave)
cmds[kdave]="$tmp/kdave check -o json -target v1.25 $tmp/corpus"
if [[ -n $BASE ]]; then
	mkdir -p "$tmp/base"
	(cd "$ROOT" && git archive "$BASE" | tar -x -C "$tmp/base") || die "cannot read revision $BASE"
	(cd "$tmp/base" && go build -o "$tmp/kdave-base" ./examples/kdave)
	names+=(kdave@"$BASE")
	cmds[kdave@"$BASE"]="$tmp/kdave-base check -o json -target v1.25 $tmp/corpus"
fi
if [[ -n $PLUTO && -x $PLUTO ]]; then
	names+=(pluto)
	# pluto v5 prefixes the working directory to the directory it is given,
	# absolute or not ("/cwd//tmp/x/corpus/..."), so it is given the corpus
	# relative to $tmp, where the runs below start.
	cmds[pluto]="$PLUTO detect-files -d corpus -o json -t k8s=v1.25.0 --ignore-deprecations --ignore-removals --ignore-unavailable-replacements"
else
	echo "bench-kdave: pluto not run (set PLUTO to a pluto binary; FairwindsOps/pluto v5 builds with 'go install github.com/fairwindsops/pluto/v5/cmd/pluto@latest')"
fi

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# The checkers take turns, run by run, so that a change of load on the
# shared machine hits them all.
for name in "${names[@]}"; do : >"$tmp/$name.times"; done
cd "$tmp"
for ((i = 0; i < RUNS; i++)); do
	for name in "${names[@]}"; do
		start=$EPOCHREALTIME
		/usr/bin/time -f '%U %S %M' -o "$tmp/time" ${cmds[$name]} >"$tmp/$name.json" 2>"$tmp/$name.stderr" || true
		end=$EPOCHREALTIME
		# GNU time writes "Command exited with non-zero status" first;
		# its own wall clock has 10 ms steps, bash's has microseconds.
		echo "$(awk -v a="$start" -v b="$end" 'BEGIN {printf "%.3f", b - a}') $(tail -n 1 "$tmp/time")" >>"$tmp/$name.times"
	done
done

printf '%-22s %10s %10s %12s %8s %10s\n' checker "wall (s)" "CPU (s)" "peak RSS" recall precision
declare -A wall
for name in "${names[@]}"; do
	w=$(awk '{print $1}' "$tmp/$name.times" | median)
	c=$(awk '{print $2 + $3}' "$tmp/$name.times" | median)
	m=$(awk 'BEGIN {m = 0} $4 > m {m = $4} END {printf "%.1f", m / 1024}' "$tmp/$name.times")
	score=$("$tmp/corpus-tool" score -truth "$tmp/truth.json" -report "$tmp/$name.json" -name "$name" | head -1)
	recall=$(sed -n 's/.*recall \([0-9.]*\).*/\1/p' <<<"$score")
	precision=$(sed -n 's/.*precision \([0-9.]*\).*/\1/p' <<<"$score")
	wall[$name]=$w
	printf '%-22s %10s %10s %9s MB %8s %10s\n' "$name" "$w" "$c" "$m" "$recall" "$precision"
done
for name in "${names[@]}"; do
	[[ $name == kdave ]] && continue
	awk -v a="${wall[kdave]}" -v b="${wall[$name]}" -v n="$name" 'BEGIN {printf "kdave / %s wall time: %.2fx\n", n, a / b}'
done
