#!/bin/bash
# Session 27, call 1: the session-26 tracer (private descriptor table for the writer's reads, the entry
# variables set by the library itself, communicator keys without the profiler) under real PyTorch/NCCL:
# tests/gpu/run.sh parts A and C, tests/gpu/run_fd_race_cuda.sh, then every scenario of tests/gpu/scenarios.sh (s2_byhand, s2_noplugin new).
#   run(command="cd .gpusnap && bash bench/gpu/results/2026-12-05-s27/call1.sh", carry=[".gpusnap"])
cd "$(dirname "$0")/../../../.."
OUT=$OUT/ac PARTS='A C' bash tests/gpu/run.sh
# CUPTI's attach/detach (writer thread, program's CUDA calls) against dash's descriptor sequence in the program
bash tests/gpu/run_fd_race_cuda.sh 15 2>&1 | tee "$OUT/fd_race_cuda.txt"
OUT=$OUT/scen IBPROBE=0 bash tests/gpu/scenarios.sh
