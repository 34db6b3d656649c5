#!/bin/bash
# Benchmark `railscope report` end to end on a synthetic 1024-rank job (128 nodes x 8 GPUs, rs-synth):
# events per second per core (events / CPU seconds of the report process), wall time with its 2 worker
# threads, peak memory (getrusage maxrss via /usr/bin/time), and the same for `railscope info` (the
# reader alone) as the floor the analysis sits on.
#   RS_BUILD=build bench/analyzer/run.sh [NODES GPUS STEPS KERNELS]
set -eu
RS_TOP=${RS_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
RS_BUILD=${RS_BUILD:-$RS_TOP/build}
NODES=${1:-128} GPUS=${2:-8} STEPS=${3:-20} KERNELS=${4:-400}
CLI=$RS_BUILD/railscope SYNTH=$RS_BUILD/tests/synth/rs-synth
for f in "$CLI" "$SYNTH" /usr/bin/time; do [ -x "$f" ] || { echo "bench/analyzer: $f missing (make first)" >&2; exit 2; }; done
D=$(mktemp -d "${TMPDIR:-/tmp}/rs-bench-analyzer.XXXXXX")
trap 'rm -rf "$D"' EXIT
"$SYNTH" -o "$D/run" --nodes "$NODES" --gpus "$GPUS" --steps "$STEPS" --kernels "$KERNELS" \
    --straggler 517:4 --pause 300:10:3 --skew-ms 5 --truth "$D/truth.json"
bytes=$(du -sb "$D/run" | cut -f1)
measure() { # LABEL CMD...: prints "LABEL wall user sys maxrss_kb"
    local label=$1
    shift
    /usr/bin/time -f "%e %U %S %M" -o "$D/time" "$@" >"$D/out" 2>/dev/null || [ $? -eq 1 ]
    echo "$label $(cat "$D/time")"
}
r=$(measure report "$CLI" report --json --quiet "$D/run")
i=$(measure info "$CLI" info "$D/run")
"$CLI" report --json --quiet "$D/run" >"$D/report.json" || true
events=$(jq .events "$D/report.json")
check=$(jq -r '"straggler rank \(.stragglers[0].rank), stall finding rank \([.findings[] | select(.category == "network_stall")][0].rank), residual skew \(.clock.residual_skew_s) s"' "$D/report.json")
echo "input: $((NODES * GPUS)) rank files, $events events, $((bytes / 1048576)) MiB on disk ($NODES x $GPUS, $STEPS steps, $KERNELS kernels/step)"
for line in "$r" "$i"; do
    set -- $line
    awk -v l="$1" -v w="$2" -v u="$3" -v s="$4" -v m="$5" -v e="$events" 'BEGIN {
        cpu = u + s
        printf "%-6s wall %6.2f s  cpu %6.2f s  %6.1f M events/s per core  %6.1f M events/s wall  peak RSS %7.1f MB\n",
            l, w, cpu, e / cpu / 1e6, e / w / 1e6, m / 1024 }'
done
echo "check: $check"
