#!/bin/bash
# The answer rule (analyze_join.c answers()) against a rank late on its own whose message's sender keeps sending
# something else. The rule asks whether the message was polled while another rank of the step was sending (its merged
# data-send bursts), as a stand-in for "the rank was waiting for it"; a burst that goes on after the message landed
# stands in wrongly. Until session 20 the trace held nothing better (empty polls: a count and a busy-poll time per CQ
# per flush interval, IBV_POLL_EMPTY), and such a rank was taken for a responder: "cannot tell". Since then each
# IBV_WC carries the empty polls of its CQ right before it (hdr.aux, formats/events_verbs.h RS_WC_AUX_*: how many,
# the time from the first; with none, the time since the CQ's previous completions is that of its previous IBV_WC),
# and a rank that was not polling for its message when it came (found on its first look after being away) is not
# answering (analyze_join.c polled_for).
# Crafted verbs-only runs (tests/analyzer/craft.h), 3 ranks passing a 64 KB token 0 -> 1 -> 2 -> 0 in 20 steps of
# 20 ms marked "step N" (the timing of tests/analyzer/answer_chain.c with rank 1 sleeping 5 ms before it looks for
# the token, straggler_answers.t `late`): rank 0 writes the token at +0 (landed, its completion at +0.3 ms), rank 1
# polls it at +5 ms and passes it on at once, rank 2 likewise at +5.3 ms, rank 0 gets it back at +5.6 ms.
# Traces without the polls' record (aux 0, as every tracer wrote before session 20):
#   late: as is: rank 1 late on its own, the persistent straggler, named (rank 2, answering it, is not)
#   busy: rank 0 also writes 4 MB to rank 1 right after the token (plain RDMA WRITE on the same QP: no receive
#         completion, nobody waits for it; done at +16 ms). Rank 1's timing is the same, but its poll at +5 ms lies
#         in rank 0's burst: taken for an answer in every step, so rank 1 is a responder and nobody is compared,
#         "cannot tell (request/response ...)": the limit, kept for such traces
#   other: the 4 MB go from rank 0 to rank 2 on another QP instead: the same (any other rank's burst counts)
# With the record (the completions as the tracer writes them: every rank polls its CQ without pause, 100 ns a poll,
# but rank 1, which finds the token on its first poll after 5 ms away, 19.7 ms after its previous completion):
#   late_rec, busy_rec, other_rec: rank 1 named in each, with late's numbers (before session 20's analyzer: busy_rec
#         and other_rec said "cannot tell", as busy)
#   away_rec: busy, but rank 1 polls its CQ once at its step's start (empty: the token is not there yet) and then
#         sleeps: one empty poll 5 ms before the token was found is no waiting for it: named
#   prompt_rec: rank 1 does not sleep (polls the token at +0.31 ms), with busy's 4 MB: nobody late, every rank
#         answers, "cannot tell" as before (the record does not turn responders into stragglers)
#   armed_rec: busy's traffic, every completion marked armed (ibv_req_notify_cq: the program may have waited for the
#         CQ's event, which is not traced): the record does not tell, the old rule decides: "cannot tell" as busy
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/craft_lib.sh"
plan 20

cat >"$T/gen.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/analyzer/craft.h"
#include "tracer/writer.h"

CRAFT_GENERATOR
CRAFT_VERBS
/* rank r sends on QP 0x100 + r (to its right), receives on 0x200 + r (from its left); rank 0 also writes to rank 2
 * on 0x300 (BULK 2) */
/* The polls' record (REC 1, 2 armed), as the tracer writes it: AWAY 0 the CQ polled without pause (100 ns a poll)
 * since the rank's previous completion; 1 found on the first poll (no empty poll: the analyzer takes the time since
 * the previous completion from that one's IBV_WC); else one empty poll at AWAY, then none until ts */
static int rec;
static uint64_t last_found;
static void wc(uint64_t ts, uint32_t qp, uint64_t wr, uint32_t bytes, uint32_t opcode, uint64_t away)
{
    uint32_t aux = 0;
    if (rec) {
        uint64_t since = last_found ? ts - last_found : UINT64_MAX;
        if (away > 1) aux = rs_wc_aux(1, ts - away, rec == 2);
        else aux = rs_wc_aux(away || !last_found ? 0 : since / 100, since, rec == 2);
    }
    last_found = ts;
    complete(ts, qp, wr, bytes, opcode, aux);
}
/* gen DIR BULK REC LATE: BULK 0 none, 1 rank 0's 4 MB to rank 1 on the token's QP, 2 to rank 2 on another QP;
 * REC 0 no record of the polls (older tracers), 1 recorded, 2 recorded, every CQ armed; LATE 1 rank 1 sleeps 5 ms,
 * 2 it polls once at its step's start, then sleeps */
