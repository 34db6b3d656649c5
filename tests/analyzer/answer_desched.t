#!/bin/bash
# The answer rule (analyze_join.c answers()) on real traces of tests/softnic/answer_events.t (software NIC: 3 ranks
# passing a 64 KB token 0 -> 1 -> 2 -> 0 for 20 steps, ranks 1 and 2 waiting for their completions in
# ibv_get_cq_event, rank 0 streaming 512 KB writes to rank 2 all along), kept in answer_desched/ with each run's
# program output (*.out: per step, CLOCK_MONOTONIC ms, when each rank posted its send, polled the token, polled its
# send's completion, and since when it was waiting for the token, "look"). The rule: a rank answers its sender when it
# polled the message no later than the threshold after the sender polled that send's completion; a rank blocked in
# ibv_get_cq_event is measured from its wake-up.
#   loaded_prompt (two CPU hogs on 2 cores; /work/ae-fail/run10): nobody sleeps. Rank 2, descheduled in its wait loop
#       (an empty poll, then nothing for up to 8 ms: the software NIC yields the CPU on every empty poll), finds its
#       token already there (ibv_get_cq_event flagged PENDING, no empty poll before the completion), yet before
#       rank 1 polled that send's completion (the loaded NIC took ms). Until session 22 the polls' record alone
#       decided ("found on its first look 8 ms after its previous completion: away"): rank 2 was "arrives late at
#       13 of 13 steps (persistent)", named, and rank 1 listed late at 3 of 10. Now the message's own send is found
#       (the sender's QP connected to the receiving one, analyze_join.c msg_sent) and its completion decides: nobody
#       late, every rank answers ("none: round trips").
#   idle_prompt (idle host): rank 2 blocked in ibv_get_cq_event since long before rank 1's send, woken by the
#       channel 25 us after rank 1 polled the send's completion (threshold 20 us): until session 22 the wake-up's
#       delay counted against it (rank 2 persistent, 11 of 11); a blocked rank is now measured from its wake-up.
#   idle_late (idle host, rank 1 sleeping 5 ms before it looks): rank 1 still named, late at every step.
. "$(dirname "$0")/../lib.sh"
plan 8
need_build
need_cmd jq
D=$(dirname "$0")/answer_desched
rep() { "$RS_CLI" report --json "$D/$1" > "$T/$1.json" 2> "$T/$1.err"; }
q() { jq -r "$2" "$T/$1.json"; }
# before NAME R S: in how many steps rank R polled its token no later than the report's threshold after rank S polled
# that send's completion (program clock): "answered", by the rule
before() {
    awk -v g="$(sed -n "s/^rank $2: got ms: //p" "$D/$1.out")" -v d="$(sed -n "s/^rank $3: done ms: //p" "$D/$1.out")" \
        -v t="$(q "$1" '[0.020, 0.01 * .step_mean_s * 1e3] | max')" \
        'BEGIN { n = split(g, x, " "); split(d, y, " "); for (i = 1; i <= n; i++) c += x[i] <= y[i] + t; print c + 0 }'
}

rep loaded_prompt
is "$(before loaded_prompt 2 1),$(before loaded_prompt 1 0)" 20,20 \
    "loaded_prompt: by the program's clock ranks 2 and 1 answered their senders in 20 of 20 steps"
# the trace's side of it: the token's waits found their event there (PENDING) after a gap with no event of rank 2
gaps=$("$RS_CLI" dump --json "$(q loaded_prompt '.ranks[] | select(.rank == 2) | .path')" | jq -rs '
    [.[] | select(.kind | startswith("ibv_"))] as $e | [range(1; $e | length) |
     select($e[.].kind == "ibv_get_cq_event" and $e[.].flags == "0x2" and $e[.].ts_ns - $e[. - 1].ts_ns > 1000000)]
    | length')
ok "loaded_prompt: rank 2 came back to a waiting event after > 1 ms without a call in some steps ($gaps)" test "$gaps" -ge 3
is "$(q loaded_prompt '[.stragglers[].rank] | join(" ")'),$(q loaded_prompt .straggler_basis)" ",none: round trips" \
    "loaded_prompt: nobody late, every rank answers (was: rank 2 persistent at 13 of 13, rank 1 at 3 of 10)"
is "$(q loaded_prompt '[.findings[] | select(.category == "peer_wait") | .straggler.rank | select(. >= 0)] | length')" 0 \
    "loaded_prompt: no peer-wait straggler"

rep idle_prompt
is "$(q idle_prompt '[.stragglers[].rank] | join(" ")'),$(q idle_prompt .straggler_basis)" ",none: round trips" \
    "idle_prompt: rank 2, woken 25 us after rank 1's completion, answers (was: persistent at 11 of 11)"

rep idle_late
is "$(q idle_late '[.stragglers[] | "\(.rank):\(.persistent):\(.late_count)/\(.of)"] | join(" ")')" "1:true:20/20" \
    "idle_late: rank 1, asleep 5 ms before it looks, late at every step, persistent"
is "$(q idle_late '[.findings[] | select(.category == "peer_wait") | .straggler.rank] | join(" ")')" 1 \
    "idle_late: rank 1 named"
ok "all three traces complete" jq -se 'all(.[].ranks[]; .input == "complete")' "$T/loaded_prompt.json" \
    "$T/idle_prompt.json" "$T/idle_late.json"
