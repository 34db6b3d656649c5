#!/bin/bash
# `railscope dump` decodes a completion's hdr.aux (formats/events_verbs.h RS_WC_AUX_*: the empty polls right before
# the poll that found it) into named fields after the kind's own (formats/rtrace_enums.h rs_aux_IBV_WC): armed,
# empty_polls_min/empty_polls_max (the class's range; max null for the open top class), waited_us (the lower end of
# its 1.024 us unit; null with no empty poll), waited_capped; text and --json alike. An aux without the record (0 from
# older tracers, or any value without bit 31) is printed as before: raw, nothing added. A crafted trace (the real
# writer, fixed pid and clock) with known values, checked field by field and against the expected text lines below.
# Until session 21 dump printed the raw number only: every decoded check failed. Also the new IBV_GET_CQ_EVENT kind.
. "$(dirname "$0")/../lib.sh"
need_build railscope
need_cmd cc
need_cmd jq
plan 13

cat >"$T/gen.c" <<'C'
#include "tests/analyzer/craft.h"

CRAFT_GENERATOR
static void wc(uint64_t ts, uint64_t wr, uint32_t aux)
{
    struct rs_ev_IBV_WC x;
    memset(&x, 0, sizeof x);
    RS_EV_INIT(&x, IBV_WC, ts);
    x.h.aux = aux;
    x.wr_id = wr;
    x.cq = 0xc0;
    x.qp_num = 0x101;
    x.opcode = 128;
    x.bytes = 64;
    put(&x);
}
int main(int argc, char **argv)
{
    if (argc != 2 || !(w = craft_open(argv[1], 0, 1, 4242, "all", "dump_wcaux", 7))) die("open");
    uint64_t t = 2000000;
    wc(t += 1000, 1, 0);                                        /* an older tracer's */
    wc(t += 1000, 2, 5);                                        /* no record bit: raw */
    wc(t += 1000, 3, rs_wc_aux(0, 0, 0));                       /* recorded, no empty poll */
    wc(t += 1000, 4, rs_wc_aux(0, 0, 1));                       /* armed */
    wc(t += 1000, 5, rs_wc_aux(3, 12345, 0));                   /* 3 empty polls: class 2 (2-3), 12 units */
    wc(t += 1000, 6, rs_wc_aux(1000, 5000000, 1));              /* class 10 (512-1023), 4882 units, armed */
    wc(t += 1000, 7, rs_wc_aux(1ull << 40, 100000000000ull, 0)); /* the top class, the wait capped */
    wc(t += 1000, 8, rs_wc_aux(1, 0, 0));                       /* one empty poll, no time */
    struct rs_ev_IBV_GET_CQ_EVENT g;
    memset(&g, 0, sizeof g);
    RS_EV_INIT(&g, IBV_GET_CQ_EVENT, t += 1000);
    g.cq = 0xc0;
    g.channel = 0xc4;
    g.dur = 777;
    g.flags = RS_CQEV_PENDING;
    put(&g);
    struct rs_ev_IBV_POST_SEND s; /* another kind's aux (wr_* builders): no fields added */
    memset(&s, 0, sizeof s);
    RS_EV_INIT(&s, IBV_POST_SEND, t += 1000);
    s.h.aux = 1;
    s.qp_num = 0x101;
    put(&s);
    struct rs_ev_PROC_END p;
    memset(&p, 0, sizeof p);
    RS_EV_INIT(&p, PROC_END, t += 1000);
    put(&p);
    return rs_writer_close(w) ? 1 : 0;
}
C
cc -std=gnu11 -O1 -D_GNU_SOURCE -I"$RS_TOP" -I"$RS_TOP/formats" -I"$RS_TOP/tracer" -o "$T/gen" "$T/gen.c" \
    "$RS_TOP/tracer/writer.c" "$RS_TOP/formats/rtrace_tables.c" -lzstd -lpthread || bail "cannot build the generator"
mkdir "$T/tr" && "$T/gen" "$T/tr" || bail "generator failed"

"$RS_CLI" dump --json "$T/tr" >"$T/d.jsonl"
is "$?" 0 "dump --json: exit 0"
# wc WR_ID: the decoded fields of that completion, "aux armed min max waited capped" (absent key: ?, null: -)
# v(): numbers through an addition, so that jq 1.7 (which prints an untouched number as the JSON wrote it: 0.000)
# and jq 1.6 (a double: 0) print the same
wc() {
    jq -r --arg w "$(printf '0x%x' "$1")" '
        def v(k): if has(k) then (.[k] | if . == null then "-" elif type == "number" then . + 0 else . end) else "?" end;
        select(.kind == "ibv_wc" and .wr_id == $w) |
        [.aux, v("armed"), v("empty_polls_min"), v("empty_polls_max"), v("waited_us"), v("waited_capped")] |
        map(tostring) | join(" ")' "$T/d.jsonl"
}
is "$(wc 1)" "0 ? ? ? ? ?" "aux 0 (older tracers): raw, no field added"
is "$(wc 2)" "5 ? ? ? ? ?" "aux without the record bit: raw, no field added"
is "$(wc 3)" "2147483648 false 0 0 - false" "recorded, no empty poll: 0 empty polls, waited_us null"
is "$(wc 4)" "3221225472 true 0 0 - false" "armed: armed true"
is "$(wc 5)" "2214592524 false 2 3 12.288 false" "3 empty polls over 12.345 us: class 2-3, 12 units = 12.288 us"
is "$(wc 6)" "3556774674 true 512 1023 4999.168 false" \
    "1000 empty polls over 5 ms, armed: class 512-1023, 4882 units = 4999.168 us"
