#!/bin/bash
# Every way of reaching libibverbs is traced (null provider): an NCCL-style loader (dlopen + dlvsym
# IBVERBS_1.1, data path through ctx->ops), a library loaded RTLD_LOCAL that links libibverbs, and the
# extended API (ibv_wr_* builders, ibv_cq_ex polling).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/vlib.sh"
need_build verbs/vt_nccl verbs/vt_local verbs/vt_ex verbs/vt_min verbs/vt_mlx5 verbs/nullprov/libibverbs.so.1 verbs/nullprov/libmlx5.so.1
plan 26

out=$(on_null traced "$T/nccl" "$VT/vt_nccl" -n 9 2>&1)
d=$(vdump "$T/nccl")
is "$(summary "$out" sends)" 9 "NCCL-style loader ran"
is "$(nkind "$d" ibv_open_device)" 1 "NCCL-style: ibv_open_device seen through dlvsym"
is "$(nkind "$d" ibv_post_send 'opcode=1 .*imm=0x1000 ')" 9 "NCCL-style: RDMA_WRITE_WITH_IMM posts through ctx->ops, imm in host order"
is "$(nkind "$d" ibv_post_recv 'num_sge=0 ')" 9 "NCCL-style: SGE-less receives"
is "$(nkind "$d" ibv_wc)" "$(summary "$out" wcs)" "NCCL-style: completions polled through ctx->ops"
is "$(printf '%s\n' "$out" | grep '^dmabuf probe')" "dmabuf probe: NULL errno=9" "NCCL-style: dmabuf probe (fd -1) fails with the provider's errno"
is "$(nkind "$d" ibv_reg_mr 'mr=0x0 .*dmabuf_fd=-1 .*err=9')" 1 "NCCL-style: failed dmabuf registration recorded with its errno"
is "$(nkind "$d" ibv_reg_mr 'iova=0x7f0000001000 .*access=0x100001 ')" 1 "NCCL-style: ibv_reg_mr_iova2 through dlvsym IBVERBS_1.8, iova and access recorded"

out=$(on_null traced "$T/local" "$VT/vt_local" "$VT/libvtlocal.so" -n 6 2>&1)
d=$(vdump "$T/local")
is "$(summary "$out" wcs)" 6 "RTLD_LOCAL library ran"
is "$(nkind "$d" ibv_post_send)" 6 "RTLD_LOCAL: posts traced"
is "$(nkind "$d" ibv_wc)" 6 "RTLD_LOCAL: completions traced"

out=$(on_null traced "$T/ex" "$VT/vt_ex" -n 5 2>&1)
d=$(vdump "$T/ex")
is "$(nkind "$d" ibv_post_send 'aux=1 ')" "$(summary "$out" sends)" "wr_* builders: one post event per WR completed (aux=1)"
is "$(nkind "$d" ibv_post_send 'wr_id=0x3e7 ')" 0 "wr_abort: aborted WR not recorded"
is "$(nkind "$d" ibv_post_send 'wr_id=0xca .*bytes=1002 ')" 1 "batched builders keep each WR's own SGE"
is "$(nkind "$d" ibv_wc)" "$(summary "$out" wcs)" "cq_ex: one completion event per start/next_poll"
is "$(nkind "$d" ibv_create_qp 'ext=2$')$(nkind "$d" ibv_create_cq 'ext=1$')" "11" "create_qp_ex / create_cq_ex recorded as extended"
is "$(field "$d" ibv_poll_empty count | awk '{s+=$1} END {print s+0}')" "$(summary "$out" empty_start_polls)" \
    "cq_ex: empty start_poll counted"
is "$(nkind "$d" ibv_reg_mr 'aux=1 .*mem=2 ')" 1 "ibv_rereg_mr onto mlocked memory: recorded (aux=1), reclassified pinned"
is "$(nkind "$d" ibv_post_send 'wr_id=0x7a69 .*mem=2 ')" 1 "posts through the new lkey carry the new memory kind"

# Shared receive queues: receives posted through ops.post_srq_recv are recorded with the SRQ's id and consumed.
out=$(on_null traced "$T/srq" "$VT/vt_min" -n 7 2>&1)
d=$(vdump "$T/srq")
sid=$(field "$d" ibv_create_srq id)
is "$(nkind "$d" ibv_post_recv "srq=${sid:-none} ")" "$(summary "$out" srq_recvs)" "SRQ: one post event per receive posted to the SRQ, with its id"
is "$(nkind "$d" ibv_wc 'opcode=128 ')" 7 "SRQ: their completions"
# A provider without the optional entries: the tracer leaves NULL entries NULL (callers test them).
plain=$(NULLPROV_MINIMAL=1 on_null run_timeout 20 "$VT/vt_min" 2>&1)
out=$(NULLPROV_MINIMAL=1 on_null traced "$T/min" "$VT/vt_min" 2>&1)
like "$plain" "post_srq_recv NULL, req_notify_cq NULL, create_cq_ex NULL, create_qp_ex NULL" "minimal provider has NULL entries"
is "$out" "$plain" "minimal provider: NULL entries stay NULL under the tracer (ibv_create_cq_ex still EOPNOTSUPP)"

# libmlx5's own entry points, loaded NCCL's way (dlopen libmlx5.so.1 + dlvsym MLX5_*): a context opened
# with mlx5dv_open_device is patched (aux=3), and a Data Direct dmabuf MR (mlx5dv_reg_dmabuf_mr) gives
# its posts mem=dmabuf.
out=$(on_null traced "$T/mlx5" "$VT/vt_mlx5" -n 6 2>&1)
d=$(vdump "$T/mlx5")
is "$(nkind "$d" ibv_open_device 'aux=3 ')" 1 "mlx5dv_open_device: context recorded (aux=3)"
is "$(nkind "$d" ibv_reg_mr 'iova=0x7f1200000000 .*mem=5 ')" 1 "mlx5dv_reg_dmabuf_mr: recorded as a dmabuf MR with its iova"
is "$(nkind "$d" ibv_post_send 'mem=5 ')/$(nkind "$d" ibv_wc)" "6/6" "mlx5dv context: posts (mem=dmabuf) and completions traced"
