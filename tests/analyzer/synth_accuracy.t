#!/bin/bash
# Ground truth: rs-synth injects known problems into a synthetic cluster (through the real trace writer);
# `railscope report --json` must recover every rank's step attribution within 5 % of the step time and
# name the injected rank / QP / category.
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_build railscope synth/rs-synth
plan 53

. "$(dirname "$0")/synth_lib.sh"

# 1. healthy run, clocks 5 ms apart
run baseline --skew-ms 5
is "$RC" 0 "baseline: exit status 0"
ok "baseline: clock refinement brings collective ends within 50 us (anchors alone: >= 1 ms)" \
    awk -v r="$(q .clock.residual_skew_s)" -v a="$(q .clock.anchor_skew_s)" 'BEGIN { exit !(r < 50e-6 && a >= 1e-3) }'
is "$(q .gpudirect.verdict)" "USED" "baseline: GPUDirect USED"
is "$(q '[.stragglers[] | select(.persistent)] | length')" 0 "baseline: no persistent straggler"
is "$(q '[.findings[] | select(.category == "network_stall")] | length')" 0 "baseline: no network-stall finding"
is "$(q '.ranks | length'),$(q '.ranks[0].nsteps'),$(q '.ranks[5].host'),$(q '.ranks[5].pid')" "8,10,node001,4005" \
    "baseline: ranks[] with rank, host, pid, steps"

# 2. a straggler: rank 3 computes 5 ms longer each step
run straggler --skew-ms 5 --straggler 3:5
is "$(q '.stragglers[0].rank'),$(q '.stragglers[0].persistent')" "3,true" "straggler: rank 3 is the persistent straggler"
ok "straggler: it costs rank 0 about 5 ms of peer wait per step" \
    within "$(q '.ranks[0].attribution.peer_wait / .nsteps')" 0.005 0.0037
is "$(q '.findings[0].category'),$(q '.findings[0].rank')" "peer_wait,3" "straggler: top finding names rank 3"

# 3. a paused link: rank 5's QP stalls 20 ms every other step
run pause --skew-ms 2 --pause 5:20:2
is "$(q '[.findings[] | select(.category == "network_stall")][0] | "\(.rank),\(.qp)"')" "5,276" \
    "pause: network-stall finding names rank 5 QP 0x114"
ok "pause: network stall per step matches the injected pause (10 ms/step) within 5 % of step time" \
    within "$(q '.attribution_per_step.network_stall')" "$(jq '.problems[0].cost_per_step_s' "$TR")" \
    "$(jq '.step_mean_s * 0.05' "$TR")"
is "$(q '[.collectives[] | select(.stall_rank == 5 and .stall_qp == 276)] | length')" 5 \
    "pause: the 5 paused collectives point at rank 5 QP 0x114"

# 4. a slow link: rank 2's NIC at a quarter of the rate
run slow --slow 2:4
is "$(q '[.findings[] | select(.category == "network_stall")][0] | "\(.rank),\(.qp)"')" "2,264" \
    "slow: network-stall finding names rank 2 QP 0x108"
ok "slow: QP 0x108 achieved about 50 of 200 Gb/s" \
    within "$(q '.ranks[2].qps[] | select(.qp == 264) | .achieved_gbps')" 50 2
ok "slow: stall per step within 5 % of step time of the truth" \
    within "$(q '.attribution_per_step.network_stall')" "$(jq '.problems[0].cost_per_step_s' "$TR")" \
    "$(jq '.step_mean_s * 0.05' "$TR")"

# 5. pageable H2D copies on one rank (which then also straggles)
run pageable --pageable 6
like "$(q '.findings[] | select(.category == "h2d_exposed") | "\(.rank) \(.text)"')" '^6 .*pageable' \
    "pageable: the H2D finding names rank 6 and pageable memory"
ok "pageable: rank 6 has pageable H2D bytes, rank 0 none" \
    test "$(q '.ranks[6].h2d_pageable_bytes > 0 and .ranks[0].h2d_pageable_bytes == 0')" = true
is "$(q '.stragglers[0].rank')" 6 "pageable: rank 6 is also the straggler it causes"

# 6. all ranks pageable
run pageable_all --pageable all
is "$(q '.findings[0].category')" h2d_exposed "pageable_all: exposed H2D is the top finding"

