#!/bin/bash
# Verbs capture of a multi-process ring AllReduce over the software test NIC (examples/ring_allreduce,
# 4 ranks): every rank's trace holds its 2(N-1) RDMA WRITE-with-immediate chunks per iteration with the
# chunk size, as many receive-with-immediate completions, and no failed completion.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../softnic/sn_env.sh"
. "$(dirname "$0")/vlib.sh"
need_build examples/ring_allreduce
plan 6

N=4 ITERS=3 SIZE=65536
out=$(run_timeout 60 env LD_PRELOAD="$RS_PRELOAD" RAILSCOPE_OUT="$T/tr" "$RS_BUILD/examples/ring_allreduce" -n $N -s $SIZE -i $ITERS 2>&1)
is "$(printf '%s\n' "$out" | grep -c 'result OK')" $N "softnic: ring_allreduce under the tracer: all ranks correct"
ranks=0 writes=0 imms=0 bad=0 sizes=
for f in "$T"/tr/*.rtrace; do
    d=$("$VT/vt_dump" verbs "$f")
    [ "$(nkind "$d" ibv_open_device)" = 1 ] || continue
    ranks=$((ranks + 1))
    writes=$((writes + $(nkind "$d" ibv_post_send 'opcode=1 ')))
    imms=$((imms + $(nkind "$d" ibv_wc 'opcode=129 ')))
    bad=$((bad + $(nkind "$d" ibv_wc 'status=[1-9]')))
    sizes="$sizes"$'\n'"$(field "$d" ibv_post_send bytes | grep -v '^0$' | sort -u)"
done
is "$ranks" $N "softnic: one trace per rank with its device"
is "$writes" $((N * 2 * (N - 1) * ITERS)) "softnic: 2(N-1) RDMA WRITE-with-imm chunks per rank per iteration"
is "$imms" $((N * 2 * (N - 1) * ITERS)) "softnic: as many receive-with-imm completions"
is "$bad" 0 "softnic: no failed completion"
is "$(printf '%s\n' "$sizes" | grep . | sort -u)" $((SIZE / N)) "softnic: each chunk is SIZE/N bytes"
