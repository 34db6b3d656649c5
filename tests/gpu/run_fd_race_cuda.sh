#!/bin/bash
# tests/gpu/fd_race_cuda.py untraced, then under `railscope record` with a window every 100 ms (CUPTI attached and
# detached ~10 times a second), on the H200. Needs build/gpu (tests/gpu/scenarios.sh or run.sh builds it).
# Usage: tests/gpu/run_fd_race_cuda.sh [SECONDS]   (prints both JSON lines, the window count, PASS/FAIL)
set -u
cd "$(dirname "$0")/../.."
S=${1:-15}
RS=build/gpu/railscope
W=$(mktemp -d /tmp/rs-fdrace.XXXX)
python3 tests/gpu/fd_race_cuda.py "$S" 2>"$W/untraced.json"
u=$?
RAILSCOPE_CUDA_KERNEL_WINDOW=20/100/0 "$RS" record -q -o "$W/trace" -- python3 tests/gpu/fd_race_cuda.py "$S" 2>"$W/traced.err"
t=$?
echo "untraced rc=$u $(tail -1 "$W/untraced.json")"
echo "traced rc=$t $(grep '^{' "$W/traced.err" | tail -1)"
grep -v '^{' "$W/traced.err" | head -5
wins=$("$RS" dump --json "$W/trace" 2>/dev/null | grep -c '"kind":"cuda_kernel_window"')
echo "kernel windows recorded: $wins"
if [ "$u" = 0 ] && [ "$t" = 0 ] && [ "$wins" -ge 20 ]; then echo "fd_race_cuda: PASS"; else echo "fd_race_cuda: FAIL"; fi
