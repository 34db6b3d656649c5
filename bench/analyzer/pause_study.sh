#!/bin/bash
# The software-NIC pause experiment of tests/analyzer/softnic_ring_pause.t, repeated N times for numbers:
# examples/ring_allreduce (2 ranks, 4 MB, 6 iterations) at SOFTNIC_RATE_GBPS=1, without and with
# SOFTNIC_PAUSE=200:80. Per pair one line: the report's mean network stall per rank (unpaused, paused),
# the pause time the ranks' data transfers sat through (pause_overlap.sh, from the raw events), run time
# (sum of steps) unpaused and paused, and the two differences the issue's "within 5 %" could mean, as
# fractions of the paused run time: |stall - pause| and |(stall - unpaused stall) - pause|.
#   RS_BUILD=$PWD/build bench/analyzer/pause_study.sh [N]
set -u
RS_TOP=${RS_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
RS_BUILD=${RS_BUILD:-$RS_TOP/build}
CLI=$RS_BUILD/railscope
T=$(mktemp -d "${TMPDIR:-/tmp}/rs-pause-study.XXXXXX")
trap 'rm -rf "$T"' EXIT
record() {
    rm -rf "$1"
    LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_RATE_GBPS=1 SOFTNIC_PAUSE=${2:-} \
        timeout 60 "$CLI" record -q -o "$1" -- "$RS_BUILD/examples/ring_allreduce" -n 2 -s 4M -i 6 >"$1.out" 2>&1
}
mean() { jq "[.ranks[] | $2] | add / length" "$1"; }
echo "stall_unpaused stall_paused pause run_unpaused run_paused |stall-pause|/run |dstall-pause|/run load"
for i in $(seq "${1:-10}"); do
    record "$T/base"
    record "$T/pause" 200:80
    "$CLI" report --json --link-gbps 1 "$T/base" >"$T/base.json"
    "$CLI" report --json --link-gbps 1 "$T/pause" >"$T/pause.json"
    sum=0 n=0
    for f in "$T"/pause/*.rtrace; do
        v=$(RS_CLI=$CLI "$RS_TOP/tests/analyzer/pause_overlap.sh" 200 80 "$f")
        sum=$(awk -v a="$sum" -v b="$v" 'BEGIN { print a + b }')
        n=$((n + 1))
    done
    awk -v sb="$(mean "$T/base.json" .attribution.network_stall)" -v sp="$(mean "$T/pause.json" .attribution.network_stall)" \
        -v p="$(awk -v s="$sum" -v n="$n" 'BEGIN { print n ? s / n : 0 }')" \
        -v tb="$(mean "$T/base.json" '.step_mean_s * .nsteps')" -v tp="$(mean "$T/pause.json" '.step_mean_s * .nsteps')" \
        -v l="$(cut -d' ' -f1 /proc/loadavg)" 'function abs(x) { return x < 0 ? -x : x }
        BEGIN { printf "%.3f %.3f %.3f %.3f %.3f %.3f %.3f %s\n", sb, sp, p, tb, tp, abs(sp - p) / tp, abs(sp - sb - p) / tp, l }'
done
