#!/bin/bash
# The answer rule (analyze_join.c answers()/polled_for()) for ranks that wait for their completions in
# ibv_get_cq_event instead of polling. Every completion of such a program comes from an armed CQ (IBV_WC hdr.aux
# RS_WC_AUX_ARMED), which said "may have waited for the CQ's event" and nothing more: until session 21 the rule fell
# back to its stand-in ("the message came while another rank was sending"), and a rank late on its own whose message's
# sender kept sending something else was taken for a responder: "cannot tell". Since then the tracer records each wait
# (IBV_GET_CQ_EVENT: how long the call took, the CQ it returned, RS_CQEV_* flags) and the analyzer (analyze_net.c
# wc_polls) reads it: a thread blocked in the call until the event came was waiting for the completion (found at its
# first look that long after it woke); one whose event was there already when it called looked and found it, and its
# polls decide as if it had not waited.
# Crafted verbs-only runs (tests/analyzer/craft.h) with answer_busy.t's timing and traffic: 3 ranks pass a 64 KB token
# 0 -> 1 -> 2 -> 0 in 20 steps of 20 ms marked "step N", rank 0 also writes 4 MB to rank 1 right after the token (done
# at +16 ms, nobody waits for it); rank 1's token lands at +0.3 ms, and every poll that finds a completion follows a
# wait for the CQ's event (the others block in it until their completion comes, waking 5 us before the poll):
#   late:     rank 1 is away 5 ms: the event is there when it calls (RS_CQEV_PENDING), it polls the token at +5 ms,
#             19.7 ms after its previous completion: late on its own, named (was "cannot tell")
#   woke:     rank 1 blocks in the call until the token lands (+0.31 ms), then is away until +5 ms before it polls:
#             the message was there 4.7 ms before it looked: named (was "cannot tell")
#   prompt:   rank 1 blocks until the token lands and polls it at once: every rank answers: "cannot tell", as before
#   nonblock: late, on a non-blocking channel (RS_CQEV_NONBLOCK: the program waited in poll/epoll, not traced): the
#             wait is not known, the old rule decides: "cannot tell", as before
#   noevent:  late, no IBV_GET_CQ_EVENT at all (tracers before session 21): "cannot tell", as before
#   spin:     prompt, but rank 1's wait ended at +20 us (its event's completion was taken before it woke, by another
#             thread or a drain-poll) and it then polled the CQ empty 64 times over 290 us until the token: it was
#             polling for it, it answers: "cannot tell" (was named 20/20: "away" since the wake)
#   before:   woke, with a run of 64 empty polls that began before the wake (the CQ not re-armed): the wait decides,
#             rank 1 named
#   stolen:   prompt, rank 1's wait flagged RS_CQEV_PENDING but blocked until the token (another thread on the
#             channel took the event it saw): longer than 1 ms, taken as blocked: "cannot tell" (was named)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/craft_lib.sh"
plan 12

cat >"$T/gen.c" <<'C'
#include <string.h>

#include "tests/analyzer/craft.h"

CRAFT_GENERATOR
CRAFT_VERBS
/* A wait for the CQ's event that returned at `wake` after `dur`, with flags `fl` (events 0: none recorded). */
static int events;
static uint32_t next_aux; /* the next completion's hdr.aux, when not 0 */
static void evwait(uint64_t wake, uint64_t dur, uint32_t fl)
{
    if (!events) return;
    struct rs_ev_IBV_GET_CQ_EVENT g;
    memset(&g, 0, sizeof g);
    RS_EV_INIT(&g, IBV_GET_CQ_EVENT, wake - dur);
    g.cq = 0xc0;
    g.channel = 0xc4;
    g.dur = dur;
    g.flags = fl;
    put(&g);
}
/* A completion polled at ts from the armed CQ, as the tracer writes it: no empty poll (the program re-arms the CQ
 * after each event, then polls once). Preceded by a wait that blocked from `from` until 5 us before ts, unless the
 * caller wrote its own wait (from 0). */
