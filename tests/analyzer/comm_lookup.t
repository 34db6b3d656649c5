#!/bin/bash
# Issue 17 (robustness), found beside the review's an_on_wc: each collective record looked its communicator up
# in a list of every profiler init, each NCCL_TRANSPORT event its communicator in the list of logged ones,
# and each collective again in that list after the pass: a crafted trace of N communicators (one init, one
# connection and one AllReduce each) was quadratic: 20 k 0.57 s, 80 k 9.0 s CPU (16x for 4x). Now hash maps
# on the communicator hash. CPU time of 4x the input must grow about 4x, not 16x (as tests/cli/threads.t);
# the results as before (each collective gets its communicator's nNodes and transport).
. "$(dirname "$0")/../lib.sh"
need_build tests/analyzer/rs-mkcraft railscope
need_cmd jq
need_time
plan 4
MK=$RS_BUILD/tests/analyzer/rs-mkcraft
"$MK" commlog "$T/a.rtrace" 20000 || bail "rs-mkcraft failed"
"$MK" commlog "$T/b.rtrace" 80000 || bail "rs-mkcraft failed"
a=$(cpu_seconds 0 "$T/a.rtrace.json" "$RS_CLI" report -q --json "$T/a.rtrace")
b=$(cpu_seconds 0 "$T/b.rtrace.json" "$RS_CLI" report -q --json "$T/b.rtrace")
diag "report: 20 k communicators ${a} s CPU, 80 k ${b} s"
ok "report: 80 k communicators in under 3 s CPU (${b} s; 9.0 s before)" awk -v b="$b" 'BEGIN { exit !(b < 3) }'
# linear ~4x; the list scans were 16x
scaling_ok "report: 4x the communicators costs < 10x the time" "$a" "$b" 10
is "$(jq -r '[.collectives[] | "\(.transport)/\(.inter_node)"] | unique | join(",")' "$T/b.rtrace.json")" \
    "NET/Socket/1" "every collective through its own communicator's logged NET/Socket"
is "$(jq '.collectives | length' "$T/b.rtrace.json")" 80000 "80 k collectives"
exit 0
