#!/usr/bin/env bash
# bench-python-linter.sh: the Python rule set (examples/lint -language
# python) against pycodestyle 2.10, on the same files, in the same run.
#
# (a) whole tree: one pycodestyle call over every file vs one call of our
#     CLI, with -j 1 (one core, like pycodestyle) and with the default -j;
# (b) single file: REPS calls of each on one mid-sized file (hyperfine when
#     installed, else a timed bash loop), process start-up included; the
#     median and the fastest run are reported, as the machine may be shared.
# Both tools run with the same options: none by default, pycodestyle's
# default rule set (every code but its default ignore list); OPTIONS adds
# to both (e.g. OPTIONS="--select=E,W --max-doc-length=72" for every
# code). It prints lines/s for each and the ratio ours/theirs (target >=
# 20x), and checks that both print the same findings.
#
# Usage: scripts/bench-python-linter.sh            (from anywhere in the repo)
# Tunables (environment): CORPUS=/usr/lib/python3.11 (its *.py files, not
#   recursive) FILE=$CORPUS/argparse.py REPS=20 TREE_REPS=3 OPTIONS=
#   HYPERFINE=hyperfine (empty: use the bash loop even if it is installed)
# Needs go and pycodestyle (apt-get install pycodestyle) in PATH.
set -euo pipefail

CORPUS=${CORPUS:-/usr/lib/python3.11}
FILE=${FILE:-$CORPUS/argparse.py}
REPS=${REPS:-20}
TREE_REPS=${TREE_REPS:-3}
HYPERFINE=${HYPERFINE-hyperfine}

die() { echo "bench-python-linter: $*" >&2; exit 1; }
command -v go >/dev/null 2>&1 || die "go not found in PATH; install Go 1.26"
command -v pycodestyle >/dev/null 2>&1 || die "pycodestyle not found in PATH; apt-get install pycodestyle"
[[ -d $CORPUS ]] || die "corpus $CORPUS not found (apt-get install python3.11, or set CORPUS)"
[[ -f $FILE ]] || die "file $FILE not found (set FILE)"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-python-linter.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

(cd "$ROOT" && go build -o "$tmp/lint" ./examples/lint)

