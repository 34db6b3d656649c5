#!/bin/bash
# For the next session (not run): where the last EBUSY of tests/gpu/fd_race_cuda.py comes from with kernels off
# (CUPTI no longer attached; bench/gpu/lowfd_trace.c saw no preloaded call take number 1). Hypothesis: a one-time
# open inside the driver at the first copy the cudart wrapper classifies (cuPointerGetAttribute(s) on a host
# pointer), made by a raw system call or a glibc-internal open. (1) --warm: one copy before the juggling starts;
# (2) strace, if the host has it, on the traced run: every descriptor-allocating call with its thread and result.
#   run(command="bash bench/gpu/results/2026-12-05-s31/next-fdrace.sh")
cd "$(dirname "$0")/../../../.."
make -j16 BUILD=build/gpu build/gpu/librailscope.so build/gpu/railscope > /tmp/make-gpu.log 2>&1 || tail -5 /tmp/make-gpu.log
for w in "" --warm "" --warm; do
    RAILSCOPE_CUDA_KERNELS=off LD_PRELOAD=$PWD/build/gpu/librailscope.so RAILSCOPE_OUT=/tmp/nf timeout 40 \
        python3 tests/gpu/fd_race_cuda.py 8 $w 2>&1 | grep '^{' | sed "s/^/warm=${w:-no} /" | cut -c1-140
done
if command -v strace >/dev/null; then
    RAILSCOPE_CUDA_KERNELS=off LD_PRELOAD=$PWD/build/gpu/librailscope.so RAILSCOPE_OUT=/tmp/ns timeout 60 \
        strace -f -qq -e trace=%desc -e status=successful -o /tmp/st python3 tests/gpu/fd_race_cuda.py 6 2>&1 | grep '^{'
    grep -E '= [01]$' /tmp/st | grep -vE '^[0-9]+ +(close|dup2|dup3|fstat|newfstatat|fcntl)' | head -20
else
    echo "no strace on the host"
fi
