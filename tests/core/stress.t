#!/bin/bash
# 16 threads x 1M events with the default buffers and writer.
#  1. Paced at 125k events/s per thread (2M/s in all, under the sustained rate bench/core measures on
#     this 2-core machine): nothing may be dropped, every event is in the file in order.
#  2. As fast as they can (far over the sustained rate): drops happen, and the DROPS count in the file
#     equals exactly what rs_emit refused; every accepted event is in the file.
#  3. The writer's drain in pieces (256 KiB at a time, the tail following each piece, busy rings drained
#     again): 1 MiB rings, unpaced, with rs_emit_as markers (32- and 48-byte records, so events straddle
#     the pieces' ends) and with 80-byte events: every accepted event back in order, drops exact.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/emitter tests/core/check
E=$RS_BUILD/tests/core/emitter C=$RS_BUILD/tests/core/check
plan 11

# (under a sanitizer 250 k events a thread: the rate is not what it checks there, and each ring still turns over
# several times in the 2 s)
pn=1000000
timing_ok || pn=250000
out=$(RAILSCOPE_OUT=$T/paced run_timeout 60 "$E" -t 16 -n $pn -r 125000)
if timing_ok; then
    if [ "$out" != "emitted=16000000 dropped=0" ]; then
        # Load-dependent: on a 2-core machine shared with other builds the writer can be starved for the
        # ~0.5 s a ring lasts at this rate. One retry; two runs in a row with drops fail.
        diag "paced run dropped ($out, load $(cut -d' ' -f1 /proc/loadavg)); once more"
        rm -rf "$T/paced"
        out=$(RAILSCOPE_OUT=$T/paced run_timeout 60 "$E" -t 16 -n 1000000 -r 125000)
    fi
    is "$out" "emitted=16000000 dropped=0" "paced: 16M events accepted, none dropped"
    res=$("$C" "$T"/paced/*.rtrace)
    like "$res" "status=complete marks=16000000 gaps=0 order_errors=0 tid_mix=0 drops=0 .* late_start=0 " "paced: all 16M in the file, per-thread order, THREAD_START first, zero drops"
else
    # Zero drops at this rate is a claim about the writer's pace (timing_ok): under ASan at load ~14 both runs
    # dropped (216 k of 16 M in the first, session 10), at load 7 none did; the ASan writer drains ~2x slower
    # (it dropped at 6.4 M events/s where the normal build did not). The sanitized run checks the paced path's
    # memory and the accounting: every event accepted or refused, the file holds the accepted ones, drops exact.
    emitted=$(echo "$out" | sed -n 's/^emitted=\([0-9]*\) dropped=.*/\1/p')
    dropped=$(echo "$out" | sed -n 's/.* dropped=\([0-9]*\)$/\1/p')
    [ "${dropped:-0}" != 0 ] && diag "paced run under $RS_SAN dropped $dropped (load $(cut -d' ' -f1 /proc/loadavg))"
    is "$((emitted + dropped))" $((16 * pn)) "paced ($RS_SAN: drops allowed): every event accepted or refused"
    res=$("$C" "$T"/paced/*.rtrace)
    like "$res" "status=complete marks=$emitted .*order_errors=0 tid_mix=0 drops=$dropped .* late_start=0 .*unannounced=0$" \
        "paced ($RS_SAN): the $emitted accepted in the file, per-thread order, THREAD_START first, drops=$dropped exactly"
fi

out=$(RAILSCOPE_OUT=$T/fast run_timeout 60 "$E" -t 16 -n 1000000)
emitted=$(echo "$out" | sed -n 's/^emitted=\([0-9]*\) dropped=.*/\1/p')
dropped=$(echo "$out" | sed -n 's/.* dropped=\([0-9]*\)$/\1/p')
is "$((emitted + dropped))" 16000000 "over the rate: every event either accepted or refused"
res=$("$C" "$T"/fast/*.rtrace)
like "$res" "marks=$emitted .*order_errors=0 tid_mix=0 drops=$dropped " "over the rate: file holds every accepted event and drops=$dropped exactly"
like "$res" " unannounced=0$" "over the rate: every hole is preceded by the DROPS record that counts it (issue 17)"
info=$("$RS_CLI" info "$T"/fast/*.rtrace)
like "$info" "dropped: +$dropped events" "info reports the drop count"
ok "info still exits 0 (drops are reported, the file is complete)" "$RS_CLI" info "$T"/fast/*.rtrace

out=$(RAILSCOPE_BUFFER_KB=1024 RAILSCOPE_OUT=$T/pieces run_timeout 60 "$E" -t 2 -n 2000000 -A)
emitted=$(echo "$out" | sed -n 's/^emitted=\([0-9]*\) dropped=.*/\1/p')
dropped=$(echo "$out" | sed -n 's/.* dropped=\([0-9]*\)$/\1/p')
is "$((emitted + dropped))" 4000000 "pieces, with rs_emit_as: every event accepted or refused"
res=$("$C" "$T"/pieces/*.rtrace)
marks=$(echo "$res" | sed -n 's/.* marks=\([0-9]*\) .*/\1/p')
as=$(echo "$res" | sed -n 's/.* as_tid=\([0-9]*\) .*/\1/p')
is "$((marks + as))" "$emitted" "pieces, with rs_emit_as: own-tid and emit_as events in the file = accepted ($marks + $as)"
like "$res" "status=complete .*order_errors=0 tid_mix=0 drops=$dropped .* late_start=0 " "pieces, with rs_emit_as: per-thread order, THREAD_START first, drops=$dropped exactly"
out=$(RAILSCOPE_BUFFER_KB=1024 RAILSCOPE_OUT=$T/pieces80 run_timeout 60 "$E" -t 2 -n 2000000 -V)
emitted=$(echo "$out" | sed -n 's/^emitted=\([0-9]*\) dropped=.*/\1/p')
dropped=$(echo "$out" | sed -n 's/.* dropped=\([0-9]*\)$/\1/p')
res=$("$C" -V "$T"/pieces80/*.rtrace)
like "$res" "status=complete marks=$emitted .*order_errors=0 tid_mix=0 drops=$dropped .* late_start=0 " "pieces, 80-byte events: $emitted accepted all in the file in order, THREAD_START first, drops=$dropped exactly"
