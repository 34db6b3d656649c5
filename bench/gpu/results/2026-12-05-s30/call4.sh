#!/bin/bash
# Session 30, call 4 (correctness only): the fixes for call 3's Ubuntu 24.04 failures (cuda_detach.t 60-61 RPATH,
# export.t 16 collation, h2d_share.t 3 and dump_wcaux.t 9 jq 1.7 numbers) and selfstat.t/harmless.t again on the
# GPU host; then tests/gpu/run_fd_race_cuda.sh with RAILSCOPE_CUDA_KERNELS=off (docs/cuda-nccl.md's advice for a
# program that juggles descriptors beside CUDA work: no window switches after the first tick).
#   run(command="bash bench/gpu/results/2026-12-05-s30/call4.sh")
cd "$(dirname "$0")/../../../.."
T0=$(date +%s)
O=$OUT/c4 && mkdir -p "$O"
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} LANG=${LANG:-} LC_ALL=${LC_ALL:-} $(jq --version)"
make -j16 all > "$O/make.log" 2>&1
echo "make rc=$? ($(($(date +%s) - T0)) s)"; grep -E 'error:' "$O/make.log" | head -5
RS_BUILD=$PWD/build RS_TOP=$PWD timeout 150 prove -j8 tests/nccl/cuda_detach.t tests/export/export.t tests/analyzer/h2d_share.t \
    tests/verbs/dump_wcaux.t tests/core/selfstat.t tests/core/harmless.t > "$O/tests.txt" 2>&1
echo "tests rc=$? ($(($(date +%s) - T0)) s)"; grep -E '^not ok|^Failed|Dubious|^Result|^Files' "$O/tests.txt" | head
make -j16 BUILD=build/gpu build/gpu/librailscope.so build/gpu/railscope > "$O/make-gpu.log" 2>&1 || tail -5 "$O/make-gpu.log"
RAILSCOPE_CUDA_KERNELS=off timeout 60 bash tests/gpu/run_fd_race_cuda.sh 8 > "$O/fdrace-koff.log" 2>&1
echo "fd_race_cuda KERNELS=off rc=$? ($(($(date +%s) - T0)) s)"; tail -4 "$O/fdrace-koff.log"
tar cf "$OUT/all.tar" -C "$OUT" c4 2>/dev/null
