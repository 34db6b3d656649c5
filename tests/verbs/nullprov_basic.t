#!/bin/bash
# Verbs capture of the classic API on the null provider (tests/verbs/nullprov.c): transparency (same
# output with and without the tracer: return values, errno, bad_wr, completions), exactly the posts and
# completions the program made, unsignaled sends, error completions, bad_wr verdicts, two contexts, memory
# kinds (malloc'd = host, mlocked = pinned), empty-poll counters.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/vlib.sh"
need_build verbs/vt_basic verbs/nullprov/libibverbs.so.1
plan 25

N=7
plain=$(on_null run_timeout 20 "$VT/vt_basic" -n $N -c 2 2>&1)
out=$(on_null traced "$T/tr" "$VT/vt_basic" -n $N -c 2 2>&1)
is "$out" "$plain" "output identical with and without the tracer (ret, errno, bad_wr, completions)"
like "$plain" "list post: ret=22 errno=22 bad_wr=1" "the provider's bad_wr and errno reach the program"
d=$(vdump "$T/tr")
is "$(nkind "$d" ibv_post_send)" "$(summary "$out" sends)" "one post event per send WR"
is "$(nkind "$d" ibv_post_recv)" "$(summary "$out" recvs)" "one post event per recv WR"
is "$(nkind "$d" ibv_wc)" "$(summary "$out" wcs)" "one completion event per completion polled"
is "$(nkind "$d" ibv_post_send 'wr_id=0x13(8[89a-f]|9[0-9a-f]) .*send_flags=0x0 ')" "$((2 * N))" \
    "unsignaled RDMA writes recorded with their flags"
like "$(printf '%s\n' "$d" | grep '^ibv_wc ' | grep 'wr_id=0x1e61 ')" "status=4 " "error completion recorded with its status"
like "$plain" "single post: ret=22 errno=22 bad_wr=wr" "a refused single WR: the provider's bad_wr and errno reach the program"
is "$(nkind "$d" ibv_post_send 'wr_id=0x238c .*ret=22')" 2 "a refused single WR is recorded with the return value"
is "$(field "$d" ibv_post_send ret | tr '\n' ' ' | grep -oE '0 22 22 $')" "0 22 22 " \
    "bad_wr verdicts: accepted WR 0, refused WR and the one after it carry the return value"
is "$(nkind "$d" ibv_open_device)" 2 "two contexts opened"
is "$(field "$d" ibv_open_device device | sort | tr '\n' ' ')" "null0 null1 " "device names recorded"
is "$(field "$d" ibv_post_send qp_num | sort -u | wc -l)" 2 "posts on both contexts' QPs"
is "$(field "$d" ibv_reg_mr mem | sort | tr '\n' ' ')" "1 1 2 2 " "MR kinds: malloc'd = host (1), mlocked = pinned (2)"
is "$(nkind "$d" ibv_post_send 'opcode=0 .*mem=2 ')" "$((2 * (N + 1)))" "posts from the mlocked MR carry mem=pinned"
is "$(nkind "$d" ibv_post_send 'wr_id=0x1e61 .*mem=0 ')" 2 "an lkey no MR has is mem=unknown"
is "$(field "$d" ibv_poll_empty count | awk '{s+=$1} END {print s+0}')" 200 "empty polls counted (100 per CQ), not one event each"
like "$(nkind "$d" ibv_modify_qp 'state=3 .*timeout=14 retry_cnt=7 ')" '^2$' "modify_qp records state, timeout, retry count"

# Busy-polling an empty CQ across several flush intervals: one IBV_POLL_EMPTY per CQ per interval, with
# the count of empty polls and the time spent polling empty.
out=$(export RAILSCOPE_FLUSH_MS=50; on_null traced "$T/spin" "$VT/vt_basic" -n 1 -e 400 2>&1)
d=$(vdump "$T/spin")
spins=$(printf '%s\n' "$out" | sed -nE 's/^spin: ([0-9]+) empty polls.*/\1/p')
rcq=$(printf '%s\n' "$d" | grep '^ibv_create_cq ' | sed -n 2p | grep -oE ' cq=0x[0-9a-f]+' | cut -d= -f2)
pe=$(printf '%s\n' "$d" | grep '^ibv_poll_empty ' | grep " cq=$rcq ")
is "$(printf '%s\n' "$pe" | grep -oE ' count=[0-9]+' | cut -d= -f2 | awk '{s+=$1} END {print s+0}')" "$spins" \
    "every empty poll of a 400 ms spin is counted"
ok "the spin is spread over several interval events ($(printf '%s\n' "$pe" | grep -c .))" \
    test "$(printf '%s\n' "$pe" | grep -c .)" -ge 3
ms=$(printf '%s\n' "$pe" | grep -oE ' dur=[0-9]+' | cut -d= -f2 | awk '{s+=$1} END {printf "%d", s/1e6}')
ok "time spent polling empty is about the 400 ms spun (got $ms ms)" test "$ms" -ge 300 -a "$ms" -le 600

# Event-driven pattern: one empty poll drains the CQ, then the program waits (2 ms) and re-arms: the
# empty polls are counted, but no busy-polling time is (that was waiting, not polling).
out=$(export RAILSCOPE_FLUSH_MS=50; on_null traced "$T/wait" "$VT/vt_basic" -n 1 -w 50 2>&1)
d=$(vdump "$T/wait")
scq=$(printf '%s\n' "$d" | grep '^ibv_create_cq ' | sed -n 1p | grep -oE ' cq=0x[0-9a-f]+' | cut -d= -f2)
pe=$(printf '%s\n' "$d" | grep '^ibv_poll_empty ' | grep " cq=$scq ")
is "$(printf '%s\n' "$pe" | grep -oE ' count=[0-9]+' | cut -d= -f2 | awk '{s+=$1} END {print s+0}')" 150 \
    "event-driven drains: every empty poll counted (100 + 50)"
us=$(printf '%s\n' "$pe" | grep -oE ' dur=[0-9]+' | cut -d= -f2 | awk '{s+=$1} END {printf "%d", s/1e3}')
ok "event-driven drains: the 50 x 2 ms waits are not busy-polling time (got $us us)" test "$us" -lt 20000

# The verbs family switched off (RAILSCOPE_EVENTS=all,-verbs): the program still behaves identically and
# no verbs event is written.
out=$(export RAILSCOPE_EVENTS=all,-verbs; on_null traced "$T/off" "$VT/vt_basic" -n $N -c 2 2>&1)
is "$out" "$plain" "verbs family off: same output"
is "$(ls "$T"/off/*.rtrace 2>/dev/null | wc -l)/$(vdump "$T/off" 2>/dev/null | grep -c .)" "1/0" "verbs family off: a trace, without verbs events"
