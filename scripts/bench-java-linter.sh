#!/usr/bin/env bash
# bench-java-linter.sh: the Java rule set (examples/lint -language java)
# against checkstyle 8.36, on the same files, in the same run.
#
# (a) whole tree: one checkstyle call over every file vs one call of our CLI
#     (with -j 1, one core, and with the default -j). checkstyle's time is
#     also shown with JVM start-up excluded: one JVM cannot audit the tree
#     twice, so we subtract the time of checkstyle on a one-line file (JVM
#     start-up, class loading and configuration) from the tree's time;
# (b) single file: REPS calls of each on one mid-sized file (hyperfine when
#     installed, else a timed bash loop), process and JVM start-up included;
#     the median is reported, as the machine may be shared.
# Both tools run every check we implement at checkstyle's defaults
# (linter/java/testdata/checkstyle.xml), or with CHECKSTYLE_CONFIG=sun_checks
# or google_checks checkstyle's built-in configuration and our rendition of
# it (where we implement fewer modules, the findings differ by those).
# It prints lines/s for each and the
# ratio ours/theirs (target >= 20x), and checks that both report the same
# findings.
#
# Usage: scripts/bench-java-linter.sh            (from anywhere in the repo)
# Tunables (environment): SRC_ZIP=/usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip
#   CORPUS=<dir of *.java, searched recursively; default: java.util, java.io
#   and java.net from SRC_ZIP> FILE=<default: java/util/HashMap.java>
#   REPS=10 TREE_REPS=3 CHECKSTYLE_CONFIG=sun_checks|google_checks
# Needs go, unzip and checkstyle (apt-get install checkstyle
# openjdk-17-source unzip) in PATH.
set -euo pipefail

SRC_ZIP=${SRC_ZIP:-/usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip}
REPS=${REPS:-10}
TREE_REPS=${TREE_REPS:-3}

die() { echo "bench-java-linter: $*" >&2; exit 1; }
command -v go >/dev/null 2>&1 || die "go not found in PATH; install Go 1.26"
command -v checkstyle >/dev/null 2>&1 || die "checkstyle not found in PATH; apt-get install checkstyle"

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CONFIG=$ROOT/linter/java/testdata/checkstyle.xml
[[ -f $CONFIG ]] || die "$CONFIG not found"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-java-linter.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

if [[ -z ${CORPUS:-} ]]; then
	command -v unzip >/dev/null 2>&1 || die "unzip not found in PATH; apt-get install unzip"
	[[ -f $SRC_ZIP ]] || die "$SRC_ZIP not found (apt-get install openjdk-17-source, or set CORPUS)"
	CORPUS=$tmp/src
	unzip -q "$SRC_ZIP" 'java.base/java/util/*.java' 'java.base/java/io/*.java' 'java.base/java/net/*.java' -d "$CORPUS"
	# Top-level packages only, as unzip's * also matches subdirectories.
	find "$CORPUS/java.base/java/util" -mindepth 1 -type d -prune -exec rm -rf {} +
	find "$CORPUS/java.base/java/io" "$CORPUS/java.base/java/net" -mindepth 1 -type d -prune -exec rm -rf {} +
	FILE=${FILE:-$CORPUS/java.base/java/util/HashMap.java}
fi
[[ -d $CORPUS ]] || die "corpus $CORPUS not found"
FILE=${FILE:-$(find "$CORPUS" -name '*.java' -type f | LC_ALL=C sort | head -n 1)}
[[ -f $FILE ]] || die "file $FILE not found (set FILE)"

(cd "$ROOT" && go build -o "$tmp/lint" ./examples/lint)

mapfile -t files < <(find "$CORPUS" -name '*.java' -type f | LC_ALL=C sort)
((${#files[@]} > 0)) || die "no *.java files in $CORPUS"
tree_lines=$(cat "${files[@]}" | wc -l)
file_lines=$(wc -l <"$FILE")
printf 'class Tiny {\n}\n' >"$tmp/Tiny.java"

theirs=(checkstyle -c "$CONFIG")
ours=("$tmp/lint" -language java)
case ${CHECKSTYLE_CONFIG:-} in
"") ;;
sun_checks | google_checks)
	theirs=(checkstyle -c "/$CHECKSTYLE_CONFIG.xml")
	ours=("$tmp/lint" -language java -config "$CHECKSTYLE_CONFIG")
	;;
*) die "CHECKSTYLE_CONFIG=$CHECKSTYLE_CONFIG: want sun_checks or google_checks" ;;
esac

