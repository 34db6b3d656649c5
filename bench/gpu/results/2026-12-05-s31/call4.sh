#!/bin/bash
# Session 31, call 4 (correctness only): RAILSCOPE_CUDA_KERNELS=off no longer attaches CUPTI (preload/cuda/cupti.c):
# tests/gpu/run_fd_race_cuda.sh with kernels off twice (1 EBUSY in 1.45 M rounds before), and a kernels-off trace of
# the same program: copies recorded by the wrappers, the debug line, no CUPTI warning.
#   run(command="bash bench/gpu/results/2026-12-05-s31/call4.sh")
cd "$(dirname "$0")/../../../.."
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
make -j16 BUILD=build/gpu build/gpu/librailscope.so build/gpu/railscope > /tmp/make-gpu.log 2>&1 || tail -5 /tmp/make-gpu.log
for i in 1 2; do RAILSCOPE_CUDA_KERNELS=off timeout 60 bash tests/gpu/run_fd_race_cuda.sh 8 2>&1 | grep -E '^(untraced|traced)'; done
RAILSCOPE_LOG=debug RAILSCOPE_CUDA_KERNELS=off timeout 60 build/gpu/railscope record -o /tmp/koff -- python3 tests/gpu/fd_race_cuda.py 2 2>&1 |
    grep -E 'railscope' | grep -iE 'cupti|warn|error' | head -8
build/gpu/railscope dump --json /tmp/koff | jq -r .kind | sort | uniq -c | grep -E 'cuda|window' 
