#!/bin/bash
# Benchmark `railscope report` end to end on a synthetic 1024-rank job (128 nodes x 8 GPUs, rs-synth):
# events per second per core (events / CPU seconds of the report process), wall time with its 2 worker
# threads, peak memory (getrusage maxrss via /usr/bin/time), and the same for `railscope info` (the
# reader alone) as the floor the analysis sits on.
#   RS_BUILD=build bench/analyzer/run.sh [NODES GPUS STEPS KERNELS]
# Side by side: RS_BASE_BUILD=/tmp/an-base/build (another tree's build, e.g. a git worktree of the old
# commit) measures that railscope on the same input, alternating with this one, RS_REPS times each
# (default 5), and prints medians and the ratio. RS_BENCH_INPUT=DIR keeps/reuses the generated input.
set -eu
RS_TOP=${RS_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
RS_BUILD=${RS_BUILD:-$RS_TOP/build}
REPS=${RS_REPS:-5}
NODES=${1:-128} GPUS=${2:-8} STEPS=${3:-20} KERNELS=${4:-400}
CLI=$RS_BUILD/railscope SYNTH=$RS_BUILD/synth/rs-synth
BASE=${RS_BASE_BUILD:+$RS_BASE_BUILD/railscope}
for f in "$CLI" "$SYNTH" /usr/bin/time $BASE; do [ -x "$f" ] || { echo "bench/analyzer: $f missing (make first)" >&2; exit 2; }; done
D=$(mktemp -d "${TMPDIR:-/tmp}/rs-bench-analyzer.XXXXXX")
trap 'rm -rf "$D"' EXIT
RUN=${RS_BENCH_INPUT:-$D/run}
if [ ! -d "$RUN" ]; then
    "$SYNTH" -o "$RUN" --nodes "$NODES" --gpus "$GPUS" --steps "$STEPS" --kernels "$KERNELS" \
        --straggler 517:4 --pause 300:10:3 --skew-ms 5 --truth "$D/truth.json"
fi
bytes=$(du -sb "$RUN" | cut -f1)
measure() { # LABEL CMD...: appends "wall user sys maxrss_kb" to $D/LABEL
    local label=$1
    shift
    /usr/bin/time -f "%e %U %S %M" -o "$D/time" "$@" >"$D/out" 2>/dev/null || [ $? -eq 1 ]
    cat "$D/time" >>"$D/$label"
}
for ((k = 0; k < REPS; k++)); do
    measure report "$CLI" report --json --quiet "$RUN"
    [ -z "$BASE" ] || measure base-report "$BASE" report --json --quiet "$RUN"
    measure info "$CLI" info "$RUN"
    [ -z "$BASE" ] || measure base-info "$BASE" info "$RUN"
done
"$CLI" report --json --quiet "$RUN" >"$D/report.json" || true
events=$(jq .events "$D/report.json")
if [ -n "$BASE" ]; then
    "$BASE" report --json --quiet "$RUN" >"$D/base.json" || true
    same=$(cmp -s "$D/report.json" "$D/base.json" && echo "identical" || echo "DIFFERENT")
fi
check=$(jq -r '"straggler rank \(.stragglers[0].rank), stall finding rank \([.findings[] | select(.category == "network_stall")][0].rank), residual skew \(.clock.residual_skew_s) s"' "$D/report.json")
echo "input: $((NODES * GPUS)) rank files, $events events, $((bytes / 1048576)) MiB on disk ($NODES x $GPUS, $STEPS steps, $KERNELS kernels/step); medians of $REPS runs"
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for l in report base-report info base-info; do
    [ -f "$D/$l" ] || continue
    w=$(awk '{ print $1 }' "$D/$l" | median)
    c=$(awk '{ print $2 + $3 }' "$D/$l" | median)
    m=$(awk '{ print $4 }' "$D/$l" | median)
    echo "$l $w $c $m" >>"$D/medians"
    awk -v l="$l" -v w="$w" -v cpu="$c" -v m="$m" -v e="$events" 'BEGIN {
        printf "%-11s wall %6.2f s  cpu %6.2f s  %6.1f M events/s per core  %6.1f M events/s wall  peak RSS %7.1f MB\n",
            l, w, cpu, e / cpu / 1e6, e / w / 1e6, m / 1024 }'
done
if [ -n "$BASE" ]; then
    awk '{ c[$1] = $3 } END { printf "speed-up (CPU, base/new): report %.2fx, info %.2fx\n", c["base-report"] / c["report"], c["base-info"] / c["info"] }' "$D/medians"
    echo "report --json output vs base: $same"
fi
echo "check: $check"
