#!/bin/bash
# Session 31, call 2 (correctness only, after `overhead.sh donewhen`): session 31's tracer on the GPU host (Ubuntu
# 24.04, glibc 2.39): the string lock (tracer/intern.c), host facts read without the writer's lock, the CPUID
# invariant-TSC check (clock.c: the host's /proc/cpuinfo flags printed beside the clock the trace says it used);
# tests/core and tests/doctor whole, session 30's portability fixes; then tests/gpu/run_fd_race_cuda.sh with
# RAILSCOPE_CUDA_KERNELS=off (docs/cuda-nccl.md's advice for a program juggling descriptors beside CUDA work).
#   run(command="bash bench/gpu/results/2026-12-05-s31/call2.sh")
cd "$(dirname "$0")/../../../.."
T0=$(date +%s)
O=$OUT/c2 && mkdir -p "$O"
echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} LANG=${LANG:-} $(jq --version) $(nproc) cpus"
grep -m1 '^flags' /proc/cpuinfo | grep -o -w 'constant_tsc\|nonstop_tsc' | tr '\n' ' '
echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
make -j16 all > "$O/make.log" 2>&1
echo "make rc=$? ($(($(date +%s) - T0)) s)"; grep -E 'error:' "$O/make.log" | head -5
build/railscope record -q -o "$O/clk" -- /bin/sleep 0.2 && build/railscope info "$O/clk" | grep -E '^format|^events'
RS_BUILD=$PWD/build RS_TOP=$PWD timeout 240 prove -j12 tests/core/*.t tests/doctor/*.t tests/nccl/cuda_detach.t \
    tests/export/export.t tests/analyzer/h2d_share.t tests/verbs/dump_wcaux.t > "$O/tests.txt" 2>&1
echo "tests rc=$? ($(($(date +%s) - T0)) s)"; grep -E '^not ok|^Failed|Dubious|^Result|^Files' "$O/tests.txt" | head -20
make -j16 BUILD=build/gpu build/gpu/librailscope.so build/gpu/railscope > "$O/make-gpu.log" 2>&1 || tail -5 "$O/make-gpu.log"
RAILSCOPE_CUDA_KERNELS=off timeout 60 bash tests/gpu/run_fd_race_cuda.sh 8 > "$O/fdrace-koff.log" 2>&1
echo "fd_race_cuda KERNELS=off rc=$? ($(($(date +%s) - T0)) s)"; tail -4 "$O/fdrace-koff.log"
tar cf "$OUT/all.tar" -C "$OUT" c2 2>/dev/null
