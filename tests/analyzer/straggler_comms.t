#!/bin/bash
# Review: a persistent straggler is late in more than half of the steps, each step counted once. Collectives
# are joined group by group (communicator, then sequence), not in time order: a rank in two communicators
# (tensor and data parallel groups) late in 3 of 10 steps counted 6 'late steps' and was called persistent.
. "$(dirname "$0")/../lib.sh"
need_build tests/cli/mkhostile tests/analyzer/rs-mkcraft railscope
need_cmd jq
plan 10
mkdir -p "$T/a" "$T/b" "$T/c"
"$RS_BUILD/tests/cli/mkhostile" comms "$T/a" 1,3,5 2>/dev/null
"$RS_BUILD/tests/cli/mkhostile" comms "$T/b" 0,1,2,3,5,7 2>/dev/null
"$RS_CLI" report --json "$T/a" >"$T/a.json" 2>/dev/null
"$RS_CLI" report --json "$T/b" >"$T/b.json" 2>/dev/null
is "$(jq -c '[.stragglers[] | [.rank, .late_count]]' "$T/a.json")" "[[3,6]]" "rank 3 late in 6 collectives (3 steps x 2 communicators)"
is "$(jq -r '.stragglers[0].persistent' "$T/a.json")" false "late in 3 of 10 steps: not persistent (was persistent)"
is "$(jq -c '[.stragglers[] | [.rank, .late_count]]' "$T/b.json")" "[[3,12]]" "rank 3 late in 12 collectives (6 steps x 2)"
is "$(jq -r '.stragglers[0].persistent' "$T/b.json")" true "late in 6 of 10 steps: persistent"
# Review of session 5: "late at N of M" counted M over every collective group of the run, including
# communicators the rank is not in (mkhostile comms: 40 groups, each rank in 20). M is now the collectives
# the rank took part in. rs-mkcraft comms: WORLD {0,1,2,3} x10 (rank 3 late in each), A {0,1} x10 (rank 0
# late in 2), B {2,3} x30: 50 groups; ranks 0 and 1 in 20, ranks 2 and 3 in 40.
is "$(jq -c '[.stragglers[] | [.rank, .of]]' "$T/a.json")" "[[3,20]]" "two 2-rank communicators: rank 3 late at 6 of its 20 (not 40)"
"$RS_BUILD/tests/analyzer/rs-mkcraft" comms "$T/c" || bail "rs-mkcraft failed"
"$RS_CLI" report --json "$T/c" >"$T/c.json" 2>/dev/null
"$RS_CLI" report "$T/c" >"$T/c.txt" 2>/dev/null
"$RS_CLI" report -q --html "$T/c.html" "$T/c" >/dev/null 2>&1
is "$(jq -c '[.stragglers[] | [.rank, .late_count, .of]]' "$T/c.json")" "[[3,10,40],[0,2,20]]" \
    "communicators of different membership: rank 3 late at 10 of its 40, rank 0 at 2 of its 20 (the run has 50)"
is "$(jq -r '.stragglers[0].persistent' "$T/c.json")" true "rank 3 late in every step: persistent"
like "$(cat "$T/c.txt")" 'rank 3 \(persistent\): last at 10 of 40 collectives' "text: rank 3 last at 10 of 40"
like "$(cat "$T/c.txt")" 'rank 0: last at 2 of 20 collectives' "text: rank 0 last at 2 of 20"
like "$(cat "$T/c.html")" '<td>3</td><td>yes</td><td>10 of 40</td>' "html: rank 3 10 of 40"
