#!/bin/bash
# A known limit of the answer rule (analyze_join.c answers(), session 19): a rank late on its own is taken for a
# responder when another rank is still sending something else when it polls its message. The rule asks whether the
# message was polled while another rank of the step was sending (its merged data-send bursts), as a stand-in for
# "the rank was waiting for it"; a burst that goes on after the message landed stands in wrongly. The trace holds
# nothing better: empty polls are recorded as a count and a busy-poll time per CQ per flush interval (IBV_POLL_EMPTY,
# 500 ms by default), not per completion, so "it found the message on its first poll" is not in it.
# Crafted verbs-only runs (tests/analyzer/craft.h), 3 ranks passing a 64 KB token 0 -> 1 -> 2 -> 0 in 20 steps of
# 20 ms marked "step N" (the timing of tests/analyzer/answer_chain.c with rank 1 sleeping 5 ms before it looks for
# the token, straggler_answers.t `late`): rank 0 writes the token at +0 (landed, its completion at +0.3 ms), rank 1
# polls it at +5 ms and passes it on at once, rank 2 likewise at +5.3 ms, rank 0 gets it back at +5.6 ms.
#   late: as is: rank 1 late on its own, the persistent straggler, named (rank 2, answering it, is not)
#   busy: rank 0 also writes 4 MB to rank 1 right after the token (plain RDMA WRITE on the same QP: no receive
#         completion, nobody waits for it; done at +16 ms). Rank 1's timing is the same, but its poll at +5 ms lies
#         in rank 0's burst: taken for an answer in every step, so rank 1 is a responder and nobody is compared,
#         "cannot tell (request/response ...)". Pinned as it is: when the tracer records empty polls per completion
#         (cheap: the IBV_WC header's aux is free, and the poll that ends a run of empty polls already reads the run's
#         start and count) and the rule uses them, rank 1 must be named here as in `late`.
#   other: the 4 MB go from rank 0 to rank 2 on another QP instead: the same (any other rank's burst counts)
. "$(dirname "$0")/../lib.sh"
need_build railscope
need_cmd cc
need_cmd jq
plan 9

cat >"$T/gen.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/analyzer/craft.h"
#include "tracer/writer.h"

CRAFT_GENERATOR
/* rank r sends on QP 0x100 + r (to its right), receives on 0x200 + r (from its left); rank 0 also writes to rank 2
 * on 0x300 (BULK 2) */
static void post(uint64_t ts, uint32_t qp, uint64_t wr, uint64_t bytes, uint32_t opcode)
{
    struct rs_ev_IBV_POST_SEND e;
    memset(&e, 0, sizeof e);
    RS_EV_INIT(&e, IBV_POST_SEND, ts);
    e.wr_id = wr;
    e.bytes = bytes;
    e.qp_num = qp;
    e.opcode = opcode;
    e.send_flags = 2;
    e.num_sge = 1;
    e.mem = 1;
    put(&e);
}
static void wc(uint64_t ts, uint32_t qp, uint64_t wr, uint32_t bytes, uint32_t opcode)
{
    struct rs_ev_IBV_WC x;
    memset(&x, 0, sizeof x);
    RS_EV_INIT(&x, IBV_WC, ts);
    x.wr_id = wr;
    x.cq = 0xc0;
    x.qp_num = qp;
    x.opcode = opcode;
    x.bytes = bytes;
    put(&x);
}
/* gen DIR BULK: BULK 0 none, 1 rank 0's 4 MB to rank 1 on the token's QP, 2 to rank 2 on another QP */
int main(int argc, char **argv)
{
    if (argc != 3) die("usage");
    const int bulk = atoi(argv[2]);
    const uint64_t us = 1000, ms = 1000 * us, tok = 64 << 10;
    for (int r = 0; r < 3; r++) {
        if (!(w = craft_open(argv[1], r, 3, 9000, "all", "answer_busy", 7))) die("open");
        uint64_t s = 0;
        for (int k = 0; k < 20; k++) {
            s = 1 * ms + (uint64_t)k * 20 * ms;
            struct rs_ev_MARK m;
            memset(&m, 0, sizeof m);
            RS_EV_INIT(&m, MARK, s);
            char name[32];
            snprintf(name, sizeof name, "step %d", k);
            m.name = rs_writer_intern(w, name);
            m.value = (uint64_t)k;
            put(&m);
            const uint64_t wr = 10 * (uint64_t)k;
            const uint32_t sq = 0x100 + (uint32_t)r, rq = 0x200 + (uint32_t)r;
            /* opcodes: send WR 1 RDMA_WRITE_WITH_IMM, 0 RDMA_WRITE; completion 1 RDMA_WRITE, 129 RECV_RDMA_WITH_IMM */
            if (r == 0) {
                post(s, sq, wr + 1, tok, 1);
                if (bulk) post(s + 10 * us, bulk == 1 ? sq : 0x300, wr + 2, 4 << 20, 0);
                wc(s + 300 * us, sq, wr + 1, (uint32_t)tok, 1);
                wc(s + 5600 * us, rq, 0, (uint32_t)tok, 129);
                if (bulk) wc(s + 16 * ms, bulk == 1 ? sq : 0x300, wr + 2, 4 << 20, 1);
            } else {
                const uint64_t at = s + (r == 1 ? 5000 : 5300) * us; /* rank 1 back from its 5 ms away */
                wc(at, rq, 0, (uint32_t)tok, 129);
                post(at + 10 * us, sq, wr + 1, tok, 1);
                wc(at + 300 * us, sq, wr + 1, (uint32_t)tok, 1);
            }
        }
        struct rs_ev_PROC_END p;
        memset(&p, 0, sizeof p);
        RS_EV_INIT(&p, PROC_END, s + 20 * ms);
        put(&p);
        if (rs_writer_close(w) != 0) die("close");
    }
    return 0;
}
C
cc -std=gnu11 -O1 -D_GNU_SOURCE -I"$RS_TOP" -I"$RS_TOP/formats" -I"$RS_TOP/tracer" -o "$T/gen" "$T/gen.c" \
    "$RS_TOP/tracer/writer.c" "$RS_TOP/formats/rtrace_tables.c" -lzstd -lpthread || bail "cannot build the generator"

