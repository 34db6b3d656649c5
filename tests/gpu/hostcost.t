#!/bin/bash
# bench/gpu/hostcost.py (issue 16's host-work count) run here on the GPU-less stub workload: per-step CPU time
# from a long run minus a short one, so start-up cancels. A mode planted with a 20 % longer spin per step must
# come out 1.1-1.3 times untraced in CPU time; the untraced step's CPU time must be about its 2 ms spin. The
# instruction counter needs a CPU performance counter (absent on many VMs, this one included): the output must
# say which it had.
. "$(dirname "$0")/../lib.sh"
need_cmd python3
need_cmd taskset
need_cmd gcc
plan 5
gcc -O2 -Wall -Wextra -Werror -o "$T/hostcost" "$RS_TOP/bench/gpu/hostcost.c"
ok "hostcost.c builds" test -x "$T/hostcost"
out=$(cd "$T" && python3 "$RS_TOP/bench/gpu/hostcost.py" --workload stub --modes untraced,stub-slow20 --rounds 2 \
    --short 20 --long 150 --warmup 2 --cpus 0 --hostcost "$T/hostcost" --work "$T/w" --out "$T/o" 2>&1)
diag "$out"
ok "the harness wrote its result" test -s "$T/o/hostcost-stub.json"
get() { python3 -c "import json,statistics as s; p=json.load(open('$T/o/hostcost-stub.json'))['per_step']; print(s.mean(x['clk_ms'] for x in p['$1']))"; }
base=$(get untraced)
slow=$(get stub-slow20)
ok "untraced: CPU time per step near the 2 ms spin (got $base ms)" python3 -c "import sys; sys.exit(0 if 1.4 <= $base <= 2.6 else 1)"
ok "planted 20 %: found in CPU time per step (got $slow vs $base ms)" python3 -c "import sys; r=$slow/$base; sys.exit(0 if 1.1 <= r <= 1.3 else 1)"
like "$out" "instructions (user\+kernel|user only)" "the output says what the instruction count covers"
