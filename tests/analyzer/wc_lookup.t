#!/bin/bash
# Issue 17 (robustness), review of session 5: a send completion found its work request by scanning the QP's
# outstanding WRs (up to 65536), so a crafted trace (many WRs left outstanding, completions for wr_ids never
# posted) made `report` quadratic: 16 k WRs + 16 k unknown completions 0.22 s CPU, 64 k + 64 k 3.8 s (17x
# for 4x the input). Now a hash map on (QP, wr_id) finds the oldest outstanding WR with that id. The CPU
# time of 4x the input must grow about 4x, not 16x (as tests/cli/threads.t); 64 k under 1 s of CPU; the
# report (the QP's bytes, sends) as when every completion names a posted WR.
. "$(dirname "$0")/../lib.sh"
need_build tests/analyzer/rs-mkcraft railscope
need_cmd jq
need_time
plan 7
MK=$RS_BUILD/tests/analyzer/rs-mkcraft
"$MK" wc "$T/a.rtrace" 16384 || bail "rs-mkcraft failed"
"$MK" wc "$T/b.rtrace" 65536 || bail "rs-mkcraft failed"
"$MK" wc "$T/d.rtrace" 20000 DUP || bail "rs-mkcraft failed"
a=$(cpu_seconds 0 "$T/a.rtrace.json" "$RS_CLI" report -q --json "$T/a.rtrace")
b=$(cpu_seconds 0 "$T/b.rtrace.json" "$RS_CLI" report -q --json "$T/b.rtrace")
diag "report: 16 k outstanding WRs + 16 k unknown completions ${a} s CPU, 64 k + 64 k ${b} s"
ok "report: 64 k outstanding WRs and 64 k unknown completions in under 1 s CPU (${b} s; 3.8 s before)" \
    awk -v b="$b" 'BEGIN { exit !(b < 1) }'
# linear ~4x; the scan was 16-17x
scaling_ok "report: 4x the WRs and completions costs < 10x the time" "$a" "$b" 10
# every posted WR completes in the end: all its bytes on the QP, none lost
is "$(jq -c '[.ranks[0].qps[] | select(.qp == 119) | .bytes_sent]' "$T/b.rtrace.json")" "[$((65536 * 4096))]" \
    "64 k WRs of 4 KiB: every byte counted on the QP"
unlike "$(jq -r '.warnings[]' "$T/b.rtrace.json")" 'never completed' "no WR left out as never completed"
# reused wr_ids (all 7): each completion takes the oldest outstanding WR with the id; the unknown id 8 none
rd=$(cpu_seconds 0 "$T/d.rtrace.json" "$RS_CLI" report -q --json "$T/d.rtrace")
ok "report: 20 k WRs with one reused wr_id in under 1 s CPU (${rd} s)" awk -v b="$rd" 'BEGIN { exit !(b < 1) }'
is "$(jq -c '[.ranks[0].qps[] | select(.qp == 119) | .bytes_sent]' "$T/d.rtrace.json")" "[$((20000 * 4096))]" \
    "reused wr_ids: every byte counted on the QP"
unlike "$(jq -r '.warnings[]' "$T/d.rtrace.json")" 'never completed' "reused wr_ids: no WR left out"
exit 0
