#!/bin/bash
# For the next session's first device call (~2.5 min): session 32's call 4 (which descriptor the first pointer query
# opens: bench/gpu/ptrquery_fd.py, untraced and traced with kernels off), then tests/gpu/inflight_check.py with the
# check of every step's ten add kernels (added after session 32's calls; the early arm on the real CUPTI).
#   run(command="bash bench/gpu/results/2026-12-05-s32/next.sh", timeout_s=300)
cd "$(dirname "$0")/../../../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
bash bench/gpu/results/2026-12-05-s32/call4.sh
make -j16 BUILD=build/gpu build/gpu/librailscope.so build/gpu/railscope > /tmp/make-gpu.log 2>&1 || tail -5 /tmp/make-gpu.log
timeout 150 python3 tests/gpu/inflight_check.py --rs-build build/gpu --out "$OUT" --seconds 12 2>&1 | tee "$OUT/inflight.txt"
