#!/bin/bash
# SIGTERM / SIGINT: everything recorded before the signal reaches the file (the writer thread writes it;
# the handler only asks and waits), PROC_END says which signal, and the process still dies of it.
# SIGKILL: nothing runs at all; the file decodes up to its last whole frame and at most about one flush
# interval of events is missing.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/emitter tests/core/check
E=$RS_BUILD/tests/core/emitter C=$RS_BUILD/tests/core/check
plan 12

wait_ready() { # file (up to 90 s: a sanitizer build on a loaded 2-core box can take long to emit its
    # events, and a signal sent before the emitter has exec'd is lost in the forking shell)
    for _ in $(seq 1800); do grep -q ready "$1" 2>/dev/null && return 0; sleep 0.05; done
    return 1
}

# Job control on, so that background jobs do not start with SIGINT ignored (non-interactive shells do that).
set -m
# A shell started in the background of a non-interactive one ignores SIGINT, and so does every child: nothing can
# undo that here (bash keeps signals ignored at entry), and the emitter would never see it (the alarm ends it).
ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status 2>/dev/null)
sigint_ignored=$(((0x${ign:-0} >> 1) & 1))
for sig in TERM INT; do
    num=$(kill -l $sig)
    if [ "$sig" = INT ] && [ "$sigint_ignored" = 1 ]; then
        skip "SIGINT is ignored in this test's environment (started as a background job): cannot be tested" 2
        continue
    fi
    RAILSCOPE_OUT=$T/$sig "$E" -t 4 -n 50000 -r 1000000 -p >"$T/$sig.out" 2>&1 &
    pid=$!
    wait_ready "$T/$sig.out" || diag "emitter never got ready"
    kill -$sig $pid
    wait $pid
    rc=$?
    is "$rc" $((128 + num)) "SIG$sig: the process still dies of the signal"
    res=$("$C" "$T"/$sig/*.rtrace)
    like "$res" "status=complete marks=200000 gaps=0 order_errors=0 tid_mix=0 drops=0 .*proc_end=1 end_status=$((128 + num)) end_reason=1 " \
        "SIG$sig after 200000 events: all in the file, PROC_END(signal)"
done

# Mid-run: threads are still emitting when SIGTERM arrives; what is in the file has no hole.
RAILSCOPE_OUT=$T/mid "$E" -t 4 -n 100000000 -r 100000 >/dev/null 2>&1 &
pid=$!
sleep 1
kill -TERM $pid
wait $pid
is "$?" 143 "SIGTERM mid-run: dies of SIGTERM"
res=$("$C" "$T"/mid/*.rtrace)
like "$res" "status=complete marks=[1-9][0-9]* gaps=0 order_errors=0 tid_mix=0 drops=0 .*proc_end=1 end_status=143 end_reason=1 " \
    "SIGTERM mid-run: complete file, no gap in any thread's sequence, PROC_END"

# A handler the application installed itself is left alone (we only take SIG_DFL signals).
out=$(RAILSCOPE_OUT=$T/trap run_timeout 10 bash -c 'trap "echo caught; exit 7" TERM; kill -TERM $$; sleep 5')
rc=$?
is "$rc:$out" "7:caught" "an application's own SIGTERM handler still runs (bash trap, exit 7)"

# SIGKILL: flush interval 200 ms; the newest event on disk is at most ~one interval older than the kill.
RAILSCOPE_FLUSH_MS=200 RAILSCOPE_OUT=$T/kill "$E" -t 2 -n 100000000 -r 20000 >/dev/null 2>&1 &
pid=$!
sleep 1.5
kill_rt=$(date +%s%N)
kill -KILL $pid
wait $pid
is "$?" 137 "SIGKILL: killed"
res=$("$C" "$T"/kill/*.rtrace)
like "$res" "status=(incomplete|truncated) marks=[1-9][0-9]* gaps=0 order_errors=0 " "SIGKILL: decodes up to the last whole frame, no hole"
last=$(echo "$res" | sed -n 's/.*last_mark_rt=\([0-9]*\).*/\1/p')
lag_ms=$(((kill_rt - last) / 1000000))
diag "newest event on disk: ${lag_ms} ms before the kill (flush interval 200 ms)"
# A scheduling bound (timing_ok): the normal build checks it. Under ASan the lag was 0-197 ms in 38 runs at load 4-14
# (session 10: busy loops, stress.t beside), never over; the SIGKILL path's memory is what the sanitized run checks.
if timing_ok; then
    ok "SIGKILL: loss within one flush interval (+150 ms scheduling slack): ${lag_ms} ms" test "$lag_ms" -le 350
else
    skip "$timing_skip_reason (lag ${lag_ms} ms)"
fi
info=$("$RS_CLI" info "$T"/kill/*.rtrace)
like "$info" "status: +(incomplete|truncated)" "info on the killed process's file works"
unlike "$res" "proc_end=1" "no PROC_END after SIGKILL (nothing could run)"
