#!/bin/bash
# Zero loss on orderly ends of a traced multithreaded verbs run on the software test NIC (softnic):
# normal exit, SIGTERM, SIGINT (default dispositions: the tracer flushes, then the process dies of the
# same signal as it would untraced) and abort() from the main thread while 8 threads post.
# For each: the file is complete, holds a PROC_END, and records at least as many ibv_post_send calls as
# the application counted (hv_storm -c counts after each post returned; calls made by other threads after
# the tracer's final drain may instead be counted in DROPS), and the process ends the same way (exit code
# or signal) as an untraced run.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/hlib.sh"
need_build tests/hardening/hv_storm tests/hardening/killat tests/corpus/rs-readcheck librailscope.so
use_softnic
plan 12

check_end() { # name dir pid count-file expected-status actual-status
    local name=$1 d=$2 pid=$3 cf=$4 want=$5 got=$6 f r posted
    f=$(trace_of "$d" "$pid")
    r=$([ -n "$f" ] && "$RC" -k ibv_post_send "$f")
    read -r posted _ < <(od -An -t u8 -w16 "$cf" 2>/dev/null)
    is "$got" "$want" "$name: the process ends as it would untraced ($want)"
    like "$r" ' complete .*proc_end=[0-9]' "$name: trace complete with a PROC_END"
    # Other threads keep posting while the tracer flushes for a signal: calls after its final drain may
    # be dropped, but then they must be counted (DROPS, reason shutdown), never lost silently.
    [ -n "$r" ] && [ $(($(kv "$r" kind) + $(kv "$r" drops))) -ge "${posted:-0}" ] && [ "${posted:-0}" -gt 0 ]
    _tap_result $? "$name: zero loss ($(kv "$r" kind) ibv_post_send recorded + $(kv "$r" drops) counted as dropped, $posted posted)"
}

# normal exit
d=$T/exit
env LD_PRELOAD="$PRELOAD" RAILSCOPE_OUT="$d" RAILSCOPE_FLUSH_MS=100 "$HB/hv_storm" -t 8 -n 300 -c "$T/c.exit" \
    >"$T/exit.out" 2>&1 &
pid=$!
wait $pid 2>/dev/null
check_end "normal exit" "$d" $pid "$T/c.exit" "exit:0" "exit:$?"

for sig in TERM INT; do
    d=$T/$sig
    # untraced reference: how does hv_storm die of this signal?
    ref=$(run_timeout 30 "$HB/killat" -w -s $sig 200 "$HB/hv_storm" -r -t 8 -d 20000 2>&1 | grep -o 'status=.*')
    line=$(run_timeout 30 "$HB/killat" -w -s $sig 200 env LD_PRELOAD="$PRELOAD" RAILSCOPE_OUT="$d" \
        RAILSCOPE_FLUSH_MS=100 "$HB/hv_storm" -r -t 8 -d 20000 -c "$T/c.$sig" 2>&1 | grep '^pid=')
    check_end "SIG$sig" "$d" "$(kv "$line" pid)" "$T/c.$sig" "${ref#status=}" "$(kv "$line" status)"
done

# abort() while the threads post
d=$T/abort
env LD_PRELOAD="$PRELOAD" RAILSCOPE_OUT="$d" RAILSCOPE_FLUSH_MS=100 "$HB/hv_storm" -t 8 -d 20000 -A 300 \
    -c "$T/c.abort" >/dev/null 2>&1 &
pid=$!
wait $pid 2>/dev/null
rc=$?
check_end "abort()" "$d" $pid "$T/c.abort" "rc:134" "rc:$rc"
exit 0
