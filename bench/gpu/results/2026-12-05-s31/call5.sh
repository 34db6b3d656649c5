#!/bin/bash
# Session 31, call 5 (diagnostic): who takes descriptor 0 or 1 during tests/gpu/fd_race_cuda.py's juggling, traced
# with kernels off (CUPTI never attached since 8456646, yet 1 EBUSY in 3 of 4 runs): bench/gpu/lowfd_trace.c with
# LOWFD_MAX=2 (fds 0-2 are open before the juggler starts, so only an open in its close/dup2 gap can return 1).
#   run(command="bash bench/gpu/results/2026-12-05-s31/call5.sh")
cd "$(dirname "$0")/../../../.."
make -j16 BUILD=build/gpu build/gpu/librailscope.so build/gpu/railscope > /tmp/make-gpu.log 2>&1 || tail -5 /tmp/make-gpu.log
gcc -O1 -g -shared -fPIC -o /tmp/lowfd_trace.so bench/gpu/lowfd_trace.c -ldl || exit 1
for i in 1 2 3; do
    LOWFD_MAX=2 RAILSCOPE_CUDA_KERNELS=off LD_PRELOAD=/tmp/lowfd_trace.so:$PWD/build/gpu/librailscope.so \
        RAILSCOPE_OUT=/tmp/lf$i timeout 40 python3 tests/gpu/fd_race_cuda.py 8 2>/tmp/lf$i.err
    echo "run $i rc=$? $(grep '^{' /tmp/lf$i.err | cut -c1-120)"
    grep '^lowfd' /tmp/lf$i.err | sed 's/thread [0-9]*/thread T/' | sort | uniq -c | sort -rn | head -6 | cut -c1-900
done
