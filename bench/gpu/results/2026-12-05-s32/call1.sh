#!/bin/bash
# Session 32, call 1: the detach armed once a window's records are in (preload/cuda/cupti.c, 2cc6c0e) on the real
# CUPTI: tests/gpu/inflight_check.py (a spin kernel running at each close: must come timed), tailcost on ResNet
# (the default against default-w5s-tickarm: tails and what they cost, from the reports), tests/gpu/detach_check.py
# (graph + eager + torch.profiler mid-run), then session 31's next-fdrace.sh with what time is left.
#   run(command="bash bench/gpu/results/2026-12-05-s32/call1.sh", timeout_s=600)
cd "$(dirname "$0")/../../../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
T0=$(date +%s)
el() { echo "== $(($(date +%s) - T0)) s: $*"; }
make -j16 BUILD=build/gpu build/gpu/librailscope.so build/gpu/railscope > /tmp/make-gpu.log 2>&1 || tail -5 /tmp/make-gpu.log
el built
timeout 150 python3 tests/gpu/inflight_check.py --rs-build build/gpu --out "$OUT" --seconds 12 2>&1 | tee "$OUT/inflight.txt"
el inflight
RS_NO_JIT_WARM=1 TC_WORKLOADS=resnet timeout 250 bash bench/gpu/overhead.sh tailcost 2>&1 | tail -25
el tailcost
timeout 100 python3 tests/gpu/detach_check.py --rs-build build/gpu --out "$OUT" --seconds 10 --profile-at 6 2>&1 | tee "$OUT/detach.txt"
el detach
left=$((560 - ($(date +%s) - T0)))
[ "$left" -gt 40 ] && timeout "$left" bash bench/gpu/results/2026-12-05-s31/next-fdrace.sh 2>&1 | tee "$OUT/fdrace.txt"
el end
