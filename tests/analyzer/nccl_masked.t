#!/bin/bash
# A real 4-rank NCCL run (tests/gpu/fixtures/s4_base: ranks on one H200 with distinct NCCL_HOSTID, every hop
# NET/Socket) as a narrower NCCL event mask would have recorded it: rs-retrace copies the fixture's files without
# NCCL's ProxySteps and their states (RAILSCOPE_NCCL_MASK=group,coll,p2p,proxyop). Nothing then measures the
# sends, and the report used to call all of a network collective's time after its last arrival a network stall.
# It must say what it did not measure, count the bus bytes at link rate as transfer, and leave everything the
# masked events do not feed unchanged.
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_build railscope tests/analyzer/rs-retrace
FX=$RS_TOP/tests/gpu/fixtures/s4_base/trace
[ -d "$FX" ] || skip_all "no NCCL fixture in $FX"
plan 13
DK=$RS_BUILD/tests/analyzer/rs-retrace
mkdir -p "$T/same" "$T/masked"
n=0
for f in "$FX"/*.rtrace; do
    "$DK" "$f" "$T/same/$(basename "$f")" --drop ibv_open_device >/dev/null || bail "rs-retrace failed on $f"
    n=$((n + $("$DK" "$f" "$T/masked/$(basename "$f")" --drop nccl_proxy_step --drop nccl_proxy_state)))
done
ok "the fixture's ProxySteps and states were dropped ($n events)" test "$n" -gt 10000
run_timeout 60 "$RS_CLI" report --json "$FX" >"$T/orig.json"
run_timeout 60 "$RS_CLI" report --json "$T/same" >"$T/same.json"
run_timeout 60 "$RS_CLI" report --json "$T/masked" >"$T/masked.json"
is "$(jq -c .attribution_per_step "$T/same.json")" "$(jq -c .attribution_per_step "$T/orig.json")" \
    "a copy that drops nothing the run has reports exactly as the fixture (the tool changes nothing else)"
unlike "$(jq -r '.warnings[]' "$T/orig.json")" "ProxySteps were not recorded" "the recorded run: no such warning"
like "$(jq -r '.warnings[]' "$T/masked.json")" \
    "^NCCL's ProxySteps were not recorded on 4 ranks .*: their network time was not measured; in [0-9]+ collectives through the network only, the bus bytes at link rate count as transfer" \
    "masked: the report says what it did not measure"
# every network-only collective: transfer = min(its time, bus bytes at the link rate), no latency, the rest stall
ok "masked: each network collective's transfer is its bus bytes at link rate, latency 0, the rest stall" jq -e '
    .link_gbps as $g | [.collectives[] | select(.inter_node == 1) |
      (if .func == "AllReduce" then 2 * (.nranks - 1) / .nranks
       elif (.func == "ReduceScatter" or .func == "AllGather" or .func == "AlltoAll") then (.nranks - 1) / .nranks
       else 1 end) as $f |
      ([.dur_s, .bytes * $f / ($g / 8 * 1e9)] | min) as $want |
      ((.net_s - $want) | fabs) < 1e-8 + 1e-6 * $want and .lat_s == 0 and ((.net_s + .stall_s - .dur_s) | fabs) < 1e-8
    ] | (length > 50) and all' "$T/masked.json"
ok "masked: network transfer per step > 0 (it was all stall before)" jq -e '.attribution_per_step.network_transfer > 0' "$T/masked.json"
is "$(jq -c '.attribution_per_step | [.compute, .h2d_exposed, .peer_wait, .host_idle]' "$T/masked.json")" \
    "$(jq -c '.attribution_per_step | [.compute, .h2d_exposed, .peer_wait, .host_idle]' "$T/orig.json")" \
    "masked: compute, H2D, waiting for late ranks and idle as recorded"
# the split above rests on the link rate; a NET/Socket run records none (no IB port): the report must say it assumed one
like "$(jq -r '.warnings[]' "$T/orig.json")" "^no link rate recorded in the traces: assuming 100 Gb/s" \
    "NET/Socket run without a recorded rate: the assumed 100 Gb/s is said"
unlike "$(run_timeout 60 "$RS_CLI" report --json --link-gbps 25 "$FX" | jq -r '.warnings[]')" "no link rate recorded" \
    "with --link-gbps: no such warning"
# the rate of a NET/Socket run's Ethernet port, when its host facts have one (the fixture's virtio eth0 says -1): the
# same run on a host whose eth0 is a 25 GbE port, and on one whose NCCL_SOCKET_IFNAME leaves eth0 out
mkdir -p "$T/eth25" "$T/noeth"
for f in "$FX"/*.rtrace; do
    "$DK" "$f" "$T/eth25/$(basename "$f")" --fact net/eth0/speed=25000 >/dev/null || bail "rs-retrace failed on $f"
    "$DK" "$f" "$T/noeth/$(basename "$f")" --fact net/eth0/speed=25000 --fact 'env/NCCL_SOCKET_IFNAME=^eth' \
        >/dev/null || bail "rs-retrace failed on $f"
done
run_timeout 60 "$RS_CLI" report --json "$T/eth25" >"$T/eth25.json"
is "$(jq -r '"\(.link_gbps) \(.link_source)"' "$T/eth25.json")" "25 host fact net/eth0/speed" \
    "NET/Socket: the link rate is the Ethernet port's recorded speed"
unlike "$(jq -r '.warnings[]' "$T/eth25.json")" "no link rate recorded" "and nothing is assumed"
is "$(run_timeout 60 "$RS_CLI" report --json "$T/noeth" | jq -r '"\(.link_gbps) \(.link_source)"')" \
    "100 default (not recorded)" "an interface NCCL_SOCKET_IFNAME leaves out is not NCCL's link"
# planted truth: s2_slownet's network was made slow (tests/gpu/scenarios.sh); masked, the report must still find it
# the top cost, as network stall, with the recorded run's transfer (same bytes, same rate)
SN=$RS_TOP/tests/gpu/fixtures/s2_slownet/trace
mkdir -p "$T/slownet"
for f in "$SN"/*.rtrace; do
    "$DK" "$f" "$T/slownet/$(basename "$f")" --drop nccl_proxy_step --drop nccl_proxy_state >/dev/null ||
        bail "rs-retrace failed on $f"
done
a=$(run_timeout 60 "$RS_CLI" report --json "$SN" | jq -r '.attribution_per_step.network_transfer')
is "$(run_timeout 60 "$RS_CLI" report --json "$T/slownet" |
    jq -r --argjson a "$a" '"\(.findings[0].category) \((.attribution_per_step.network_transfer - $a) | fabs < 1e-6 * $a)"')" \
    "network_stall true" "s2_slownet masked: the planted slow network is still the top finding, transfer as recorded"