is "$(wc 7)" "3221225471 false 1073741824 - 34359737.344 true" \
    "2^40 empty polls over 100 s: the top class (no upper end: null), the wait capped at 34359737.344 us"
is "$(wc 8)" "2181038080 false 1 1 0 false" "one empty poll, under a unit: 1-1, waited_us 0"
want='"src_qp":0,"armed":true,"empty_polls_min":512,"empty_polls_max":1023,"waited_us":4999.168,'
like "$(grep '"wr_id":"0x6"' "$T/d.jsonl")" "$want"'"waited_capped":false,"status_name"' \
    "JSON: the fields after the kind's own, before the enum names"
is "$(jq -r 'select(.kind == "ibv_post_send") | "\(.aux) \(has("armed"))"' "$T/d.jsonl")" "1 false" \
    "another kind's aux: no field added"
is "$(jq -c 'select(.kind == "ibv_get_cq_event") | [.cq, .channel, .dur, .ret, .flags]' "$T/d.jsonl")" \
    '["0xc0","0xc4",777,0,"0x2"]' "ibv_get_cq_event: cq, channel, dur, ret, flags"

# the text lines, exactly (the crafted trace's clock and pid are fixed)
"$RS_CLI" dump "$T/tr" | grep -E ' ibv_' >"$T/d.txt"
cat >"$T/want.txt" <<'E'
+0.002000000 4242/7 ibv_wc wr_id=0x1 cq=0xc0 qp_num=257 status=0 opcode=128 bytes=64 vendor_err=0 imm=0x0 wc_flags=0x0 src_qp=0
+0.002001000 4242/7 ibv_wc aux=5 wr_id=0x2 cq=0xc0 qp_num=257 status=0 opcode=128 bytes=64 vendor_err=0 imm=0x0 wc_flags=0x0 src_qp=0
+0.002002000 4242/7 ibv_wc aux=2147483648 wr_id=0x3 cq=0xc0 qp_num=257 status=0 opcode=128 bytes=64 vendor_err=0 imm=0x0 wc_flags=0x0 src_qp=0 armed=false empty_polls_min=0 empty_polls_max=0 waited_us=- waited_capped=false
+0.002003000 4242/7 ibv_wc aux=3221225472 wr_id=0x4 cq=0xc0 qp_num=257 status=0 opcode=128 bytes=64 vendor_err=0 imm=0x0 wc_flags=0x0 src_qp=0 armed=true empty_polls_min=0 empty_polls_max=0 waited_us=- waited_capped=false
+0.002004000 4242/7 ibv_wc aux=2214592524 wr_id=0x5 cq=0xc0 qp_num=257 status=0 opcode=128 bytes=64 vendor_err=0 imm=0x0 wc_flags=0x0 src_qp=0 armed=false empty_polls_min=2 empty_polls_max=3 waited_us=12.288 waited_capped=false
+0.002005000 4242/7 ibv_wc aux=3556774674 wr_id=0x6 cq=0xc0 qp_num=257 status=0 opcode=128 bytes=64 vendor_err=0 imm=0x0 wc_flags=0x0 src_qp=0 armed=true empty_polls_min=512 empty_polls_max=1023 waited_us=4999.168 waited_capped=false
+0.002006000 4242/7 ibv_wc aux=3221225471 wr_id=0x7 cq=0xc0 qp_num=257 status=0 opcode=128 bytes=64 vendor_err=0 imm=0x0 wc_flags=0x0 src_qp=0 armed=false empty_polls_min=1073741824 empty_polls_max=- waited_us=34359737.344 waited_capped=true
+0.002007000 4242/7 ibv_wc aux=2181038080 wr_id=0x8 cq=0xc0 qp_num=257 status=0 opcode=128 bytes=64 vendor_err=0 imm=0x0 wc_flags=0x0 src_qp=0 armed=false empty_polls_min=1 empty_polls_max=1 waited_us=0.000 waited_capped=false
+0.002008000 4242/7 ibv_get_cq_event cq=0xc0 channel=0xc4 dur=777 ret=0 flags=0x2
+0.002009000 4242/7 ibv_post_send aux=1 wr_id=0x0 bytes=0 remote_addr=0x0 local_addr=0x0 qp_num=257 opcode=0 send_flags=0x0 num_sge=0 rkey=0x0 imm=0x0 mem=0 ret=0
E
is "$(cat "$T/d.txt")" "$(cat "$T/want.txt")" "text: the expected lines (raw aux where there is no record, fields after)"
