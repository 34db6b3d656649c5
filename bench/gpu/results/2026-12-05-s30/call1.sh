#!/bin/bash
# Session 30, call 1 (correctness only, not an overhead number): session 29's plan (its call1.sh, never run: lending
# was paused) widened to every tests/core test: s2_noplugin and s2_cpu with the arrival-lag analyzer, then
# tests/core/*.t on the GPU host's glibc 2.39 and kernel (session 29's O_TMPFILE/linkat trace files of forked
# children, SIGTERM in the tracer's own flush, the fork fixes), then the fork bench. Everything into $OUT/all.tar.
#   run(command="bash bench/gpu/results/2026-12-05-s30/call1.sh")
cd "$(dirname "$0")/../../../.."
T0=$(date +%s)
O=$OUT/c1 && mkdir -p "$O"
uname -a; ldd --version | head -1
OUT=$O/scen IBPROBE=0 SCEN="${SCEN:-s2_noplugin s2_cpu}" bash tests/gpu/scenarios.sh > "$O/scenarios.log" 2>&1
echo "scenarios rc=$? ($(($(date +%s) - T0)) s)"; tail -25 "$O/scenarios.log"
make -j16 >/dev/null 2>&1; echo "make rc=$? ($(($(date +%s) - T0)) s)"
RS_BUILD=$PWD/build RS_TOP=$PWD timeout 300 prove -j8 tests/core/ > "$O/core.txt" 2>&1
echo "tests/core rc=$? ($(($(date +%s) - T0)) s)"; grep -vE '\.\. ok$' "$O/core.txt" | tail -40
timeout 60 bash -c 'for r in 1 2 3; do build/bench/core/forklat 200; LD_PRELOAD=build/librailscope.so RAILSCOPE_OUT=$(mktemp -d) build/bench/core/forklat 200; done' > "$O/forklat.txt" 2>&1
cat "$O/forklat.txt"
echo "done in $(($(date +%s) - T0)) s"
tar cf "$OUT/all.tar" -C "$OUT" c1 2>/dev/null
