#!/bin/bash
# Session 29 had no device (lending paused all session). The plan for the next device call, correctness only:
# session 28's call 3 (s2_noplugin on a fresh run with the arrival-lag analyzer, s2_cpu), then this session's tracer
# changes on the GPU host's glibc 2.39 and kernel: tests/core/fd_race.t (a forked child's unnamed trace file,
# O_TMPFILE + linkat), tests/core/term_exit.t (SIGTERM in the tracer's own exit flush) and tests/core/sigexit.t,
# and the fork bench. Everything into $OUT/all.tar (a call returns only 8 files).
#   run(command="bash bench/gpu/results/2026-12-05-s29/call1.sh")
cd "$(dirname "$0")/../../../.."
T0=$(date +%s)
O=$OUT/c1 && mkdir -p "$O"
OUT=$O/scen IBPROBE=0 SCEN="${SCEN:-s2_noplugin s2_cpu}" bash tests/gpu/scenarios.sh > "$O/scenarios.log" 2>&1
echo "scenarios rc=$? ($(($(date +%s) - T0)) s)"; tail -25 "$O/scenarios.log"
make -j8 >/dev/null 2>&1; echo "make rc=$?"
for t in fd_race term_exit sigexit; do
    RS_BUILD=$PWD/build RS_TOP=$PWD timeout 150 prove -v tests/core/$t.t > "$O/$t.txt" 2>&1
    echo "$t rc=$? ($(($(date +%s) - T0)) s)"; grep -E '^not ok|^# ' "$O/$t.txt" | head -10
done
timeout 60 bash -c 'for r in 1 2 3; do build/bench/core/forklat 200; LD_PRELOAD=build/librailscope.so RAILSCOPE_OUT=$(mktemp -d) build/bench/core/forklat 200; done' > "$O/forklat.txt" 2>&1
cat "$O/forklat.txt"
echo "done in $(($(date +%s) - T0)) s"
tar cf "$OUT/all.tar" -C "$OUT" c1 2>/dev/null
