#!/bin/bash
# Session 28, call 2 (correctness, not an overhead number): every scenario of tests/gpu/scenarios.sh with this
# session's analyzer (s2_noplugin's wait from the arrival lag, on a fresh run) and tracer (writer page memory, the fork
# signal mask), then tests/gpu/run_fd_race_cuda.sh with its 20 ms tick, then tests/core/sigexit.t and the fork bench on
# the GPU host's glibc 2.39. Everything into $OUT/all.tar (a call returns only 8 files).
#   run(command="bash bench/gpu/results/2026-12-05-s28/call2.sh")   (SCEN="a b": those scenarios only; FDRACE=0: no fd race)
cd "$(dirname "$0")/../../../.."
T0=$(date +%s)
O=$OUT/c2 && mkdir -p "$O"
OUT=$O/scen IBPROBE=0 SCEN="${SCEN:-}" bash tests/gpu/scenarios.sh > "$O/scenarios.log" 2>&1
echo "scenarios rc=$? ($(($(date +%s) - T0)) s)"; tail -25 "$O/scenarios.log"
[ "${FDRACE:-1}" = 1 ] && timeout 90 bash tests/gpu/run_fd_race_cuda.sh 15 > "$O/fd_race_cuda.txt" 2>&1
echo "fd_race_cuda rc=$? ($(($(date +%s) - T0)) s)"; cat "$O/fd_race_cuda.txt" | tail -8
make -j8 >/dev/null 2>&1; echo "make rc=$?"
PATH=$PATH RS_BUILD=$PWD/build RS_TOP=$PWD timeout 120 prove -v tests/core/sigexit.t > "$O/sigexit.txt" 2>&1
echo "sigexit rc=$?"; tail -4 "$O/sigexit.txt"
timeout 60 bash -c 'for r in 1 2 3; do build/bench/core/forklat 200; LD_PRELOAD=build/librailscope.so RAILSCOPE_OUT=$(mktemp -d) build/bench/core/forklat 200; done' > "$O/forklat.txt" 2>&1
cat "$O/forklat.txt"
echo "done in $(($(date +%s) - T0)) s"
tar cf "$OUT/all.tar" -C "$OUT" c2 2>/dev/null