mapfile -t files < <(find "$CORPUS" -maxdepth 1 -name '*.py' -type f | LC_ALL=C sort)
((${#files[@]} > 0)) || die "no *.py files in $CORPUS"
tree_lines=$(cat "${files[@]}" | wc -l)
file_lines=$(wc -l <"$FILE")

OPTIONS=${OPTIONS:-}
read -r -a opts <<<"$OPTIONS"
# No configuration file may change either tool's options: the user's is
# pointed away, and the corpus has no setup.cfg or tox.ini above it.
export XDG_CONFIG_HOME="$tmp/xdg"
theirs=(pycodestyle "${opts[@]}")
ours=("$tmp/lint" -language python "${opts[@]}")

# Timestamps come from $EPOCHREALTIME (bash 5) when there is one, so that
# timing a run forks nothing else.
export LC_NUMERIC=C
# run OUT CMD...: runs CMD with stdout to OUT; exit 1 means "found problems".
run() {
	local out=$1 rc=0
	shift
	"$@" >"$out" 2>"$tmp/stderr" || rc=$?
	if ((rc > 1)); then
		cat "$tmp/stderr" >&2
		die "$1 failed with exit code $rc"
	fi
}
# best_of OUT N CMD...: the fastest of N runs, in seconds; output to OUT.
best_of() {
	local out=$1 n=$2 best="" t0 t1 d
	shift 2
	for ((i = 0; i < n; i++)); do
		t0=${EPOCHREALTIME:-$(date +%s.%N)}
		run "$out" "$@"
		t1=${EPOCHREALTIME:-$(date +%s.%N)}
		d=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
		if [[ -z $best ]] || awk -v a="$d" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$d
		fi
	done
	echo "$best"
}
rate() { awk -v l="$1" -v s="$2" 'BEGIN { printf "%.0f", l / s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

echo "corpus: ${#files[@]} files, $tree_lines lines ($CORPUS/*.py); single file: $FILE ($file_lines lines)"
echo "pycodestyle $(pycodestyle --version), $(go version | cut -d' ' -f3), $(nproc) cores, options: ${OPTIONS:-(none: the default rule set)}"
echo

echo "(a) whole tree, best of $TREE_REPS"
t_theirs=$(best_of "$tmp/theirs.txt" "$TREE_REPS" "${theirs[@]}" "${files[@]}")
t_ours1=$(best_of "$tmp/ours.txt" "$TREE_REPS" "${ours[@]}" -j 1 "${files[@]}")
t_ours=$(best_of "$tmp/out" "$TREE_REPS" "${ours[@]}" "${files[@]}")
printf '  %-22s %9.3f s %12s lines/s\n' "pycodestyle" "$t_theirs" "$(rate "$tree_lines" "$t_theirs")"
printf '  %-22s %9.3f s %12s lines/s  %6sx\n' "ours -j 1" "$t_ours1" "$(rate "$tree_lines" "$t_ours1")" "$(ratio "$t_theirs" "$t_ours1")"
printf '  %-22s %9.3f s %12s lines/s  %6sx\n' "ours -j $(nproc)" "$t_ours" "$(rate "$tree_lines" "$t_ours")" "$(ratio "$t_theirs" "$t_ours")"
# Same findings? Sorted, to compare sets of lines.
n_theirs=$(wc -l <"$tmp/theirs.txt")
n_ours=$(wc -l <"$tmp/ours.txt")
n_diff=$(diff <(LC_ALL=C sort "$tmp/theirs.txt") <(LC_ALL=C sort "$tmp/ours.txt") | grep -c '^[<>]' || true)
echo "  findings: pycodestyle $n_theirs, ours $n_ours, lines that differ: $n_diff"
echo

echo "(b) single file, $REPS runs each (median, and fastest run)"
if [[ -n $HYPERFINE ]] && command -v "$HYPERFINE" >/dev/null 2>&1; then
	"$HYPERFINE" --warmup 2 --runs "$REPS" -N -i --export-json "$tmp/h.json" \
		"${theirs[*]} $FILE" "${ours[*]} $FILE" >/dev/null 2>"$tmp/hyperfine.err" ||
		{ cat "$tmp/hyperfine.err" >&2; die "hyperfine failed"; }
	field() { grep -o "\"$1\": *[0-9.e-]*" "$tmp/h.json" | awk -F: '{ print $2 + 0 }'; }
	mapfile -t medians < <(field median)
	mapfile -t mins < <(field min)
	how="hyperfine"
else
	# times CMD...: REPS timed runs, in seconds, sorted.
	times() {
		local t0 t1
		for ((i = 0; i < REPS; i++)); do
			t0=${EPOCHREALTIME:-$(date +%s.%N)}
			run "$tmp/out" "$@"
			t1=${EPOCHREALTIME:-$(date +%s.%N)}
			awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
		done | LC_ALL=C sort -g
	}
	median() { awk '{ v[NR] = $1 } END { printf "%.6f\n", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }' "$1"; }
	run "$tmp/out" "${theirs[@]}" "$FILE" # warm the page cache
	times "${theirs[@]}" "$FILE" >"$tmp/t_theirs"
	times "${ours[@]}" "$FILE" >"$tmp/t_ours"
	medians=("$(median "$tmp/t_theirs")" "$(median "$tmp/t_ours")")
	mins=("$(head -1 "$tmp/t_theirs")" "$(head -1 "$tmp/t_ours")")
	how="bash loop"
fi
printf '  %-12s median %8.4f s %10s lines/s   fastest %8.4f s %10s lines/s  (%s)\n' "pycodestyle" \
	"${medians[0]}" "$(rate "$file_lines" "${medians[0]}")" "${mins[0]}" "$(rate "$file_lines" "${mins[0]}")" "$how"
printf '  %-12s median %8.4f s %10s lines/s   fastest %8.4f s %10s lines/s\n' "ours" \
	"${medians[1]}" "$(rate "$file_lines" "${medians[1]}")" "${mins[1]}" "$(rate "$file_lines" "${mins[1]}")"
printf '  ratio ours/theirs: median %sx, fastest %sx\n' "$(ratio "${medians[0]}" "${medians[1]}")" "$(ratio "${mins[0]}" "${mins[1]}")"
