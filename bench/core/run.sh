#!/bin/bash
# Recording-core benchmarks (see bench_core.c). Every number is measured in this run next to its
# baseline; on a shared machine only medians and ratios mean anything. Prints "bench.core.<name> value".
#   RS_BUILD: build directory (default build/); BENCH_N: events per thread for the sustained runs;
#   ZD_REPS: clean runs in a row a zero-drop rate needs (default 3); PACED_MS: least length of each (500).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${RS_BUILD:-$top/build}
BIN=$B/bench/core/bench_core
[ -x "$BIN" ] || { echo "bench/core: $BIN not built (make BUILD=$B)" >&2; exit 2; }
N=${BENCH_N:-1000000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/rs-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export RAILSCOPE_OUT=$tmp/traces

echo "# hot path: ns per event, median of 101 batches of 4096, writer draining between batches"
"$BIN" hot | sed 's/^/bench.core./'

echo "# tracer clock vs clock_gettime(CLOCK_MONOTONIC): 4 threads, 3 s (source as RAILSCOPE_CLOCK, default auto)"
"$BIN" clock 3 4 | sed 's/^/bench.core./'

echo "# sustained: T threads as fast as they can with RAILSCOPE_POLICY=block (the writer's pace: no drops)"
best=0
for t in 1 2 4; do
    line=$(RAILSCOPE_POLICY=block "$BIN" sustained "$t" "$N")
    echo "bench.core.sustained.$line"
    r=$(echo "$line" | sed -n 's/.*events_per_s \([0-9]*\).*/\1/p')
    [ "${r:-0}" -gt "$best" ] && best=$r
done
ZD_REPS=${ZD_REPS:-3} PACED_MS=${PACED_MS:-500}
echo "# zero-drop rate: paced runs (drop policy) from 1.1x the best block-policy rate down by 0.85x until"
echo "# $ZD_REPS runs in a row (each >= $PACED_MS ms) have 0 drops (one lucky run is not a rate); producers burst every ~1 ms"
for t in 1 2 4; do
    rate=$((best * 11 / 10))
    for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14; do
        per=$((rate / t)) clean=0
        # each run lasts at least PACED_MS (a 1 M-event run at 20 M/s is over in 50 ms: not "sustained")
        n=$((per / 1000 * PACED_MS))
        [ "$n" -lt "$N" ] && n=$N
        while [ "$clean" -lt "$ZD_REPS" ]; do
            line=$("$BIN" paced "$t" "$n" "$per")
            d=$(echo "$line" | sed -n 's/.*drops \([0-9]*\).*/\1/p')
            [ "${d:-1}" -eq 0 ] || break
            clean=$((clean + 1))
        done
        [ "$clean" -eq "$ZD_REPS" ] && break
        rate=$((rate * 85 / 100))
    done
    got=$(echo "$line" | sed -n 's/.*events_per_s \([0-9]*\).*/\1/p')
    echo "bench.core.zero_drop.threads $t paced_total_per_s $rate achieved_per_s $got clean_runs $clean/$ZD_REPS last: $line"
done

echo "# bytes per event after compression, verbs-like stream (post_send + completion pairs), per zstd level"
for l in -1 1 2; do
    RAILSCOPE_ZSTD_LEVEL=$l "$BIN" bytes "$tmp/bytes.rtrace" 2000000 | sed 's/^/bench.core./'
done
echo "# the same at level 1 with zstd worker threads (RAILSCOPE_ZSTD_THREADS), then the live path with them"
for z in 2 4; do
    RAILSCOPE_ZSTD_THREADS=$z "$BIN" bytes "$tmp/bytes.rtrace" 2000000 | sed "s/^/bench.core.zthreads$z./"
done
for t in 4 8; do
    line=$(RAILSCOPE_ZSTD_THREADS=4 RAILSCOPE_POLICY=block "$BIN" sustained "$t" "$N")
    echo "bench.core.sustained_zthreads4.$line"
done

echo "# fork(): untraced and traced (LD_PRELOAD) alternately, 5 rounds of 200 forks; medians per fork, then ratios"
FL=$B/bench/core/forklat LIB=$B/librailscope.so
if [ -x "$FL" ] && [ -e "$LIB" ]; then
    for r in 1 2 3 4 5; do
        u=$("$FL" 200) t=$(LD_PRELOAD=$LIB "$FL" 200)
        echo "bench.core.fork.round $r untraced $u | traced $t"
    done | tee "$tmp/fork.txt"
    awk '{ cu[NR] = $5; ru[NR] = $7; ct[NR] = $13; rt[NR] = $15 }
         function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                       return a[int((n + 1) / 2)] }
         END { n = NR; a = med(cu, n); b = med(ct, n); c = med(ru, n); d = med(rt, n)
               printf "bench.core.fork.ratio fork_to_child traced/untraced %.2f (%.0f vs %.0f us) fork_to_reaped %.2f (%.0f vs %.0f us)\n", b / a, b, a, d / c, d, c }' "$tmp/fork.txt"
else
    echo "bench.core.fork skipped: $FL or $LIB not built"
fi

echo "# exec: fork+exec of /bin/true and of a small C program (exectiny), untraced and under LD_PRELOAD alternately from an"
echo "# untraced parent (the exec'd image's library start-up and exit), 3 rounds of 100 each; medians per exec, then the"
echo "# ratios of the rounds' medians (RS_BASE_BUILD=<old build>: its library runs beside, as traced2)"
EL=$B/bench/core/execlat ET=$B/bench/core/exectiny
if [ -x "$EL" ] && [ -x "$ET" ] && [ -e "$LIB" ]; then
    libs=$LIB
    [ -n "${RS_BASE_BUILD:-}" ] && [ -e "$RS_BASE_BUILD/librailscope.so" ] && libs=$LIB,$RS_BASE_BUILD/librailscope.so
    for r in 1 2 3; do
        for p in /bin/true "$ET"; do
            echo "bench.core.exec.round $r $(basename "$p") $("$EL" "$libs" 100 "$p")"
        done
    done | tee "$tmp/exec.txt"
    for p in true exectiny; do
        awk -v p="$p" '$3 == p { n++; u[n] = $5; t[n] = $7; if ($10 == "traced2_us") b[n] = $11 }
             function med(a, n,   i, j, x) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
                                           return a[int((n + 1) / 2)] }
             END { if (!n) exit; x = med(u, n); y = med(t, n)
                   printf "bench.core.exec.ratio %s traced/untraced %.2f (%.0f vs %.0f us)", p, y / x, y, x
                   if (b[1] != "") { z = med(b, n); printf " base traced/untraced %.2f (%.0f us)", z / x, z }
                   printf "\n" }' "$tmp/exec.txt"
    done
else
    echo "bench.core.exec skipped: $EL, $ET or $LIB not built"
fi
