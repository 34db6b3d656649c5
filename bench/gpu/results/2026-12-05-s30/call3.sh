#!/bin/bash
# Session 30, call 3 (correctness only): after call 2 — the build with _FORTIFY_SOURCE (cred_fork.c), the whole
# suite but the sanitizer rebuilds (selfstat.t and harmless.t on the host's Python 3.12: the fork warning of threads), then
# tests/gpu/run_fd_race_cuda.sh with CUPTI's detach off (RAILSCOPE_CUDA_DETACH=off: no re-attach on the writer
# thread) and on (the default: call 2 aborted in CUPTI's re-attach, boost::filesystem "Not a directory" on
# /sys/devices/system/clocksource), then opentrace: which CUPTI call walks that directory. Everything into $OUT/all.tar.
#   run(command="bash bench/gpu/results/2026-12-05-s30/call3.sh")
cd "$(dirname "$0")/../../../.."
T0=$(date +%s)
O=$OUT/c3 && mkdir -p "$O"
python3 -V
make -j16 all > "$O/make.log" 2>&1
echo "make rc=$? ($(($(date +%s) - T0)) s)"; grep -E 'error:' "$O/make.log" | head -5
# the whole suite but the sanitizer rebuilds, on Ubuntu 24.04 / Python 3.12 (CI runs Debian 12 / Python 3.11)
tests=$(ls tests/*/*.t | grep -v '^tests/hardening/sanitizers')
RS_BUILD=$PWD/build RS_TOP=$PWD timeout 330 prove -j12 --timer $tests > "$O/suite.txt" 2>&1
echo "suite rc=$? ($(($(date +%s) - T0)) s)"; grep -E '^not ok|^Failed|Dubious|^Result|^Files|^tests.* skipped' "$O/suite.txt" | head -30
make -j16 BUILD=build/gpu build/gpu/librailscope.so build/gpu/railscope > "$O/make-gpu.log" 2>&1 || tail -5 "$O/make-gpu.log"
for d in off on; do
    echo "== RAILSCOPE_CUDA_DETACH=$d ($(($(date +%s) - T0)) s)"
    RAILSCOPE_CUDA_DETACH=$d timeout 60 bash tests/gpu/run_fd_race_cuda.sh 8 2>&1 | tee -a "$O/fdrace-$d.log" | tail -4
done
# which CUPTI call walks the clocksource directory at a re-attach (bench/gpu/opentrace.c)
gcc -O1 -g -shared -fPIC -o /tmp/opentrace.so bench/gpu/opentrace.c -ldl &&
    OPENTRACE_MATCH=clocksource LD_PRELOAD=/tmp/opentrace.so:$PWD/build/gpu/librailscope.so RAILSCOPE_OUT=/tmp/rs-ot \
        RAILSCOPE_FLUSH_MS=20 RAILSCOPE_CUDA_KERNEL_WINDOW=300/600/0 RAILSCOPE_LOG=debug timeout 60 \
        python3 bench/gpu/attach_probe.py 3 > "$O/opentrace.log" 2>&1
echo "opentrace rc=$? ($(($(date +%s) - T0)) s): $(grep -c 'opentrace: opendir' "$O/opentrace.log") opendirs"
grep -E 'opentrace|CUPTI: (finalized|attached|detach)' "$O/opentrace.log" | head -40
offs=$(grep -o 'librailscope.so+0x[0-9a-f]*' "$O/opentrace.log" | sort -u | sed 's/.*+//' | head -20)
[ -n "$offs" ] && command -v addr2line >/dev/null && addr2line -f -C -e build/gpu/librailscope.so $offs | paste - - | head -20
echo "done in $(($(date +%s) - T0)) s"
tar cf "$OUT/all.tar" -C "$OUT" c3 2>/dev/null
