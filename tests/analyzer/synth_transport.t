#!/bin/bash
# Issue 15: the transport and GPUDirect verdicts on synthetic multi-node jobs, beside the real fixtures
# (tests/gpu/fixtures: NET/Socket on one H200). rs-synth --transport writes NCCL's connection log
# (NCCL_TRANSPORT events: P2P or SHM within a node, NET/IB with or without GPUDirect RDMA or NET/Socket across
# nodes, per channel) and its truth says what the report must give: per rank the transport, per collective
# the transport and inter-node flag, the GPUDirect verdict (from the WRs' memory when verbs traffic is
# recorded, else from NCCL's log: GDRDMA on every IB connection USED, on none NOT USED, on receives only
# PARTIAL; Socket NOT USED; one node UNKNOWN "no network transport"), and the attribution.
. "$(dirname "$0")/../lib.sh"
need_build synth/rs-synth railscope
need_cmd jq
. "$(dirname "$0")/synth_lib.sh"
plan 51
# run (synth_lib.sh): the attribution within 5 % of the truth (1 check); verdicts NAME: the report against
# the truth's transport fields (4 checks)
verdicts() {
    local t c i g
    t=$(jq -r .transport "$TR") c=$(jq -r .coll_transport "$TR") i=$(jq -r .inter_node "$TR") g=$(jq -r .gpudirect "$TR")
    is "$(q '[.ranks[].transport] | unique | join(",")')" "$t" "$1: every rank's transport from NCCL's log: $t"
    is "$(q '[.collectives[] | "\(.transport)/\(.inter_node)"] | unique | join(",")')" "$c/$i" \
        "$1: every collective $c, inter_node $i"
    is "$(q '[.gpudirect.verdict] + [.ranks[].gpudirect.verdict] | unique | join(",")')" "$g" \
        "$1: GPUDirect RDMA $g, run and every rank"
    is "$RC" 0 "$1: report exits 0"
}
# NET/Socket across 2 nodes x 4 GPUs, P2P within: no verbs traffic (verbs captured, none seen)
run socket --nodes 2 --gpus 4 --steps 12 --seed 5 --transport socket
verdicts socket
like "$(q '.ranks[0].gpudirect.evidence')" '^NCCL used NET/Socket \+ P2P, no RDMA: NCCL.s log: 6 connections' \
    "socket: the evidence says NCCL used NET/Socket"
like "$(q '.transport')" '^NET/Socket \+ P2P$' "socket: the run's transport"
# NET/IB with GPUDirect RDMA, verbs traffic from GPU memory: the WRs and the log agree
run ibgdr --nodes 2 --gpus 4 --steps 12 --seed 6 --transport ib-gdr
verdicts ibgdr
# NET/IB without GPUDirect RDMA (host staging: rs-synth's --no-gpudirect model)
run ib --nodes 2 --gpus 2 --steps 12 --seed 7 --transport ib
verdicts ib
# verbs not captured: NCCL's log alone decides (every IB connection GDRDMA / none / receives only)
run ibgdr_log --nodes 2 --gpus 4 --steps 12 --seed 8 --transport ib-gdr --no-verbs
verdicts ibgdr_log
like "$(q '.ranks[0].gpudirect.evidence')" '^NCCL used NET/IB \+ P2P with GPUDirect RDMA' "ibgdr_log: evidence from the log"
run ib_log --nodes 2 --gpus 4 --steps 12 --seed 9 --transport ib --no-verbs
verdicts ib_log
run recv_log --nodes 4 --gpus 2 --steps 12 --seed 10 --transport ib-gdr-recv --no-verbs --channels 4
verdicts recv_log
like "$(q '.ranks[0].gpudirect.evidence')" 'partly with GPUDirect RDMA: NCCL.s log: 12 connections' \
    "recv_log: PARTIAL, 4 channels x (P2P + IB send + IB receive)"
# SHM within the node, 3 nodes; one GPU per node (every collective only through the network); one node
run shm --nodes 3 --gpus 2 --steps 12 --seed 11 --transport socket --intra shm
verdicts shm
run netonly --nodes 4 --gpus 1 --steps 12 --seed 12 --transport ib-gdr --no-verbs
verdicts netonly
ok "netonly: no intra-node time where every connection is NET ($(q '.attribution.intra_node_exposed') s)" \
    test "$(q '.attribution.intra_node_exposed < 0.001 * .attribution.network_transfer')" = true
run onenode --nodes 1 --gpus 4 --steps 12 --seed 13 --transport socket
verdicts onenode
like "$(q '.ranks[0].gpudirect.evidence')" '^no network transport \(NCCL used P2P only\)' \
    "onenode: UNKNOWN says there is no network transport (NCCL's log: P2P)"
exit 0
