#!/bin/bash
# Before/after of the verbs capture, side by side in one run: bench/verbs/run.sh (vb_bench on the null provider) of
# two builds in turns, ROUNDS times (the order alternates), so both see the same load. Usage:
#   bench/verbs/compare.sh BASE_BUILD NEW_BUILD [ROUNDS] [vb_bench options, default -b 21]
# BASE_BUILD: a build of the older tree, e.g.
#   git archive <commit> | tar -x -C /tmp/base && make -C /tmp/base BUILD=/tmp/base/build
# Prints per build and measure (post_send+completion, empty poll, batched x16 per WR) the medians and quartiles over
# the rounds of the traced time and of traced/untraced (the untraced side runs in the same process: the ratio takes
# out the process's speed), and the traced time of the rounds whose untraced time was within 10 % of the fastest:
# on a shared VM a process runs in a fast or a slow state for its whole life (dev VM, session 20: untraced 13 or
# 17-19 ns, traced 50 or 80-88 ns), and mixing the two buries a few ns.
set -u
[ $# -ge 2 ] || { echo "usage: $0 BASE_BUILD NEW_BUILD [ROUNDS] [vb_bench options]" >&2; exit 2; }
BASE=$1 NEW=$2 R=${3:-20}
shift $(($# < 3 ? $# : 3))
[ $# -gt 0 ] || set -- -b 21
TOP=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/rs-vcmp.XXXXXX")
trap 'rm -rf "$out"' EXIT
for i in $(seq "$R"); do
    order="base new"
    [ $((i % 2)) = 0 ] && order="new base"
    for w in $order; do
        b=$BASE
        [ $w = new ] && b=$NEW
        RS_BUILD=$b VB_NO_FLOOR=1 "$TOP/bench/verbs/run.sh" "$@" >"$out/$w.$i" 2>&1 ||
            { echo "compare: run.sh failed for $b: $(tail -1 "$out/$w.$i")" >&2; exit 2; }
    done
done
q() { # median [quartiles] of the numbers on stdin
    sort -g | awk '{ v[NR] = $1 } END { if (!NR) { printf "-"; exit }
        printf "%.3g [%.3g %.3g]", v[int((NR + 1) / 2)], v[int((NR + 3) / 4)], v[int((3 * NR + 1) / 4)] }'
}
echo "# $R rounds of run.sh $*; load $(cut -d' ' -f1-3 /proc/loadavg); median [quartiles]"
for k in "post_send+completion" "empty poll_cq" "batched x16, per WR"; do
    fast=$(cat "$out"/*.* | grep -h "^$k:" | sed -E 's/.*untraced ([0-9.]+) ns.*/\1/' | sort -g | head -1)
    for w in base new; do
        printf 'compare.%-22s %-4s traced ns %s  traced/untraced %s  fast rounds traced ns %s\n' "$k" $w \
            "$(grep -h "^$k:" "$out"/$w.* | sed -E 's/.*traced ([0-9.]+) ns.*/\1/' | q)" \
            "$(grep -h "^$k:" "$out"/$w.* | sed -E 's/.*ratio ([0-9.]+).*/\1/' | q)" \
            "$(grep -h "^$k:" "$out"/$w.* | sed -E 's/.*untraced ([0-9.]+) ns, traced ([0-9.]+) ns.*/\1 \2/' |
                awk -v f="$fast" '$1 <= 1.1 * f { print $2 }' | q) ($(grep -h "^$k:" "$out"/$w.* |
                sed -E 's/.*untraced ([0-9.]+) ns.*/\1/' | awk -v f="$fast" '$1 <= 1.1 * f' | wc -l) of $R)"
    done
done
