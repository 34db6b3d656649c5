#!/bin/bash
# The verbs capture overhead on another host in one command (made for the 16-core H200 host): the numbers of
# bench/verbs/RESULTS.md — added ns per traced post_send with its completion, per empty poll_cq, per WR of a
# 16-WR batch, against the untraced run in the same process — and their floor (the core's two clock reads and
# two event copies alone). Builds nothing but `make` (only when the build is missing); ~20-40 s.
#   bench/verbs/h200.sh                 ROUNDS=4 (default), RS_BUILD=<build dir> (default ./build)
# Prints each round, then the medians (min..max) over rounds. Paste the whole output into RESULTS.md.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=${RS_BUILD:-$TOP/build}
ROUNDS=${ROUNDS:-4}
need="$B/librailscope.so $B/verbs/vb_bench $B/verbs/nullprov/libibverbs.so.1 $B/verbs/floor/librailscope.so"
for f in $need; do
    if [ ! -e "$f" ]; then
        echo "== $f missing: make -j$(nproc) BUILD=$B"
        (cd "$TOP" && make -s -j"$(nproc)" BUILD="$B" >/dev/null) || { echo "railscope: make failed" >&2; exit 2; }
        break
    fi
done
start=$(date +%s)
echo "== host: $(hostname), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs," \
    "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo ?)," \
    "load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== tree: $(cd "$TOP" && git log -1 --format='%h %cd' --date=iso 2>/dev/null || echo '?'), build $B, $(date -u '+%F %T UTC')"
all=
for r in $(seq "$ROUNDS"); do
    echo "-- round $r"
    out=$(RS_BUILD=$B "$TOP/bench/verbs/run.sh" -b 15)
    printf '%s\n' "$out" | grep -E '^(post_send|empty|batched|events|floor|raw)'
    all+="$out"$'\n'
done
echo "-- wall-clock time (-w), once"
RS_BUILD=$B VB_NO_FLOOR=1 "$TOP/bench/verbs/run.sh" -b 15 -w | grep -E '^(post_send|empty|batched)'
med() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {if (!NR) {print "?"; exit} m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.1f (%.1f..%.1f)", m, a[1], a[NR]}'; }
# val LINE-PREFIX TEXT-BEFORE-NUMBER: that number from each round's line
val() { printf '%s\n' "$all" | grep "^$1" | sed -nE "s/.*$2 ([0-9.]+).*/\1/p" | tr '\n' ' '; }
echo "== medians over $ROUNDS rounds (thread CPU time), ns"
echo "post_send+completion: untraced $(val post_send untraced | med), added $(val post_send added | med)   (goal <= 25)"
echo "empty poll_cq:        untraced $(val empty untraced | med), added $(val empty added | med)   (goal <= 5)"
echo "batched x16, per WR:  untraced $(val batched untraced | med), added $(val batched added | med)"
echo "floor (core only):    2 clock reads $(val floor 'clock reads' | med), 2 copies $(val floor 'B\)' | med), both $(val floor both | med)"
echo "raw:                  rdtsc $(val raw rdtsc | med), clock_gettime $(val raw 'MONOTONIC\)' | med)"
echo "== done in $(( $(date +%s) - start )) s"
