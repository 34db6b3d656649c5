#!/bin/bash
# Real multi-rank NCCL traces (H_NCCL's tests/gpu/fixtures: ranks on one H200 with distinct NCCL_HOSTID, so
# every hop is NCCL's NET/Socket transport; recorded by tests/gpu/scenarios.sh): what the report says about
# things tests/gpu/check_scen.py does not check. Issue 15's wrong numbers on such a run were: steps "by
# collective periodicity" instead of the NVTX `iteration N` ranges, 74 % "intra-node" time, "ring halves"
# longer than any collective, "residual skew 1.1 ms" between processes on one clock, GPUDirect "UNKNOWN".
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_build railscope
FX=$RS_TOP/tests/gpu/fixtures
[ -d "$FX/s2_cpu/trace" ] && [ -d "$FX/s4_base/trace" ] || skip_all "no NCCL fixtures in $FX"
plan 10

run_timeout 60 "$RS_CLI" report --json "$FX/s2_cpu/trace" >"$T/s2.json"
run_timeout 60 "$RS_CLI" report "$FX/s2_cpu/trace" >"$T/s2.txt"
run_timeout 60 "$RS_CLI" report --html "$T/s2.html" "$FX/s2_cpu/trace" >/dev/null
J=$T/s2.json
is "$(jq -r '"\(.transport),\([.collectives[] | "\(.transport)/\(.inter_node)"] | unique | join(" "))"' "$J")" \
    "NET/Socket,NET/Socket/1" "s2_cpu: run and every collective through NET/Socket (inter-node), from the trace"
like "$(cat "$T/s2.txt")" 'NCCL transport: NET/Socket \(NCCL.s log: [0-9]+ connections' "s2_cpu: text names the transport and its evidence"
like "$(grep -o 'id="transport">[^<]*' "$T/s2.html")" 'NET/Socket' "s2_cpu: HTML names the transport"
like "$(grep -o 'id="coll-transport">[^<]*' "$T/s2.html")" '94 collective\(s\) through the network' "s2_cpu: HTML gives the collectives' transport"
is "$(jq -r '"\(.clock.one_clock),\(.clock.residual_skew_s),\(.clock.anchor_skew_s)"' "$J")" "true,0,0" \
    "s2_cpu: two processes on one host clock: skew 0 by construction"
ok "s2_cpu: ring halves within each collective's own time (reduce-scatter + all-gather = dur)" \
    jq -e '[.collectives[] | select(.reduce_scatter_s > 0) | (.reduce_scatter_s + .all_gather_s - .dur_s) | fabs] | max < 1e-6' "$J"
like "$(jq -r '.ranks[0].gpudirect.evidence' "$J")" '^NCCL used NET/Socket, no RDMA' "s2_cpu: GPUDirect evidence is NCCL's transport"
# without the NVTX ranges (a marker nobody wrote): periodicity of the collectives, stable, and not counting
# DDP's setup collectives (35 before): 30 iterations, the first (bucket rebuild, 2 collectives) not periodic
is "$(run_timeout 60 "$RS_CLI" report --json --step-marker nosuchmarker "$FX/s2_cpu/trace" | jq -r '"\(.step_source),\(.nsteps)"')" \
    "collective periodicity,29" "s2_cpu: collective periodicity gives 29 of 30 iterations (the first one is DDP's bucket rebuild)"
run_timeout 60 "$RS_CLI" report --json "$FX/s4_base/trace" >"$T/s4.json"
is "$(jq -r '"\(.nranks // (.ranks | length)),\(.transport),\(.gpudirect.verdict),\(.nsteps)"' "$T/s4.json")" \
    "4,NET/Socket,NOT USED,30" "s4_base: 4 ranks, NET/Socket, GPUDirect NOT USED, 30 steps from 'step N' ranges"
ok "s4_base: no intra-node time (every hop NET)" jq -e '.attribution_per_step.intra_node_exposed <= 0.05 * .step_mean_s' "$T/s4.json"
