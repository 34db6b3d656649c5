#!/bin/bash
# The CPU-side benchmarks on the lent 16-core H200 host in one `device` call (no GPU is used): the
# recording core (hot path, sustained and zero-drop rates, bytes/event), verbs overhead, analyzer speed,
# and the software-NIC pause study — numbers from an idle many-core machine next to the shared 2-core dev
# VM's. Builds with `make` first (the host has zstd.h and infiniband/verbs.h, no libunwind.h: not needed).
#   scripts/h200-bench.sh            OUT=<log dir> (default /tmp/rs-h200-out), PAUSE_RUNS (default 10)
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/rs-h200-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/h200.log") 2>&1
T0=$(date +%s)
el() { echo $(($(date +%s) - T0)); }
B=$PWD/build/h200
echo "== host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs," \
    "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo ?)," \
    "load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %T UTC')"
echo "== build ($(el)s)"
if ! make -s -j"$(nproc)" BUILD="$B" >"$OUT/build.log" 2>&1; then
    tail -30 "$OUT/build.log"
    exit 1
fi
export RS_BUILD=$B RS_TOP=$PWD
echo "== core + analyzer benchmarks ($(el)s)"
./bench/run-all.sh core analyzer
# zero_drop NAME START_RATE ZSTD_THREADS THREADS...: for each thread count, paced runs (drop policy) from
# START_RATE down by x0.85 until 3 runs of >= 0.5 s in a row have no drops (as bench/core/run.sh does for
# 1/2/4 threads).
zero_drop() {
    local name=$1 start=$2 z=$3 t rate line d tmp clean n
    shift 3
    tmp=$(mktemp -d)
    for t in "$@"; do
        rate=$start
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            clean=0 n=$((rate / t / 1000 * 500))   # each run >= 0.5 s, as bench/core/run.sh
            [ "$n" -lt 1000000 ] && n=1000000
            while [ "$clean" -lt 3 ]; do
                line=$(RAILSCOPE_ZSTD_THREADS=$z RAILSCOPE_OUT=$tmp "$B/bench/core/bench_core" paced "$t" "$n" $((rate / t)))
                d=$(echo "$line" | sed -n 's/.*drops \([0-9]*\).*/\1/p')
                [ "${d:-1}" -eq 0 ] || break
                clean=$((clean + 1))
            done
            [ "$clean" -eq 3 ] && break
            rate=$((rate * 85 / 100))
        done
        echo "bench.core.$name.threads $t paced_total_per_s $rate clean_runs $clean/3 result: $line"
        rm -rf "${tmp:?}"/*
    done
    rm -rf "$tmp"
}
echo "== core: zero-drop rate with 8 and 16 producer threads ($(el)s)"
zero_drop zero_drop 40000000 0 8 16
echo "== core: zero-drop rate 1/2/4 threads with one zstd worker (RAILSCOPE_ZSTD_THREADS=auto; default 0) ($(el)s)"
zero_drop zero_drop_zworker 20000000 auto 1 2 4
echo "== verbs ($(el)s)"
ROUNDS=3 ./bench/verbs/h200.sh
echo "== software-NIC pause study ($(el)s)"
if command -v jq >/dev/null; then
    timeout 240 ./bench/analyzer/pause_study.sh "${PAUSE_RUNS:-10}"
else
    echo "skipped: no jq on this host"
fi
echo "== tests/analyzer/softnic_ring_pause.t (its strict check runs by itself on an idle machine of >= 8 cores) ($(el)s)"
command -v prove >/dev/null && prove -v tests/analyzer/softnic_ring_pause.t 2>&1 | grep -E "^(ok|not ok)|^#" | head -40
echo "== done ($(el)s)"