run() { # NAME BULK
    mkdir -p "$T/$1" && "$T/gen" "$T/$1" "$2" || bail "generator failed: $*"
    "$RS_CLI" report --json "$T/$1" >"$T/$1.json" 2>"$T/$1.err" || diag "report $1: $(head -3 "$T/$1.err")"
    "$RS_CLI" report "$T/$1" >"$T/$1.txt" 2>/dev/null
    J=$T/$1.json
}
q() { jq -r "$@" "$J"; }
# steps, straggler basis, the late ranks ("rank:persistent:late_count/of"), the peer-wait finding's straggler
state() {
    q '"\(.nsteps),\(.straggler_basis),\([.stragglers[] | "\(.rank):\(.persistent):\(.late_count)/\(.of)"] |
        join(" ")),\([.findings[] | select(.category == "peer_wait") | .straggler.rank][0] // "-")"'
}

run late 0
is "$(state)" "20,first data send per step,1:true:20/20,1" \
    "late: rank 1 polls the token 5 ms after it landed: the persistent straggler, named"
like "$(grep -A1 '^Stragglers' "$T/late.txt")" 'rank 1 \(persistent\)' "late: the text lists rank 1, persistent"
ok "late: rank 0's wait is rank 1's lateness (5.01 ms a step)" \
    jq -e '(.ranks[0].attribution.peer_wait - 20 * 0.00501 | fabs) < 1e-6' "$J"

run busy 1
is "$(state)" "20,none: round trips,,-" \
    "busy: the same rank 1, its poll inside rank 0's 4 MB burst: taken for a responder, nobody compared (known limit)"
like "$(grep '^Stragglers' "$T/busy.txt")" 'cannot tell' "busy: the text says 'cannot tell'"
is "$(q '.ranks[0].attribution.peer_wait')" 0 "busy: no wait charged to anyone"
is "$(jq -s '[.[0].ranks[1].steps[] | .start_s] == [.[1].ranks[1].steps[] | .start_s]' "$T/late.json" "$J")" true \
    "busy: rank 1's steps are those of late"

run other 2
is "$(state)" "20,none: round trips,,-" "other: the 4 MB to rank 2 on another QP: the same"
is "$(q '[.ranks[0].qps[] | "\(.qp):\(.bytes_sent)"] | sort | join(" ")')" "256:1310720 768:83886080" \
    "other: rank 0 sends the tokens on one QP, the 4 MB on another"
