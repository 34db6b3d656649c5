#!/bin/bash
# The text report of a fixed synthetic run (rs-synth --seed 7: 2 x 2 GPUs, a straggler, a paused link,
# pageable copies on one rank, 2 ms host skew) against its golden copy, and the same JSON whatever the
# number of worker threads (doctor's host-check section is left out: its wording is doctor's). Regenerate the golden after an intended change: RS_REGEN=1 tests/analyzer/golden.t
. "$(dirname "$0")/../lib.sh"
need_build railscope synth/rs-synth
G=$(dirname "$0")/golden/synth_report.txt
plan 3
"$RS_BUILD/synth/rs-synth" -o "$T/run" --nodes 2 --gpus 2 --steps 6 --straggler 1:4 --pause 3:6:2 \
    --pageable 2 --skew-ms 2 --seed 7 || bail "rs-synth failed"
"$RS_CLI" report "$T/run" >"$T/full.txt"
is "$?" 0 "report exits 0"
# doctor's host-check wording belongs to doctor's tests: leave that section out of this golden
sed '/^Host checks/,/^$/d' "$T/full.txt" >"$T/report.txt"
[ -n "${RS_REGEN:-}" ] && cp "$T/report.txt" "$G"
ok "text report matches $G" diff -u "$G" "$T/report.txt"
"$RS_CLI" report --json --threads 1 "$T/run" | sed "s|$T||g" >"$T/t1.json"
"$RS_CLI" report --json --threads 2 "$T/run" | sed "s|$T||g" >"$T/t2.json"
ok "JSON identical with 1 and 2 worker threads" cmp "$T/t1.json" "$T/t2.json"
