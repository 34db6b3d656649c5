#!/bin/bash
# Verbs capture overhead: traced vs untraced contexts in the same process on the null provider.
#   bench/verbs/run.sh [vb_bench options: -b BLOCKS -i ITERS -w]     (RS_BUILD defaults to ./build)
# Then, where the build has the bench copy of the library (make builds it), the floor: the core's two clock
# reads and two event copies alone (vb_bench -F; VB_NO_FLOOR=1 skips it). Another host: bench/verbs/h200.sh.
# Goal: <= 25 ns added per post_send with its completion, <= 5 ns per empty poll_cq.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
B=${RS_BUILD:-$TOP/build}
for f in "$B/librailscope.so" "$B/verbs/vb_bench" "$B/verbs/nullprov/libibverbs.so.1"; do
    [ -e "$f" ] || { echo "railscope: $f not built (make BUILD=$B)" >&2; exit 2; }
done
OUT=$(mktemp -d "${TMPDIR:-/tmp}/rs-vbench.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
echo "== verbs capture overhead (null provider, $(nproc) CPUs, clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo ?))"
LD_LIBRARY_PATH=$B/verbs/nullprov LD_PRELOAD=$B/librailscope.so RAILSCOPE_OUT=$OUT RAILSCOPE_EVENTS=all \
    RAILSCOPE_BUFFER_KB=4096 RAILSCOPE_FLUSH_MS=10 "$B/verbs/vb_bench" "$@"
if [ -x "$B/verbs/vt_dump" ]; then
    drops=$("$B/verbs/vt_dump" core "$OUT" 2>/dev/null | awk '/^drops / { for (i = 1; i <= NF; i++) if ($i ~ /^events=/) s += substr($i, 8) } END { print s + 0 }')
    posts=$("$B/verbs/vt_dump" verbs "$OUT" 2>/dev/null | grep -c '^ibv_post_send ' || true)
    echo "events recorded: $posts post_send; dropped: $drops"
fi
# The floor: the core's two clock reads and two copies alone (bench copy of the library, vb_floor.c).
if [ -e "$B/verbs/floor/librailscope.so" ] && [ -z "${VB_NO_FLOOR:-}" ]; then
    rm -rf "${OUT:?}"/*
    LD_LIBRARY_PATH=$B/verbs/nullprov LD_PRELOAD=$B/verbs/floor/librailscope.so RAILSCOPE_OUT=$OUT \
        RAILSCOPE_EVENTS=all RAILSCOPE_BUFFER_KB=4096 RAILSCOPE_FLUSH_MS=10 "$B/verbs/vb_bench" -F "$@"
fi
