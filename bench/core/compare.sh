#!/bin/bash
# Before/after of the recording core, side by side in one run (the machine is shared: the two builds
# alternate, so both see the same load). Usage:
#   bench/core/compare.sh BASE_BUILD NEW_BUILD [REPS]
# BASE_BUILD: a build of the older tree, e.g.
#   git archive <commit> | tar -x -C /tmp/base && make -C /tmp/base BUILD=/tmp/base/build /tmp/base/build/bench/core/bench_core
# Prints, per build: hot-path medians (REPS runs each), the tracer clock's deviation from clock_gettime,
# and the zero-drop rate (paced, drop policy, 64-byte events) for 1/2/4 threads found by stepping down
# from 12 M/s total by 0.85x; BENCH_N events per thread (default 1000000).
set -u
[ $# -ge 2 ] || { echo "usage: $0 BASE_BUILD NEW_BUILD [REPS]" >&2; exit 2; }
BASE=$1/bench/core/bench_core NEW=$2/bench/core/bench_core REPS=${3:-3} N=${BENCH_N:-1000000}
for b in "$BASE" "$NEW"; do [ -x "$b" ] || { echo "compare: $b not built" >&2; exit 2; }; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rs-cmp.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export RAILSCOPE_OUT=$tmp/traces
med() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }

echo "# hot path, ns (median of $REPS runs, each a median of 101 batches); load: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$REPS"); do
    for w in base new; do
        b=$BASE; [ $w = new ] && b=$NEW
        "$b" hot >"$tmp/hot.$w.$i"
    done
done
for k in emit_64B_ns emit_32B_ns clock_gettime_ns rs_now_ns now_plus_emit_ns; do
    printf 'compare.hot.%-18s base %6s  new %6s\n' "$k" \
        "$(cat "$tmp"/hot.base.* | awk -v k="hot.$k" '$1 == k { print $2 }' | med)" \
        "$(cat "$tmp"/hot.new.* | awk -v k="hot.$k" '$1 == k { print $2 }' | med)"
done
echo "# tracer clock vs clock_gettime, 4 threads, 3 s (new build; base reads clock_gettime itself)"
"$NEW" clock 3 4 | sed 's/^/compare.new./'
RAILSCOPE_CLOCK=monotonic "$NEW" clock 1 4 | sed 's/^/compare.new.RAILSCOPE_CLOCK=monotonic./'

echo "# zero-drop rate, M events/s achieved (paced, drop policy, 2 MiB rings unless said); load: $(cut -d' ' -f1-3 /proc/loadavg)"
search() { # binary threads -> "achieved_M target_M"
    local rate=12000000 line d got
    for _ in $(seq 12); do
        line=$("$1" paced "$2" "$N" $((rate / $2)))
        d=$(sed -n 's/.*drops \([0-9]*\).*/\1/p' <<<"$line")
        [ "${d:-1}" -eq 0 ] && break
        rate=$((rate * 85 / 100))
    done
    got=$(sed -n 's/.*events_per_s \([0-9]*\).*/\1/p' <<<"$line")
    [ "${d:-1}" -eq 0 ] || got=0
    awk -v g="$got" -v r="$rate" 'BEGIN { printf "%.2f (paced at %.2f)", g / 1e6, r / 1e6 }'
}
for t in 1 2 4; do
    printf 'compare.zero_drop.threads_%d  base %s  new %s\n' "$t" "$(search "$BASE" "$t")" "$(search "$NEW" "$t")"
done
for kb in 4096 8192; do
    printf 'compare.zero_drop.threads_4.buffer_%dk  base %s  new %s\n' "$kb" \
        "$(RAILSCOPE_BUFFER_KB=$kb search "$BASE" 4)" "$(RAILSCOPE_BUFFER_KB=$kb search "$NEW" 4)"
done
echo "# block policy (the writer's own pace), M events/s"
for t in 1 4; do
    printf 'compare.block.threads_%d  base %s  new %s\n' "$t" \
        "$(RAILSCOPE_POLICY=block "$BASE" sustained "$t" "$N" | awk '{ printf "%.2f", $8 / 1e6 }')" \
        "$(RAILSCOPE_POLICY=block "$NEW" sustained "$t" "$N" | awk '{ printf "%.2f", $8 / 1e6 }')"
done
echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
