#!/bin/bash
# Review: the GPUDirect verdict from NCCL's connection log (NCCL_TRANSPORT events) counts the NET/IB
# connections that used GPUDirect RDMA ('/GDRDMA' in NCCL's text): all of them USED, none NOT USED, some
# PARTIAL (e.g. receives with GDRDMA, sends without: NCCL_NET_GDR_READ=0). One GDRDMA connection used to
# make the rank USED whatever the others said.
. "$(dirname "$0")/../lib.sh"
need_build tests/cli/mkhostile railscope
need_cmd jq
plan 4
mk() { "$RS_BUILD/tests/cli/mkhostile" transport "$T/$1.rtrace" "${@:2}" 2>/dev/null; }
verdict() { "$RS_CLI" report --json "$T/$1.rtrace" 2>/dev/null | jq -r '.ranks[0].gpudirect.verdict'; }
mk all NET/IB/0/GDRDMA NET/IB/0/GDRDMA
mk none NET/IB/0 NET/IB/0 P2P/IPC
mk mixed NET/IB/0/GDRDMA NET/IB/0 NET/IB/0/GDRDMA NET/IB/0
mk mixedp2p NET/IB/0/GDRDMA P2P/IPC/GDRDMA NET/IB/0
is "$(verdict all)" USED "every NET/IB connection with GDRDMA: USED"
is "$(verdict none)" "NOT USED" "no NET/IB connection with GDRDMA: NOT USED"
is "$(verdict mixed)" PARTIAL "receives with GDRDMA, sends without: PARTIAL (was USED)"
is "$(verdict mixedp2p)" PARTIAL "a '/GDRDMA' on a non-IB connection does not count for NET/IB (was USED)"
