#!/bin/bash
# Software NIC (tools/softnic): control work requests are not network time. examples/ring_allreduce sends
# zero-byte IBV_WR_SEND credits to its left neighbour and RDMA_WRITE_WITH_IMM chunks to its right; a
# credit stays outstanding until the neighbour posts a receive, which is synchronisation with the peer, not
# the network failing to move bytes. The report must give credit-only QPs no busy/stall time, never name
# one as the worst QP, keep each rank's network time (transfer + stall) within the time its data WRs were
# outstanding, and take the steps from the example's railscope_mark("step N") calls: one per iteration.
# A host-memory program with no GPU gets no "GPUDirect not used" finding (nothing for GPUDirect to do).
# (Before the control-WR rule, credit QPs showed "0.0 MB sent, busy 150 ms, stall 150 ms" and could be the
# top finding's "worst" QP.)
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_build railscope librailscope.so softnic/libibverbs.so.1 examples/ring_allreduce
plan 10

ITERS=8
rm -rf "$T/ring"
LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_DIR=$T SOFTNIC_RATE_GBPS=2 \
    run_timeout 60 "$RS_CLI" record -q -o "$T/ring" -- "$RS_BUILD/examples/ring_allreduce" -n 3 -s 1M -i $ITERS \
    >"$T/ring.out" 2>&1
is "$(grep -c 'result OK' "$T/ring.out")" 3 "softnic: ring_allreduce (3 ranks, credits + data) runs under record"
run_timeout 30 "$RS_CLI" report --json "$T/ring" >"$T/r.json"
is "$?" 0 "softnic: report exits 0"
J=$T/r.json
is "$(jq -r '"\(.step_source),\(.nsteps),\([.ranks[].nsteps] | unique | join(" ")),\([.ranks[0].steps[].id] | map(tostring) | join(" "))"' "$J")" \
    "marks,$ITERS,$ITERS,0 1 2 3 4 5 6 7" "softnic: one step per railscope_mark(\"step N\") call, ids 0..$((ITERS - 1)), on every rank"
ok "softnic: the trace has credit-only QPs (zero-byte SENDs counted as control)" \
    jq -e '[.ranks[].qps[] | select(.bytes_sent == 0 and .control_sends > 0)] | length >= 3' "$J"
is "$(jq -r '[.ranks[].qps[] | select(.bytes_sent == 0) | .busy_s + .stall_s] | max' "$J")" 0 \
    "softnic: credit-only QPs have no busy or stall time"
ok "softnic: the control WRs' outstanding time is reported on its own (control_busy_s > 0)" \
    jq -e '[.ranks[].qps[] | .control_busy_s] | max > 0' "$J"
ok "softnic: a network-stall finding names a data-carrying QP" \
    jq -e '([.findings[] | select(.category == "network_stall")] | .[0]) as $f
           | if $f == null then true
             else [.ranks[] | select(.rank == $f.rank) | .qps[] | select(.qp == $f.qp) | .bytes_sent] | (.[0] // 0) > 0 end' "$J"
# network time (transfer + stall) of a rank comes from the union of its data WRs' outstanding intervals:
# at most the sum of its data QPs' busy time (1 % slack for rounding)
bad=$(jq -r '[.ranks[] | select((.attribution.network_transfer + .attribution.network_stall)
              > 1.01 * ([.qps[] | select(.bytes_sent > 0) | .busy_s] | add) + 1e-6) | .rank] | map(tostring) | join(" ")' "$J")
is "$bad" "" "softnic: each rank's network transfer + stall is within its data WRs' outstanding time"
is "$(jq -r '"\(.gpu_ranks),\(.gpudirect.verdict),\([.findings[] | select(.text | test("GPUDirect"))] | length)"' "$J")" \
    "0,NOT USED,0" "softnic: host-only program: verdict NOT USED but no GPUDirect finding"
is "$(run_timeout 30 "$RS_CLI" report "$T/ring" 2>&1 | grep -c -e 'other: host work and waits for peers' -e 'carried only control WRs')" 2 \
    "softnic: text report names 'other' as host work and waits, and lists credit-only QPs apart"
