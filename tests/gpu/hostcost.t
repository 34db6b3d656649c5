#!/bin/bash
# bench/gpu/hostcost.py (issue 16's host-work measurement) run here on the GPU-less stub workload: process CPU
# time over the timed steps. A mode planted with a 20 % longer spin per step must come out 1.1-1.3 times
# untraced (the stub spins CPU time: STUB_SPIN=cpu); the untraced step's CPU time must be about its 2 ms
# spin; the main thread must carry it.
. "$(dirname "$0")/../lib.sh"
need_cmd python3
need_cmd taskset
plan 4
out=$(cd "$T" && STUB_SPIN=cpu python3 "$RS_TOP/bench/gpu/hostcost.py" --workload stub --modes untraced,stub-slow20 --rounds 2 \
    --steps 150 --warmup 2 --cpus 0 --work "$T/w" --out "$T/o" 2>&1)
diag "$out"
ok "the harness wrote its result" test -s "$T/o/hostcost-stub.json"
get() { python3 -c "import json,statistics as s; r=json.load(open('$T/o/hostcost-stub.json'))['runs']; print(s.mean(x['cpu_ms'] for x in r if x['mode']=='$1'))"; }
base=$(get untraced)
slow=$(get stub-slow20)
ok "untraced: CPU time per step near the 2 ms spin (got $base ms)" python3 -c "import sys; sys.exit(0 if 1.4 <= $base <= 2.6 else 1)"
ok "planted 20 %: found in CPU time per step (got $slow vs $base ms)" python3 -c "import sys; r=$slow/$base; sys.exit(0 if 1.1 <= r <= 1.3 else 1)"
like "$out" "by thread: python3 [0-9.]+" "CPU time is broken down by thread, the spinning main thread first"
