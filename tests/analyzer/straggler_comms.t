#!/bin/bash
# Review: a persistent straggler is late in more than half of the steps, each step counted once. Collectives
# are joined group by group (communicator, then sequence), not in time order: a rank in two communicators
# (tensor and data parallel groups) late in 3 of 10 steps counted 6 'late steps' and was called persistent.
. "$(dirname "$0")/../lib.sh"
need_build tests/cli/mkhostile railscope
need_cmd jq
plan 4
mkdir -p "$T/a" "$T/b"
"$RS_BUILD/tests/cli/mkhostile" comms "$T/a" 1,3,5 2>/dev/null
"$RS_BUILD/tests/cli/mkhostile" comms "$T/b" 0,1,2,3,5,7 2>/dev/null
"$RS_CLI" report --json "$T/a" >"$T/a.json" 2>/dev/null
"$RS_CLI" report --json "$T/b" >"$T/b.json" 2>/dev/null
is "$(jq -c '[.stragglers[] | [.rank, .late_count]]' "$T/a.json")" "[[3,6]]" "rank 3 late in 6 collectives (3 steps x 2 communicators)"
is "$(jq -r '.stragglers[0].persistent' "$T/a.json")" false "late in 3 of 10 steps: not persistent (was persistent)"
is "$(jq -c '[.stragglers[] | [.rank, .late_count]]' "$T/b.json")" "[[3,12]]" "rank 3 late in 12 collectives (6 steps x 2)"
is "$(jq -r '.stragglers[0].persistent' "$T/b.json")" true "late in 6 of 10 steps: persistent"
