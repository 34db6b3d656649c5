#!/bin/bash
# How often paced producers lose events, for two builds and two ring sizes, interleaved (every variant
# sees the same machine state). A zero-drop rate is only worth its name if it holds run after run: this
# counts, per (threads, total rate, build, ring), the runs out of REPS that dropped anything.
#   bench/core/ablate.sh BASE_BUILD NEW_BUILD        (each a build dir holding bench/core/bench_core)
#   REPS (10), THREADS ("1 4"), RATES (total events/s, "10000000 15000000 20000000"), RINGS_KB ("2048 4096"),
#   EVENTS (per run, total: 2000000)
# A base build of an older commit: git archive <commit> | tar -x -C /tmp/base && make -C /tmp/base \
#   /tmp/base/build/bench/core/bench_core   (copy this tree's bench/core/bench_core.c there first, so both
#   builds run the same benchmark code).
set -u
[ $# -eq 2 ] || { echo "usage: $0 BASE_BUILD NEW_BUILD" >&2; exit 2; }
declare -A bin=([base]=$1/bench/core/bench_core [new]=$2/bench/core/bench_core)
for b in "${bin[@]}"; do [ -x "$b" ] || { echo "ablate: $b not built" >&2; exit 2; }; done
REPS=${REPS:-10} THREADS=${THREADS:-1 4} RATES=${RATES:-10000000 15000000 20000000}
RINGS_KB=${RINGS_KB:-2048 4096} EVENTS=${EVENTS:-2000000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rs-ablate.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export RAILSCOPE_OUT=$tmp/traces
echo "# runs with drops out of $REPS (paced, drop policy, 80-byte events); $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A bad
for t in $THREADS; do
    for r in $RATES; do
        for _ in $(seq "$REPS"); do
            for b in base new; do
                for kb in $RINGS_KB; do
                    d=$(RAILSCOPE_BUFFER_KB=$kb "${bin[$b]}" paced "$t" $((EVENTS / t)) $((r / t)) |
                        sed -n 's/.*drops \([0-9]*\).*/\1/p')
                    [ "${d:-1}" = 0 ] || bad[$b.$kb]=$((${bad[$b.$kb]:-0} + 1))
                    rm -rf "${tmp:?}/traces"
                done
            done
        done
        for b in base new; do
            for kb in $RINGS_KB; do
                echo "bench.core.ablate threads $t total_per_s $r build $b ring_kb $kb runs_with_drops ${bad[$b.$kb]:-0}/$REPS"
                bad[$b.$kb]=0
            done
        done
    done
done
