#!/bin/bash
# Audit 3: request/response traffic is not a straggler. A 2-rank ping-pong with railscope_mark steps (rank 1 can only
# answer after rank 0's write lands) was "Straggler: rank 1 arrives last at 20 of 20 steps (persistent)": round
# trips were exempt only when the steps themselves came from the round trips ("verbs round trips"), not from marks or
# NVTX ranges. Now the exemption follows the traffic (analyze_local.c round_trips on the rank's data sends, whatever
# the steps come from), and a rank whose first data send of a step answers a message it was waiting for
# (analyze_join.c answers(): a chain of stages, sends on another QP than the one the message came in on) is not
# compared, nor is a rank that answers in most steps.
# tests/analyzer/answer_chain.c on the software NIC, marks "step N" (20 steps):
#   pp:       2 ranks, one QP, a ping-pong: stragglers "cannot tell" (round trips), no peer-wait finding
#   pp2:      2 ranks, sends to the right and receives from the left on separate QPs: the same
#   chain:    3 ranks passing a token 0 -> 1 -> 2 -> 0: nobody compared (each forwards what it got), no finding
#   late:     the chain with rank 1 sleeping 5 ms after its mark before it looks for the token (late on its own):
#             rank 1 is the persistent straggler named by the finding, rank 2 (which answers rank 1) is no late
#             rank, and rank 0's wait is what the program measured (rank 1's send minus rank 0's); on a loaded host
#             the truth is taken from the program's clock by the report's rule (ring_truth.py does the same)
# Before: rank 1 (pp, pp2) and rank 2 (chain, late) were the persistent stragglers named by the top finding.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/answer_lib.sh"
plan 10

CHAIN_OPTS=(-i 20)

rec pp -n 2 -q
is "$(state)" "20,none: round trips,,-" "ping-pong with marks, one QP: 20 steps, no late rank, no peer-wait finding"
like "$(grep '^Stragglers' "$T/pp.txt")" 'cannot tell' \
    "ping-pong with marks: the text says 'cannot tell', not a straggler"

# The truth for a responder from the program's clock: answered (answer_lib.sh), by the report's rule; a rank
# answering in most steps is compared in none. On a loaded host the software NIC's threads or the responder itself can
# be descheduled for ms after the message lands: the responder then is genuinely late that step (as ring_truth.py says
# of the ring), and in most steps on an overloaded one.
responders() { # NAME TEST-NAME R:S...: the report compares nobody when every responder answered in most steps
    local name=$1 what=$2 bad="" r
    shift 2
    for r in "$@"; do
        set -- $(answered "$name" "${r%:*}" "${r#*:}")
        diag "$name: rank ${r%:*} answered rank ${r#*:} promptly in $1 of 20 steps, clearly late in $2"
        [ "$1" -gt 10 ] || bad="$bad rank ${r%:*} answered promptly in only $1 of 20 steps;"
    done
    if [ -z "$bad" ]; then
        is "$(state)" "20,none: round trips,,-" "$what"
    else
        skip "loaded host:$bad" 1
    fi
}

rec pp2 -n 2
responders pp2 "ping-pong with marks, a QP each way: no late rank, no peer-wait finding" 1:0

rec chain -n 3
responders chain "3-rank chain with marks: no late rank, no peer-wait finding" 1:0 2:1

rec late -n 3 -l 1 -w 5
# The truth from the program's clock, by the same rule: on an idle host the token lands while rank 1 sleeps and rank
# 0's send completes then: rank 1 polls it clearly later (twice the threshold and 50 us), late on its own, in every
# step, and rank 2 answers rank 1 promptly. On a loaded host the software NIC's threads can be descheduled until rank
# 1 wakes (the token lands only then: rank 1 did wait for it), and rank 2 can be descheduled after the token lands
# (then it is late itself): the planted truth holds only when both stay the rule in most steps.
must=$(answered late 1 0 | cut -d' ' -f2)
set -- $(answered late 2 1)
diag "chain: rank 1 polled the token clearly after rank 0's send completed (late on its own) in $must of 20 steps;" \
    "rank 2 answered rank 1 promptly in $1, clearly late in $2"
if [ "$must" -gt 12 ] && [ "$1" -gt 12 ]; then
    pers=$(q '[.stragglers[] | select(.persistent) | .rank] | join(",")')
    named=$(q '[.findings[] | select(.category == "peer_wait") | .straggler.rank][0]')
    is "$pers,$named" "1,1" "chain, rank 1 sleeping 5 ms a step: rank 1 the persistent straggler, named by the finding"
    ok "chain: rank 1 late in every step compared, most steps ($(q '[.stragglers[] | select(.rank == 1) |
        "\(.late_count) of \(.of)"][0]'))" \
        jq -e '[.stragglers[] | select(.rank == 1)][0] | .late_count == .of and .of > 10' "$J"
    like "$(grep '^Stragglers' -A1 "$T/late.txt")" 'rank 1 \(persistent\)' \
        "chain: the text report lists rank 1, persistent"
    is "$(q '[.stragglers[] | select(.rank == 2 and .persistent)] | length')" 0 \
        "chain: rank 2, answering rank 1, is no persistent late rank"
    # rank 0 waits from its send to rank 1's (rank 2 arrives after rank 1: it waits for nobody), in the steps where
    # the report has it wait
    ids=$(q '[.ranks[0].steps[] | select(.attribution.peer_wait > 0) | .id] | join(" ")')
    lag=$(awk -v a="$(prog late 1 sent)" -v b="$(prog late 0 sent)" -v ids="$ids" 'BEGIN { split(a, x, " ")
        split(b, y, " "); n = split(ids, k, " "); for (i = 1; i <= n; i++) s += x[k[i] + 1] - y[k[i] + 1]
        printf "%.4f", s / 1e3 }')
    pw0=$(q '.ranks[0].attribution.peer_wait')
    ok "chain: rank 0's wait in the report ($pw0 s) within 10 % of the program's in those steps ($lag s, steps ${ids:-none})" \
        awk -v g="$pw0" -v w="$lag" 'BEGIN { exit !(w > 0.04 && g >= 0.9 * w && g <= 1.1 * w) }'
    ok "chain: rank 1's cost x 3 ranks is rank 0's wait, the only one waiting for it" \
        jq -e '(([.stragglers[] | select(.rank == 1) | .cost_s][0] // 0) * .mean_ranks -
            ([.ranks[] | .attribution.peer_wait] | add) | fabs) < 1e-6' "$J"
else
    skip "loaded host: rank 1 late on its own in $must of 20 steps, rank 2 answering promptly in $1" 6
fi
