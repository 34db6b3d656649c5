#!/bin/bash
# Review: a collective's transport comes from NCCL's log of its own communicator (NCCL_TRANSPORT events carry
# comm_hash), not from its ranks' rank-wide transport: a rank in a tensor parallel group over P2P and a data
# parallel group over NET/Socket had every collective called P2P/SHM (its rank-wide log holds both).
. "$(dirname "$0")/../lib.sh"
need_build tests/cli/mkhostile railscope
need_cmd jq
plan 3
"$RS_BUILD/tests/cli/mkhostile" comms "$T" 1 translog 2>/dev/null
"$RS_CLI" report --json "$T" >"$T/r.json" 2>/dev/null
is "$(jq -c '[.collectives[] | select(.comm_hash | startswith("0xa")) | [.transport, .inter_node]] | unique' "$T/r.json")" \
    '[["P2P/SHM",0]]' "TP communicators (P2P in NCCL's log): intra-node"
is "$(jq -c '[.collectives[] | select(.comm_hash | startswith("0xd")) | [.transport, .inter_node]] | unique' "$T/r.json")" \
    '[["NET/Socket",1]]' "DP communicators (NET/Socket in NCCL's log): inter-node NET/Socket (was P2P/SHM)"
is "$(jq -r '.ranks[0].transport' "$T/r.json")" "NET/Socket + P2P" "the rank's transport names both"