int main(int argc, char **argv)
{
    if (argc != 5) die("usage");
    const int bulk = atoi(argv[2]), late = atoi(argv[4]);
    rec = atoi(argv[3]);
    const uint64_t us = 1000, ms = 1000 * us, tok = 64 << 10, d1 = late ? 5000 * us : 310 * us;
    for (int r = 0; r < 3; r++) {
        if (!(w = craft_open(argv[1], r, 3, 9000, "all", "answer_busy", 7))) die("open");
        uint64_t s = 0;
        last_found = 0;
        for (int k = 0; k < 20; k++) {
            s = 1 * ms + (uint64_t)k * 20 * ms;
            step_mark(s, k);
            const uint64_t wr = 10 * (uint64_t)k;
            const uint32_t sq = 0x100 + (uint32_t)r, rq = 0x200 + (uint32_t)r;
            /* opcodes: send WR 1 RDMA_WRITE_WITH_IMM, 0 RDMA_WRITE; completion 1 RDMA_WRITE, 129 RECV_RDMA_WITH_IMM */
            if (r == 0) {
                post(s, sq, wr + 1, tok, 1);
                if (bulk) post(s + 10 * us, bulk == 1 ? sq : 0x300, wr + 2, 4 << 20, 0);
                wc(s + 300 * us, sq, wr + 1, (uint32_t)tok, 1, 0);
                wc(s + d1 + 600 * us, rq, 0, (uint32_t)tok, 129, 0);
                if (bulk) wc(s + 16 * ms, bulk == 1 ? sq : 0x300, wr + 2, 4 << 20, 1, 0);
            } else {
                const uint64_t at = s + d1 + (r == 1 ? 0 : 300 * us); /* rank 1 back from its 5 ms away */
                wc(at, rq, 0, (uint32_t)tok, 129, r != 1 || !late ? 0 : late == 1 ? 1 : s + 1 * us);
                post(at + 10 * us, sq, wr + 1, tok, 1);
                wc(at + 300 * us, sq, wr + 1, (uint32_t)tok, 1, 0);
            }
        }
        finish(s + 20 * ms);
    }
    return 0;
}
C
craft_build

run() { # NAME BULK REC LATE
    mkdir -p "$T/$1" && "$T/gen" "$T/$1" "$2" "$3" "$4" || bail "generator failed: $*"
    craft_report "$1"
}

run late 0 0 1
is "$(state)" "$named" "late: rank 1 polls the token 5 ms after it landed: the persistent straggler, named"
like "$(grep -A1 '^Stragglers' "$T/late.txt")" 'rank 1 \(persistent\)' "late: the text lists rank 1, persistent"
ok "late: rank 0's wait is rank 1's lateness (5.01 ms a step)" \
    jq -e '(.ranks[0].attribution.peer_wait - 20 * 0.00501 | fabs) < 1e-6' "$J"

run busy 1 0 1
is "$(state)" "20,none: round trips,,-" \
    "busy, no record of the polls: the same rank 1, its poll inside rank 0's 4 MB burst: taken for a responder (limit)"
like "$(grep '^Stragglers' "$T/busy.txt")" 'cannot tell' "busy: the text says 'cannot tell'"
is "$(q '.ranks[0].attribution.peer_wait')" 0 "busy: no wait charged to anyone"
is "$(jq -s '[.[0].ranks[1].steps[] | .start_s] == [.[1].ranks[1].steps[] | .start_s]' "$T/late.json" "$J")" true \
    "busy: rank 1's steps are those of late"

run other 2 0 1
is "$(state)" "20,none: round trips,,-" "other, no record: the 4 MB to rank 2 on another QP: the same"
is "$(q '[.ranks[0].qps[] | "\(.qp):\(.bytes_sent)"] | sort | join(" ")')" "256:1310720 768:83886080" \
    "other: rank 0 sends the tokens on one QP, the 4 MB on another"

# with the polls' record
run late_rec 0 1 1
is "$(state)" "$named" "late_rec: with the polls' record: rank 1 named, as late"
is "$(jq -s '[.[] | .ranks[0].attribution.peer_wait, .ranks[1].attribution.peer_wait]' "$T/late.json" "$J" |
    jq -c '[.[0] == .[2], .[1] == .[3]]')" "[true,true]" "late_rec: the same waits as late"

run busy_rec 1 1 1
is "$(state)" "$named" \
    "busy_rec: rank 1 found the token on its first poll after 5 ms away, inside rank 0's burst: late on its own, named"
like "$(grep -A1 '^Stragglers' "$T/busy_rec.txt")" 'rank 1 \(persistent\)' "busy_rec: the text lists rank 1, persistent"
ok "busy_rec: rank 0's wait is rank 1's lateness (5.01 ms a step), as in late" \
    jq -e '(.ranks[0].attribution.peer_wait - 20 * 0.00501 | fabs) < 1e-6' "$J"
ok "busy_rec: rank 1's cost x 3 ranks is rank 0's wait (rank 2 answers it: waits for nobody)" \
    jq -e '((.stragglers[] | select(.rank == 1) | .cost_s) * .mean_ranks - .ranks[0].attribution.peer_wait |
        fabs) < 1e-9 and .ranks[2].attribution.peer_wait == 0' "$J"

run other_rec 2 1 1
is "$(state)" "$named" "other_rec: the 4 MB to rank 2 on another QP: rank 1 named too"

run away_rec 1 1 2
is "$(state)" "$named" "away_rec: one empty poll, then 5 ms away: rank 1 named"

run prompt_rec 1 1 0
is "$(state)" "20,none: round trips,,-" \
    "prompt_rec: rank 1 polling for the token when it came (busy's 4 MB too): every rank answers, nobody late"
like "$(grep '^Stragglers' "$T/prompt_rec.txt")" 'cannot tell' "prompt_rec: the text says 'cannot tell'"

run armed_rec 1 2 1
is "$(state)" "20,none: round trips,,-" \
    "armed_rec: every CQ armed (the wait may have been for its event): the record does not tell, as busy"