static void wc(uint64_t ts, uint32_t qp, uint64_t wr, uint32_t bytes, uint32_t opcode, uint64_t from)
{
    if (from) evwait(ts - 5000, ts - 5000 - from, 0);
    complete(ts, qp, wr, bytes, opcode, next_aux ? next_aux : rs_wc_aux(0, 0, 1));
    next_aux = 0;
}
/* gen DIR MODE: late, woke, prompt, nonblock, noevent, spin, before, stolen (the .t's header) */
int main(int argc, char **argv)
{
    if (argc != 3) die("usage");
    const char *mode = argv[2];
    const int spin = !strcmp(mode, "spin"), stolen = !strcmp(mode, "stolen");
    const int prompt = !strcmp(mode, "prompt") || spin || stolen;
    events = strcmp(mode, "noevent") != 0;
    const uint64_t us = 1000, ms = 1000 * us, tok = 64 << 10, d1 = prompt ? 310 * us : 5000 * us;
    for (int r = 0; r < 3; r++) {
        if (!(w = craft_open(argv[1], r, 3, 9000, "all", "answer_events", 7))) die("open");
        uint64_t s = 0, last = 1 * ms; /* the rank's previous completion: its waits start 10 us after it */
        for (int k = 0; k < 20; k++) {
            s = 1 * ms + (uint64_t)k * 20 * ms;
            step_mark(s, k);
            const uint64_t wr = 10 * (uint64_t)k;
            const uint32_t sq = 0x100 + (uint32_t)r, rq = 0x200 + (uint32_t)r;
            /* opcodes: send WR 1 RDMA_WRITE_WITH_IMM, 0 RDMA_WRITE; completion 1 RDMA_WRITE, 129 RECV_RDMA_WITH_IMM */
            if (r == 0) {
                post(s, sq, wr + 1, tok, 1);
                post(s + 10 * us, sq, wr + 2, 4 << 20, 0);
                wc(s + 300 * us, sq, wr + 1, (uint32_t)tok, 1, s + 20 * us);
                wc(s + d1 + 600 * us, rq, 0, (uint32_t)tok, 129, s + 310 * us);
                wc(s + 16 * ms, sq, wr + 2, 4 << 20, 1, s + d1 + 610 * us);
                last = s + 16 * ms;
            } else {
                const uint64_t at = s + d1 + (r == 1 ? 0 : 300 * us); /* rank 1 back from its 5 ms away */
                if (r == 1 && spin) { /* woke at +20 us (the event of a completion already taken), then polled */
                    evwait(s + 20 * us, s + 10 * us - last, 0);
                    next_aux = rs_wc_aux(64, 290 * us, 1);
                    wc(at, rq, 0, (uint32_t)tok, 129, 0);
                } else if (r == 1 && stolen) { /* an event there when it called, taken by another thread: blocked */
                    evwait(at - 5 * us, at - 5 * us - last - 10 * us, RS_CQEV_PENDING);
                    wc(at, rq, 0, (uint32_t)tok, 129, 0);
                } else if (r == 2 || prompt) wc(at, rq, 0, (uint32_t)tok, 129, last + 10 * us);
                else {
                    if (!strcmp(mode, "woke") || !strcmp(mode, "before")) {
                        evwait(s + 310 * us, s + 310 * us - last - 10 * us, 0);
                        if (mode[0] == 'b') next_aux = rs_wc_aux(64, 4800 * us, 1); /* polls from before the wake */
                    }
                    else
                        evwait(at - 5 * us, 2 * us,
                               RS_CQEV_PENDING | (!strcmp(mode, "nonblock") ? RS_CQEV_NONBLOCK : 0));
                    wc(at, rq, 0, (uint32_t)tok, 129, 0);
                }
                post(at + 10 * us, sq, wr + 1, tok, 1);
                wc(at + 300 * us, sq, wr + 1, (uint32_t)tok, 1, at + 20 * us);
                last = at + 300 * us;
            }
        }
        finish(s + 20 * ms);
    }
    return 0;
}
C
craft_build

run() { # MODE
    mkdir -p "$T/$1" && "$T/gen" "$T/$1" "$1" || bail "generator failed: $1"
    craft_report "$1"
}
cannot="20,none: round trips,,-"

run late
is "$(state)" "$named" \
    "late: rank 1's event was there when it called, after 5 ms away: late on its own, named (was 'cannot tell')"
ok "late: rank 0's wait is rank 1's lateness (5.01 ms a step), as answer_busy.t's busy_rec" \
    jq -e '(.ranks[0].attribution.peer_wait - 20 * 0.00501 | fabs) < 1e-6' "$J"
like "$(grep -A1 '^Stragglers' "$T/late.txt")" 'rank 1 \(persistent\)' "late: the text lists rank 1, persistent"
is "$(jq -r '[.ranks[].attribution.peer_wait] | .[2]' "$J")" 0 \
    "late: rank 2, blocked until rank 1's token came, answers it: waits for nobody"

run woke
is "$(state)" "$named" "woke: rank 1 woke with the token's event, then was away 4.7 ms before it looked: named"

run prompt
is "$(state)" "$cannot" "prompt: every rank blocked until its token came and polled it at once: all answer, nobody late"
like "$(grep '^Stragglers' "$T/prompt.txt")" 'cannot tell' "prompt: the text says 'cannot tell'"

run nonblock
is "$(state)" "$cannot" "nonblock: the wait was in poll/epoll (not traced): not known, the old rule: 'cannot tell'"

run noevent
is "$(state)" "$cannot" "noevent: armed completions and no recorded wait (older tracers): 'cannot tell', as before"

run spin
is "$(state)" "$cannot" \
    "spin: rank 1 woke early (its event's completion taken before), then polled 64 times for the token: it answers"

run before
is "$(state)" "$named" "before: woke with the token's event, away 4.7 ms; its empty polls all came before the wake: named"

run stolen
is "$(state)" "$cannot" \
    "stolen: an event there when it called, but the call blocked until the token (another thread took it): it answers"
