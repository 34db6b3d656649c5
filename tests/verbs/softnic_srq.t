#!/bin/bash
# SRQ tracking over the software test NIC (tools/softnic): rdma-core's unmodified ibv_srq_pingpong (many
# QPs sharing one SRQ), server and client, untraced and with LD_PRELOAD: same output apart from timings
# and per-run numbers; in each side's trace the SRQ is created once with its id, every receive carries
# that id, and the receive completions are there.
. "$(dirname "$0")/../lib.sh"
need_cmd ibv_srq_pingpong timeout
. "$(dirname "$0")/../softnic/sn_env.sh"
. "$(dirname "$0")/vlib.sh"
plan 8

N=40
PP_TO=60
timing_ok || PP_TO=180   # busy-polling pingpong on a loaded 2-core box: a scheduler quantum per iteration
FOREIGN=(${SN_FOREIGN_ENV[@]+"${SN_FOREIGN_ENV[@]}"})
# pp TAG WRAP...: server and client under WRAP; outputs in $T/TAG.srv and $T/TAG.cli. softnic's end-of-run
# ACK race is fixed (cea3dfb: a requester's retransmit timer), so a failed run fails; only a server that could
# not bind its port (another process took it: a harness problem) is run again, with a new port.
pp() {
    local attempt
    for attempt in 1 2 3; do
        pp_once "$@"
        grep -q "Couldn't listen to port" "$T/$1.srv" || return 0
        diag "pp $1: the server could not listen on its port, attempt $attempt"
        rm -rf "${T:?}/$1"
    done
}
pp_once() {
    local tag=$1 port srv
    shift
    port=$(sn_port)
    run_timeout $PP_TO "$@" ibv_srq_pingpong -p "$port" -n $N >"$T/$tag.srv" 2>&1 &
    srv=$!
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        sleep 0.2
        run_timeout $PP_TO "$@" ibv_srq_pingpong -p "$port" -n $N localhost >"$T/$tag.cli" 2>&1 && break
        grep -q "Couldn't connect" "$T/$tag.cli" || break
    done
    wait $srv
}
norm() { sed -E 's/(QPN|PSN) 0x[0-9a-f]+/\1 X/g; s/[0-9]+\.[0-9]+/F/g' "$1"; }

pp plain "${FOREIGN[@]}"
pp pre env LD_PRELOAD="$RS_PRELOAD" RAILSCOPE_OUT="$T/pre"
like "$(cat "$T/plain.cli")" "$N iters" "softnic: ibv_srq_pingpong ran untraced"
is "$(norm "$T/pre.cli")" "$(norm "$T/plain.cli")" "softnic: srq_pingpong client output with LD_PRELOAD same as untraced"
is "$(norm "$T/pre.srv")" "$(norm "$T/plain.srv")" "softnic: srq_pingpong server output with LD_PRELOAD same as untraced"
files=$(ls "$T"/pre/*.rtrace 2>/dev/null)
is "$(printf '%s\n' "$files" | grep -c .)" 2 "softnic: two traced processes"
for f in $files; do
    d=$("$VT/vt_dump" verbs "$f")
    id=$(field "$d" ibv_create_srq id)
    nrecv=$(nkind "$d" ibv_post_recv)
    is "$(nkind "$d" ibv_create_srq)/$(( ${id:-0} >= 2 ))/$(nkind "$d" ibv_post_recv " srq=${id:-none} ")" "1/1/$nrecv" \
        "softnic $(basename "$f"): one SRQ (id ${id:-none}), all $nrecv receives carry its id"
    is "$(( $(nkind "$d" ibv_wc 'status=0 .*opcode=128 ') >= N && nrecv >= N ))" 1 \
        "softnic $(basename "$f"): >= $N receive completions and receives posted"
done
