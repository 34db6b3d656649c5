#!/bin/bash
# Session 32, call 4 (NOT RUN: the budget left could not start a machine; for the next session): which descriptor a first pointer query opens (bench/gpu/ptrquery_fd.py),
# untraced (runtime, driver, copy) and traced with kernels off (copy: the wrapper's query).
#   run(command="bash bench/gpu/results/2026-12-05-s32/call4.sh", timeout_s=60)
cd "$(dirname "$0")/../../../.."
for m in runtime driver copy; do timeout 20 python3 bench/gpu/ptrquery_fd.py $m 2>&1 | tail -1 | cut -c1-600; done
make -j16 BUILD=build/gpu build/gpu/librailscope.so > /tmp/make-gpu.log 2>&1 || tail -5 /tmp/make-gpu.log
RAILSCOPE_CUDA_KERNELS=off RAILSCOPE_OUT=/tmp/pq LD_PRELOAD=$PWD/build/gpu/librailscope.so timeout 20 \
    python3 bench/gpu/ptrquery_fd.py copy 2>&1 | tail -1 | sed 's/^/traced kernels-off: /' | cut -c1-600
