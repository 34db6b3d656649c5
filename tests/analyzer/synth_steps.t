#!/bin/bash
# Ground truth, part 2: where collectives and steps come from (NCCL API calls without the profiler plugin,
# user markers, MARK events, collective periodicity), damaged input, and CLI errors. See synth_accuracy.t.
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_build railscope synth/rs-synth
plan 19

. "$(dirname "$0")/synth_lib.sh"

# 10a. no profiler plugin: the NCCL API calls are the collectives
run noplugin --no-plugin --straggler 5:4 --pause 2:8:2 --skew-ms 3
is "$(q '.stragglers[0].rank')" 5 "noplugin: straggler rank 5 from API-call collectives"
is "$(q '[.findings[] | select(.category == "network_stall")][0] | "\(.rank),\(.qp)"')" "2,264" "noplugin: stall on rank 2 QP 0x108"
like "$(q '.warnings[]')" 'collectives from the NCCL API calls' "noplugin: says where collectives came from"

# 10b. steps from a user marker, and from MARK events
run marker --step-name "train_iter %d" --straggler 2:3
is "$(q .step_source),$(q .nsteps),$(q '.ranks[0].steps[4].id')" "nvtx ranges,10,4" \
    "marker: 'train_iter N' ranges (a step word and a counter) are the steps by default"
"$RS_CLI" report --json --step-marker train_iter "$T/marker" >"$T/marker2.json"
J=$T/marker2.json
is "$(q .step_source),$(q .nsteps),$(q '.ranks[0].steps[4].id')" "marker train_iter,10,4" \
    "marker: --step-marker train_iter gives the 10 ranges and their numbers"
ok "marker: attribution within 5 % of step time" awk -v d="$(jq -r --slurpfile truth "$TR" -f "$HERE/truth.jq" "$J" | cut -d' ' -f1)" \
    'BEGIN { exit !(d <= 0.05) }'
run marks --mark-steps --pause 4:10
is "$(q .step_source),$(q .nsteps)" "marks,10" "marks: MARK \"step\" events delimit 10 steps"

# 11. a damaged rank file: results for the rest, flagged, exit 1
rm -rf "$T/dmg" && "$SYNTH" -o "$T/dmg" --truth "$T/dmg.truth" --straggler 2:5 >/dev/null
f=$(ls "$T"/dmg/*.rtrace | sed -n 5p)
head -c $(( $(stat -c %s "$f") * 2 / 3 )) "$f" >"$f.cut" && mv "$f.cut" "$f"
printf 'not a trace' >"$T/dmg/zz-junk.rtrace"
"$RS_CLI" report --json "$T/dmg" >"$T/dmg.json" 2>/dev/null
is "$?" 1 "damaged: exit status 1"
J=$T/dmg.json
is "$(q .partial)" true "damaged: partial flagged"
is "$(q '[.ranks[] | select(.input != "complete")] | length')" 2 "damaged: two inputs flagged"
is "$(q '.stragglers[0].rank')" 2 "damaged: straggler still found from the readable part"
"$RS_CLI" report "$T/dmg" >"$T/dmg.txt" 2>&1
like "$(cat "$T/dmg.txt")" 'PARTIAL INPUT' "damaged: text report says so"

# 12. the text report, and CLI errors
"$SYNTH" -o "$T/straggler" --straggler 3:5 --skew-ms 5 >/dev/null || bail "rs-synth failed"
"$RS_CLI" report "$T/straggler" >"$T/txt" 2>&1
like "$(cat "$T/txt")" '^  1\. Straggler: rank 3' "text: findings first, in plain words"
out=$("$RS_CLI" report 2>&1); rc=$?
is "$rc,$(printf '%s\n' "$out" | wc -l)" "2,1" "no path: one-line error, exit 2"
out=$("$RS_CLI" report "$T/nonexistent" 2>&1); rc=$?
like "$rc $out" '^2 railscope: ' "missing path: railscope: error, exit 2"
out=$("$RS_CLI" report --link-gbps abc "$T/baseline" 2>&1); rc=$?
like "$rc $out" '^2 railscope: .*link-gbps' "bad --link-gbps: exit 2"
