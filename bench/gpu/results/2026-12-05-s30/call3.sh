#!/bin/bash
# Session 30, call 3 (correctness only): after call 2 — the build with _FORTIFY_SOURCE (cred_fork.c), every
# tests/core test (selfstat.t and harmless.t on the host's Python 3.12: the fork warning of threads), then
# tests/gpu/run_fd_race_cuda.sh with CUPTI's detach off (RAILSCOPE_CUDA_DETACH=off: no re-attach on the writer
# thread) and on (the default: call 2 aborted in CUPTI's re-attach, boost::filesystem "Not a directory" on
# /sys/devices/system/clocksource), twice each. Everything into $OUT/all.tar.
#   run(command="bash bench/gpu/results/2026-12-05-s30/call3.sh")
cd "$(dirname "$0")/../../../.."
T0=$(date +%s)
O=$OUT/c3 && mkdir -p "$O"
python3 -V
make -j16 all > "$O/make.log" 2>&1
echo "make rc=$? ($(($(date +%s) - T0)) s)"; grep -E 'error:' "$O/make.log" | head -5
RS_BUILD=$PWD/build RS_TOP=$PWD timeout 240 prove -j8 tests/core/ > "$O/core.txt" 2>&1
echo "tests/core rc=$? ($(($(date +%s) - T0)) s)"; grep -E '^not ok|^Failed|^tests.*(skipped|Dubious)|^Result|^Files' "$O/core.txt" | head -20
RS_BUILD=$PWD/build RS_TOP=$PWD prove -v tests/core/selfstat.t tests/core/harmless.t > "$O/selfstat.txt" 2>&1; grep -E 'ok 6|ok 7|ok 10|^Result' "$O/selfstat.txt"
make -j16 BUILD=build/gpu build/gpu/librailscope.so build/gpu/railscope > "$O/make-gpu.log" 2>&1 || tail -5 "$O/make-gpu.log"
for d in off on off on; do
    echo "== RAILSCOPE_CUDA_DETACH=$d ($(($(date +%s) - T0)) s)"
    RAILSCOPE_CUDA_DETACH=$d timeout 60 bash tests/gpu/run_fd_race_cuda.sh 10 2>&1 | tee -a "$O/fdrace-$d.log" | tail -4
done
echo "done in $(($(date +%s) - T0)) s"
tar cf "$OUT/all.tar" -C "$OUT" c3 2>/dev/null
