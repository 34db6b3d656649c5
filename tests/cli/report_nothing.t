#!/bin/bash
# report on a run with nothing to analyse (no GPU, CUDA copy, NCCL or verbs activity, no step: a shell pipeline)
# says so in one plain line, exit 0 as for any run read whole (1 when input was partial; 2 stays for nothing
# readable), and --json stays valid with "analysable": false. Before: a table of zeros, "0 steps (whole
# trace)" and a link rate of "100 Gb/s (default (not recorded))" (review item 6).
. "$(dirname "$0")/../lib.sh"
need_build railscope librailscope.so synth/rs-synth
need_cmd jq
plan 7

"$RS_CLI" record -q -o "$T/r" -- sh -c 'echo hi | tr a-z A-Z; exit 3' >/dev/null
out=$("$RS_CLI" report "$T/r" 2>&1)
is "$?" 0 "report: exit 0 (the run was read whole; it just holds nothing to explain)"
like "$out" '^railscope report: nothing to analyse: [0-9]+ process(es)? traced \([0-9]+ events\), none with GPU, NCCL or verbs activity, and no steps marked$' \
    "report: one plain line says nothing analysable was recorded"
unlike "$out" 'Gb/s|0\.00 ms|whole trace' "report: no link rate, no zeros, no 'whole trace'"
js=$("$RS_CLI" report --json "$T/r")
is "$?:$(jq -r '"\(.analysable),\(.nsteps),\(.step_source)"' <<<"$js")" "0:false,0,none (nothing analysable)" \
    "report --json: valid JSON, \"analysable\": false, step_source says so"
"$RS_CLI" report --html "$T/r.html" "$T/r" >/dev/null 2>&1
is "$?:$(grep -c 'id="nothing">Nothing to analyse' "$T/r.html"):$(grep -c 'step-breakdown\|Gb/s' "$T/r.html")" "0:1:0" \
    "report --html: the page says so too, no panels of zeros"
# A run with steps (here, synthetic GPU ranks) is analysable, as before.
"$RS_BUILD/synth/rs-synth" -o "$T/syn" --nodes 1 --gpus 2 --steps 3 --seed 1 >/dev/null 2>&1 || bail "rs-synth failed"
is "$("$RS_CLI" report --json "$T/syn" | jq -r .analysable)" true "a GPU run: \"analysable\": true"
# A truncated file with nothing to analyse: partial (exit 1), and the warning still says why.
f=$(ls "$T"/r/*.rtrace | head -1)
head -c $(($(stat -c %s "$f") - 40)) "$f" >"$T/cut.rtrace"
out=$("$RS_CLI" report "$T/cut.rtrace" 2>/dev/null)
is "$?:$(grep -c 'nothing to analyse' <<<"$out"):$(grep -c 'cut.rtrace: truncated' <<<"$out")" "1:1:1" \
    "a truncated file of it: exit 1, the line, and the warning"
