#!/bin/bash
# tests/gpu/fd_race_cuda.py untraced, then under `railscope record` with a window every 600 ms (CUPTI attached and
# detached ~25 times in 15 s), on the H200. Needs build/gpu (tests/gpu/scenarios.sh or run.sh builds it).
# Usage: tests/gpu/run_fd_race_cuda.sh [SECONDS]   (prints both JSON lines, the window count, PASS/FAIL)
set -u
cd "$(dirname "$0")/../.."
S=${1:-15}
RS=build/gpu/railscope
W=$(mktemp -d /tmp/rs-fdrace.XXXX)
python3 tests/gpu/fd_race_cuda.py "$S" 2>"$W/untraced.json"
u=$?
# windows open and close on the writer's tick: a 20 ms tick, a 300 ms window every 600 ms (session 27's first run,
# 20/100 at the default tick, recorded only 3 window marks in 15 s)
RAILSCOPE_FLUSH_MS=20 RAILSCOPE_CUDA_KERNEL_WINDOW=300/600/0 "$RS" record -q -o "$W/trace" -- python3 tests/gpu/fd_race_cuda.py "$S" 2>"$W/traced.err"
t=$?
echo "untraced rc=$u $(tail -1 "$W/untraced.json")"
echo "traced rc=$t $(grep '^{' "$W/traced.err" | tail -1)"
grep -v '^{' "$W/traced.err" | head -5
wins=$("$RS" dump --json "$W/trace" 2>/dev/null | grep -c '"kind":"cuda_kernel_window"')
echo "kernel windows recorded: $wins"
if [ "$u" = 0 ] && [ "$t" = 0 ] && [ "$wins" -ge 20 ]; then echo "fd_race_cuda: PASS"; else echo "fd_race_cuda: FAIL"; fi