now() { date +%s.%N; }
# run OUT CMD...: runs CMD with stdout to OUT; our exit 1 means "found
# problems", checkstyle exits with the number of errors (warnings are 0).
run() {
	local out=$1 rc=0
	shift
	"$@" >"$out" 2>"$tmp/stderr" || rc=$?
	# checkstyle exits with its count of errors (sun_checks' severity).
	if ((rc > 1)) && ! grep -q '^Audit done' "$out"; then
		cat "$tmp/stderr" >&2
		die "$1 failed with exit code $rc"
	fi
	if grep -q 'Exception' "$tmp/stderr"; then
		cat "$tmp/stderr" >&2
		die "$1 could not process a file"
	fi
}
# best_of N CMD...: the fastest of N runs, in seconds.
best_of() {
	local n=$1 best="" t0 t1 d
	shift
	for ((i = 0; i < n; i++)); do
		t0=$(now)
		run "$tmp/out" "$@"
		t1=$(now)
		d=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f", b - a }')
		if [[ -z $best ]] || awk -v a="$d" -v b="$best" 'BEGIN { exit !(a < b) }'; then
			best=$d
		fi
	done
	echo "$best"
}
rate() { awk -v l="$1" -v s="$2" 'BEGIN { printf "%.0f", l / s }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }
sub() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", a - b }'; }

echo "corpus: ${#files[@]} files, $tree_lines lines ($CORPUS); single file: $FILE ($file_lines lines)"
echo "checkstyle $(checkstyle --version | awk '{ print $NF }'), $(java -version 2>&1 | head -n 1), $(go version | cut -d' ' -f3), $(nproc) cores"
echo

# Same findings? Both outputs normalised to "path:line[:col]: Code message".
run "$tmp/theirs.txt" "${theirs[@]}" "${files[@]}"
run "$tmp/ours.txt" "${ours[@]}" "${files[@]}"
sed -n 's/^\[\(WARN\|ERROR\)\] \(.*[0-9]\): \(.*\) \[\([A-Za-z]*\)\]$/\2: \4 \3/p' "$tmp/theirs.txt" | LC_ALL=C sort >"$tmp/theirs.norm"
LC_ALL=C sort "$tmp/ours.txt" >"$tmp/ours.norm"
n_theirs=$(wc -l <"$tmp/theirs.norm")
n_ours=$(wc -l <"$tmp/ours.norm")
n_diff=$(diff "$tmp/theirs.norm" "$tmp/ours.norm" | grep -c '^[<>]' || true)
echo "findings: checkstyle $n_theirs, ours $n_ours, lines that differ: $n_diff"
echo

echo "(a) whole tree, best of $TREE_REPS"
t_theirs=$(best_of "$TREE_REPS" "${theirs[@]}" "${files[@]}")
t_jvm=$(best_of "$TREE_REPS" "${theirs[@]}" "$tmp/Tiny.java")
t_theirs_nojvm=$(sub "$t_theirs" "$t_jvm")
t_ours1=$(best_of "$TREE_REPS" "${ours[@]}" -j 1 "${files[@]}")
t_ours=$(best_of "$TREE_REPS" "${ours[@]}" "${files[@]}")
printf '  %-34s %9.3f s %12s lines/s\n' "checkstyle" "$t_theirs" "$(rate "$tree_lines" "$t_theirs")"
printf '  %-34s %9.3f s\n' "checkstyle on a 2-line file (JVM)" "$t_jvm"
printf '  %-34s %9.3f s %12s lines/s\n' "checkstyle minus that (no JVM)" "$t_theirs_nojvm" "$(rate "$tree_lines" "$t_theirs_nojvm")"
printf '  %-34s %9.3f s %12s lines/s  %6sx  %6sx without JVM start-up\n' "ours -j 1" "$t_ours1" "$(rate "$tree_lines" "$t_ours1")" "$(ratio "$t_theirs" "$t_ours1")" "$(ratio "$t_theirs_nojvm" "$t_ours1")"
printf '  %-34s %9.3f s %12s lines/s  %6sx  %6sx without JVM start-up\n' "ours -j $(nproc)" "$t_ours" "$(rate "$tree_lines" "$t_ours")" "$(ratio "$t_theirs" "$t_ours")" "$(ratio "$t_theirs_nojvm" "$t_ours")"
echo

echo "(b) single file, $REPS runs each (median, start-up included)"
if command -v hyperfine >/dev/null 2>&1; then
	# -i: our CLI exits 1 when it finds problems.
	if ! hyperfine --warmup 1 --runs "$REPS" -N -i --export-json "$tmp/h.json" \
		"${theirs[*]} $FILE" "${ours[*]} $FILE" >/dev/null 2>"$tmp/hyperfine.err"; then
		cat "$tmp/hyperfine.err" >&2
		die "hyperfine failed"
	fi
	mapfile -t medians < <(grep -o '"median": *[0-9.e-]*' "$tmp/h.json" | awk -F: '{ print $2 + 0 }')
	s_theirs=${medians[0]}
	s_ours=${medians[1]}
	how="hyperfine"
else
	# median CMD...: the median of REPS timed runs, in seconds.
	median() {
		local t0 t1
		for ((i = 0; i < REPS; i++)); do
			t0=$(now)
			run "$tmp/out" "$@"
			t1=$(now)
			awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }'
		done | LC_ALL=C sort -g | awk '{ v[NR] = $1 } END { printf "%.6f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
	}
	run "$tmp/out" "${theirs[@]}" "$FILE" # warm the page cache
	s_theirs=$(median "${theirs[@]}" "$FILE")
	s_ours=$(median "${ours[@]}" "$FILE")
	how="bash loop"
fi
printf '  %-34s %9.4f s %12s lines/s  (%s)\n' "checkstyle" "$s_theirs" "$(rate "$file_lines" "$s_theirs")" "$how"
printf '  %-34s %9.4f s %12s lines/s  %6sx\n' "ours" "$s_ours" "$(rate "$file_lines" "$s_ours")" "$(ratio "$s_theirs" "$s_ours")"
