#!/bin/bash
# Session 30, call 2 (correctness only): call 1's plain `make` failed on the GPU host (no libibverbs-dev there: the
# examples and verbs tests link -libverbs), so tests/core found no library. Now `make -k` (its errors logged), then
# every tests/core test on glibc 2.39, tests/gpu/run.sh parts A and C, and tests/gpu/run_fd_race_cuda.sh (a CUDA
# program's threads racing close/dup2 while CUPTI attaches and detaches). Everything into $OUT/all.tar.
#   run(command="bash bench/gpu/results/2026-12-05-s30/call2.sh")
cd "$(dirname "$0")/../../../.."
T0=$(date +%s)
O=$OUT/c2 && mkdir -p "$O"
make -k -j16 all > "$O/make.log" 2>&1
echo "make -k rc=$? ($(($(date +%s) - T0)) s)"; grep -E 'error|No rule' "$O/make.log" | sort | uniq -c | sort -rn | head -8
ls -la build/librailscope.so build/railscope
RS_BUILD=$PWD/build RS_TOP=$PWD timeout 240 prove -j8 tests/core/ > "$O/core.txt" 2>&1
echo "tests/core rc=$? ($(($(date +%s) - T0)) s)"; grep -vE '\.\. ok$' "$O/core.txt" | tail -30
PARTS='A C' timeout 200 bash tests/gpu/run.sh > "$O/run.log" 2>&1
echo "run.sh A C rc=$? ($(($(date +%s) - T0)) s)"; grep -E '^FAIL|^== done' "$O/run.log"
timeout 90 bash tests/gpu/run_fd_race_cuda.sh > "$O/fdrace.log" 2>&1
echo "fd_race_cuda rc=$? ($(($(date +%s) - T0)) s)"; tail -5 "$O/fdrace.log"
timeout 40 bash -c 'for r in 1 2 3; do build/bench/core/forklat 200; LD_PRELOAD=$PWD/build/librailscope.so RAILSCOPE_OUT=$(mktemp -d) build/bench/core/forklat 200; done' > "$O/forklat.txt" 2>&1
cat "$O/forklat.txt"
echo "done in $(($(date +%s) - T0)) s"
tar cf "$OUT/all.tar" -C "$OUT" c2 2>/dev/null