# 7. no GPUDirect: host bounce buffers
run nogdr --no-gpudirect
is "$(q .gpudirect.verdict)" "NOT USED" "nogdr: run verdict NOT USED"
is "$(q '[.ranks[].gpudirect.verdict] | unique | join(",")')" "NOT USED" "nogdr: every rank NOT USED"
is "$(q '[.ranks[].qps[] | select(.sends > 0) | .gpudirect.verdict] | unique | join(",")')" "NOT USED" \
    "nogdr: every sending QP NOT USED"
ok "nogdr: bounce copies found on both sides" test "$(q '.ranks[0].gpudirect | .bounce_d2h > 0 and .bounce_h2d > 0')" = true
like "$(q '.findings[].text')" 'GPUDirect RDMA NOT USED' "nogdr: a finding says GPUDirect is not used"

# 8. tree, 4 nodes x 2 GPUs, a straggler and a paused link together
run tree --algo tree --nodes 4 --gpus 2 --skew-ms 4 --straggler 7:3 --pause 1:10:3
is "$(q '.stragglers[0].rank')" 7 "tree: straggler rank 7"
is "$(q '.ranks[].qps[] | select(.stall_s > 0.01) | .qp' | sort -u | tr '\n' ,)" "260," "tree: only rank 1's QP 0x104 stalls"
# tree phases: reduce (up) and broadcast (down) of each step's AllReduce against the truth; the pause
# (steps 0, 3, 6, 9) hits the first broadcast WR, so a swapped parent/child or a phase boundary taken from
# the wrong ops moves ~10 ms between the two
dev=$(jq -r --slurpfile t "$TR" '[.collectives | sort_by(.seq) | to_entries[] | .key as $i | .value as $c
    | $t[0].collectives[$i] | (($c.reduce_s - .reduce_s) | fabs), (($c.broadcast_s - .broadcast_s) | fabs)]
    | max / $t[0].step_mean_s' "$J")
ok "tree: every step's reduce and broadcast phases within 5 % of step time of the truth (worst: $dev)" \
    awk -v d="$dev" 'BEGIN { exit !(d <= 0.05) }'
ok "tree: the paused steps' extra time is in the broadcast phase" \
    test "$(q '[.collectives | sort_by(.seq)[] | .broadcast_s] | .[0] - .[1] > 0.008 and .[3] - .[4] > 0.008')" = true
like "$("$RS_CLI" report "$T/tree" 2>/dev/null)" 'tree phases \(10 collectives\): reduce \(up\) [0-9.]+ ms, broadcast' \
    "tree: text report gives the phases"
is "$(jq '[.collectives[] | has("reduce_s")] | any' "$T/baseline.json")" false "ring: no tree phases in its collectives"

# 9. no verbs capture: NCCL proxy steps stand in for work requests
run proxy --no-verbs --pause 5:20:2
is "$(q '[.findings[] | select(.category == "network_stall")][0].rank')" 5 "proxy-only: network stall found on rank 5"
is "$(q .gpudirect.verdict)" "UNKNOWN" "proxy-only: GPUDirect UNKNOWN without verbs"

# 10. no NVTX: steps from the periodic structure of collectives
run nonvtx --no-nvtx --straggler 1:4
like "$(q .step_source)" 'periodicity' "nonvtx: steps from collective periodicity"
is "$(q .nsteps)" 9 "nonvtx: 9 steps between 10 collectives"
ok "nonvtx: mean step within 5 % of the truth" within "$(q .step_mean_s)" "$(jq .step_mean_s "$TR")" \
    "$(jq '.step_mean_s * 0.05' "$TR")"
is "$(q '.stragglers[0].rank')" 1 "nonvtx: straggler rank 1"

# 9b. gradient buckets: 3 early AllReduces per step hidden under backward, then the last one exposed
run buckets --buckets 4 --straggler 3:5 --pause 5:10:2 --skew-ms 3
is "$(q '[.collectives[] | select(.nseen == 8)] | length')" 40 "buckets: 40 collectives joined across all 8 ranks"
is "$(q '.stragglers[0].rank')" 3 "buckets: straggler rank 3"
ok "buckets: straggler cost = exposed waiting only (~4.4 ms/step, hidden waits excluded)" \
    within "$(q '.stragglers[0].cost_per_step_s')" "$(q .attribution_per_step.peer_wait)" 0.0002
is "$(q '[.findings[] | select(.category == "network_stall")][0] | "\(.rank),\(.qp)"')" "5,276" "buckets: stall on rank 5 QP 0x114"
run buckets_nonvtx --buckets 8 --no-nvtx --pause 3:5
is "$(q .step_source),$(q .nsteps)" "collective periodicity,9" "buckets without NVTX: 8 collectives per step found as one period"

