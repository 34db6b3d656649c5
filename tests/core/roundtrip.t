#!/bin/bash
# Round trip through the live core: N threads emit MARK and IBV_POST_SEND events; the reader gets back
# every event, in per-thread order, with its payload and thread id, and the CLI decodes them.
. "$(dirname "$0")/../lib.sh"
need_build tests/core/emitter tests/core/check
E=$RS_BUILD/tests/core/emitter C=$RS_BUILD/tests/core/check
plan 15

# Paced well under the sustained rate: nothing may be dropped.
out=$(RAILSCOPE_OUT=$T/a run_timeout 30 "$E" -t 8 -n 20000 -r 200000)
is "$out" "emitted=160000 dropped=0" "8 threads emitted 160000 events, none dropped"
f=$(ls "$T"/a/*.rtrace)
res=$("$C" "$f")
like "$res" "status=complete marks=160000 gaps=0 order_errors=0 tid_mix=0 drops=0 " "all 160000 MARKs read back in per-thread order"
like "$res" "thread_start=8 thread_end=8 proc_end=1 end_status=0 end_reason=0" "THREAD_START and THREAD_END per thread, PROC_END with exit status"
like "$res" "strings_bad=0" "every MARK's name string resolves"

# Payload of a 64-byte verbs-kind event survives exactly (JSON dump through the CLI).
RAILSCOPE_OUT=$T/v run_timeout 30 "$E" -V -t 2 -n 3 >/dev/null
fv=$(ls "$T"/v/*.rtrace)
res=$("$C" -V "$fv")
like "$res" "marks=6 gaps=0 order_errors=0" "IBV_POST_SEND events read back"
line=$("$RS_CLI" dump --json "$fv" | grep '"kind":"ibv_post_send"' | grep '"wr_id":"0x100000002"')
like "$line" '"bytes":65536,' "dump --json: u64 field by name"
like "$line" '"qp_num":4660,' "dump --json: u32 field by name"
like "$line" '"ts_ns":[0-9]+,"pid":[0-9]+,"tid":[0-9]+' "dump --json: ts_ns, pid, tid"
mark=$("$RS_CLI" dump --json "$f" | grep -m1 '"kind":"mark"')
like "$mark" '"name":"emitter"' "dump --json resolves strings"
txt=$("$RS_CLI" dump "$fv" | grep -c ibv_post_send)
is "$txt" 6 "text dump prints every event"
ok "info exits 0 on a complete file" "$RS_CLI" info "$f"
info=$("$RS_CLI" info "$f")
like "$info" "mark +160000" "info counts events per kind"

# rs_emit_as: events recorded on behalf of another thread id land in chunks of that tid; hooks run.
RAILSCOPE_FLUSH_MS=50 RAILSCOPE_OUT=$T/as run_timeout 30 "$E" -A -H -t 2 -n 10000 -r 20000 >/dev/null
res=$("$C" "$T"/as/*.rtrace)
like "$res" "marks=18000 .*order_errors=0 tid_mix=0 drops=0 .*as_tid=2000 " "rs_emit_as: 2000 events under tid 1000004242, the rest in order under their own"
like "$res" "hook_ticks=[1-9][0-9]* hook_end=1 " "rs_at_tick hooks run every flush interval, rs_at_shutdown once"
names=$("$RS_CLI" dump --json "$T"/as/*.rtrace | grep '"kind":"thread_start"' | grep -c '"name":"railscope-wr"')
is "$names" 1 "THREAD_START carries the thread's name"
